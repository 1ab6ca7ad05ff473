"""Training input pipeline efficiency: SL steps per second fed from the bit-packed dataset
(unpack + random symmetry per sample) against the same network fed random tensors.

    python benchmarks/bench_pipeline.py [--steps 60] [--batch-size 64]
    python benchmarks/bench_pipeline.py --data runs/sl-cpu/data
    python benchmarks/bench_pipeline.py --sgf tests/data/games/tygem9d-2015-05 --steps 6

The dataset is `--data` (a folder built by `engine-train sl`), or else one built into a temporary
folder from the first `--games` games of `--sgf` (default:
../shared/data/tygem9d/tygem9d-2015-05.tar.bz2 beside the project; 250 games give about 50,000
training positions, as many as `--limit` loads).

Goal: the dataset-fed rate is at least 90% of the random-tensor rate.
"""
from __future__ import annotations

import tempfile
import time

import click
import numpy as np
import torch

from data_paths import default_data, missing
from goengine.training.nets import networks as nets
from goengine.training.data.dataset import PackedPositions
from goengine.training.data.shard_build import build_shards
from goengine.training.nets.loop import TrainConfig, make_optimizer, train_step

SGF = "tygem9d/tygem9d-2015-05.tar.bz2"  # under ../shared/data


def steps_per_second(net, opt, make_batch, steps: int) -> float:
    for _ in range(3):  # warm up
        train_step(net, opt, "policy", make_batch())
    start = time.perf_counter()
    for _ in range(steps):
        train_step(net, opt, "policy", make_batch())
    return steps / (time.perf_counter() - start)


@click.command()
@click.option("--data", help="dataset directory (built by engine-train sl); default: one built "
              "from --sgf into a temporary folder")
@click.option("--sgf", default=default_data(SGF),
              help=f"games for that dataset  [default: ../shared/data/{SGF} beside the project]")
@click.option("--games", default=250, show_default=True, help="games for that dataset")
@click.option("--steps", default=60, show_default=True)
@click.option("--batch-size", default=64, show_default=True)
@click.option("--threads", default=1, show_default=True)
@click.option("--limit", default=50000, show_default=True, help="training positions to load")
def main(data, sgf, games, steps, batch_size, threads, limit):
    torch.set_num_threads(threads)
    if data is not None:
        measure(PackedPositions(data, "train", 19, 48, limit=limit), steps, batch_size)
        return
    if sgf is None:
        raise click.UsageError(missing("--sgf", SGF) + ", or pass --data DIR")
    with tempfile.TemporaryDirectory() as tmp:
        print(build_shards(sgf, tmp, max_games=games).summary())
        measure(PackedPositions(tmp, "train", 19, 48, limit=limit), steps, batch_size)


def measure(ds: PackedPositions, steps: int, batch_size: int) -> None:
    """Prints the steps/s fed from `ds` and from random tensors, and their ratio."""
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    net = nets.build("policy", "cpu")
    opt = make_optimizer(net, TrainConfig())

    def random_batch():
        return (np.random.rand(batch_size, 48, 19, 19).astype(np.float32),
                rng.integers(0, 361, batch_size), np.zeros(batch_size, np.float32))

    def data_batch():
        return ds.batch(rng.integers(0, len(ds), batch_size), rng)

    # interleave the two measurements so that machine load affects both alike
    rand, real = [], []
    for _ in range(3):
        rand.append(steps_per_second(net, opt, random_batch, steps // 3))
        real.append(steps_per_second(net, opt, data_batch, steps // 3))
    r, d = float(np.median(rand)), float(np.median(real))
    t0 = time.perf_counter()
    for _ in range(20):
        data_batch()
    batch_ms = (time.perf_counter() - t0) / 20 * 1000
    print(f"random tensors: {r:.2f} steps/s ({r * batch_size:.0f} positions/s)")
    print(f"packed dataset: {d:.2f} steps/s ({d * batch_size:.0f} positions/s); "
          f"batch assembly {batch_ms:.1f} ms")
    print(f"pipeline efficiency {d / r:.3f} (goal >= 0.90)")


if __name__ == "__main__":
    main()
