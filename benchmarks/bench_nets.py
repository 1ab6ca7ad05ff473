"""Milliseconds per network evaluation in onnxruntime on one CPU thread, per preset.

    python benchmarks/bench_nets.py                        # every kind and preset
    python benchmarks/bench_nets.py --kinds policy --presets cpu --set layers=8 --set filters=32
    python benchmarks/bench_nets.py --sweep                # candidates for the policy cpu preset

Each net is built with random weights, exported with `training.nets.export.export_onnx` (so the timed
file is the one the engine would load) and run with intra- and inter-op threads = 1. Reported:
the median ms per call and per position, and the fastest call per position, at batch 1 and 8, on
9x9 and 19x19.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from goengine.training.nets.export import export_onnx
from goengine.training.nets.networks import PRESETS, build

SIZES = (9, 19)
BATCHES = (1, 8)
SWEEP = [dict(layers=l, filters=f) for l in (6, 8, 10, 13) for f in (32, 48, 64)]


def time_session(session: ort.InferenceSession, planes: int, n: int, batch: int,
                 budget_s: float, min_reps: int = 5) -> tuple[float, float]:
    """(median, minimum) seconds per call on random binary planes, after two warm-up calls.

    The minimum is the better estimate of the cost on an idle core when other work shares it."""
    x = np.random.default_rng(0).integers(0, 2, (batch, planes, n, n)).astype(np.float32)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(2):
        session.run(None, feed)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < budget_s:
        t = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - t)
        if len(times) >= 2000:
            break
    return statistics.median(times), min(times)


def bench(kind: str, preset: str, overrides: dict, tmp: Path, budget_s: float) -> list[tuple]:
    net = build(kind, preset, **overrides)
    path = tmp / f"{kind}_{preset}.onnx"
    export_onnx(net, kind, path, {})
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    fixed = net.fixed_board_size
    params = sum(p.numel() for p in net.parameters())
    label = f"{kind}/{preset}" + ("".join(f" {k}={v}" for k, v in overrides.items()))
    rows = []
    for n in SIZES:
        if fixed is not None and n != fixed:
            continue
        for b in BATCHES:
            med, best = time_session(session, net.config["planes"], n, b, budget_s)
            rows.append((label, params, n, b, 1e3 * med, 1e3 * med / b, 1e3 * best / b))
    return rows


def print_table(rows: list[tuple]) -> None:
    print(f"{'net':44} {'params':>9} {'N':>3} {'B':>2} {'ms/call':>9} {'ms/pos':>8} {'min/pos':>8}")
    for label, params, n, b, call, pos, best in rows:
        print(f"{label:44} {params:9d} {n:3d} {b:2d} {call:9.3f} {pos:8.3f} {best:8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="*", default=list(PRESETS))
    ap.add_argument("--presets", nargs="*", default=["cpu", "paper"])
    ap.add_argument("--set", action="append", default=[], metavar="KEY=INT",
                    help="override a preset parameter (integers only)")
    ap.add_argument("--sweep", action="store_true", help="time candidate policy cpu presets")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timing per cell")
    args = ap.parse_args()
    overrides = {k: int(v) for k, v in (s.split("=", 1) for s in args.set)}
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.sweep:
            for cand in SWEEP:
                rows += bench("policy", "cpu", cand, Path(tmp), args.budget)
        else:
            for kind in args.kinds:
                for preset in args.presets:
                    rows += bench(kind, preset, overrides, Path(tmp), args.budget)
    print_table(rows)


if __name__ == "__main__":
    main()
