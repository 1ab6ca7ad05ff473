"""Cheap move priors for the search when no policy network is loaded (and for the AlphaGo search's
tree nodes before the network's answer arrives). Weights, before normalisation:

| feature                                        | effect  |
|------------------------------------------------|---------|
| base                                           | 1       |
| captures an opponent string                    | +8      |
| saves an own string from atari (>= 2 libs)     | +8      |
| within Manhattan distance 2 of the last move   | +1.5    |
| first line / second line, board not crowded    | x0.2 / x0.7 |
| third or fourth line in the opening            | x1.5    |
| self-atari of more than one stone              | x0.02   |
| pass                                           | PASS_WEIGHT (fixed share) |

Moves that fill a true own eye are not candidates at all.
"""
from __future__ import annotations

from numba import njit

from goengine.engine.board import (F_COLOR, F_ELIST, F_HEAD, F_LIBS, LEGAL, M_LAST, M_N, M_NEMPTY,
                          M_W, is_eye, legality)
from goengine.engine.playout import captures_something, is_bad_self_atari, libs_after

PASS_WEIGHT = 0.01


@njit(cache=True)
def _saves_atari(st, meta, p, c):
    w = meta[M_W]
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] == c and st[F_LIBS, st[F_HEAD, q]] == 1:
            return libs_after(st, meta, p, c) >= 2
    return False


@njit(cache=True)
def heuristic_priors(st, meta, c, moves, priors):
    """Fill moves[:k] (Locs, the last one -1 = pass) and priors[:k] (summing to 1); return k."""
    n = meta[M_N]
    w = meta[M_W]
    n_empty = meta[M_NEMPTY]
    crowded = n_empty < (n * n) * 0.6
    opening = n_empty > (n * n) * 0.85
    last = meta[M_LAST]
    lr = last // w - 1
    lc = last % w - 1
    k = 0
    total = 0.0
    for i in range(n_empty):
        p = st[F_ELIST, i]
        if is_eye(st, meta, p, c):
            continue
        if legality(st, meta, p, c) != LEGAL:
            continue
        weight = 1.0
        if captures_something(st, meta, p, c):
            weight += 8.0
        elif is_bad_self_atari(st, meta, p, c):
            weight *= 0.02
        if _saves_atari(st, meta, p, c):
            weight += 8.0
        r = p // w - 1
        col = p % w - 1
        if last >= 0 and abs(r - lr) + abs(col - lc) <= 2:
            weight += 1.5
        d = min(min(r, col), min(n - 1 - r, n - 1 - col))
        if n >= 9 and not crowded:
            if d == 0:
                weight *= 0.2
            elif d == 1:
                weight *= 0.7
            elif opening and (d == 2 or d == 3):
                weight *= 1.5
        moves[k] = p
        priors[k] = weight
        total += weight
        k += 1
    pass_share = PASS_WEIGHT if k > 0 else 1.0
    moves[k] = -1
    k += 1
    if total > 0:
        for i in range(k - 1):
            priors[i] = priors[i] / total * (1.0 - pass_share)
    priors[k - 1] = pass_share
    return k
