"""Training precision: float32, or bfloat16 autocast where the hardware has bfloat16 arithmetic.

`resolve(name, device)` turns `--precision auto|fp32|bf16` into "fp32" or "bf16": bf16 runs on a
GPU and on a CPU with AVX-512 BF16 or AMX and falls back to fp32 elsewhere, where bfloat16 is
emulated and slower. What it gains on a CPU depends on the CPU (benchmarks/bench_train.py): about
4x float32 on some, 2.1-2.4x on an AMD EPYC with AVX-512 BF16, 0.7-0.9x on an Intel CPU with
AVX-512 BF16 and no AMX. So `choose` settles auto on such a CPU by timing: a few forward and
backward passes of the run's own net at each precision (`step_seconds`), bf16 where it is at
least `AUTO_MIN_SPEEDUP` times as fast. bf16 keeps the held-out accuracy of float32 training
(docs/algorithms.md §4, "Precision"). `autocast(device, precision)` is the context a training
step runs its forward pass and loss in; the weights, the gradients and the optimizer stay float32.
"""
from __future__ import annotations

import copy
import time

import click
import torch

PRECISIONS = ("auto", "fp32", "bf16")
# auto takes bf16 on a CPU only where the timing probe finds it this much faster than float32:
# a small gain is not worth the rounding, and the probe's own noise is a few percent
AUTO_MIN_SPEEDUP = 1.25


def cpu_has_bf16() -> bool:
    """Whether this CPU computes in bfloat16 natively (AVX-512 BF16 or AMX tiles) and torch's
    oneDNN can use it."""
    if not torch.backends.mkldnn.is_available():
        return False
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def resolve(name: str, device: torch.device) -> str:
    """"fp32" or "bf16" for `--precision name` on `device`; bf16 asked for on a CPU without it
    falls back to fp32 (emulated bfloat16 is slower than float32 and no more accurate). auto is
    bf16 on a GPU and fp32 on a CPU here; `choose` times the net to settle it on a CPU."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision {name!r}; expected one of {PRECISIONS}")
    native = device.type == "cuda" or (device.type == "cpu" and cpu_has_bf16())
    if name == "fp32" or not native or (name == "auto" and device.type != "cuda"):
        return "fp32"
    return "bf16"


def _outputs(out) -> list[torch.Tensor]:
    """The tensors of a net's output: one tensor, or a value / Zero net's tuple of heads."""
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out if o is not None for t in _outputs(o)]


def step_seconds(net: torch.nn.Module, precision: str, size: int, batch: int = 64,
                 channels_last: bool = True, seconds: float = 0.6) -> float:
    """Seconds of one training pass (forward, a loss over every output, backward) of `net` on a
    random batch of `batch` positions of `size` x `size` at `precision`: the best of as many
    passes as fit in `seconds` after two to warm up. A copy of the net runs it, so neither its
    weights nor a batch norm's running statistics change."""
    probe = copy.deepcopy(net).train()
    device = next(probe.parameters()).device
    # a generator of its own: the probe leaves torch's global random stream (checkpointed) alone
    gen = torch.Generator(device).manual_seed(0)
    x = torch.rand(batch, probe.config["planes"], size, size, device=device, generator=gen).round()
    if channels_last:
        probe = probe.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    best, spent, n = float("inf"), 0.0, 0
    while n < 3 or spent < seconds:
        t0 = time.perf_counter()
        with autocast(device, precision):
            loss = sum(o.float().square().mean() for o in _outputs(probe(x)))
        loss.backward()
        probe.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        n += 1
        if n > 2:
            best, spent = min(best, dt), spent + dt
    return best


def choose(name: str, device: torch.device, net: torch.nn.Module, size: int, batch: int = 64,
           channels_last: bool = True, log=None) -> str:
    """`resolve`, with auto on a CPU that has native bfloat16 settled by timing `net` both ways
    (`step_seconds`): bf16 where it is at least AUTO_MIN_SPEEDUP times as fast, else fp32."""
    precision = resolve(name, device)
    if name != "auto" or device.type != "cpu" or not cpu_has_bf16():
        return precision
    fp32 = step_seconds(net, "fp32", size, batch, channels_last)
    bf16 = step_seconds(net, "bf16", size, batch, channels_last)
    precision = "bf16" if fp32 >= AUTO_MIN_SPEEDUP * bf16 else "fp32"
    if log is not None:
        log(f"precision auto: a {size}x{size} training pass of {batch} takes {1e3 * fp32:.0f} ms "
            f"in fp32, {1e3 * bf16:.0f} ms in bf16 ({fp32 / bf16:.2f}x): {precision}")
    return precision


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
                             "and on a CPU where a timing of the net finds it at least "
                             f"{AUTO_MIN_SPEEDUP}x as fast as fp32")(f)
