"""Gumbel self-play against PUCT self-play: training positions per second and network evaluations
per second of the Zero loop's self-play games (`engine-train zero --gumbel --simulations 16`
against the default PUCT search at `--visits 100`), the same games, the same network, in one run.

    python benchmarks/bench_gumbel_selfplay.py [--model models/bundled/zero.int8.onnx]
        [--size 19] [--games 2] [--moves 40] [--simulations 16] [--visits 100]

Each setting plays `--games` games from the empty board in this process (one worker; the games
of a job in lockstep, engine.search.lockstep), each cut at `--moves` moves (the move cap; no
resignation), so that both settings play the same number of positions and a 19x19 figure takes
a minute, not an hour. Every move is a recorded training position (no playout cap randomisation).
Each setting is warmed up by a one-game job first (onnxruntime's session, numba's cache). The
default model is the bundled Zero network's int8 twin, what `engine-train zero` plays self-play
with on a CPU (`--selfplay-precision auto`). Printed: positions/s and evaluations/s of each, and
Gumbel's over PUCT's.
"""
from __future__ import annotations

from pathlib import Path

import click

from goengine.models.names import BUNDLED_DIR
from goengine.training.workers.pool import WorkerPool
from goengine.training.zero.selfplay import ZeroGamesJob

from bench_selfplay import timed  # noqa: E402  (a sibling script: benchmarks/ is on sys.path)


@click.command()
@click.option("--model", default=str(BUNDLED_DIR / "zero.int8.onnx"), show_default=True,
              type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=19, show_default=True, type=click.IntRange(5, 19))
@click.option("--games", default=2, show_default=True, type=click.IntRange(1))
@click.option("--moves", default=40, show_default=True, type=click.IntRange(1),
              help="moves a game (the move cap)")
@click.option("--simulations", default=16, show_default=True, type=click.IntRange(2),
              help="Gumbel simulations a move")
@click.option("--gumbel-k", default=16, show_default=True, type=click.IntRange(1))
@click.option("--visits", default=100, show_default=True, type=click.IntRange(2),
              help="PUCT root visits a move (the baseline)")
def main(model, size, games, moves, simulations, gumbel_k, visits):
    onnx = Path(model).read_bytes()
    common = dict(size=size, move_cap=moves, resign_threshold=0.0, play_on=0)
    settings = {f"PUCT {visits} visits": dict(common, visits=visits),
                f"Gumbel {simulations} sims": dict(common, visits=simulations, gumbel=True,
                                                    gumbel_k=gumbel_k)}
    pool = WorkerPool(workers=0)
    rows = {name: timed(pool, onnx, args, games, games, kind="zero", job_type=ZeroGamesJob)
            for name, args in settings.items()}
    print(f"{games} games {size}x{size} of {moves} moves, {Path(model).name}, one worker in "
          f"process, all {games} games of a job in lockstep")
    for name, (sec, played, _, evals) in rows.items():
        print(f"  {name:>18}: {played / sec:7.2f} positions/s  {evals / sec:8.0f} evaluations/s  "
              f"{evals / played:6.1f} evaluations a move  ({played} moves in {sec:.1f} s)")
    (puct_s, puct_moves, _, puct_evals), (g_s, g_moves, _, g_evals) = rows.values()
    print(f"  Gumbel / PUCT: positions/s x{(g_moves / g_s) / (puct_moves / puct_s):.2f}, "
          f"evaluations/s x{(g_evals / g_s) / (puct_evals / puct_s):.2f}")


if __name__ == "__main__":
    main()
