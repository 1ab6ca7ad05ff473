"""Playout speed on one core: random light playouts, heuristic playouts, the full heuristic search
(MCTS with tree, priors and heuristic playouts) and the AlphaGo search on the bundled models (SL
priors, value net, fast-rollout-policy playouts) on an empty board, against Pachi measured in the
same run when its binary is given.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_playouts.py [--pachi /tmp/pachi/pachi] [--seconds 5]

Pachi (the Go engine, 11.99) is not part of this repository: install it as its own README says
(https://github.com/pasky/pachi) and pass its binary. Without `--pachi` the Pachi columns read n/a.

Pachi's figure is what it prints after `genmove` ("genmove in Xs (N games/s, ...)") with one
thread and a fixed number of playouts. Goals: heuristic search playouts/s >= Pachi's; the
AlphaGo search's playouts/s with the rollout policy printed against Pachi's. The
AlphaGo search runs as the engine does, network evaluations on a second thread while the rollouts
run, so on one core it is charged for both.
"""
from __future__ import annotations

import os
import re
import subprocess
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import click  # noqa: E402

from goengine.engine.board import new_board  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.playout import random_playouts, seed  # noqa: E402
from goengine.engine.rollout.policy import RolloutPolicy  # noqa: E402
from goengine.engine.search.alphago import AlphaGoSearch  # noqa: E402
from goengine.engine.search.mcts import MctsSearch  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.models.store import default_path  # noqa: E402


def playouts_per_second(n: int, seconds: float, light: bool) -> float:
    st, meta = new_board(n)
    seed(1)
    random_playouts(st, meta, 5, 3 * n * n, light)  # compile / warm up
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        random_playouts(st, meta, 100, 3 * n * n, light)
        count += 100
    return count / (time.perf_counter() - start)


def search_per_second(n: int, seconds: float) -> float:
    search = MctsSearch(seed=1)
    search.search(Game(n), 1, playouts=300)  # compile / warm up
    search = MctsSearch(seed=2)
    res = search.search(Game(n), 1, seconds=seconds)
    return res.simulations / res.elapsed


def alphago_per_second(n: int, seconds: float) -> float | None:
    """Simulations/s of `--search alphago` on the bundled models (None when they are missing)."""
    paths = {k: default_path(k) for k in ("policy", "value", "rollout")}
    if not all(p.exists() for p in paths.values()):
        return None
    policy = OnnxEvaluator(paths["policy"], threads=1, kind="policy", seed=1)
    value = OnnxEvaluator(paths["value"], threads=1, kind="value", seed=1)
    rollout = RolloutPolicy.load(paths["rollout"])

    def make(seed):
        return AlphaGoSearch(NetSearchConfig(mode="alphago"), policy=policy, value=value,
                             policy_features=policy.meta.feature_set,
                             value_features=value.meta.feature_set, seed=seed, rollout=rollout)

    make(1).search(Game(n), 1, playouts=200)  # compile / warm up
    res = make(2).search(Game(n), 1, seconds=seconds)
    return res.simulations / res.elapsed


def pachi_per_second(binary: str, n: int, playouts: int) -> float | None:
    """Pachi's own games/s for one genmove on an empty board (one thread, no pondering)."""
    cmds = f"boardsize {n}\nclear_board\nkomi 7.5\ngenmove b\nquit\n"
    try:
        proc = subprocess.run([binary, "-t", f"={playouts}", "threads=1,pondering=0"],
                              input=cmds, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"genmove in [\d.]+s \((\d+) games/s", proc.stderr)
    return float(m.group(1)) if m else None


@click.command()
@click.option("--pachi", type=click.Path(exists=True, dir_okay=False),
              help="Pachi binary, measured in the same run (Pachi's own README says how to "
              "install it)")
@click.option("--seconds", default=5.0, show_default=True, help="seconds per measurement")
@click.option("--sizes", default="9,19", show_default=True)
def main(pachi: str | None, seconds: float, sizes: str) -> None:
    have_pachi = pachi is not None
    print(f"{'size':>4} {'light/s':>10} {'heuristic/s':>12} {'search/s':>10} {'alphago/s':>10} "
          f"{'pachi/s':>9} {'ratio':>6} {'ag ratio':>8}")
    for n in [int(s) for s in sizes.split(",")]:
        light = playouts_per_second(n, seconds, light=True)
        heavy = playouts_per_second(n, seconds, light=False)
        search = search_per_second(n, seconds)
        alphago = alphago_per_second(n, seconds)
        ref = pachi_per_second(pachi, n, 40000 if n <= 9 else 15000) if have_pachi else None
        ratio = f"{search / ref:6.2f}" if ref else "   n/a"
        ag_ratio = f"{alphago / ref:8.2f}" if ref and alphago else "     n/a"
        ref_s = f"{ref:9.0f}" if ref else "      n/a"
        ag_s = f"{alphago:10.0f}" if alphago else "       n/a"
        print(f"{n:>4} {light:10.0f} {heavy:12.0f} {search:10.0f} {ag_s} {ref_s} {ratio} {ag_ratio}",
              flush=True)
    print("ratio = our heuristic full-search playouts/s / Pachi's (goal >= 1.0); ag ratio = the "
          "AlphaGo search's (SL priors, value net, rollout policy) / Pachi's")


if __name__ == "__main__":
    main()
