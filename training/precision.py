"""Training precision: float32, or bfloat16 autocast where the hardware has bfloat16 arithmetic.

`resolve(name, device)` turns `--precision auto|fp32|bf16` into "fp32" or "bf16": bf16 runs on a
GPU and on a CPU with AVX-512 BF16 or AMX and falls back to fp32 elsewhere, where bfloat16 is
emulated and slower. What it gains depends on the CPU (benchmarks/bench_train.py): on some CPUs
oneDNN trained these nets at about 4x the float32 rate; on one with AVX-512 BF16 and no AMX its
native bf16 convolutions ran at 0.7-0.9x float32, so there `--precision fp32` (and more threads)
is faster. auto is bf16 on a GPU and fp32 on a CPU: held-out accuracy after a bf16 run on the CPU
has not been measured yet. `autocast(device, precision)` is the context a training step
runs its forward pass and loss in; the weights, the gradients and the optimizer stay float32
(docs/algorithms.md §4).
"""
from __future__ import annotations

import click
import torch

PRECISIONS = ("auto", "fp32", "bf16")


def cpu_has_bf16() -> bool:
    """Whether this CPU computes in bfloat16 natively (AVX-512 BF16 or AMX tiles) and torch's
    oneDNN can use it."""
    if not torch.backends.mkldnn.is_available():
        return False
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def resolve(name: str, device: torch.device) -> str:
    """"fp32" or "bf16" for `--precision name` on `device`; bf16 asked for on a CPU without it
    falls back to fp32 (emulated bfloat16 is slower than float32 and no more accurate)."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision {name!r}; expected one of {PRECISIONS}")
    native = device.type == "cuda" or (device.type == "cpu" and cpu_has_bf16())
    if name == "fp32" or not native or (name == "auto" and device.type != "cuda"):
        return "fp32"
    return "bf16"


def autocast(device: torch.device, precision: str):
    """The autocast context of a training step's forward pass at `precision` ("fp32" / "bf16")."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


def precision_options(f):
    """`--precision` and `--channels-last/--no-channels-last`, shared by engine-train sl, value,
    rl and zero (TrainConfig / RLConfig / ZeroConfig `precision`, `channels_last`)."""
    f = click.option("--channels-last/--no-channels-last", default=True, show_default=True,
                     help="NHWC activations (oneDNN's fast layout for these convolutions)")(f)
    return click.option("--precision", default="auto", show_default=True,
                        type=click.Choice(PRECISIONS),
                        help="bf16: bfloat16 autocast (weights and optimizer stay float32; "
                             "fp32 where the hardware has no bfloat16); auto: bf16 on a GPU, "
                             "fp32 on a CPU")(f)
