"""The rules core: numba kernels over flat arrays.

A board is two arrays (see `new_board`):

* `st`   int32[NF, A]  per-cell fields, A = (N+2)^2 cells of the padded board (Loc indexing,
                       see engine.coords). Row F_* of the table below.
* `meta` int64[NM]     scalars (size, ko, hash, counters), index M_*.

| field    | meaning                                                                 |
|----------|-------------------------------------------------------------------------|
| F_COLOR  | EMPTY, BLACK, WHITE or BORDER                                           |
| F_HEAD   | for a stone: the Loc that names its string                              |
| F_NEXT   | for a stone: the next stone of its string (a circular list)             |
| F_LIBS   | at a string's head: its exact number of liberties, kept incrementally   |
| F_SIZE   | at a string's head: its number of stones                                |
| F_AGE    | for a stone: the move number at which it was played (0 = setup stone)   |
| F_EIDX   | for an empty point: its index in the empty list                         |
| F_ELIST  | the empty list: the first meta[M_NEMPTY] entries are the empty points   |
| F_MARK   | scratch marks for counting liberties (compared with meta[M_MARK])       |

Liberties are exact, not pseudo-liberties: a stone placed next to a string takes one liberty from
each distinct adjacent string, a removed stone gives one to each distinct adjacent string, and a
merge recounts the merged string once. Copying a board is two array copies, which is what playouts
and the search do.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.colors import BLACK, BORDER, EMPTY, WHITE
from goengine.engine.coords import MAX_SIZE


F_COLOR, F_HEAD, F_NEXT, F_LIBS, F_SIZE, F_AGE, F_EIDX, F_ELIST, F_MARK = range(9)
NF = 9

(M_N, M_W, M_KO, M_KOCOLOR, M_TOPLAY, M_HASH, M_CAPB, M_CAPW, M_LAST, M_LAST2,
 M_MOVENUM, M_PASSES, M_NEMPTY, M_MARK) = range(14)
NM = 14

# Legality codes returned by `legality`.
LEGAL, OCCUPIED, SUICIDE, KO = 0, 1, 2, 3

MAX_AREA = (MAX_SIZE + 2) * (MAX_SIZE + 2)

# Zobrist keys, fixed seed so that hashes are stable across runs and processes.
ZOBRIST = np.random.default_rng(20161).integers(
    -(2**62), 2**62, size=(3, MAX_AREA), dtype=np.int64)
ZOBRIST_WHITE_TO_PLAY = np.int64(0x2545F4914F6CDD1D)


def new_board(n: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty n x n board, black to play."""
    w = n + 2
    a = w * w
    st = np.zeros((NF, a), dtype=np.int32)
    meta = np.zeros(NM, dtype=np.int64)
    st[F_COLOR, :] = BORDER
    k = 0
    for r in range(n):
        for c in range(n):
            p = (r + 1) * w + (c + 1)
            st[F_COLOR, p] = EMPTY
            st[F_EIDX, p] = k
            st[F_ELIST, k] = p
            k += 1
    meta[M_N] = n
    meta[M_W] = w
    meta[M_KO] = -1
    meta[M_TOPLAY] = BLACK
    meta[M_LAST] = -1
    meta[M_LAST2] = -1
    meta[M_NEMPTY] = k
    return st, meta


@njit(cache=True, inline="always")
def _neighbours(p, w):
    return (p - w, p + w, p - 1, p + 1)


@njit(cache=True)
def _remove_empty(st, meta, p):
    i = st[F_EIDX, p]
    last = meta[M_NEMPTY] - 1
    q = st[F_ELIST, last]
    st[F_ELIST, i] = q
    st[F_EIDX, q] = i
    meta[M_NEMPTY] = last


@njit(cache=True)
def _add_empty(st, meta, p):
    k = meta[M_NEMPTY]
    st[F_ELIST, k] = p
    st[F_EIDX, p] = k
    meta[M_NEMPTY] = k + 1


@njit(cache=True)
def count_liberties(st, meta, head):
    """Count the liberties of the string at `head` from scratch (marks each once)."""
    meta[M_MARK] += 1
    mark = meta[M_MARK]
    w = meta[M_W]
    n = 0
    s = head
    while True:
        for q in _neighbours(s, w):
            if st[F_COLOR, q] == EMPTY and st[F_MARK, q] != mark:
                st[F_MARK, q] = mark
                n += 1
        s = st[F_NEXT, s]
        if s == head:
            break
    return n


@njit(cache=True)
def find_liberty(st, meta, head):
    """One liberty of the string at `head` (-1 if it has none)."""
    w = meta[M_W]
    s = head
    while True:
        for q in _neighbours(s, w):
            if st[F_COLOR, q] == EMPTY:
                return q
        s = st[F_NEXT, s]
        if s == head:
            return -1


@njit(cache=True)
def find_two_liberties(st, meta, head, out):
    """Write up to two distinct liberties of the string into out[0:2]; return how many."""
    w = meta[M_W]
    k = 0
    s = head
    while True:
        for q in _neighbours(s, w):
            if st[F_COLOR, q] == EMPTY:
                if k == 0:
                    out[0] = q
                    k = 1
                elif q != out[0]:
                    out[1] = q
                    return 2
        s = st[F_NEXT, s]
        if s == head:
            return k


@njit(cache=True)
def legality(st, meta, p, c):
    """LEGAL, OCCUPIED, SUICIDE or KO for colour c at Loc p (simple ko only; superko is Game's)."""
    if st[F_COLOR, p] != EMPTY:
        return OCCUPIED
    if p == meta[M_KO] and c == meta[M_KOCOLOR]:
        return KO
    w = meta[M_W]
    for q in _neighbours(p, w):
        col = st[F_COLOR, q]
        if col == EMPTY:
            return LEGAL
        if col == BORDER:
            continue
        libs = st[F_LIBS, st[F_HEAD, q]]
        if col == c:
            if libs > 1:
                return LEGAL
        elif libs == 1:
            return LEGAL  # captures
    return SUICIDE


@njit(cache=True)
def _remove_string(st, meta, head):
    """Take a string off the board; every distinct adjacent string gains a liberty per stone."""
    w = meta[M_W]
    removed = 0
    s = head
    while True:
        nxt = st[F_NEXT, s]
        col = st[F_COLOR, s]
        st[F_COLOR, s] = EMPTY
        meta[M_HASH] ^= ZOBRIST[col, s]
        _add_empty(st, meta, s)
        removed += 1
        h0 = -1
        h1 = -1
        h2 = -1
        for q in _neighbours(s, w):
            qc = st[F_COLOR, q]
            if qc == BLACK or qc == WHITE:
                h = st[F_HEAD, q]
                if h != head and h != h0 and h != h1 and h != h2:
                    st[F_LIBS, h] += 1
                    if h0 == -1:
                        h0 = h
                    elif h1 == -1:
                        h1 = h
                    else:
                        h2 = h
        s = nxt
        if s == head:
            break
    return removed


@njit(cache=True)
def _merge_into(st, base, other):
    """Relabel string `other` as part of `base` and splice the circular lists."""
    s = other
    while True:
        st[F_HEAD, s] = base
        s = st[F_NEXT, s]
        if s == other:
            break
    nb = st[F_NEXT, base]
    st[F_NEXT, base] = st[F_NEXT, other]
    st[F_NEXT, other] = nb
    st[F_SIZE, base] += st[F_SIZE, other]


@njit(cache=True)
def play(st, meta, p, c):
    """Play colour c at Loc p, which must not be OCCUPIED or KO. Returns the stones captured.

    A suicide (only reachable when the caller allows it) removes the suicided string.
    """
    w = meta[M_W]
    opp = 3 - c
    _remove_empty(st, meta, p)
    st[F_COLOR, p] = c
    st[F_HEAD, p] = p
    st[F_NEXT, p] = p
    st[F_SIZE, p] = 1
    meta[M_MOVENUM] += 1
    st[F_AGE, p] = meta[M_MOVENUM]
    meta[M_HASH] ^= ZOBRIST[c, p]

    empties = 0
    for q in _neighbours(p, w):
        if st[F_COLOR, q] == EMPTY:
            empties += 1
    st[F_LIBS, p] = empties

    # Join own strings: each loses the liberty p, then the merged string is recounted once.
    head = p
    merged = False
    for q in _neighbours(p, w):
        if st[F_COLOR, q] == c:
            h = st[F_HEAD, q]
            if h != head:
                if st[F_SIZE, h] > st[F_SIZE, head]:
                    _merge_into(st, h, head)
                    head = h
                else:
                    _merge_into(st, head, h)
                merged = True
    if merged:
        st[F_LIBS, head] = count_liberties(st, meta, head)

    # Opponent strings lose the liberty p; those left with none are captured.
    captured = 0
    last_captured = -1
    h0 = -1
    h1 = -1
    h2 = -1
    for q in _neighbours(p, w):
        if st[F_COLOR, q] == opp:
            h = st[F_HEAD, q]
            if h != h0 and h != h1 and h != h2:
                if h0 == -1:
                    h0 = h
                elif h1 == -1:
                    h1 = h
                else:
                    h2 = h
                st[F_LIBS, h] -= 1
                if st[F_LIBS, h] == 0:
                    captured += _remove_string(st, meta, h)
                    last_captured = q

    if st[F_LIBS, head] == 0:
        # Suicide, allowed by the caller's rules: the opponent captures the string.
        lost = _remove_string(st, meta, head)
        if c == BLACK:
            meta[M_CAPW] += lost
        else:
            meta[M_CAPB] += lost

    if captured == 1 and st[F_SIZE, head] == 1 and st[F_LIBS, head] == 1 and st[F_COLOR, p] == c:
        meta[M_KO] = last_captured
        meta[M_KOCOLOR] = opp
    else:
        meta[M_KO] = -1
    if c == BLACK:
        meta[M_CAPB] += captured
    else:
        meta[M_CAPW] += captured
    meta[M_LAST2] = meta[M_LAST]
    meta[M_LAST] = p
    meta[M_PASSES] = 0
    meta[M_TOPLAY] = opp
    return captured


@njit(cache=True)
def play_pass(meta, c):
    meta[M_KO] = -1
    meta[M_MOVENUM] += 1
    meta[M_PASSES] += 1
    meta[M_LAST2] = meta[M_LAST]
    meta[M_LAST] = -1
    meta[M_TOPLAY] = 3 - c


@njit(cache=True)
def place_setup_stone(st, meta, p, c):
    """Put a setup (handicap) stone: like a move, but no move number and no turn change."""
    to_play = meta[M_TOPLAY]
    last, last2 = meta[M_LAST], meta[M_LAST2]
    play(st, meta, p, c)
    meta[M_MOVENUM] -= 1
    st[F_AGE, p] = 0
    meta[M_TOPLAY] = to_play
    meta[M_LAST] = last
    meta[M_LAST2] = last2
    meta[M_KO] = -1


@njit(cache=True)
def is_eye(st, meta, p, c):
    """True if empty p is a true eye of colour c: all neighbours own (or edge) and the diagonals
    hold at most one opponent stone in the centre, none on the edge."""
    if st[F_COLOR, p] != EMPTY:
        return False
    w = meta[M_W]
    edge = False
    for q in _neighbours(p, w):
        col = st[F_COLOR, q]
        if col == BORDER:
            edge = True
        elif col != c:
            return False
    bad = 0
    for q in (p - w - 1, p - w + 1, p + w - 1, p + w + 1):
        col = st[F_COLOR, q]
        if col == 3 - c:
            bad += 1
    if edge:
        return bad == 0
    return bad <= 1


@njit(cache=True)
def area_ownership(st, meta, out):
    """Tromp-Taylor ownership per Loc into out (int8[A]): BLACK, WHITE or EMPTY (dame/seki).

    Stones own their point; an empty region is owned by a colour if it reaches only that colour.
    Returns black area minus white area.
    """
    n = meta[M_N]
    w = meta[M_W]
    a = w * w
    for i in range(a):
        out[i] = 0
    stack = np.empty(a, dtype=np.int32)
    region = np.empty(a, dtype=np.int32)
    meta[M_MARK] += 1
    mark = meta[M_MARK]
    diff = 0
    for r in range(n):
        for cc in range(n):
            p = (r + 1) * w + cc + 1
            col = st[F_COLOR, p]
            if col == BLACK or col == WHITE:
                out[p] = col
                diff += 1 if col == BLACK else -1
                continue
            if st[F_MARK, p] == mark:
                continue
            # flood the empty region containing p
            sp = 0
            rn = 0
            stack[sp] = p
            sp += 1
            st[F_MARK, p] = mark
            touches = 0
            while sp > 0:
                sp -= 1
                x = stack[sp]
                region[rn] = x
                rn += 1
                for q in _neighbours(x, w):
                    qc = st[F_COLOR, q]
                    if qc == EMPTY:
                        if st[F_MARK, q] != mark:
                            st[F_MARK, q] = mark
                            stack[sp] = q
                            sp += 1
                    elif qc == BLACK:
                        touches |= 1
                    elif qc == WHITE:
                        touches |= 2
            owner = 0
            if touches == 1:
                owner = BLACK
            elif touches == 2:
                owner = WHITE
            if owner != 0:
                for i in range(rn):
                    out[region[i]] = owner
                diff += rn if owner == BLACK else -rn
    return diff


@njit(cache=True)
def libs_from_scratch(st, meta, p):
    """Liberties of the string through p, found by a flood fill ignoring every kept field."""
    w = meta[M_W]
    a = w * w
    c = st[F_COLOR, p]
    seen = np.zeros(a, dtype=np.uint8)
    stack = np.empty(a, dtype=np.int32)
    sp = 1
    stack[0] = p
    seen[p] = 1
    libs = 0
    while sp > 0:
        sp -= 1
        x = stack[sp]
        for q in _neighbours(x, w):
            if seen[q]:
                continue
            qc = st[F_COLOR, q]
            if qc == c:
                seen[q] = 1
                stack[sp] = q
                sp += 1
            elif qc == EMPTY:
                seen[q] = 1
                libs += 1
    return libs
