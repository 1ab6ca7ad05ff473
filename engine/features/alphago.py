"""The AlphaGo planes (Silver et al. 2016, Extended Data Table 2) in one numba pass over the board.

`alphago_planes(st, meta, c, offs, out)` writes every plane group whose offset in `offs` (indexed by
the group ids below, -1 = absent) is set, for player c, into out uint8[C, N*N] (Pos order, row 0 at
the top). Groups and buckets are defined in `engine.features.registry`; the definitions that need
more words:

* Turns since: a stone played at move m (st[F_AGE]) when meta[M_MOVENUM] moves (passes included)
  have been played was played k = M_MOVENUM - m + 1 moves ago; the last move has k = 1. Setup and
  handicap stones (age 0) count as 8 or more.
* Candidate moves are the legal moves of the player: empty, not the simple-ko point, not suicide
  (superko and the rules' suicide flag are ignored). Every plane of a candidate group is 0 at a
  point that is not a candidate.
* Liberties after the move, self-atari size and capture size are counted exactly, captures
  included, in one pass per candidate without playing the move: the new liberties are the empty
  neighbours of the move and of the own strings it joins, plus every captured stone adjacent to the
  move or to one of those strings.
* Sensibleness: a candidate that is not a true eye of the player, where a true eye (the rule of
  `engine.board.is_eye`, shared with the playouts) is an empty point whose on-board neighbours are
  all the player's stones and whose diagonal points hold no opponent stone if the point is on the
  edge or in the corner, at most one if it is in the centre. Empty diagonals do not count.
* Ladders: see `engine.features.ladder`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.board import (BLACK, EMPTY, F_AGE, F_COLOR, F_HEAD, F_LIBS, F_NEXT, F_SIZE, M_KO,
                          M_KOCOLOR, M_MOVENUM, M_N, M_W, is_eye)
from engine.features.ladder import ladder_captures, ladder_escapes
from engine.features.registry import KERNEL_GROUPS

# Group ids: the index of each group in `offs`, in registry.KERNEL_GROUPS order.
(G_STONE_COLOUR, G_ONES, G_TURNS_SINCE, G_LIBERTIES, G_CAPTURE_SIZE, G_SELF_ATARI_SIZE,
 G_LIBERTIES_AFTER, G_LADDER_CAPTURE, G_LADDER_ESCAPE, G_SENSIBLENESS, G_ZEROS,
 G_PLAYER_COLOUR) = range(len(KERNEL_GROUPS))
N_GROUPS = len(KERNEL_GROUPS)

# Groups that need the per-candidate pass.
_CANDIDATE_GROUPS = (G_CAPTURE_SIZE, G_SELF_ATARI_SIZE, G_LIBERTIES_AFTER, G_LADDER_CAPTURE,
                     G_LADDER_ESCAPE, G_SENSIBLENESS)


def kernel_offsets(offsets: dict[str, int]) -> np.ndarray:
    """int64[N_GROUPS]: the offset of each kernel group in a feature set, -1 where absent."""
    offs = np.full(N_GROUPS, -1, dtype=np.int64)
    for gid, group in enumerate(KERNEL_GROUPS):
        if group in offsets:
            offs[gid] = offsets[group]
    return offs


@njit(cache=True, inline="always")
def _bucket(value, top):
    """min(value, top), the one-hot bucket of a count whose last plane means `top` or more."""
    return value if value < top else top


@njit(cache=True)
def _adjacent_to(st, w, x, p, c, heads, nh):
    """True if point x touches p or a stone of one of the strings heads[:nh] (colour c)."""
    for y in (x - w, x + w, x - 1, x + 1):
        if y == p:
            return True
        if st[F_COLOR, y] == c:
            hy = st[F_HEAD, y]
            for i in range(nh):
                if heads[i] == hy:
                    return True
    return False


@njit(cache=True)
def _libs_after(st, meta, p, c, own, n_own, cap, n_cap, empties, mk, ctr):
    """Liberties of c's string through p after c plays p, captures of strings cap[:n_cap] included.
    own[:n_own] are the distinct c strings adjacent to p, `empties` p's empty neighbours."""
    w = meta[M_W]
    libs = 0
    if n_own == 0:
        libs = empties
    elif n_own == 1:
        # liberties of the string, less p, plus p's empty neighbours that are not already liberties
        h = own[0]
        libs = st[F_LIBS, h] - 1
        for q in (p - w, p + w, p - 1, p + 1):
            if st[F_COLOR, q] == EMPTY:
                new = True
                for r in (q - w, q + w, q - 1, q + 1):
                    if st[F_COLOR, r] == c and st[F_HEAD, r] == h:
                        new = False
                        break
                if new:
                    libs += 1
    else:
        ctr[0] += 1
        stamp = ctr[0]
        mk[p] = stamp
        for q in (p - w, p + w, p - 1, p + 1):
            if st[F_COLOR, q] == EMPTY and mk[q] != stamp:
                mk[q] = stamp
                libs += 1
        for i in range(n_own):
            h = own[i]
            s = h
            while True:
                for q in (s - w, s + w, s - 1, s + 1):
                    if st[F_COLOR, q] == EMPTY and mk[q] != stamp:
                        mk[q] = stamp
                        libs += 1
                s = st[F_NEXT, s]
                if s == h:
                    break
    # captured stones next to the new string become its liberties (they were not empty before)
    for i in range(n_cap):
        h = cap[i]
        s = h
        while True:
            if _adjacent_to(st, w, s, p, c, own, n_own):
                libs += 1
            s = st[F_NEXT, s]
            if s == h:
                break
    return libs


@njit(cache=True, inline="always")
def _stone_planes(st, meta, p, pos, c, offs, out):
    col = st[F_COLOR, p]
    if offs[G_STONE_COLOUR] >= 0:
        out[offs[G_STONE_COLOUR] + (0 if col == c else 1), pos] = 1
    if offs[G_TURNS_SINCE] >= 0:
        age = st[F_AGE, p]
        k = 8 if age == 0 else meta[M_MOVENUM] - age + 1
        out[offs[G_TURNS_SINCE] + _bucket(k, 8) - 1, pos] = 1
    if offs[G_LIBERTIES] >= 0:
        out[offs[G_LIBERTIES] + _bucket(st[F_LIBS, st[F_HEAD, p]], 8) - 1, pos] = 1


@njit(cache=True, inline="always")
def _candidate_planes(st, meta, p, pos, c, offs, out, own, cap, mk, ctr, pool_st, pool_meta,
                      frames):
    """The candidate-move planes at empty point p; nothing is written if p is not legal for c."""
    w = meta[M_W]
    opp = 3 - c
    if p == meta[M_KO] and c == meta[M_KOCOLOR]:
        return
    empties = 0
    n_own = 0
    n_cap = 0
    captured = 0
    own_safe = False      # an adjacent own string keeps a liberty after the move
    own_in_atari = False  # an adjacent own string is in atari now
    ataris = False        # an adjacent opponent string has two liberties (the move ataris it)
    for q in (p - w, p + w, p - 1, p + 1):
        col = st[F_COLOR, q]
        if col == EMPTY:
            empties += 1
        elif col == c:
            h = st[F_HEAD, q]
            dup = False
            for i in range(n_own):
                if own[i] == h:
                    dup = True
            if not dup:
                own[n_own] = h
                n_own += 1
                if st[F_LIBS, h] > 1:
                    own_safe = True
                else:
                    own_in_atari = True
        elif col == opp:
            h = st[F_HEAD, q]
            libs = st[F_LIBS, h]
            if libs == 1:
                dup = False
                for i in range(n_cap):
                    if cap[i] == h:
                        dup = True
                if not dup:
                    cap[n_cap] = h
                    n_cap += 1
                    captured += st[F_SIZE, h]
            elif libs == 2:
                ataris = True
    if empties == 0 and n_cap == 0 and not own_safe:
        return  # suicide
    if offs[G_CAPTURE_SIZE] >= 0:
        out[offs[G_CAPTURE_SIZE] + _bucket(captured, 7), pos] = 1
    if offs[G_SELF_ATARI_SIZE] >= 0 or offs[G_LIBERTIES_AFTER] >= 0:
        libs = _libs_after(st, meta, p, c, own, n_own, cap, n_cap, empties, mk, ctr)
        if offs[G_LIBERTIES_AFTER] >= 0:
            out[offs[G_LIBERTIES_AFTER] + _bucket(libs, 8) - 1, pos] = 1
        if libs == 1 and offs[G_SELF_ATARI_SIZE] >= 0:
            size = 1
            for i in range(n_own):
                size += st[F_SIZE, own[i]]
            out[offs[G_SELF_ATARI_SIZE] + _bucket(size, 8) - 1, pos] = 1
    if offs[G_SENSIBLENESS] >= 0 and not is_eye(st, meta, p, c):
        out[offs[G_SENSIBLENESS], pos] = 1
    if offs[G_LADDER_CAPTURE] >= 0 and ataris and ladder_captures(st, meta, p, c, mk, ctr,
                                                                         pool_st, pool_meta, frames):
        out[offs[G_LADDER_CAPTURE], pos] = 1
    if (offs[G_LADDER_ESCAPE] >= 0 and (own_in_atari or n_cap > 0)
            and ladder_escapes(st, meta, p, c, mk, ctr, pool_st, pool_meta, frames)):
        out[offs[G_LADDER_ESCAPE], pos] = 1


@njit(cache=True)
def alphago_planes(st, meta, c, offs, out, mk, ctr, pool_st, pool_meta, frames):
    """Write the kernel groups of `offs` for player c into out uint8[C, N*N] (all of out is
    overwritten; planes of groups not in `offs` are left 0). Does not modify the board.
    mk .. frames: scratch from `engine.features.ladder.new_scratch(N)`."""
    n = meta[M_N]
    w = meta[M_W]
    out[:, :] = 0
    own = np.empty(4, dtype=np.int64)
    cap = np.empty(4, dtype=np.int64)
    candidates = False
    for g in _CANDIDATE_GROUPS:
        if offs[g] >= 0:
            candidates = True
    for r in range(n):
        for col in range(n):
            pos = r * n + col
            p = (r + 1) * w + col + 1
            if offs[G_ONES] >= 0:
                out[offs[G_ONES], pos] = 1
            if offs[G_PLAYER_COLOUR] >= 0 and c == BLACK:
                out[offs[G_PLAYER_COLOUR], pos] = 1
            if st[F_COLOR, p] == EMPTY:
                if offs[G_STONE_COLOUR] >= 0:
                    out[offs[G_STONE_COLOUR] + 2, pos] = 1
                if candidates:
                    _candidate_planes(st, meta, p, pos, c, offs, out, own, cap, mk, ctr,
                                      pool_st, pool_meta, frames)
            else:
                _stone_planes(st, meta, p, pos, c, offs, out)
