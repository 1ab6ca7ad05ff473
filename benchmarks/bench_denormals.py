"""Subnormal weights: evaluations/s of ONNX files as they are and with those weights set to zero.

    python benchmarks/bench_denormals.py checkpoints/zero9/registry/gen-*.onnx
    python benchmarks/bench_denormals.py FILE... --size 19 --batch 1 --batch 8

Weight decay drives the weights a net stops using toward zero, below float32's smallest normal
number; a CPU multiplies such operands many times slower, and onnxruntime's one-thread sessions do
not flush them. For each file this prints how many float weights are subnormal, the median
milliseconds per network call (one onnxruntime thread, the planes of random positions) as the file
is and after `training.nets.export.flush_denormals` (what every export does now), both timed in the same
run, their ratio, and the largest output difference between the two (what flushing changes).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import click
import numpy as np
import onnx
import onnxruntime as ort

from goengine.models.metadata import ModelMetadata
from goengine.training.nets.export import count_subnormal, flush_denormals


def session(data: bytes) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


def planes(meta: ModelMetadata, size: int, batch: int, seed: int) -> np.ndarray:
    """Positions' planes: random stones (a third of the points), the feature set's constant planes
    as the engine writes them."""
    rng = np.random.default_rng(seed)
    x = (rng.random((batch, meta.planes, size, size)) < 0.33).astype(np.float32)
    if meta.feature_set == "zero17":
        x[:, 16] = 1.0          # the side-to-move plane: Black
    return x


def median_ms(sess: ort.InferenceSession, x: np.ndarray, calls: int) -> float:
    sess.run(None, {"planes": x})
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        sess.run(None, {"planes": x})
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 25))
@click.option("--batch", "batches", multiple=True, type=click.IntRange(1), default=(8,),
              show_default=True, help="batch sizes to time (repeatable)")
@click.option("--calls", default=40, show_default=True, type=click.IntRange(5))
def main(files, size, batches, calls):
    print(f"{'file':<48} {'subnormal':>9} {'batch':>5} {'as is ms':>9} {'flushed ms':>10} "
          f"{'ratio':>6} {'max diff':>9}")
    for path in files:
        proto = onnx.load(path)
        meta = ModelMetadata.from_props({p.key: p.value for p in proto.metadata_props}, path)
        count = count_subnormal(proto)
        before = proto.SerializeToString()
        flush_denormals(proto)
        as_is, flushed = session(before), session(proto.SerializeToString())
        for batch in batches:
            x = planes(meta, size, batch, seed=batch)
            a, b = median_ms(as_is, x, calls), median_ms(flushed, x, calls)
            diff = max(float(np.max(np.abs(u - v))) for u, v in
                       zip(as_is.run(None, {"planes": x}), flushed.run(None, {"planes": x})))
            name = str(Path(path))[-48:]
            print(f"{name:<48} {count:>9} {batch:>5} {a:>9.2f} {b:>10.2f} {a / b:>6.1f} "
                  f"{diff:>9.1e}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
