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
like any other move: the runner's reply of capturing it is among its options.

Bounds: at most `MAX_LADDER_PLIES` plies deep and `LADDER_BUDGET` plays per top-level question.
A reading that runs out of either is inconclusive and counts as "not captured": ladder_capture is
then 0, and a ladder escape whose string could not be proven capturable is 1.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.board import (EMPTY, F_COLOR, F_HEAD, F_LIBS, F_NEXT, LEGAL, M_W,
                          find_liberty, find_two_liberties, legality, play)

MAX_LADDER_PLIES = 128  # a ladder across a 25x25 board is under 100 plies
LADDER_BUDGET = 2000    # plays per top-level ladder question

# Scratch counters, ctr[0]: mark stamp (for the caller's mark array), ctr[1]: plays used.
C_STAMP, C_PLAYS = 0, 1


@njit(cache=True)
def new_scratch(area):
    """Marks (int32[area]) and counters (int64[2]) shared by the feature kernels."""
    return np.zeros(area, dtype=np.int32), np.zeros(2, dtype=np.int64)


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
def _runner_options(st, meta, head, runner, out):
    """Candidate runner moves into out: liberties of adjacent chaser strings in atari, then the
    runner's own liberty. Returns how many (distinct, not yet checked for legality)."""
    w = meta[M_W]
    chaser = 3 - runner
    k = 0
    s = head
    while True:
        for q in (s - w, s + w, s - 1, s + 1):
            if st[F_COLOR, q] == chaser:
                hq = st[F_HEAD, q]
                if st[F_LIBS, hq] == 1:
                    lib = find_liberty(st, meta, hq)
                    dup = False
                    for i in range(k):
                        if out[i] == lib:
                            dup = True
                    if not dup and k < out.shape[0] - 1:
                        out[k] = lib
                        k += 1
        s = st[F_NEXT, s]
        if s == head:
            break
    lib = find_liberty(st, meta, head)
    dup = False
    for i in range(k):
        if out[i] == lib:
            dup = True
    if not dup:
        out[k] = lib
        k += 1
    return k


@njit(cache=True)
def _read(st, meta, prey, chaser, runner_to_move, depth, mk, ctr):
    """True if the chaser captures the runner string through `prey` by ladder. The board (st, meta)
    belongs to this call and is modified. See the module docstring for the rules of the reading."""
    if depth >= MAX_LADDER_PLIES or ctr[C_PLAYS] >= LADDER_BUDGET:
        return False
    runner = 3 - chaser
    head = st[F_HEAD, prey]
    if runner_to_move:
        opts = np.empty(16, dtype=np.int64)
        k = _runner_options(st, meta, head, runner, opts)
        m = 0
        for i in range(k):
            if legality(st, meta, opts[i], runner) == LEGAL:
                opts[m] = opts[i]
                m += 1
        for i in range(m):
            if i < m - 1:
                s2 = st.copy()
                m2 = meta.copy()
            else:
                s2 = st
                m2 = meta
            play(s2, m2, opts[i], runner)
            ctr[C_PLAYS] += 1
            h = s2[F_HEAD, prey]
            libs = s2[F_LIBS, h]
            if libs >= 3:
                return False
            if libs == 1:
                if legality(s2, m2, find_liberty(s2, m2, h), chaser) != LEGAL:
                    return False
                continue
            if not _read(s2, m2, prey, chaser, False, depth + 1, mk, ctr):
                return False
        return True
    # chaser to move: the runner has two liberties
    two = np.empty(2, dtype=np.int64)
    if find_two_liberties(st, meta, head, two) != 2:
        return False
    x0 = -1
    x1 = -1
    for i in range(2):
        x = two[i]
        y = two[1 - i]
        if legality(st, meta, x, chaser) != LEGAL:
            continue
        if extension_libs(st, meta, head, y, x, mk, ctr, 3) >= 3:
            continue
        if x0 == -1:
            x0 = x
        else:
            x1 = x
    if x0 == -1:
        return False
    if x1 != -1:
        s2 = st.copy()
        m2 = meta.copy()
        play(s2, m2, x0, chaser)
        ctr[C_PLAYS] += 1
        if s2[F_LIBS, s2[F_HEAD, prey]] == 1 and _read(s2, m2, prey, chaser, True, depth + 1, mk, ctr):
            return True
        x0 = x1
    play(st, meta, x0, chaser)
    ctr[C_PLAYS] += 1
    if st[F_LIBS, st[F_HEAD, prey]] != 1:
        return False
    return _read(st, meta, prey, chaser, True, depth + 1, mk, ctr)


@njit(cache=True)
def ladder_captures(st, meta, p, c, mk, ctr):
    """True if c playing the legal move p puts an opponent string into atari (two liberties before,
    one after) that the ladder then captures. Does not modify the board."""
    w = meta[M_W]
    opp = 3 - c
    two = np.empty(2, dtype=np.int64)
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
        s2 = st.copy()
        m2 = meta.copy()
        play(s2, m2, p, c)
        ctr[C_PLAYS] = 1
        if s2[F_LIBS, s2[F_HEAD, h]] == 1 and _read(s2, m2, h, c, True, 1, mk, ctr):
            return True
    return False


@njit(cache=True)
def _saved_from_ladder(st, meta, p, c, prey, mk, ctr):
    """After c plays p, is the c string through `prey` (in atari now) out of the ladder?"""
    s2 = st.copy()
    m2 = meta.copy()
    play(s2, m2, p, c)
    ctr[C_PLAYS] = 1
    libs = s2[F_LIBS, s2[F_HEAD, prey]]
    if libs >= 3:
        return True
    if libs <= 1:
        return False
    return not _read(s2, m2, prey, 3 - c, False, 1, mk, ctr)


@njit(cache=True)
def ladder_escapes(st, meta, p, c, mk, ctr):
    """True if c playing the legal move p saves a c string that is in atari now (by extending on its
    liberty, or by capturing an opponent string next to it) so that it has 3+ liberties or the
    opponent's ladder no longer captures it. Does not modify the board."""
    w = meta[M_W]
    opp = 3 - c
    for q in (p - w, p + w, p - 1, p + 1):
        col = st[F_COLOR, q]
        if col == c:
            h = st[F_HEAD, q]
            if st[F_LIBS, h] == 1 and _saved_from_ladder(st, meta, p, c, h, mk, ctr):
                return True
        elif col == opp:
            h = st[F_HEAD, q]
            if st[F_LIBS, h] != 1:
                continue
            # p captures h: every own string in atari touching h is a candidate
            s = h
            while True:
                for r in (s - w, s + w, s - 1, s + 1):
                    if st[F_COLOR, r] == c:
                        t = st[F_HEAD, r]
                        if st[F_LIBS, t] == 1 and _saved_from_ladder(st, meta, p, c, t, mk, ctr):
                            return True
                s = st[F_NEXT, s]
                if s == h:
                    break
    return False
