"""What the networks' ownership heads said, at the regression set's positions, about the stones
that goengine lost soon after: did the head see those groups at risk?

    python experiments/ownership_at_swings.py [--after 40] [--set FILE] [--zero9 FILE]
        [--value19 FILE]

For each position of the set (benchmarks/regression/positions.json: where goengine's matches
swung against it), the game of its record is replayed to the position and `--after` moves past
it (or to the game's end). goengine's stones at the position are split into those it still has
then ("kept") and those it no longer has ("lost"). The ownership head of the network goengine
searched with on that size (9x9: the Zero network `zero-9x9`; 19x19: `--value19`, a value
network with an ownership head; the bundled one has none, the AlphaGo search's ownership there
comes from its rollouts, so without one the 19x19 positions are left out, each with a line
saying so), averaged over the 8 symmetries, says for each point how likely the side to move
(goengine) is to own it at the end, -1 to +1. Printed per
position: the stones lost and kept and the head's mean ownership on each, and how many of the
lost ones it gave to goengine (> 0.5: "safe"); then the same over every position that lost a
group (`--group` stones or more).
"""
from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from goengine.engine.board import BLACK, WHITE
from goengine.engine.features import extract
from goengine.engine.replay import positions
from goengine.engine.rules import Rules
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.sgf_tools.reader import read_sgf_file

ROOT = Path(__file__).resolve().parents[1]
SET_FILE = ROOT / "benchmarks" / "regression" / "positions.json"
BUNDLED = ROOT / "models" / "bundled"


def boards(p: dict, after: int) -> tuple:
    """(the game at the position, goengine's colour, board colours int8[N, N] there, and
    `after` moves later or at the game's end)."""
    record = read_sgf_file(ROOT / p["source"])
    colour = BLACK if p["to_play"] == "b" else WHITE
    at = later = None
    game = None
    for i, (game, _, _) in enumerate(positions(record, Rules(komi=p["komi"]))):
        if i == p["move_number"]:
            at = game.copy()
        if i == p["move_number"] + after:
            later = game.board_colors()
            break
    if at is None:
        raise click.ClickException(f"{p['id']}: its record has no move {p['move_number']}")
    if later is None:           # the game ended first: positions() left its last move played
        later = game.board_colors()
    return at, colour, at.board_colors(), later


def head_ownership(net: OnnxEvaluator, game, colour: int) -> np.ndarray:
    """float[N, N]: the ownership head for `colour` to move (+1: colour owns the point)."""
    n = game.size
    game.to_play = colour
    planes = extract(game, net.feature_set)[None]
    return net.evaluate(planes, symmetry="average").ownership[0].reshape(n, n)


@click.command()
@click.option("--after", type=click.IntRange(min=1), default=40, show_default=True,
              help="moves past the position at which the stones still there count as kept")
@click.option("--group", type=click.IntRange(min=1), default=3, show_default=True,
              help="stones lost that make a position count in the summary")
@click.option("--set", "set_file", type=click.Path(exists=True, dir_okay=False),
              default=str(SET_FILE), show_default=True)
@click.option("--zero9", type=click.Path(exists=True, dir_okay=False),
              default=str(BUNDLED / "zero-9x9.int8.onnx"), show_default=True)
@click.option("--value19", type=click.Path(exists=True, dir_okay=False),
              default=str(BUNDLED / "value.int8.onnx"), show_default=True)
def main(after, group, set_file, zero9, value19):
    nets = {9: OnnxEvaluator(zero9, threads=1, seed=1),
            19: OnnxEvaluator(value19, threads=1, kind="value", seed=1)}
    lost_own, kept_own, safe, counted = [], [], 0, 0
    for p in json.loads(Path(set_file).read_text(encoding="utf-8"))["positions"]:
        net = nets.get(p["size"])
        if net is None or not net.has_ownership:
            why = "no network for its size" if net is None else \
                f"{net.model.path.name} has no ownership head"
            print(f"{p['id']}: left out ({why})")
            continue
        game, colour, now, later = boards(p, after)
        own = head_ownership(net, game, colour)
        mine = now == colour
        lost, kept = mine & (later != colour), mine & (later == colour)
        n_safe = int((own[lost] > 0.5).sum())
        print(f"{p['id']}: lost {int(lost.sum())} (ownership {_mean(own[lost])}, {n_safe} "
              f"given to goengine), kept {int(kept.sum())} (ownership {_mean(own[kept])})",
              flush=True)
        if lost.sum() >= group:
            counted += 1
            safe += n_safe
            lost_own += own[lost].tolist()
            kept_own += own[kept].tolist()
    if not counted:
        print(f"no position lost {group} or more stones within {after} moves")
        return
    print(f"{counted} positions lost {group} or more stones within {after} moves: "
          f"{len(lost_own)} stones lost, the head's mean ownership on them {np.mean(lost_own):+.2f}, "
          f"{safe} of them given to goengine (> 0.5); on the {len(kept_own)} stones kept "
          f"{np.mean(kept_own):+.2f}")


def _mean(x: np.ndarray) -> str:
    return f"{float(np.mean(x)):+.2f}" if x.size else "-"


if __name__ == "__main__":
    main()
