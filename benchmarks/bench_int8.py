"""int8 against float32: evaluations/s in onnxruntime and held-out accuracy, per bundled network.

    python benchmarks/bench_int8.py                           # policy, value and zero, 10,000 positions
    python benchmarks/bench_int8.py --models policy --positions 2000

Each model of `--model-dir` (the bundled ones by default) is quantized by `training.export.quantize`
(calibrated on `--calibration`, not the held-out games), then both files are timed in the same run
on one onnxruntime thread (the median per position at batch 1 and 8, on 19x19 and 9x9, random
planes) and scored on the same held-out positions (`--heldout`, `engine-train eval`'s code): top-1
and top-5 move accuracy for the policy and Zero nets, the MSE against the game's outcome for the
value net; and how closely the int8 outputs follow the float ones on held-out positions (top-1
agreement, RMS difference of the value). The last column says whether int8 keeps the accuracy within half a point (top-1) or
0.005 (MSE), the bar for making it the default.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

import click  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

from data_paths import default_data, missing  # noqa: E402
from goengine.models.names import BUNDLED_DIR, MODEL_FILES  # noqa: E402
from goengine.models.session import load_session  # noqa: E402
from goengine.training.export.evaluate import evaluate_collection  # noqa: E402
from goengine.training.export.quantize import calibration_planes, quantize_model  # noqa: E402

CALIBRATION = "tygem9d/tygem9d-2015-05.tar.bz2"
HELDOUT = "tygem9d/tygem9d-2015-06.tar.bz2"
TOP1_TOLERANCE, MSE_TOLERANCE = 0.005, 0.005


def ms_per_position(path: Path, planes: int, n: int, batch: int, budget_s: float) -> float:
    """Median ms per position of `path` on one thread, random binary planes, after warm-up."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).integers(0, 2, (batch, planes, n, n)).astype(np.float32)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(3):
        session.run(None, feed)
    times, start = [], time.perf_counter()
    while len(times) < 10 or time.perf_counter() - start < budget_s:
        t = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000 / batch


def accuracy(path: Path, heldout: str, positions: int, threads: int) -> dict:
    return evaluate_collection(path, [heldout], max_positions=positions, threads=threads)


def fidelity(src: Path, int8: Path, planes: np.ndarray) -> str:
    """How closely the int8 outputs follow the float ones on the same held-out positions: the
    top-1 move agreement (policy, Zero) and the RMS difference of the value (value, Zero)."""
    outs = []
    for path in (src, int8):
        s = load_session(path)
        outs.append(s.session.run(None, {s.input_name: planes}))
    kind = load_session(src).meta.kind
    parts = []
    if kind in ("policy", "zero"):
        agree = float(np.mean(outs[0][0].argmax(1) == outs[1][0].argmax(1)))
        parts.append(f"top-1 agreement {agree:.3f}")
    if kind in ("value", "zero"):
        i = 0 if kind == "value" else 1
        rms = float(np.sqrt(np.mean((outs[0][i] - outs[1][i]) ** 2)))
        parts.append(f"value RMS difference {rms:.4f}")
    return ", ".join(parts) + f" ({len(planes)} positions)"


@click.command()
@click.option("--model-dir", default=str(BUNDLED_DIR), show_default=True,
              type=click.Path(exists=True, file_okay=False))
@click.option("--models", default="policy,value,zero", show_default=True)
@click.option("--calibration", default=None, help=f"games that calibrate the activations "
              f"[default: ../shared/data/{CALIBRATION}]")
@click.option("--heldout", default=None, help=f"held-out games [default: ../shared/data/{HELDOUT}]")
@click.option("--positions", default=10000, show_default=True, type=click.IntRange(1),
              help="held-out positions per model")
@click.option("--calibration-positions", default=512, show_default=True, type=click.IntRange(16))
@click.option("--budget", default=2.0, show_default=True, type=float,
              help="seconds of timing per size and batch")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1),
              help="onnxruntime threads for the held-out evaluation (timing uses one)")
def main(model_dir, models, calibration, heldout, positions, calibration_positions, budget,
         threads):
    calibration = calibration or default_data(CALIBRATION)
    heldout = heldout or default_data(HELDOUT)
    if calibration is None:
        raise click.UsageError(missing("--calibration", CALIBRATION))
    if heldout is None:
        raise click.UsageError(missing("--heldout", HELDOUT))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in models.split(","):
            src = Path(model_dir) / MODEL_FILES[kind]
            meta = load_session(src).meta
            planes = calibration_planes([calibration], meta.feature_set, calibration_positions)
            int8 = quantize_model(src, Path(tmp) / f"{kind}.int8.onnx", planes,
                                  f"int8, {len(planes)} calibration positions")
            speed = {}
            for label, path in (("fp32", src), ("int8", int8)):
                for n in (19, 9):
                    for batch in (1, 8):
                        speed[label, n, batch] = ms_per_position(path, meta.planes, n, batch,
                                                                 budget)
            acc = {label: accuracy(path, heldout, positions, threads)
                   for label, path in (("fp32", src), ("int8", int8))}
            acc["fidelity"] = fidelity(src, int8, calibration_planes(
                [heldout], meta.feature_set, calibration_positions))
            rows.append((kind, speed, acc))
            report(kind, speed, acc)
    click.echo("\nsummary (ms per position, one thread; speed-up = fp32 / int8)")
    for kind, speed, acc in rows:
        report(kind, speed, acc)


def report(kind: str, speed: dict, acc: dict) -> None:
    parts = []
    for n in (19, 9):
        for batch in (1, 8):
            f, q = speed["fp32", n, batch], speed["int8", n, batch]
            parts.append(f"{n}x{n} b{batch} {f:.3f}/{q:.3f} ({f / q:.2f}x)")
    if "top1" in acc["fp32"]:
        f, q = acc["fp32"]["top1"], acc["int8"]["top1"]
        held = (f"top1 {f:.4f} -> {q:.4f} ({(q - f) * 100:+.2f} points), top5 "
                f"{acc['fp32']['top5']:.4f} -> {acc['int8']['top5']:.4f}")
        keeps = q >= f - TOP1_TOLERANCE
    else:
        f, q = acc["fp32"]["mse"], acc["int8"]["mse"]
        held = f"mse {f:.4f} -> {q:.4f} ({q - f:+.4f})"
        keeps = q <= f + MSE_TOLERANCE
    click.echo(f"{kind}: {'; '.join(parts)}; held-out ({acc['fp32']['positions']} positions) "
               f"{held}; {acc['fidelity']}; accuracy kept: {'yes' if keeps else 'no'}")


if __name__ == "__main__":
    main()
