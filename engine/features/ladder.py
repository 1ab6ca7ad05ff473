"""Ladder reading for the `ladder_capture` and `ladder_escape` planes (numba).

The reading plays the ladder out with `engine.board.play` on copies of the board, so edges, breaker
stones of either colour, captures and ko come from the rules core rather than from a pattern.

Terms: the *chaser* is the colour trying to capture, the *runner* the string it chases (followed
through merges by one of its stones, `prey`).

Runner to move (its string has exactly one liberty L). Its options are: capture any chaser string
adjacent to it that is in atari (at that string's liberty), or extend on L; only legal moves
(simple ko, no suicide). After an option the runner has
  * 3+ liberties: it escaped, the ladder fails;
  * 1 liberty: the chaser captures it (if the chaser may legally play there; otherwise, e.g. a ko
    ban, the runner escaped);
  * 2 liberties: the chaser to move.
The ladder works only if EVERY runner option fails (no legal option at all: captured).

Chaser to move (the runner has exactly two liberties a, b). The chaser may atari on a or on b, when
that move is legal; the ladder works if ANY of them works. An atari at x is not tried when the
runner, extending on the other liberty y, would have 3+ liberties even before counting captures:
that is a certain escape and costs no board copy. A chaser atari that is itself a self-atari is read
like any other move: the runner's reply of capturing it is among its options, and the ladder fails
if that capture lets the runner out.

Bounds: at most `MAX_LADDER_PLIES` plies deep and `LADDER_BUDGET` plays per top-level question.
A reading that runs out of either is inconclusive and counts as "not captured": ladder_capture is
then 0, and a ladder escape whose string could not be proven capturable is 1.

Implementation: an explicit-stack depth-first search (numba cannot cache recursive functions) over
a pool of board slots. A node tries its options in order; the last option is played in the node's
own slot, the others on a copy in the next slot, so a ladder with one sensible continuation per
node costs one board copy in all.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.board import (EMPTY, F_COLOR, F_HEAD, F_LIBS, F_NEXT, LEGAL, M_W, NF, NM,
                          find_liberty, find_two_liberties, legality, play)

MAX_LADDER_PLIES = 128  # a ladder across a 25x25 board is under 100 plies
LADDER_BUDGET = 2000    # plays per top-level ladder question
MAX_OPTIONS = 64        # runner options: captures of adjacent chaser strings in atari + extension

# ctr[C_STAMP]: mark stamp for the mark array mk; ctr[C_PLAYS]: plays used by the current question.
C_STAMP, C_PLAYS = 0, 1
# Frame fields: node kind, board slot, number of options, next option, then the options.
K_KIND, K_SLOT, K_NOPT, K_NEXT, K_OPTS = 0, 1, 2, 3, 4
RUNNER, CHASER = 0, 1


def new_scratch(n: int):
    """Scratch for the feature kernels on an n x n board: (mk, ctr, pool_st, pool_meta, frames).
    The marks are int64 like the stamp counter, which grows across calls and never wraps."""
    a = (n + 2) * (n + 2)
    slots = MAX_LADDER_PLIES + 2
    return (np.zeros(a, dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.empty((slots, NF, a), dtype=np.int32), np.empty((slots, NM), dtype=np.int64),
            np.empty((slots, K_OPTS + MAX_OPTIONS), dtype=np.int64))


@njit(cache=True)
def _copy_board(dst_st, dst_meta, src_st, src_meta):
    """dst = src for one board (st int32[NF, A], meta int64[NM]), all C-contiguous. An element loop:
    numba's `dst[:, :] = src` checks for overlap and goes through a temporary, ten times slower."""
    d = dst_st.reshape(dst_st.size)
    s = src_st.reshape(src_st.size)
    for i in range(s.size):
        d[i] = s[i]
    for i in range(src_meta.size):
        dst_meta[i] = src_meta[i]


@njit(cache=True)
def extension_libs(st, meta, head, lib, banned, mk, ctr, cap):
    """Liberties, counted up to `cap`, of the string at `head` after its colour plays on its
    liberty `lib`, with `banned` (a Loc or -1) counted as occupied. Captures are not counted, so
    this is a lower bound. Does not modify the board."""
    w = meta[M_W]
    c = st[F_COLOR, head]
    ctr[C_STAMP] += 1
    stamp = ctr[C_STAMP]
    mk[lib] = stamp
    if banned >= 0:
        mk[banned] = stamp
    n = 0
    # the string itself, then the own strings that `lib` joins to it
    h0 = head
    h1 = -1
    h2 = -1
    h3 = -1
    for q in (lib - w, lib + w, lib - 1, lib + 1):
        col = st[F_COLOR, q]
        if col == EMPTY:
            if mk[q] != stamp:
                mk[q] = stamp
                n += 1
        elif col == c:
            h = st[F_HEAD, q]
            if h != h0 and h != h1 and h != h2:
                if h1 == -1:
                    h1 = h
                elif h2 == -1:
                    h2 = h
                else:
                    h3 = h
    if n >= cap:
        return n
    for k in range(4):
        h = h0 if k == 0 else (h1 if k == 1 else (h2 if k == 2 else h3))
        if h < 0:
            continue
        s = h
        while True:
            for q in (s - w, s + w, s - 1, s + 1):
                if st[F_COLOR, q] == EMPTY and mk[q] != stamp:
                    mk[q] = stamp
                    n += 1
                    if n >= cap:
                        return n
            s = st[F_NEXT, s]
            if s == h:
                break
    return n


@njit(cache=True)
def _add_option(frame, k, x):
    for i in range(k):
        if frame[K_OPTS + i] == x:
            return k
    if k < MAX_OPTIONS:
        frame[K_OPTS + k] = x
        k += 1
    return k


@njit(cache=True)
def _runner_options(st, meta, prey, chaser, frame):
    """The runner's legal options into frame: liberties of adjacent chaser strings in atari (to
    capture them), then its own liberty (to extend). Returns how many."""
    w = meta[M_W]
    runner = 3 - chaser
    head = st[F_HEAD, prey]
    k = 0
    s = head
    while True:
        for q in (s - w, s + w, s - 1, s + 1):
            if st[F_COLOR, q] == chaser:
                hq = st[F_HEAD, q]
                if st[F_LIBS, hq] == 1:
                    x = find_liberty(st, meta, hq)
                    if legality(st, meta, x, runner) == LEGAL:
                        k = _add_option(frame, k, x)
        s = st[F_NEXT, s]
        if s == head:
            break
    x = find_liberty(st, meta, head)
    if legality(st, meta, x, runner) == LEGAL:
        k = _add_option(frame, k, x)
    return k


@njit(cache=True)
def _chaser_options(st, meta, prey, chaser, frame, mk, ctr):
    """The chaser's ataris worth reading into frame (legal, and the runner does not get 3+
    liberties by extending on the other liberty). Returns how many."""
    head = st[F_HEAD, prey]
    two = frame[K_OPTS:K_OPTS + 2]
    if find_two_liberties(st, meta, head, two) != 2:
        return 0
    a = two[0]
    b = two[1]
    k = 0
    for i in range(2):
        x = a if i == 0 else b
        if legality(st, meta, x, chaser) != LEGAL:
            continue
        if extension_libs(st, meta, head, b if i == 0 else a, x, mk, ctr, 3) >= 3:
            continue
        frame[K_OPTS + k] = x
        k += 1
    return k


@njit(cache=True)
def _push(frames, d, kind, slot, prey, chaser, pool_st, pool_meta, mk, ctr):
    """Open node d on board slot `slot`. Returns -1 if it has options, else its value (0/1)."""
    f = frames[d]
    f[K_KIND] = kind
    f[K_SLOT] = slot
    f[K_NEXT] = 0
    if d >= MAX_LADDER_PLIES or ctr[C_PLAYS] >= LADDER_BUDGET:
        f[K_NOPT] = 0
        return 0  # inconclusive: not captured
    st = pool_st[slot]
    meta = pool_meta[slot]
    if kind == RUNNER:
        f[K_NOPT] = _runner_options(st, meta, prey, chaser, f)
        return 1 if f[K_NOPT] == 0 else -1  # a runner that cannot move is captured
    f[K_NOPT] = _chaser_options(st, meta, prey, chaser, f, mk, ctr)
    return 0 if f[K_NOPT] == 0 else -1


@njit(cache=True)
def read_ladder(pool_st, pool_meta, frames, prey, chaser, runner_to_move, mk, ctr):
    """True if the chaser captures the runner string through `prey` by ladder, from the position
    in pool slot 0 (which is used up). The runner has one liberty if `runner_to_move`, else two."""
    # int64 depth, kind and slot at every call, never literals: else numba compiles _push once
    # for each literal it meets while it infers the loop's types
    d = np.int64(0)
    value = _push(frames, d, np.int64(RUNNER if runner_to_move else CHASER), d, prey, chaser,
                  pool_st, pool_meta, mk, ctr)
    while True:
        if value >= 0:
            # node d is decided: hand the value to its parent
            if d == 0:
                return value == 1
            d -= 1
            kind = frames[d, K_KIND]
            if (kind == RUNNER and value == 0) or (kind == CHASER and value == 1):
                continue  # the runner escapes / the chaser found a working atari: d decided too
            value = -1
        f = frames[d]
        if f[K_NEXT] >= f[K_NOPT]:
            value = 1 if f[K_KIND] == RUNNER else 0  # every runner option fails / no atari works
            continue
        x = f[K_OPTS + f[K_NEXT]]
        f[K_NEXT] += 1
        slot = f[K_SLOT]
        if f[K_NEXT] < f[K_NOPT]:
            _copy_board(pool_st[slot + 1], pool_meta[slot + 1], pool_st[slot], pool_meta[slot])
            slot += 1
        st = pool_st[slot]
        meta = pool_meta[slot]
        if f[K_KIND] == RUNNER:
            play(st, meta, x, 3 - chaser)
            ctr[C_PLAYS] += 1
            h = st[F_HEAD, prey]
            libs = st[F_LIBS, h]
            if libs >= 3:
                value = 0
            elif libs == 1:
                if legality(st, meta, find_liberty(st, meta, h), chaser) != LEGAL:
                    value = 0  # the chaser may not capture now (ko): out
                # else this option is captured: try the next one (value stays -1)
            else:
                d += 1
                value = _push(frames, d, np.int64(CHASER), slot, prey, chaser, pool_st, pool_meta,
                              mk, ctr)
        else:
            play(st, meta, x, chaser)
            ctr[C_PLAYS] += 1
            if st[F_LIBS, st[F_HEAD, prey]] == 1:
                d += 1
                value = _push(frames, d, np.int64(RUNNER), slot, prey, chaser, pool_st, pool_meta,
                              mk, ctr)
            # else not an atari after all: try the other liberty


@njit(cache=True)
def ladder_captures(st, meta, p, c, mk, ctr, pool_st, pool_meta, frames):
    """True if c playing the legal move p puts an opponent string into atari (two liberties before,
    one after) that the ladder then captures. Does not modify the board."""
    w = meta[M_W]
    opp = 3 - c
    two = frames[0, K_OPTS:K_OPTS + 2]  # scratch until the reading starts
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] != opp:
            continue
        h = st[F_HEAD, q]
        if h == seen0 or h == seen1 or h == seen2 or st[F_LIBS, h] != 2:
            continue
        if seen0 == -1:
            seen0 = h
        elif seen1 == -1:
            seen1 = h
        else:
            seen2 = h
        find_two_liberties(st, meta, h, two)
        other = two[1] if two[0] == p else two[0]
        if extension_libs(st, meta, h, other, p, mk, ctr, 3) >= 3:
            continue  # the runner just runs out
        _copy_board(pool_st[0], pool_meta[0], st, meta)
        play(pool_st[0], pool_meta[0], p, c)
        ctr[C_PLAYS] = 1
        if pool_st[0, F_LIBS, pool_st[0, F_HEAD, h]] != 1:
            continue
        if read_ladder(pool_st, pool_meta, frames, h, c, True, mk, ctr):
            return True
    return False


@njit(cache=True)
def _saved_from_ladder(st, meta, p, c, prey, mk, ctr, pool_st, pool_meta, frames):
    """After c plays p, is the c string through `prey` (in atari now) out of the ladder?"""
    _copy_board(pool_st[0], pool_meta[0], st, meta)
    play(pool_st[0], pool_meta[0], p, c)
    ctr[C_PLAYS] = 1
    libs = pool_st[0, F_LIBS, pool_st[0, F_HEAD, prey]]
    if libs >= 3:
        return True
    if libs <= 1:
        return False
    return not read_ladder(pool_st, pool_meta, frames, prey, 3 - c, False, mk, ctr)


@njit(cache=True)
def ladder_escapes(st, meta, p, c, libs_after, mk, ctr, pool_st, pool_meta, frames):
    """True if c playing the legal move p saves a c string that is in atari now (by extending on its
    liberty, or by capturing an opponent string next to it) so that it has 3+ liberties or the
    opponent's ladder no longer captures it. `libs_after`: the liberties of c's string through p
    after the move, captures counted (every own string next to p joins it). Does not modify the
    board."""
    w = meta[M_W]
    opp = 3 - c
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] == c and st[F_LIBS, st[F_HEAD, q]] == 1:
            if libs_after >= 3:
                return True
            if libs_after == 2 and _saved_from_ladder(st, meta, p, c, p, mk, ctr,
                                                      pool_st, pool_meta, frames):
                return True
            break
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] != opp:
            continue
        h = st[F_HEAD, q]
        if st[F_LIBS, h] != 1:
            continue
        # p captures h: every own string in atari touching h (and not p) is a candidate
        s = h
        while True:
            for r in (s - w, s + w, s - 1, s + 1):
                if st[F_COLOR, r] == c:
                    t = st[F_HEAD, r]
                    if st[F_LIBS, t] == 1 and _saved_from_ladder(st, meta, p, c, t, mk, ctr,
                                                                 pool_st, pool_meta, frames):
                        return True
            s = st[F_NEXT, s]
            if s == h:
                break
    return False
