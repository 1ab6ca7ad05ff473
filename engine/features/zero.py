"""The AlphaGo Zero history planes (Silver et al. 2017): own / opponent stones, newest first.

`history_planes(boards, c, offs, out)` reads `Game.board_history` (padded F_COLOR arrays, oldest
first, at most 8) and writes, for player c, `own_history[i]` / `opponent_history[i]` = c's /
the opponent's stones i positions ago (i = 0 is the current position), all zero for positions
before the start of the game (or before the handicap stones were set), and `black_to_move` = 1
everywhere if c is black. The order within the 16 planes is all own planes, then all opponent
planes (Leela Zero's order), as docs ALGORITHMS.md 3.2 describes.
"""
from __future__ import annotations

import numpy as np

from engine.board import BLACK

HISTORY = 8


def history_planes(boards: list[np.ndarray], n: int, c: int, offsets: dict[str, int],
                   out: np.ndarray) -> None:
    """Write the history groups present in `offsets` into out uint8[C, N, N] (other planes kept)."""
    w = n + 2
    opp = 3 - c
    o_own = offsets.get("own_history", -1)
    o_opp = offsets.get("opponent_history", -1)
    for i in range(HISTORY):
        if i < len(boards):
            colors = boards[-1 - i].reshape(w, w)[1:-1, 1:-1]
            if o_own >= 0:
                np.equal(colors, c, out=out[o_own + i], casting="unsafe")
            if o_opp >= 0:
                np.equal(colors, opp, out=out[o_opp + i], casting="unsafe")
        else:
            if o_own >= 0:
                out[o_own + i] = 0
            if o_opp >= 0:
                out[o_opp + i] = 0
    if "black_to_move" in offsets:
        out[offsets["black_to_move"]] = 1 if c == BLACK else 0
