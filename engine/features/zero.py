"""The AlphaGo Zero history planes (Silver et al. 2017): own / opponent stones, newest first.

`history_planes(boards, n, c, offsets, out)` reads `Game.board_history` (padded F_COLOR arrays,
oldest first, at most 8) and writes, for player c, `own_history[i]` / `opponent_history[i]` = c's /
the opponent's stones i positions ago (i = 0 is the current position; a pass repeats a position),
all zero for positions before the start of the game (or before the handicap stones were set), and
`black_to_move` = 1 everywhere if c is black. The order within the 16 planes is all own planes,
then all opponent planes (Leela Zero's order), as docs/algorithms.md §3.2 describes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.board import BLACK

HISTORY = 8


@njit(cache=True)
def _history_kernel(h0, h1, h2, h3, h4, h5, h6, h7, count, n, c, o_own, o_opp, o_btm, out):
    """out uint8[C, N*N]; h0 is the current position, h_i the one i moves earlier (i < count)."""
    w = n + 2
    opp = 3 - c
    for i in range(HISTORY):
        h = h0 if i == 0 else h1 if i == 1 else h2 if i == 2 else h3 if i == 3 else \
            h4 if i == 4 else h5 if i == 5 else h6 if i == 6 else h7
        for r in range(n):
            for col in range(n):
                pos = r * n + col
                x = h[(r + 1) * w + col + 1] if i < count else 0
                if o_own >= 0:
                    out[o_own + i, pos] = 1 if x == c else 0
                if o_opp >= 0:
                    out[o_opp + i, pos] = 1 if x == opp else 0
    if o_btm >= 0:
        for pos in range(n * n):
            out[o_btm, pos] = 1 if c == BLACK else 0


def history_planes(boards: list[np.ndarray], n: int, c: int, offsets: dict[str, int],
                   out: np.ndarray) -> None:
    """Write the history groups present in `offsets` into out uint8[C, N, N] (other planes kept)."""
    count = min(len(boards), HISTORY)
    newest_first = [boards[-1 - i] for i in range(count)]
    newest_first += [newest_first[0]] * (HISTORY - count)  # placeholders, never read
    _history_kernel(*newest_first, count, n, c, offsets.get("own_history", -1),
                    offsets.get("opponent_history", -1), offsets.get("black_to_move", -1),
                    out.reshape(out.shape[0], n * n))
