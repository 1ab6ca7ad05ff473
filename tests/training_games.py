"""Learnable 9x9 games for the training tests (tests/data/training/diagonals-9x9.sgf).

Every game walks diagonals: each move is the point down and to the right of the one before
(wrapping around the board's edges), and after 9 moves a new diagonal begins two columns over.
Points of diagonals two columns apart never touch, so no stone is ever captured and every move
is legal. Most moves are therefore the last move's down-right neighbour: a rule a small
convolutional policy learns in a few hundred steps, far above chance.

    python -m tests.training_games     # rewrites the fixture
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).parent / "data" / "training" / "diagonals-9x9.sgf"
SIZE = 9
DIAGONALS = 4       # offsets 0, 2, 4, 6: an offset of 8 would touch offset 0
LETTERS = "abcdefghi"


def diagonal_game(rng: np.random.Generator) -> list[tuple[int, int]]:
    """(row, column) of the 36 moves of one game."""
    moves = []
    shift = int(rng.integers(SIZE))
    for d in range(DIAGONALS):
        r = int(rng.integers(SIZE))
        for _ in range(SIZE):
            moves.append((r, (r + shift + 2 * d) % SIZE))
            r = (r + 1) % SIZE
    return moves


def sgf_collection(games: int = 120, seed: int = 7) -> str:
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        body = "".join(";%s[%s%s]" % ("BW"[i % 2], LETTERS[c], LETTERS[r])
                       for i, (r, c) in enumerate(diagonal_game(rng)))
        out.append("(;GM[1]FF[4]SZ[%d]KM[7]RU[Chinese]PB[black]PW[white]RE[%s]%s)\n"
                   % (SIZE, "B+R" if g % 2 else "W+R", body))
    return "".join(out)


if __name__ == "__main__":
    FIXTURE.write_text(sgf_collection())
