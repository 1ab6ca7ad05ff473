"""Fast rollout policy: microseconds per move in policy playouts (19x19 and 9x9, one thread) and
held-out top-1 accuracy of a rollout .npz, against the goals (AlphaGo: 2 us/move, 24.2%).

    NUMBA_NUM_THREADS=1 python benchmarks/bench_rollout.py [--model models/bundled/rollout.npz]
        [--heldout PATH] [--positions 20000]

The held-out games default to ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2 beside the project.

Speed is measured from the empty board (whole games, about 430 moves on 19x19) in CPU time of
this single-threaded process, alongside the heuristic playouts of engine.playout for reference
(on a loaded machine both slow down; compare the ratio). Accuracy: the policy's most likely
move equals the human move, over positions sampled uniformly from the held-out games (passes are not
positions; a human move the policy cannot play, e.g. filling an own eye, counts as a miss).
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import click  # noqa: E402
import numpy as np  # noqa: E402

from data_paths import default_data, missing  # noqa: E402
from goengine.engine.board import new_board  # noqa: E402
from goengine.engine.playout import random_playouts, seed as nb_seed  # noqa: E402
from goengine.engine.rollout.policy import RolloutPolicy, policy_playouts  # noqa: E402
from goengine.models.names import BUNDLED_DIR, MODEL_FILES  # noqa: E402

GOAL_US = 5.0
GOAL_TOP1 = 0.24
HELDOUT = "tygem9d/tygem9d-2015-06.tar.bz2"  # under ../shared/data


def policy_speed(pol: RolloutPolicy, n: int, seconds: float) -> tuple[float, float, float]:
    """(us per move, playouts per second, moves per playout), in CPU time of this process (the
    kernels are single-threaded; CPU time is steadier than wall time on a shared machine)."""
    st, meta = new_board(n)
    nb_seed(1)
    policy_playouts(st, meta, 3, 3 * n * n, pol.tables)  # compile / warm up
    playouts = moves = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        _s, m = policy_playouts(st, meta, 10, 3 * n * n, pol.tables)
        playouts += 10
        moves += m
    dt = time.process_time() - start
    return dt / moves * 1e6, playouts / dt, moves / playouts


def heuristic_speed(n: int, seconds: float) -> float:
    """engine.playout heuristic playouts per CPU second, for reference."""
    st, meta = new_board(n)
    random_playouts(st, meta, 3, 3 * n * n)
    count, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        random_playouts(st, meta, 20, 3 * n * n)
        count += 20
    return count / (time.process_time() - start)


def heldout_top1(pol: RolloutPolicy, heldout: str, positions: int, seed: int) -> tuple[float, int]:
    from goengine.training.rollout.data import load_games, select_positions
    from goengine.training.rollout.features import Dictionary, extract_all
    from goengine.training.rollout.sgd import heldout_metrics
    games = load_games([heldout], size=19)
    sel = select_positions(games, positions, np.random.default_rng(seed))
    dic = Dictionary(pol.keys)
    batch = extract_all(games, sel, dic)
    m = heldout_metrics(batch, pol.weights.astype(np.float64))
    return m["top1"], m["positions"]


@click.command()
@click.option("--model", default=str(BUNDLED_DIR / MODEL_FILES["rollout"]), show_default=True)
@click.option("--heldout", default=default_data(HELDOUT),
              help=f"held-out games ('' to skip the accuracy)  [default: ../shared/data/{HELDOUT} "
              "beside the project]")
@click.option("--positions", default=20000, show_default=True, help="held-out positions")
@click.option("--seconds", default=5.0, show_default=True, help="seconds per speed measurement")
@click.option("--sizes", default="19,9", show_default=True)
@click.option("--seed", default=12345, show_default=True)
def main(model: str, heldout: str, positions: int, seconds: float, sizes: str, seed: int) -> None:
    if heldout is None:
        raise click.UsageError(missing("--heldout", HELDOUT) + " (--heldout '' skips the accuracy)")
    pol = RolloutPolicy.load(model)
    print(f"model {model}: {len(pol)} features {pol.family_counts()}, "
          f"trained on {pol.meta.get('positions', '?')} positions")
    print(f"{'size':>4} {'us/move':>8} {'goal':>5} {'ok':>3} {'playouts/s':>11} "
          f"{'moves/playout':>13} {'heuristic playouts/s':>21}")
    for n in [int(s) for s in sizes.split(",")]:
        us, pps, mpp = policy_speed(pol, n, seconds)
        h = heuristic_speed(n, min(seconds, 3.0))
        ok = "yes" if us <= GOAL_US else "NO"
        print(f"{n:>4} {us:8.2f} {GOAL_US:5.1f} {ok:>3} {pps:11.0f} {mpp:13.0f} {h:21.0f}",
              flush=True)
    if heldout:
        top1, n = heldout_top1(pol, heldout, positions, seed)
        ok = "yes" if top1 >= GOAL_TOP1 else "NO"
        print(f"held-out top-1 {top1:.4f} on {n} positions of {os.path.basename(heldout)} "
              f"(goal {GOAL_TOP1:.2f}: {ok}; AlphaGo 0.242)")


if __name__ == "__main__":
    main()
