"""A tiny ASCII board loader and plane decoders for the feature tests.

    game = load('''
        . X O .
        X X O .
        . . . .
        . . . .
    ''', to_play="W", moves=["B D1", "W A1"])

Rows are listed from the top (row 0); tokens are `X` (black), `O` (white), `.` (empty), separated by
spaces. The stones are placed as setup stones (age 0, as handicap stones), then `moves` are played
through Game.play ("B D1" in GTP coordinates, "pass" allowed), then `to_play` is set if given.
"""
from __future__ import annotations

import textwrap

import numpy as np

from goengine.engine import board as B
from goengine.engine.coords import format_gtp, loc, parse_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules

_TOKENS = {".": B.EMPTY, "X": B.BLACK, "O": B.WHITE}
_COLOURS = {"B": B.BLACK, "W": B.WHITE}


def parse_rows(text: str) -> list[list[str]]:
    lines = [ln.split() for ln in textwrap.dedent(text).strip().splitlines() if ln.strip()]
    n = len(lines)
    for ln in lines:
        if len(ln) != n:
            raise ValueError(f"row {ln} has {len(ln)} points, expected {n}")
    return lines


def load(text: str, to_play: str | None = None, moves: list[str] = (), rules: Rules | None = None) -> Game:
    rows = parse_rows(text)
    n = len(rows)
    game = Game(n, rules or Rules(superko="none"))
    for r, row in enumerate(rows):
        for c, tok in enumerate(row):
            if _TOKENS[tok] != B.EMPTY:
                B.place_setup_stone(game.st, game.meta, (r + 1) * (n + 2) + c + 1, _TOKENS[tok])
    game.board_history = [game.st[B.F_COLOR].copy()]
    for mv in moves:
        colour, vertex = mv.split()
        game.play(_COLOURS[colour], parse_gtp(vertex, n))
    if to_play is not None:
        game.to_play = _COLOURS[to_play]
    return game


def grid(text: str) -> np.ndarray:
    """An expected grid: integers, or '.' / 'X' / 'O' meaning 'no value here' (-1)."""
    rows = parse_rows(text)
    return np.array([[int(t) if t.lstrip("-").isdigit() else -1 for t in row] for row in rows])


def decode(planes: np.ndarray, first: int = 1) -> np.ndarray:
    """A one-hot group [K, N, N] back to values: first + index of the set plane, -1 where none.
    Fails if a point has more than one plane set."""
    assert planes.sum(axis=0).max() <= 1, "one-hot group with two planes set at a point"
    values = np.argmax(planes, axis=0) + first
    values[planes.sum(axis=0) == 0] = -1
    return values


def points(game: Game, plane: np.ndarray) -> set[str]:
    """The GTP vertices where a single plane [N, N] is set."""
    n = game.size
    return {format_gtp(loc(r, c, n), n) for r, c in zip(*np.nonzero(plane))}
