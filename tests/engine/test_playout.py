"""The playouts' self-atari tests: the heuristic playouts prune every self-atari of two or more
stones; the nakade sacrifices among them are told apart for the rollout policy's self-atari rule."""
from __future__ import annotations

import pytest

from goengine.engine.board import BLACK, WHITE
from goengine.engine.playout import is_bad_self_atari, is_nakade_sacrifice, killable_shape
from positions import load_board, pt

# White's pocket of five points (C5, D5, C4, D4, C3: a bulky five), black already holding three.
BULKY_POCKET = """
. . . . . . .
. O O O O . .
. O X X O . .
. O X . O . .
. O . O O . .
. O O O . . .
. . . . . . .
"""

# The same with a hole in the wall below C3: the space is no longer enclosed.
OPEN_POCKET = """
. . . . . . .
. O O O O . .
. O X X O . .
. O X . O . .
. O . O O . .
. O . O . . .
. . . . . . .
"""

# A straight three in the corner (A7, B7, C7), black holding A7.
CORNER_THREE = """
X . . O . . .
O O O O . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""

# The same, the space walled by two white strings (A6-C6, and D7 beside the liberty C7).
CORNER_THREE_TWO_WALLS = """
X . . O . . .
O O O . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""

# A seki (tests/engine/test_deadstones.py): black B9-C7 and white D9-D7 share C9 and C8. Filling
# C8 makes a bulky five (black) or a pyramid four (white) in atari, but the taker's stones inside
# connect out to its wall: the sacrifice kills nothing.
SEKI = """
O X . O X . . . .
O X . O X . . . .
O X X O X . . . .
O O O X X . . . .
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
. . O X . . . . .
"""

# A black stone in the open, one extension away from a two-stone self-atari.
OPEN_FIELD = """
. O . . . . .
O X O . . . .
O . O . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""


@pytest.mark.parametrize("board, move, nakade", [
    (BULKY_POCKET, "D4", True),    # four in a square, taken: a dead square four
    (BULKY_POCKET, "C3", False),   # four bent, taken: white lives with a bent four
    (OPEN_POCKET, "D4", False),    # the liberty C3 opens to C2: not an eye space
    (CORNER_THREE, "B7", True),    # two of a straight three: white is left one eye
    (CORNER_THREE_TWO_WALLS, "B7", False),   # two strings around it
    (OPEN_FIELD, "B5", False),     # two stones in atari in the open
    (SEKI, "C8", False),           # black's bulky five in a seki
    (SEKI, "C9", False),
])
def test_nakade_sacrifices_among_self_ataris_of_two_or_more_stones(board, move, nakade):
    g = load_board(board, to_play=BLACK)
    p = pt(g, move)
    assert is_bad_self_atari(g.st, g.meta, p, BLACK)      # the heuristic playouts prune them all
    assert is_nakade_sacrifice(g.st, g.meta, p, BLACK) is nakade


@pytest.mark.parametrize("move", ["C8", "C9"])
def test_no_side_fills_a_seki(move):
    g = load_board(SEKI, to_play=WHITE)
    p = pt(g, move)
    assert is_bad_self_atari(g.st, g.meta, p, WHITE)
    assert not is_nakade_sacrifice(g.st, g.meta, p, WHITE)


def test_moves_that_are_no_self_atari_are_not_bad():
    g = load_board(BULKY_POCKET, to_play=BLACK)
    for move in ("E2", "F4", "A1"):        # plenty of liberties
        assert not is_bad_self_atari(g.st, g.meta, pt(g, move), BLACK)
    g = load_board(CORNER_THREE, to_play=BLACK)
    assert not is_bad_self_atari(g.st, g.meta, pt(g, "C7"), BLACK)   # one stone may throw in


def _degrees(cells):
    cells = set(cells)
    degrees = [sum((r + dr, c + dc) in cells for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)))
               for r, c in cells]
    return len(cells), max(degrees), sum(degrees)


@pytest.mark.parametrize("cells, killable", [
    ([(0, 0), (0, 1)], True),                                        # two points
    ([(0, 0), (0, 1), (0, 2)], True),                                # straight three
    ([(0, 0), (0, 1), (1, 1)], True),                                # bent three
    ([(0, 0), (0, 1), (1, 0), (1, 1)], True),                        # square four
    ([(0, 0), (0, 1), (0, 2), (1, 1)], True),                        # pyramid four
    ([(0, 0), (0, 1), (0, 2), (0, 3)], False),                       # straight four
    ([(0, 0), (1, 0), (2, 0), (2, 1)], False),                       # bent (L) four
    ([(0, 0), (0, 1), (1, 1), (1, 2)], False),                       # zigzag four
    ([(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)], True),                # crossed five
    ([(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)], True),                # bulky five
    ([(0, 0), (0, 1), (0, 2), (1, 1), (2, 1)], False),               # T five
    ([(0, 0), (0, 1), (0, 2), (0, 3), (0, 4)], False),               # straight five
    ([(0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2)], True),        # rabbity six
    ([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)], False),       # rectangular six
    ([(0, 1), (1, 0), (1, 1), (1, 2), (2, 1), (3, 1)], False),       # a cross with a tail
])
def test_killable_eye_shapes(cells, killable):
    assert killable_shape(*_degrees(cells)) is killable
