"""AlphaGo's fast rollout policy: a linear softmax over the pattern features of
`engine.rollout.patterns`, and a numba playout that samples from it incrementally.

    from goengine.engine.rollout import RolloutPolicy, policy_playout
    pol = RolloutPolicy.load("models/bundled/rollout.npz")
    score, own = policy_playout(st, meta, max_moves, amaf, pol.tables)

`policy_playout` has the contract of `engine.playout.playout` (the board is played in place to the
end; returns black area minus white area without komi, and int8 ownership per Loc; `amaf[p]`
gets the colour that first played p), plus one argument, the tuple `RolloutPolicy.tables`
(hkeys, hvals, scal, c3, t3k, t3v, rules):

* `hkeys` int64[2 * 2^b] with `hvals` its float64 view: a hash table (`patterns.table_find`) from
  pattern key (families diamond and nakade) to exp(weight); a diamond value already includes the
  `response` weight (that feature is on exactly when the diamond pattern is known);
* `t3k` int32[2 * 2^b3] with `t3v` its float32 view: the same for the 3x3 patterns (keyed by the
  canonical 24-bit code; a compact table of its own, as it is looked up most);
* `scal` float64[N_SCALARS]: exp(weight) of the scalar features (see `patterns.SCALAR_*`);
* `c3` float64[2^13, 4]: a direct-mapped cache of the 3x3 part of the weights, both colours, by
  raw 3x3 code ([code, black, white, -]). The playout writes it: threads running playouts at the
  same time need a tuple each (`RolloutPolicy.new_tables()`; the other arrays are shared and
  read-only);
* `rules` float64[N_RULES] (`PlayoutRules.array()`): the playout's rules beside the softmax, each
  a chance; 0 plays the softmax alone, as AlphaGo. `RULE_CAPTURE`: a string of two or more of the
  opponent's stones that a recent move left in atari (the last `ATARI_SLOTS` such strings are
  watched) is captured, the largest first, instead of drawing a move. `RULE_SELF_ATARI`: a drawn
  move that leaves its own string of two or more stones in atari, capturing nothing
  (`engine.playout.is_bad_self_atari`, the heuristic playouts' test; a single stone may still
  throw in, and a nakade sacrifice, `engine.playout.is_nakade_sacrifice`, is played too), is
  drawn again without it (at most `SELF_ATARI_TRIES` times a move). `RULE_BIG_SELF_ATARI`: the
  same for a self-atari of `BIG_SELF_ATARI` (7) or more stones, never a nakade; a side whose
  only moves are such self-ataris passes, so a seki between big groups stays a seki.

The weight of a move is the product of the exp(weights) of its active features (the softmax
numerator). Incremental evaluation: per point, the pattern state (colour + liberty bucket) and the
3x3 part of the weight for both colours are kept, and after a move only points whose 3x3
neighbourhood changed are recomputed (the move's neighbours, captured stones and their
neighbours, neighbours of stones whose string changed liberty bucket). The features that depend on
the last move (diamond response, neighbour, save atari, nakade) and the ko ban touch at most a few
points; they are applied as temporary multipliers before sampling and undone after. Sampling uses
per-row sums of the weights (a two-level running sum). Moves with weight 0 (illegal, or filling a
true own eye, `engine.board.is_eye`) are never played; a side with no move passes.

File format (`RolloutPolicy.save` / `load`): .npz with `keys` int64[F] (sorted, unique), `weights`
float32[F] and `meta` (a JSON string: `format`, training metrics ...).
"""
from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from goengine.engine.board import (BLACK, EMPTY, F_COLOR, F_HEAD, F_LIBS, F_NEXT, F_SIZE, M_KO,
                          M_KOCOLOR, M_LAST, M_N, M_TOPLAY, M_W, WHITE, area_ownership,
                          find_liberty, is_eye, legality, play_pass)
from goengine.engine.playout import (BIG_SELF_ATARI, SELF_ATARI_MAX, is_nakade_sacrifice,
                                     self_atari_size)
from goengine.engine.rollout.patterns import (CODE_MASK, DM_DC, DM_DR, DM_NB, FAM_3X3, FAM_DIAMOND,
                                     FAM_NAKADE, FAM_SCALAR, FAMILY_NAMES, FAMILY_SHIFT, K_3X3,
                                     K_DIAMOND, K_NAKADE, K_NEIGHBOUR, K_SAVE, N_SCALARS,
                                     NAKADE_MAX, NK, SCALAR_NAMES, SCALAR_NEIGHBOUR,
                                     SCALAR_RESPONSE, SCALAR_SAVE_ATARI, SCALAR_UNKNOWN_3X3, SWAP,
                                     build_table, canon3, code3_s3, diamond_key, diamond_perms,
                                     nakade_key, nakade_shapes, play_record, point_state,
                                     position_keys, save_atari_points, swap_code, table_find)

FORMAT = "goengine-rollout-v1"
CACHE3_BITS = 13     # 3x3 weight cache: 2^13 entries of 32 bytes
# The playout's rules beside the learned softmax, `rules` float64[N_RULES] of the tables
# (`PlayoutRules`):
RULE_SELF_ATARI = 0  # chance that a drawn self-atari of two or more stones is redrawn
RULE_CAPTURE = 1     # chance that an opponent string of two or more stones left in atari is taken
RULE_BIG_SELF_ATARI = 2  # chance that a drawn self-atari of `BIG_SELF_ATARI` or more stones is
N_RULES = 3              # redrawn
SELF_ATARI_REJECT = 0.0   # the defaults: the softmax alone, as AlphaGo's rollouts
CAPTURE = 0.0
BIG_SELF_ATARI_REJECT = 1.0     # measured: docs/results/strength.md
SELF_ATARI_TRIES = 3      # redraws a move at most
ATARI_SLOTS = 16          # the strings lately put in atari that the capture rule watches


class RolloutModelError(ValueError):
    """A rollout policy file that is missing, unreadable or inconsistent."""


# ---- per-point weights ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _legal_s3(s3, p, w, c):
    """Legality ignoring ko, from the kept states (equal to `patterns.legal_noko`)."""
    own1 = 2 if c == BLACK else 5
    opp1 = 5 if c == BLACK else 2
    for q in (p - w, p + w, p - 1, p + 1):
        s = s3[q]
        if s == 0:
            return True
        if s == 1:
            continue
        if own1 <= s <= own1 + 2:
            if s != own1:
                return True
        elif s == opp1:
            return True
    return False


@njit(cache=True, inline="always")
def _eye_shape_s3(s3, p, w, c):
    """False when p cannot be an eye of c (an orthogonal neighbour is empty or an opponent);
    a cheap filter in front of engine.board.is_eye."""
    lo = 2 if c == BLACK else 5
    for q in (p - w, p + w, p - 1, p + 1):
        s = s3[q]
        if s != 1 and (s < lo or s > lo + 2):
            return False
    return True


@njit(cache=True)
def _weights_miss(st, meta, s3, p, code, hkeys, hvals, scal, c3, t3k, t3v, h):
    for ci in range(2):
        c = ci + 1
        v = 0.0
        if _legal_s3(s3, p, meta[M_W], c) and not (_eye_shape_s3(s3, p, meta[M_W], c)
                                                   and is_eye(st, meta, p, c)):
            i = table_find(t3k, canon3(code if c == BLACK else swap_code(code, 8)))
            v = np.float64(t3v[i]) if i >= 0 else scal[SCALAR_UNKNOWN_3X3]
        c3[h, 1 + ci] = v
    c3[h, 0] = code


@njit(cache=True, inline="always")
def _weights_at(st, meta, s3, p, hkeys, hvals, scal, c3, t3k, t3v, wgt):
    """The 3x3 part of the weight of empty p for both colours (0 if illegal or an own eye).

    Both are functions of the 3x3 code alone (legality and the eye test only look at the 8
    neighbours' states), so they are memoised in the direct-mapped cache c3."""
    code = code3_s3(s3, p, meta[M_W])
    h = ((code * 2654435761) >> 16) & (c3.shape[0] - 1)
    if c3[h, 0] != code:
        _weights_miss(st, meta, s3, p, code, hkeys, hvals, scal, c3, t3k, t3v, h)
    wgt[0, p] = c3[h, 1]
    wgt[1, p] = c3[h, 2]


@njit(cache=True)
def _row_sums(meta, wgt, rsum, r):
    w = meta[M_W]
    n = meta[M_N]
    b = r * w
    s0 = 0.0
    s1 = 0.0
    for cc in range(1, n + 1):
        s0 += wgt[0, b + cc]
        s1 += wgt[1, b + cc]
    rsum[0, r] = s0
    rsum[1, r] = s1


@njit(cache=True)
def _init_state(st, meta, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v):
    a = st.shape[1]
    w = meta[M_W]
    n = meta[M_N]
    for p in range(a):
        s3[p] = point_state(st, p)
        wgt[0, p] = 0.0
        wgt[1, p] = 0.0
    for r in range(1, n + 1):
        for cc in range(1, n + 1):
            p = r * w + cc
            if st[F_COLOR, p] == EMPTY:
                _weights_at(st, meta, s3, p, hkeys, hvals, scal, c3, t3k, t3v, wgt)
    for r in range(w):
        rsum[0, r] = 0.0
        rsum[1, r] = 0.0
    for r in range(1, n + 1):
        _row_sums(meta, wgt, rsum, r)


@njit(cache=True, inline="always")
def _mark8(q, w, dmark, dlist, nd, stamp):
    for dr in (-w, 0, w):
        for dc in (-1, 0, 1):
            x = q + dr + dc
            if dmark[x] != stamp:
                dmark[x] = stamp
                dlist[nd] = x
                nd += 1
    return nd


@njit(cache=True)
def _walk_string(st, s3, h, ns, w, dmark, dlist, nd, stamp):
    """Give every stone of the string through h the state ns; mark around the changed ones."""
    s = h
    while True:
        if s3[s] != ns:
            s3[s] = ns
            nd = _mark8(s, w, dmark, dlist, nd, stamp)
        s = st[F_NEXT, s]
        if s == h:
            break
    return nd


@njit(cache=True)
def _play_update(st, meta, p, c, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v, caps, dmark,
                 dlist, rmark, stamp):
    """Play c at p and bring the kept states, weights and row sums up to date. Returns the number
    of captured stones (written into caps)."""
    w = meta[M_W]
    ncaps = play_record(st, meta, p, c, caps)
    nd = np.int64(0)        # not the literal 0: numba would compile _walk_string for both
    s3[p] = point_state(st, p)
    nd = _mark8(p, w, dmark, dlist, nd, stamp)
    # strings next to p: own (merged into p's string) and opponent (lost a liberty); every string
    # keeps one state on all its stones, so one stone tells whether the string needs a walk
    for q in (p - w, p + w, p - 1, p + 1):
        col = st[F_COLOR, q]
        if col == BLACK or col == WHITE:
            nq = point_state(st, q)
            if s3[q] != nq:
                nd = _walk_string(st, s3, q, nq, w, dmark, dlist, nd, stamp)
    # captured points are empty now; strings next to them gained liberties
    for j in range(ncaps):
        x = caps[j]
        s3[x] = 0
        nd = _mark8(x, w, dmark, dlist, nd, stamp)
    for j in range(ncaps):
        x = caps[j]
        for q in (x - w, x + w, x - 1, x + 1):
            col = st[F_COLOR, q]
            if col == BLACK or col == WHITE:
                nq = point_state(st, q)
                if s3[q] != nq:
                    nd = _walk_string(st, s3, q, nq, w, dmark, dlist, nd, stamp)
    nrow = 0
    for i in range(nd):
        x = dlist[i]
        col = st[F_COLOR, x]
        if col == EMPTY:
            _weights_at(st, meta, s3, x, hkeys, hvals, scal, c3, t3k, t3v, wgt)
        elif col == BLACK or col == WHITE:
            wgt[0, x] = 0.0
            wgt[1, x] = 0.0
        else:
            continue
        r = x // w
        if rmark[r] != stamp:
            rmark[r] = stamp
            dlist[nrow] = r  # rows reuse the front of dlist, already processed
            nrow += 1
    for i in range(nrow):
        _row_sums(meta, wgt, rsum, dlist[i])
    return ncaps


# ---- features of the last move -----------------------------------------------------------------
@njit(cache=True, inline="always")
def diamond_raw_s3(s3, last, c, w):
    """`patterns.diamond_raw` from the kept states."""
    r0 = last // w
    c0 = last % w
    raw = 0
    for i in range(13):
        r = r0 + DM_DR[i]
        cc = c0 + DM_DC[i]
        if r < 0 or r >= w or cc < 0 or cc >= w:
            s = 1
        else:
            s = s3[r * w + cc]
        if c == WHITE:
            s = SWAP[s]
        raw |= np.int64(s) << (3 * i)
    return raw


@njit(cache=True, inline="always")
def _add_temp(q, m, tq, tm, tmark, tidx, nt, stamp):
    if tmark[q] == stamp:
        tm[tidx[q]] *= m
        return nt
    tmark[q] = stamp
    tidx[q] = nt
    tq[nt] = q
    tm[nt] = m
    return nt + 1


@njit(cache=True)
def _temp_features(st, meta, c, s3, wgt, hkeys, hvals, scal, lcaps, nlcaps, tq, tm,
                   tmark, tidx, stamp, dcodes, sa, masks, cells):
    """Multipliers of the features that depend on the last move (and of the ko ban) for c:
    writes points into tq and multipliers into tm; returns how many."""
    ci = c - 1
    w = meta[M_W]
    last = meta[M_LAST]
    nt = 0
    if last >= 0:
        # response x neighbour, for the empty points of the diamond around the last move
        raw = diamond_raw_s3(s3, last, c, w)
        perms_done = False
        for slot in range(1, 13):
            if (raw >> (3 * slot)) & 7 != 0:
                continue  # a stone or off the board
            q = last + DM_DR[slot] * w + DM_DC[slot]
            if wgt[ci, q] == 0.0:
                continue
            if not perms_done:
                diamond_perms(raw, dcodes)
                perms_done = True
            m = 1.0
            i = table_find(hkeys, diamond_key(dcodes, slot))
            if i >= 0:
                m = hvals[i]
            if slot <= 8:
                m *= scal[SCALAR_NEIGHBOUR + DM_NB[slot]]
            if m != 1.0:
                nt = _add_temp(q, m, tq, tm, tmark, tidx, nt, stamp)
        nsa = save_atari_points(st, meta, c, last, sa)
        for i in range(nsa):
            q = sa[i]
            if wgt[ci, q] != 0.0:
                nt = _add_temp(q, scal[SCALAR_SAVE_ATARI], tq, tm, tmark, tidx, nt, stamp)
        if nlcaps > 0 and nakade_shapes(lcaps, nlcaps, w, masks, cells):
            for j in range(nlcaps):
                q = lcaps[j]
                if wgt[ci, q] != 0.0:
                    i = table_find(hkeys, nakade_key(masks, cells, j))
                    if i >= 0:
                        nt = _add_temp(q, hvals[i], tq, tm, tmark, tidx, nt, stamp)
    ko = meta[M_KO]
    if ko >= 0 and meta[M_KOCOLOR] == c and wgt[ci, ko] != 0.0:
        nt = _add_temp(ko, 0.0, tq, tm, tmark, tidx, nt, stamp)
    return nt


# ---- sampling and the playout --------------------------------------------------------------------
@njit(cache=True)
def _sample(meta, wgt, rsum, ci):
    """A point drawn with probability proportional to wgt[ci], or -1 if every weight is 0."""
    n = meta[M_N]
    w = meta[M_W]
    total = 0.0
    for r in range(1, n + 1):
        total += rsum[ci, r]
    if total > 0.0:
        x = np.random.random() * total
        row = -1
        for r in range(1, n + 1):
            v = rsum[ci, r]
            if v > 0.0:
                row = r
                if x < v:
                    break
                x -= v
        if row > 0:
            b = row * w
            lastpos = -1
            for cc in range(1, n + 1):
                v = wgt[ci, b + cc]
                if v > 0.0:
                    lastpos = b + cc
                    x -= v
                    if x < 0.0:
                        return b + cc
            if lastpos >= 0:
                return lastpos
    # rounding left nothing: any positive point
    for r in range(1, n + 1):
        for cc in range(1, n + 1):
            if wgt[ci, r * w + cc] > 0.0:
                return r * w + cc
    return -1


@njit(cache=True, inline="always")
def _scale_for_move(q, m, ci, w, wgt, rsum, tsave, i, rtmark, rlist, rsave, nr, stamp):
    """Multiply point q's weight for colour index ci by m for this move only: the old weight goes
    to tsave[i], and its row's sum to rsave the first time this move touches the row. Returns
    the number of rows saved."""
    r = q // w
    if rtmark[r] != stamp:
        rtmark[r] = stamp
        rlist[nr] = r
        rsave[nr] = rsum[ci, r]
        nr += 1
    old = wgt[ci, q]
    tsave[i] = old
    new = old * m
    wgt[ci, q] = new
    rsum[ci, r] += new - old
    return nr


@njit(cache=True)
def _watch_ataris(st, meta, p, watch, nwatch):
    """After a move at p: the strings of two or more stones it left in atari (the opponent's
    next to p, and the mover's own) join the ring `watch`. Returns the new count of entries."""
    w = meta[M_W]
    for q in (p, p - w, p + w, p - 1, p + 1):
        col = st[F_COLOR, q]
        if col == BLACK or col == WHITE:
            h = st[F_HEAD, q]
            if st[F_LIBS, h] == 1 and st[F_SIZE, h] >= 2:
                watch[nwatch % ATARI_SLOTS] = q
                nwatch += 1
    return nwatch


@njit(cache=True)
def _capture_point(st, meta, c, watch, nwatch):
    """The point that captures the largest string of two or more stones of c's opponent among
    the watched ones (any stone of the string was recorded: strings merge) that is in atari now,
    or -1."""
    best = -1
    best_size = 1
    for i in range(min(nwatch, ATARI_SLOTS)):
        q = watch[i]
        if st[F_COLOR, q] != 3 - c:
            continue
        h = st[F_HEAD, q]
        if st[F_LIBS, h] != 1 or st[F_SIZE, h] <= best_size:
            continue
        lib = find_liberty(st, meta, h)
        if lib == meta[M_KO] and meta[M_KOCOLOR] == c:
            continue
        best = lib
        best_size = st[F_SIZE, h]
    return best


@njit(cache=True)
def _check_state(st, meta, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v):
    """Number of kept values that differ from a from-scratch computation (with an empty cache)."""
    a = st.shape[1]
    w = meta[M_W]
    n = meta[M_N]
    s3b = np.empty(a, dtype=np.int8)
    wb = np.zeros((2, a))
    rb = np.zeros((2, w))
    fresh = np.full(c3.shape, -1.0)
    _init_state(st, meta, s3b, wb, rb, hkeys, hvals, scal, fresh, t3k, t3v)
    bad = 0
    for p in range(a):
        if s3b[p] != s3[p]:
            bad += 1
        if wb[0, p] != wgt[0, p] or wb[1, p] != wgt[1, p]:
            bad += 1
    for r in range(1, n + 1):
        for ci in range(2):
            if abs(rb[ci, r] - rsum[ci, r]) > 1e-9 * (1.0 + abs(rb[ci, r])):
                bad += 1
    return bad


@njit(cache=True)
def _self_atari_chance(st, meta, p, c, reject, big):
    """The chance that the self-atari rules draw p again: `big` (or `reject` where larger) for a
    self-atari of `BIG_SELF_ATARI` or more stones, `reject` for one of two or more stones that
    captures nothing and is no nakade sacrifice, else 0."""
    n = self_atari_size(st, meta, p, c)
    if n >= BIG_SELF_ATARI:
        return max(big, reject)
    if n > SELF_ATARI_MAX and reject > 0.0 and not is_nakade_sacrifice(st, meta, p, c):
        return reject
    return 0.0


@njit(cache=True)
def _playout_impl(st, meta, max_moves, amaf, hkeys, hvals, scal, c3, t3k, t3v, rules, check,
                  errors, stop_after):
    a = st.shape[1]
    w = meta[M_W]
    s3 = np.empty(a, dtype=np.int8)
    wgt = np.zeros((2, a))
    rsum = np.zeros((2, w))
    dmark = np.zeros(a, dtype=np.int64)
    dlist = np.empty(a, dtype=np.int64)
    rmark = np.zeros(w, dtype=np.int64)
    lcaps = np.empty(a, dtype=np.int64)
    tmark = np.zeros(a, dtype=np.int64)
    tidx = np.empty(a, dtype=np.int64)
    tq = np.empty(a + SELF_ATARI_TRIES, dtype=np.int64)
    tm = np.empty(a)
    tsave = np.empty(a + SELF_ATARI_TRIES)
    rsave = np.empty(2 * w)
    rlist = np.empty(2 * w, dtype=np.int64)
    rtmark = np.zeros(w, dtype=np.int64)
    dcodes = np.empty(8, dtype=np.int64)
    sa = np.empty(16, dtype=np.int64)
    masks = np.empty(8, dtype=np.int64)
    cells = np.empty((8, NAKADE_MAX), dtype=np.int64)
    watch = np.empty(ATARI_SLOTS, dtype=np.int64)
    nwatch = 0
    reject = rules[RULE_SELF_ATARI]
    big = rules[RULE_BIG_SELF_ATARI]
    capture = rules[RULE_CAPTURE]
    _init_state(st, meta, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v)
    nlcaps = np.int64(0)    # not the literal 0: numba would compile _temp_features for both
    stamp = 0
    passes = 0
    moves = 0
    c = meta[M_TOPLAY]
    while passes < 2 and moves < max_moves:
        if stop_after >= 0 and moves >= stop_after:
            break
        ci = c - 1
        stamp += 1
        nt = _temp_features(st, meta, c, s3, wgt, hkeys, hvals, scal, lcaps, nlcaps, tq,
                            tm, tmark, tidx, stamp, dcodes, sa, masks, cells)
        nr = 0
        for i in range(nt):
            nr = _scale_for_move(tq[i], tm[i], ci, w, wgt, rsum, tsave, i, rtmark, rlist, rsave,
                                 nr, stamp)
        # the learned softmax sees liberties only as buckets of its 3x3 neighbours, and in a
        # capturing race one move decides the playout: a string of two or more stones left in
        # atari is taken with probability `capture`, and a self-atari of two or more stones is
        # drawn again with probability `reject`, one of a big string with `big` (its weight
        # zeroed for this move only; with none left the side passes, which keeps a seki)
        p = -1
        if capture > 0.0 and nwatch > 0 and np.random.random() < capture:
            p = _capture_point(st, meta, c, watch, nwatch)
        if p < 0:
            p = _sample(meta, wgt, rsum, ci)
            tries = 0
            while p >= 0 and tries < SELF_ATARI_TRIES and (reject > 0.0 or big > 0.0):
                chance = _self_atari_chance(st, meta, p, c, reject, big)
                if chance == 0.0 or np.random.random() >= chance:
                    break
                tq[nt] = p
                nr = _scale_for_move(p, 0.0, ci, w, wgt, rsum, tsave, nt, rtmark, rlist, rsave,
                                     nr, stamp)
                nt += 1
                tries += 1
                p = _sample(meta, wgt, rsum, ci)
        for i in range(nt - 1, -1, -1):     # backwards: a point may be listed twice
            wgt[ci, tq[i]] = tsave[i]
        for i in range(nr):
            rsum[ci, rlist[i]] = rsave[i]
        if p < 0:
            play_pass(meta, c)
            passes += 1
            nlcaps = 0
        else:
            if check:
                if legality(st, meta, p, c) != 0:
                    errors[0] += 1
                if is_eye(st, meta, p, c):
                    errors[1] += 1
                n = self_atari_size(st, meta, p, c)
                if n > SELF_ATARI_MAX and not is_nakade_sacrifice(st, meta, p, c):
                    errors[3] += 1
                if n >= BIG_SELF_ATARI:
                    errors[5] += 1
                q = _capture_point(st, meta, c, watch, nwatch)
                if q >= 0 and q != p:
                    errors[4] += 1
            if amaf[p] == 0:
                amaf[p] = c
            stamp += 1
            nlcaps = _play_update(st, meta, p, c, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v,
                                  lcaps, dmark, dlist, rmark, stamp)
            passes = 0
            if capture > 0.0 or check:
                nwatch = _watch_ataris(st, meta, p, watch, nwatch)
            if check:
                errors[2] += _check_state(st, meta, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v)
        moves += 1
        c = 3 - c
    own = np.empty(a, dtype=np.int8)
    return area_ownership(st, meta, own), own, moves, nlcaps, lcaps


@njit(cache=True, nogil=True, inline="always")
def policy_playout(st, meta, max_moves, amaf, tab):
    """Play the board (modified in place) to the end with the rollout policy. Returns black area
    minus white area (no komi) and the int8 ownership per Loc, like `engine.playout.playout`.
    `tab` is `RolloutPolicy.tables`."""
    hkeys, hvals, scal, c3, t3k, t3v, rules = tab
    errors = np.zeros(1, dtype=np.int64)
    score, own, _m, _n, _c = _playout_impl(st, meta, max_moves, amaf, hkeys, hvals, scal, c3,
                                           t3k, t3v, rules, False, errors, -1)
    return score, own


@njit(cache=True, nogil=True)
def policy_playouts(st0, meta0, count, max_moves, tab):
    """Benchmark kernel: `count` playouts from a position. Returns (mean score, moves played)."""
    hkeys, hvals, scal, c3, t3k, t3v, rules = tab
    total = 0.0
    nmoves = 0
    amaf = np.zeros(st0.shape[1], dtype=np.int8)
    errors = np.zeros(1, dtype=np.int64)
    for _ in range(count):
        st = st0.copy()
        meta = meta0.copy()
        amaf[:] = 0
        score, _own, m, _n, _c = _playout_impl(st, meta, max_moves, amaf, hkeys, hvals, scal,
                                               c3, t3k, t3v, rules, False, errors, -1)
        total += score
        nmoves += m
    return total / count, nmoves


@njit(cache=True)
def checked_playout(st, meta, max_moves, tab, stop_after):
    """A playout that verifies every move (test kernel). Returns (score, moves, errors, caps)
    with errors = [illegal moves, own-eye fills, kept values differing from scratch, self-ataris
    of two or more stones played (no nakade sacrifice), moves that left an opponent string of two
    or more stones in atari uncaptured where the capture rule saw it, self-ataris of
    `BIG_SELF_ATARI` or more stones played]; the board
    is left where the playout stopped (`stop_after` >= 0 stops early) and caps holds the stones
    the last move captured."""
    hkeys, hvals, scal, c3, t3k, t3v, rules = tab
    amaf = np.zeros(st.shape[1], dtype=np.int8)
    errors = np.zeros(6, dtype=np.int64)
    score, _own, moves, ncaps, caps = _playout_impl(st, meta, max_moves, amaf, hkeys, hvals,
                                                    scal, c3, t3k, t3v, rules, True, errors,
                                                    stop_after)
    return score, moves, errors, caps[:ncaps].copy()


@njit(cache=True)
def incremental_weights(st, meta, caps, ncaps, tab, out):
    """Move weights of the side to move as the playout computes them (kept 3x3 part times the
    temporary features), into out[Loc]. `caps[:ncaps]` = stones the last move captured."""
    hkeys, hvals, scal, c3, t3k, t3v, _rules = tab
    a = st.shape[1]
    w = meta[M_W]
    c = meta[M_TOPLAY]
    ci = c - 1
    s3 = np.empty(a, dtype=np.int8)
    wgt = np.zeros((2, a))
    rsum = np.zeros((2, w))
    _init_state(st, meta, s3, wgt, rsum, hkeys, hvals, scal, c3, t3k, t3v)
    tmark = np.zeros(a, dtype=np.int64)
    tidx = np.empty(a, dtype=np.int64)
    tq = np.empty(a, dtype=np.int64)
    tm = np.empty(a)
    nt = _temp_features(st, meta, c, s3, wgt, hkeys, hvals, scal, caps, ncaps, tq, tm,
                        tmark, tidx, 1, np.empty(8, dtype=np.int64), np.empty(16, dtype=np.int64),
                        np.empty(8, dtype=np.int64), np.empty((8, NAKADE_MAX), dtype=np.int64))
    for p in range(a):
        out[p] = wgt[ci, p]
    for i in range(nt):
        out[tq[i]] *= tm[i]


@njit(cache=True)
def scratch_weights(st, meta, caps, ncaps, tab, out):
    """Move weights of the side to move from `patterns.position_keys` (the training features),
    into out[Loc] (0 for non-candidates). Returns the number of candidates."""
    hkeys, hvals, scal, _c3, t3k, t3v, _rules = tab
    a = st.shape[1]
    c = meta[M_TOPLAY]
    cand = np.empty(a, dtype=np.int64)
    keys = np.empty((a, NK), dtype=np.int64)
    k = position_keys(st, meta, c, caps, ncaps, cand, keys)
    for p in range(a):
        out[p] = 0.0
    for j in range(k):
        i = table_find(t3k, keys[j, K_3X3] & CODE_MASK)
        v = np.float64(t3v[i]) if i >= 0 else scal[SCALAR_UNKNOWN_3X3]
        if keys[j, K_DIAMOND] >= 0:
            i = table_find(hkeys, keys[j, K_DIAMOND])
            if i >= 0:
                v *= hvals[i]
        if keys[j, K_NEIGHBOUR] >= 0:
            v *= scal[keys[j, K_NEIGHBOUR] & 0xFF]
        if keys[j, K_SAVE] >= 0:
            v *= scal[SCALAR_SAVE_ATARI]
        if keys[j, K_NAKADE] >= 0:
            i = table_find(hkeys, keys[j, K_NAKADE])
            if i >= 0:
                v *= hvals[i]
        out[cand[j]] = v
    return k


# ---- the model ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlayoutRules:
    """The playout's rules beside the learned softmax (module docstring, `rules`): each the
    chance that it acts where it applies; 0 leaves the softmax alone, as AlphaGo's rollouts."""
    self_atari: float = SELF_ATARI_REJECT  # a drawn self-atari of 2+ stones is drawn again
    capture: float = CAPTURE               # an opponent string of 2+ stones left in atari is taken
    big_self_atari: float = BIG_SELF_ATARI_REJECT  # a drawn self-atari of 7+ stones is drawn again

    def __post_init__(self):
        for name in ("self_atari", "capture", "big_self_atari"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise RolloutModelError(f"the {name} rule's chance must be in [0, 1], got {value}")

    def array(self) -> np.ndarray:
        """`rules` of the tables: float64[N_RULES]."""
        out = np.zeros(N_RULES)
        out[RULE_SELF_ATARI] = self.self_atari
        out[RULE_CAPTURE] = self.capture
        out[RULE_BIG_SELF_ATARI] = self.big_self_atari
        return out


class RolloutPolicy:
    """Weights of the linear softmax rollout policy, keyed by pattern keys.

    `keys` int64[F] sorted and unique (see `engine.rollout.patterns`), `weights` float[F] (the
    logits' coefficients), `meta` a JSON-able dict (training data, metrics).
    """

    def __init__(self, keys, weights, meta: dict | None = None,
                 rules: PlayoutRules = PlayoutRules()):
        self.rules = rules
        keys = np.asarray(keys)
        weights = np.asarray(weights)
        if keys.ndim != 1 or weights.ndim != 1 or keys.shape != weights.shape:
            raise RolloutModelError(
                "keys and weights must be 1-D of equal length, got "
                f"{keys.shape} and {weights.shape}")
        if not np.issubdtype(keys.dtype, np.integer):
            raise RolloutModelError(f"keys must be integers, got {keys.dtype}")
        keys = keys.astype(np.int64)
        weights = weights.astype(np.float32)
        if len(keys) > 1 and not np.all(np.diff(keys) > 0):
            raise RolloutModelError("keys must be sorted and unique")
        fam = keys >> FAMILY_SHIFT
        if len(keys) and (keys.min() < 0 or fam.max() > FAM_NAKADE):
            raise RolloutModelError("keys hold an unknown feature family")
        if not np.all(np.isfinite(weights)):
            raise RolloutModelError("weights are not all finite")
        if len(weights) and np.abs(weights).max() > 60:
            raise RolloutModelError("weights are out of range (|w| > 60)")
        self.keys = keys
        self.weights = weights
        self.meta = dict(meta or {})
        self._build()

    def _build(self) -> None:
        keys, wts = self.keys, self.weights.astype(np.float64)
        fam = keys >> FAMILY_SHIFT
        scal_logit = np.zeros(N_SCALARS)
        sc = fam == FAM_SCALAR
        idx = keys[sc] & ((1 << FAMILY_SHIFT) - 1)
        if len(idx) and idx.max() >= N_SCALARS:
            raise RolloutModelError("unknown scalar feature in keys")
        scal_logit[idx] = wts[sc]
        vals = wts.copy()
        vals[fam == FAM_DIAMOND] += scal_logit[SCALAR_RESPONSE]
        pat = ~sc
        f3 = fam == FAM_3X3
        big = pat & ~f3
        self.hkeys, self.hvals = build_table(keys[big], np.exp(vals[big]))
        # the 3x3 patterns (24-bit codes) get their own compact table: int32 key, float32 value
        self.t3k, self.t3v = build_table(keys[f3] & CODE_MASK,
                                         np.exp(vals[f3]).astype(np.float32), load=0.7)
        self.scal = np.exp(scal_logit)
        self.tables = self.new_tables()

    def new_tables(self, cache3_bits: int = CACHE3_BITS) -> tuple:
        """A fresh `tables` tuple (hkeys, hvals, scal, c3, t3k, t3v, rules): the extra argument
        of `policy_playout`. c3 is a cache the playout writes to: threads running playouts at the
        same time need a tuple each (the other arrays are shared)."""
        return (self.hkeys, self.hvals, self.scal, np.full((1 << cache3_bits, 4), -1.0),
                self.t3k, self.t3v, self.rules.array())

    def with_rules(self, rules: PlayoutRules) -> "RolloutPolicy":
        """The same weights with other playout rules."""
        return RolloutPolicy(self.keys, self.weights, self.meta, rules=rules)

    def __len__(self) -> int:
        return len(self.keys)

    def scalar_weights(self) -> dict[str, float]:
        return {name: float(math.log(v)) for name, v in zip(SCALAR_NAMES, self.scal)}

    def family_counts(self) -> dict[str, int]:
        fam = self.keys >> FAMILY_SHIFT
        return {name: int((fam == i).sum()) for i, name in enumerate(FAMILY_NAMES)}

    # ---- files -----------------------------------------------------------------------------
    def save(self, path, **extra_meta) -> None:
        meta = dict(self.meta)
        meta.update(extra_meta)
        meta["format"] = FORMAT
        self.meta = meta
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, keys=self.keys, weights=self.weights,
                            meta=np.array(json.dumps(meta, sort_keys=True)))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path, rules: PlayoutRules = PlayoutRules()) -> "RolloutPolicy":
        """Load a .npz written by `save`; RolloutModelError if it is missing or not valid."""
        path = Path(path)
        if not path.is_file():
            raise RolloutModelError(f"{path}: no such rollout policy file")
        try:
            with np.load(path, allow_pickle=False) as z:
                missing = {"keys", "weights", "meta"} - set(z.files)
                if missing:
                    raise RolloutModelError(
                        f"{path}: not a rollout policy file (missing {sorted(missing)})")
                keys, weights = z["keys"], z["weights"]
                meta = json.loads(str(z["meta"]))
        except RolloutModelError:
            raise
        except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as e:
            raise RolloutModelError(
                f"{path}: corrupt or unreadable rollout policy file ({type(e).__name__}: {e})"
            ) from e
        fmt = meta.get("format") if isinstance(meta, dict) else None
        if fmt != FORMAT:
            raise RolloutModelError(
                f"{path}: unknown rollout policy format {fmt!r} (expected {FORMAT})")
        try:
            return cls(keys, weights, meta, rules=rules)
        except RolloutModelError as e:
            raise RolloutModelError(f"{path}: {e}") from e

    @classmethod
    def uniform(cls) -> "RolloutPolicy":
        """All weights 0: uniform over the legal non-eye-filling moves. Its `tables` also serve as
        a typed placeholder for kernels that take a rollout policy but are not using one."""
        keys = np.arange(N_SCALARS, dtype=np.int64)  # family 0
        return cls(keys, np.zeros(N_SCALARS, dtype=np.float32), {"format": FORMAT})

    # ---- use -------------------------------------------------------------------------------
    def playout(self, st, meta, max_moves, amaf):
        return policy_playout(st, meta, max_moves, amaf, self.tables)

    def move_probabilities(self, game) -> dict[int, float]:
        """{Loc: probability} of the policy for the side to move of an engine.game.Game."""
        last_caps = _last_captures(game)
        out = np.zeros(game.st.shape[1])
        st, meta = game.st.copy(), game.meta.copy()
        scratch_weights(st, meta, last_caps, len(last_caps), self.tables, out)
        total = out.sum()
        if total <= 0:
            return {}
        nz = np.nonzero(out)[0]
        return {int(p): float(out[p] / total) for p in nz}

    def best_move(self, game) -> int:
        """The most likely move of the side to move (engine.coords.PASS when there is none)."""
        probs = self.move_probabilities(game)
        if not probs:
            return -1
        return max(probs, key=probs.get)


def _last_captures(game) -> np.ndarray:
    """Stones the last move of `game` captured (from the previous position's board)."""
    if not game.history or game.history[-1][1] < 0 or not game._undo:
        return np.zeros(0, dtype=np.int64)
    prev_st = game._undo[-1][0]
    now = game.st[F_COLOR]
    was = prev_st[F_COLOR]
    caps = np.nonzero((was != EMPTY) & (was != 3) & (now == EMPTY))[0]
    return caps.astype(np.int64)


__all__ = ["RolloutPolicy", "RolloutModelError", "PlayoutRules", "policy_playout", "policy_playouts",
           "checked_playout", "incremental_weights", "scratch_weights", "FORMAT"]
