"""The AlphaGo planes (Silver et al. 2016, Extended Data Table 2) in one numba pass over the board.

`alphago_planes(st, meta, c, offs, out, *scratch)` writes every plane group whose offset in `offs`
(indexed by the group ids below, -1 = absent) is set, for player c, into out uint8[C, N*N] (Pos
order, row 0 at the top). Groups and buckets are defined in `engine.features.registry`; the
definitions that need more words:

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

Speed: a numba call that passes arrays costs reference counting on each of them (about 100 ns for
ten arrays), so the per-point work is written out inside the two passes, `_stone_pass` and
`_candidate_pass`, and only rare cases (two or more own strings joined, captures, eyes, ladders)
call helpers.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.board import (EMPTY, F_AGE, F_COLOR, F_HEAD, F_LIBS, F_NEXT, F_SIZE, M_KO, M_KOCOLOR,
                          M_MOVENUM, M_N, M_W, is_eye)
from goengine.engine.features.ladder import C_STAMP, ladder_captures, ladder_escapes
from goengine.engine.features.registry import KERNEL_GROUPS

# Group ids: the index of each group in `offs`, in registry.KERNEL_GROUPS order.
(G_STONE_COLOUR, G_ONES, G_TURNS_SINCE, G_LIBERTIES, G_CAPTURE_SIZE, G_SELF_ATARI_SIZE,
 G_LIBERTIES_AFTER, G_LADDER_CAPTURE, G_LADDER_ESCAPE, G_SENSIBLENESS, G_ZEROS,
 G_PLAYER_COLOUR) = range(len(KERNEL_GROUPS))
N_GROUPS = len(KERNEL_GROUPS)


def kernel_offsets(offsets: dict[str, int]) -> np.ndarray:
    """int64[N_GROUPS]: the offset of each kernel group in a feature set, -1 where absent."""
    offs = np.full(N_GROUPS, -1, dtype=np.int64)
    for gid, group in enumerate(KERNEL_GROUPS):
        if group in offsets:
            offs[gid] = offsets[group]
    return offs


@njit(cache=True)
def _joined_libs(st, meta, p, own, n_own, mk, ctr):
    """Liberties of the string c makes at p by joining the strings own[:n_own] (n_own >= 2),
    captures not counted: the empty points next to p or to one of the strings, less p."""
    w = meta[M_W]
    ctr[C_STAMP] += 1
    stamp = ctr[C_STAMP]
    mk[p] = stamp
    libs = 0
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
    return libs


@njit(cache=True)
def _captured_libs(st, meta, p, c, own, n_own, cap, n_cap):
    """Captured stones (strings cap[:n_cap]) that touch p or one of the strings own[:n_own]: each
    becomes a liberty of the new string (they were not empty before, so none is counted twice)."""
    w = meta[M_W]
    libs = 0
    for i in range(n_cap):
        h = cap[i]
        s = h
        while True:
            for y in (s - w, s + w, s - 1, s + 1):
                touches = y == p
                if not touches and st[F_COLOR, y] == c:
                    hy = st[F_HEAD, y]
                    for j in range(n_own):
                        if own[j] == hy:
                            touches = True
                if touches:
                    libs += 1
                    break
            s = st[F_NEXT, s]
            if s == h:
                break
    return libs


@njit(cache=True)
def _stone_pass(st, meta, c, offs, out):
    """ones, player colour, and the stone groups (colour, turns since, liberties) at every point."""
    n = meta[M_N]
    w = meta[M_W]
    color = st[F_COLOR]
    head = st[F_HEAD]
    libs = st[F_LIBS]
    age = st[F_AGE]
    movenum = meta[M_MOVENUM]
    o_colour = offs[G_STONE_COLOUR]
    o_turns = offs[G_TURNS_SINCE]
    o_libs = offs[G_LIBERTIES]
    if offs[G_ONES] >= 0:
        out[offs[G_ONES], :] = 1
    if offs[G_PLAYER_COLOUR] >= 0 and c == 1:
        out[offs[G_PLAYER_COLOUR], :] = 1
    for r in range(n):
        for col in range(n):
            pos = r * n + col
            p = (r + 1) * w + col + 1
            x = color[p]
            if x == EMPTY:
                if o_colour >= 0:
                    out[o_colour + 2, pos] = 1
                continue
            if o_colour >= 0:
                out[o_colour + (0 if x == c else 1), pos] = 1
            if o_turns >= 0:
                k = 8 if age[p] == 0 else min(movenum - age[p] + 1, 8)
                out[o_turns + k - 1, pos] = 1
            if o_libs >= 0:
                out[o_libs + min(libs[head[p]], 8) - 1, pos] = 1


@njit(cache=True, inline="always")
def _candidate_pass(st, meta, c, offs, out, mk, ctr, pool_st, pool_meta, frames):
    """The candidate-move groups at every legal move of c (see the module docstring)."""
    n = meta[M_N]
    w = meta[M_W]
    opp = 3 - c
    color = st[F_COLOR]
    head = st[F_HEAD]
    libs = st[F_LIBS]
    size = st[F_SIZE]
    ko = meta[M_KO] if meta[M_KOCOLOR] == c else -1
    o_cap = offs[G_CAPTURE_SIZE]
    o_sa = offs[G_SELF_ATARI_SIZE]
    o_la = offs[G_LIBERTIES_AFTER]
    o_lc = offs[G_LADDER_CAPTURE]
    o_le = offs[G_LADDER_ESCAPE]
    o_sens = offs[G_SENSIBLENESS]
    own = np.empty(4, dtype=np.int64)
    cap = np.empty(4, dtype=np.int64)
    for r in range(n):
        for col in range(n):
            p = (r + 1) * w + col + 1
            if color[p] != EMPTY or p == ko:
                continue
            pos = r * n + col
            # the distinct strings around p: own (joined), opponent in atari (captured)
            empties = 0
            n_own = np.int64(0)     # not the literal 0, which numba would compile
            n_cap = np.int64(0)     # _joined_libs and _captured_libs for as well
            captured = 0
            joined = 1            # stones of the string after the move, captures aside
            own_safe = False      # an own neighbour string keeps a liberty after the move
            own_atari = False     # an own neighbour string is in atari now
            ataris = False        # an opponent neighbour string has two liberties
            foes = False          # an opponent stone is next to p
            for q in (p - w, p + w, p - 1, p + 1):
                x = color[q]
                if x == EMPTY:
                    empties += 1
                elif x == c:
                    h = head[q]
                    if n_own > 0 and (own[0] == h or (n_own > 1 and own[1] == h)
                                      or (n_own > 2 and own[2] == h)):
                        continue
                    own[n_own] = h
                    n_own += 1
                    joined += size[h]
                    if libs[h] > 1:
                        own_safe = True
                    else:
                        own_atari = True
                elif x == opp:
                    foes = True
                    h = head[q]
                    if libs[h] == 2:
                        ataris = True
                    elif libs[h] == 1:
                        if n_cap > 0 and (cap[0] == h or (n_cap > 1 and cap[1] == h)
                                          or (n_cap > 2 and cap[2] == h)):
                            continue
                        cap[n_cap] = h
                        n_cap += 1
                        captured += size[h]
            if empties == 0 and n_cap == 0 and not own_safe:
                continue  # suicide
            if o_cap >= 0:
                out[o_cap + min(captured, 7), pos] = 1
            la = -1  # liberties after the move, when a group needs them
            if o_sa >= 0 or o_la >= 0 or (o_le >= 0 and own_atari):
                if n_own == 0:
                    la = empties
                elif n_own == 1:
                    # the string's liberties less p, plus p's empty neighbours it did not touch
                    h = own[0]
                    la = libs[h] - 1
                    for q in (p - w, p + w, p - 1, p + 1):
                        if color[q] == EMPTY:
                            if not ((color[q - w] == c and head[q - w] == h)
                                    or (color[q + w] == c and head[q + w] == h)
                                    or (color[q - 1] == c and head[q - 1] == h)
                                    or (color[q + 1] == c and head[q + 1] == h)):
                                la += 1
                else:
                    la = _joined_libs(st, meta, p, own, n_own, mk, ctr)
                if n_cap > 0:
                    la += _captured_libs(st, meta, p, c, own, n_own, cap, n_cap)
                if o_la >= 0:
                    out[o_la + min(la, 8) - 1, pos] = 1
                if o_sa >= 0 and la == 1:
                    out[o_sa + min(joined, 8) - 1, pos] = 1
            if o_sens >= 0:
                # only a point surrounded by own stones (and the edge) can be an eye
                if empties > 0 or foes or not is_eye(st, meta, p, c):
                    out[o_sens, pos] = 1
            if o_lc >= 0 and ataris:
                if ladder_captures(st, meta, p, c, mk, ctr, pool_st, pool_meta, frames):
                    out[o_lc, pos] = 1
            if o_le >= 0 and (own_atari or n_cap > 0):
                if ladder_escapes(st, meta, p, c, la, mk, ctr, pool_st, pool_meta, frames):
                    out[o_le, pos] = 1


@njit(cache=True)
def alphago_planes(st, meta, c, offs, out, mk, ctr, pool_st, pool_meta, frames):
    """Write the kernel groups of `offs` for player c into out uint8[C, N*N] (all of out is
    overwritten; planes of groups not in `offs` are left 0). Does not modify the board.
    mk .. frames: scratch from `engine.features.ladder.new_scratch(N)`."""
    out[:, :] = 0
    _stone_pass(st, meta, c, offs, out)
    if (offs[G_CAPTURE_SIZE] >= 0 or offs[G_SELF_ATARI_SIZE] >= 0 or offs[G_LIBERTIES_AFTER] >= 0
            or offs[G_LADDER_CAPTURE] >= 0 or offs[G_LADDER_ESCAPE] >= 0
            or offs[G_SENSIBLENESS] >= 0):
        _candidate_pass(st, meta, c, offs, out, mk, ctr, pool_st, pool_meta, frames)
