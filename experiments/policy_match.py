"""Two policy networks playing the policy alone (moves sampled, as in RL training, or greedy after
the first `--sampled-moves`): the win rate of the first, half the games with each colour, on the
self-play workers. A Zero network plays its policy head, from its own planes.

    python experiments/policy_match.py runs/rl9/policy.onnx models/bundled/policy.onnx \
        --size 9 --games 400 [--workers 2] [--temperature 1.0] [--sampled-moves 6]

Games as in `engine-train rl` (training.workers.selfplay: candidate moves only, two passes or the move cap,
area scoring with komi 7.5). Prints the first network's wins, games, win rate and its 95% interval.
"""
from __future__ import annotations

import math
from pathlib import Path

import click
import numpy as np

from goengine.models.onnx_evaluator import SYMMETRY_MODES
from goengine.training.workers.pool import WorkerPool, make_jobs, worker_options
from match_games import play_games  # experiments/match_games.py, beside this script


@click.command()
@click.argument("first", type=click.Path(dir_okay=False, exists=True))
@click.argument("second", type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=9, show_default=True, type=int)
@click.option("--games", default=400, show_default=True, type=int)
@click.option("--temperature", default=1.0, show_default=True, type=float)
@click.option("--sampled-moves", default=-1, show_default=True, type=int,
              help="moves of a game sampled at --temperature, the rest greedy (the most "
                   "probable move; -1: every move sampled, as in RL training)")
@click.option("--symmetry", default="none", show_default=True,
              type=click.Choice(SYMMETRY_MODES),
              help="how the networks see the board: none (as played), random (a random one of "
                   "the 8 board symmetries per network call, as engine-gtp's searches "
                   "evaluate) or average (the mean of the 8: deterministic)")
@click.option("--second-symmetry", default=None, type=click.Choice(SYMMETRY_MODES),
              help="the second network's own --symmetry (default: --symmetry), e.g. the "
                   "network averaging the 8 against one on a random symmetry")
@click.option("--games-per-job", default=25, show_default=True, type=int)
@click.option("--seed", default=0, show_default=True, type=int)
@worker_options
def main(first, second, size, games, temperature, sampled_moves, symmetry, second_symmetry,
         games_per_job, seed, workers, ray_address):
    second_symmetry = second_symmetry or symmetry
    pool = WorkerPool(workers, ray_address)
    try:
        pool.publish("a", Path(first).read_bytes())
        pool.publish("b", Path(second).read_bytes())
        h = games // 2
        jobs = make_jobs([("a", "b")] * h + [("b", "a")] * (games - h),
                         -(-games // games_per_job), np.random.SeedSequence(seed), size=size,
                         temperature=temperature, sampled_moves=sampled_moves,
                         symmetry={"a": symmetry, "b": second_symmetry})
        results = play_games(pool, jobs, games)
    finally:
        pool.close()
    wins = sum(r.z_for("a") > 0 for r in results)
    p = wins / len(results)
    half = 1.96 * math.sqrt(p * (1 - p) / len(results))
    as_black = sum(r.z_for("a") > 0 for r in results if r.black == "a")
    how = (f"temperature {temperature}" if sampled_moves < 0 else
           f"{sampled_moves} moves at temperature {temperature}, then greedy") + (
        "" if symmetry == "none" == second_symmetry else f", symmetry {symmetry}" + (
            f" against {second_symmetry}" if second_symmetry != symmetry else ""))
    distinct = len({r.moves.tobytes() for r in results})
    print(f"{Path(first).name} against {Path(second).name}, {size}x{size}, {how}: {wins} / {len(results)} = {p:.3f} (95% +- {half:.3f}); as black "
          f"{as_black} / {h}; {distinct} distinct games")


if __name__ == "__main__":
    main()
