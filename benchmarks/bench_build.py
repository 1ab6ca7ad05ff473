"""Dataset building: games/s and positions/s of `engine-train sl`'s build (training.data.shard_build)
in one process and in several, measured in the same run, and whether both kept the same positions.

    python benchmarks/bench_build.py [--games 400] [--workers 2] [--positions-per-game 0]
    python benchmarks/bench_build.py --sgf tests/data/games/tygem9d-2015-05 --games 20

`--sgf` defaults to ../shared/data/tygem9d/tygem9d-2015-05.tar.bz2 beside the project.
Goal: with W processes on a machine of W free cores, at least 0.8 W times one process's rate.
"""
from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path

import click
import numpy as np

from data_paths import default_data, missing
from goengine.training.data.shard_build import build_shards

SGF = "tygem9d/tygem9d-2015-05.tar.bz2"  # under ../shared/data


def positions_digest(folder: Path) -> str:
    """A digest of the positions (planes and move) whatever their order and shards."""
    rows = []
    for f in folder.glob("*.npz"):
        with np.load(f) as z:
            rows += [x.tobytes() + m.tobytes() for x, m in zip(z["x"], z["move"])]
    return hashlib.sha1(b"".join(sorted(rows))).hexdigest()[:12]


def build(sgf: str, games: int, ppg: int | None, workers: int) -> tuple[float, int, int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        stats = build_shards([sgf], tmp, max_games=games, positions_per_game=ppg, workers=workers)
        seconds = time.perf_counter() - start
        return (seconds, sum(stats.games.values()), sum(stats.positions.values()),
                positions_digest(Path(tmp)))


@click.command()
@click.option("--sgf", default=default_data(SGF),
              help=f"games to build from  [default: ../shared/data/{SGF} beside the project]")
@click.option("--games", default=400, show_default=True, type=click.IntRange(1))
@click.option("--workers", default=2, show_default=True, type=click.IntRange(2))
@click.option("--positions-per-game", default=0, show_default=True, type=click.IntRange(0),
              help="0: every position")
def main(sgf, games, workers, positions_per_game):
    if sgf is None or not Path(sgf).exists():
        raise click.UsageError(missing("--sgf", SGF))
    ppg = positions_per_game or None
    base_s, g, n, base_digest = build(sgf, games, ppg, 1)
    print(f"1 process:   {base_s:6.1f} s  {g / base_s:6.1f} games/s  {n / base_s:8.0f} positions/s")
    par_s, g2, n2, digest = build(sgf, games, ppg, workers)
    print(f"{workers} processes: {par_s:6.1f} s  {g2 / par_s:6.1f} games/s  {n2 / par_s:8.0f} positions/s")
    print(f"speed-up {base_s / par_s:.2f}x with {workers} processes; same positions: "
          f"{n == n2 and digest == base_digest} ({n} positions, digest {base_digest})")


if __name__ == "__main__":
    main()
