"""Real games replayed on the engine's Game, straight from sgfmill (the `read_game`, `new_game` and
`replay` fixtures of tests/engine/conftest.py, for the feature tests)."""
from __future__ import annotations

import sgfmill.sgf

from goengine.engine import board as B
from goengine.engine.coords import PASS, loc
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from sample_games import kgs_game

RULES = Rules(superko="none")


def read_game(name: str):
    """(size, handicap locs, [(colour, loc)]) straight from sgfmill."""
    sgf = sgfmill.sgf.Sgf_game.from_bytes(kgs_game(name).read_bytes())
    n = sgf.get_size()
    root = sgf.get_root()
    ab = root.get("AB") if root.has_property("AB") else set()
    handicap = [loc(r_from_bottom_to_top(rr, n), cc, n) for rr, cc in ab]
    moves = []
    for node in sgf.get_main_sequence()[1:]:
        colour, point = node.get_move()
        if colour is None:
            continue
        c = B.BLACK if colour == "b" else B.WHITE
        moves.append((c, PASS if point is None else loc(r_from_bottom_to_top(point[0], n), point[1], n)))
    return n, handicap, moves


def r_from_bottom_to_top(row: int, n: int) -> int:
    return n - 1 - row  # sgfmill rows count from the bottom; ours from the top


def new_game(n, handicap):
    g = Game(n, RULES)
    if handicap:
        g.set_handicap(handicap)
    return g


def replay(n, handicap, moves):
    g = new_game(n, handicap)
    for c, lc in moves:
        g.play(c, lc)
    return g
