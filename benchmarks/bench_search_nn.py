"""Network evaluations per second inside the search against raw onnxruntime throughput for the
same model and batch size, measured in one run.

    python benchmarks/bench_search_nn.py [--model models/bundled/zero.onnx] [--size 9] [--batch 8]

Without --model a freshly initialised network of the cpu preset is exported to a temporary file
(the speed does not depend on the weights). Goal: inside / raw >= 0.80.
"""
from __future__ import annotations

import os
import tempfile
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import click  # noqa: E402
import numpy as np  # noqa: E402

from goengine.engine.game import Game  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.engine.search.zero import ZeroSearch  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402


def _fresh_model(kind: str) -> str:
    from goengine.training.nets import networks as nets
    from goengine.training.nets.export import export_onnx
    from goengine.engine.features import FEATURE_SETS
    fs = {"zero": "zero17", "policy": "alphago48", "value": "alphago49"}[kind]
    path = os.path.join(tempfile.mkdtemp(), f"{kind}.onnx")
    export_onnx(nets.build(kind, "cpu"), kind, path,
                {"feature_set": fs, "feature_version": FEATURE_SETS[fs].version})
    return path


def raw_rate(path, size, batch, seconds, threads) -> float:
    ev = OnnxEvaluator(path, threads=threads, symmetry="none", cache_size=0)
    planes = np.random.default_rng(0).random((batch, ev.meta.planes, size, size), dtype=np.float32)
    sess, name = ev.model.session, ev.model.input_name
    sess.run(None, {name: planes})
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        sess.run(None, {name: planes})
        n += batch
    return n / (time.perf_counter() - start)


def search_rate(path, size, batch, seconds, threads) -> tuple[float, float]:
    ev = OnnxEvaluator(path, threads=threads, symmetry="random", cache_size=0, seed=1)
    s = ZeroSearch(NetSearchConfig(mode="zero", batch_size=batch), net=ev, seed=1)
    g = Game(size)
    s.search(g, g.to_play, playouts=64)  # compile and warm up
    s = ZeroSearch(NetSearchConfig(mode="zero", batch_size=batch), net=ev, seed=2)
    res = s.search(g, g.to_play, seconds=seconds)
    return s.evaluations / res.elapsed, res.simulations / res.elapsed


@click.command()
@click.option("--model", default=None, help="a zero-kind ONNX file (default: fresh cpu preset)")
@click.option("--size", default=9, show_default=True)
@click.option("--batch", default=8, show_default=True)
@click.option("--seconds", default=5.0, show_default=True)
@click.option("--threads", default=1, show_default=True)
def main(model, size, batch, seconds, threads):
    path = model or _fresh_model("zero")
    raw = raw_rate(path, size, batch, seconds, threads)
    inside, sims = search_rate(path, size, batch, seconds, threads)
    print(f"board {size}x{size}, batch {batch}, onnxruntime threads {threads}")
    print(f"raw onnxruntime: {raw:.0f} evaluations/s")
    print(f"inside search:   {inside:.0f} evaluations/s ({sims:.0f} simulations/s)")
    print(f"ratio {inside / raw:.2f} (goal >= 0.80)")


if __name__ == "__main__":
    main()
