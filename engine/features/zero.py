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

from goengine.engine.board import BLACK, M_TOPLAY

HISTORY = 8


@njit(cache=True)
def _history_kernel(hist, count, n, c, o_own, o_opp, o_btm, out):
    """out uint8[C, N*N] (or float32); hist[:count] the colour rows of the last positions, oldest
    first (the current one at count - 1). Row by row, the missing positions' planes zeroed
    apart: a search's batch of 9x9 leaves in 60% of the time of a test per point."""
    w = n + 2
    opp = 3 - c
    for i in range(HISTORY):
        if i < count:
            row = hist[count - 1 - i]
            for r in range(n):
                base = (r + 1) * w + 1
                for col in range(n):
                    x = row[base + col]
                    pos = r * n + col
                    if o_own >= 0:
                        out[o_own + i, pos] = 1 if x == c else 0
                    if o_opp >= 0:
                        out[o_opp + i, pos] = 1 if x == opp else 0
        else:
            for pos in range(n * n):
                if o_own >= 0:
                    out[o_own + i, pos] = 0
                if o_opp >= 0:
                    out[o_opp + i, pos] = 0
    if o_btm >= 0:
        v = 1 if c == BLACK else 0
        for pos in range(n * n):
            out[o_btm, pos] = v


def _groups(offsets: dict[str, int]) -> tuple[int, int, int]:
    return (offsets.get("own_history", -1), offsets.get("opponent_history", -1),
            offsets.get("black_to_move", -1))


def history_planes(boards: list[np.ndarray], n: int, c: int, offsets: dict[str, int],
                   out: np.ndarray) -> None:
    """Write the history groups present in `offsets` into out uint8[C, N, N] (other planes kept)."""
    count = min(len(boards), HISTORY)
    hist = np.stack(boards[len(boards) - count:]) if count else np.zeros((1, 1), np.int32)
    _history_kernel(hist, count, n, c, *_groups(offsets), out.reshape(out.shape[0], n * n))


@njit(cache=True)
def _batch_kernel(hists, counts, metas, m, n, o_own, o_opp, o_btm, out, covered):
    """`covered`: the groups write every plane (zero17), so none is zeroed first."""
    for j in range(m):
        if not covered:
            out[j, :, :] = 0
        _history_kernel(hists[j], counts[j], n, metas[j, M_TOPLAY], o_own, o_opp, o_btm, out[j])


def history_planes_batch(hists: np.ndarray, counts: np.ndarray, metas: np.ndarray, n: int,
                         offsets: dict[str, int], num_planes: int,
                         dtype=np.uint8) -> np.ndarray:
    """dtype[m, C, N, N] (0 and 1): the history groups of `offsets` (the other planes 0) for m
    positions whose colour rows are hists[j, :counts[j]] (oldest first) with metas[j] to play:
    the leaves of a search's batch (engine.search.leaves), planes as `history_planes` writes them
    one by one; float32 for a network's input, written so with no uint8 copy between."""
    m = len(counts)
    out = np.empty((m, num_planes, n * n), dtype=dtype)
    groups = _groups(offsets)
    covered = min(groups) >= 0 and num_planes == 2 * HISTORY + 1
    _batch_kernel(hists, counts, metas, m, n, *groups, out, covered)
    return out.reshape(m, num_planes, n, n)
