"""The regression set's positions searched by the Zero search with its root priors blended with
the SL policy's: does the SL policy's knowledge of first- and second-line vital points, which the
Zero network lacks (docs/results/strength.md, the regression set), make the search play them?

    python experiments/root_prior_blend.py [--weight 0 --weight 0.3 ...] [--playouts 400]
        [--seeds 2] [--size 9] [--zero FILE] [--policy FILE] [--set FILE]

For each weight W the root's priors become (1 - W) P_zero + W P_sl (P_sl over the root's moves,
renormalised; the SL policy's priors averaged over the 8 symmetries) before the search runs;
every position of the set on `--size` is searched `--seeds` times at `--playouts`, and the move
counts as right when it is in the position's acceptable set (GNU Go's best and the moves it
values within 90% of it). No GNU Go is needed: the acceptable sets are in the set's file.
"""
from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import PASS, format_gtp, loc_to_pos
from goengine.engine.replay import positions
from goengine.engine.rules import Rules
from goengine.engine.search import tree as T
from goengine.engine.search.network import NetSearchConfig, features
from goengine.engine.search.zero import ZeroSearch
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.sgf_tools import read_sgf

ROOT = Path(__file__).resolve().parents[1]
SET_FILE = ROOT / "benchmarks" / "regression" / "positions.json"
ZERO = ROOT / "models" / "bundled" / "zero-9x9.int8.onnx"
POLICY = ROOT / "models" / "bundled" / "policy.int8.onnx"


class BlendedRootSearch(ZeroSearch):
    """The Zero search with the SL policy's priors mixed into the root's by `weight`."""

    def __init__(self, config, net, policy: OnnxEvaluator, weight: float, seed: int):
        super().__init__(config, net, seed)
        self.policy, self.weight = policy, weight

    def begin(self, game, color, *args, **kwargs) -> None:
        super().begin(game, color, *args, **kwargs)
        t, n = self.tree, game.size
        kids = t.children(t.root)
        if self.weight <= 0 or len(kids) == 0:
            return
        sl = self.policy.evaluate(features([self._root_position()], self.policy.feature_set),
                                  symmetry="average").priors[0]
        moves = t.ti[T.I_MOVE, kids.start:kids.stop]
        p = sl[[n * n if mv == PASS else loc_to_pos(int(mv), n) for mv in moves]]
        p = p / max(float(p.sum()), 1e-12)
        zero = t.tf[T.F_P, kids.start:kids.stop]
        t.tf[T.F_P, kids.start:kids.stop] = (1.0 - self.weight) * zero + self.weight * p


def set_positions(path: Path, size: int) -> list[dict]:
    return [p for p in json.loads(path.read_text(encoding="utf-8"))["positions"]
            if p["size"] == size]


def game_at(p: dict):
    """The position's game (every move of its record played) and the colour to play there."""
    game = None
    for game, _, _ in positions(read_sgf(p["sgf"]), Rules(komi=p["komi"])):
        pass        # positions() plays each move after yielding: the loop leaves the last played
    return game, BLACK if p["to_play"] == "b" else WHITE


@click.command()
@click.option("--weight", "weights", type=click.FloatRange(0, 1), multiple=True,
              default=(0.0, 0.3, 0.6), show_default=True, help="W of the blend; repeatable")
@click.option("--playouts", type=click.IntRange(min=1), default=400, show_default=True)
@click.option("--seeds", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--size", type=click.IntRange(5, 19), default=9, show_default=True)
@click.option("--zero", type=click.Path(exists=True, dir_okay=False), default=str(ZERO),
              show_default=True)
@click.option("--policy", type=click.Path(exists=True, dir_okay=False), default=str(POLICY),
              show_default=True)
@click.option("--set", "set_file", type=click.Path(exists=True, dir_okay=False),
              default=str(SET_FILE), show_default=True)
def main(weights, playouts, seeds, size, zero, policy, set_file):
    net = OnnxEvaluator(zero, threads=1, seed=1)
    sl = OnnxEvaluator(policy, threads=1, kind="policy", seed=1)
    cases = [(p, game_at(p)) for p in set_positions(Path(set_file), size)]
    if not cases:
        raise click.UsageError(f"no {size}x{size} positions in {set_file}")
    for w in weights:
        right = 0
        for p, (game, colour) in cases:
            played = []
            for seed in range(seeds):
                search = BlendedRootSearch(NetSearchConfig(mode="zero"), net, sl, w, seed)
                res = search.search(game, colour, playouts=playouts)
                played.append(format_gtp(res.moves[0].move, size))
            hits = sum(mv in p["acceptable"] for mv in played)
            right += hits
            print(f"  W {w:g} {p['id']}: game {p['played']}, acceptable {p['acceptable']}, "
                  f"played {' '.join(played)}", flush=True)
        print(f"W {w:g}, {playouts} playouts: {right} of {len(cases) * seeds} in the acceptable "
              f"set", flush=True)


if __name__ == "__main__":
    main()
