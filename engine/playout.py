"""Fast heuristic playouts: numba kernels that play a board to the end and score it.

The move policy, in order, for the side to move (AlphaGo's rollout policy replaces the last step
with a learned softmax when weights are given, see engine.rollout):

1. capture the string of the opponent's last move if it is in atari;
2. save an own string next to the opponent's last move that is in atari, by extending (only if that
   gives the string two or more liberties) or by capturing a neighbouring opponent string in atari;
3. a uniformly random legal move that does not fill a true own eye and is not a self-atari of a
   string of more than `SELF_ATARI_MAX` stones.

`is_nakade_sacrifice` tells the self-ataris of two or more stones that kill an eye space by nakade;
the learned rollout policy's self-atari rule lets them through (engine.rollout.policy). These
playouts do not: with them, the dead-stone judgement (engine.deadstones) lost the seki of its
tests, the two groups' mean ownership falling from 0.86 and -0.75 to 0.06.

The game ends after two passes (a side passes when it has no such move) or `max_moves` moves, and
is scored by Tromp-Taylor area (with the eye rule above, every remaining point is settled).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.board import (EMPTY, F_COLOR, F_ELIST, F_HEAD, F_LIBS, F_MARK, F_NEXT,
                          F_SIZE, LEGAL, M_LAST, M_MARK, M_NEMPTY, M_TOPLAY, M_W,
                          area_ownership, find_liberty, is_eye, legality, play, play_pass)

SELF_ATARI_MAX = 1  # a single stone may throw in (nakade, ko); larger self-ataris are pruned
NAKADE_MAX = 6      # the rabbity six: no larger eye space is dead with the killer to move
# No nakade sacrifice is larger than the largest dead eye space: a string of this many stones
# left in atari, capturing nothing, is thrown away (or gives up a seki) wherever it is played
BIG_SELF_ATARI = NAKADE_MAX + 1


@njit(cache=True)
def libs_after(st, meta, p, c):
    """Liberties the string of colour c through p would have after playing p, ignoring captures
    (a capture only adds liberties, so this is a lower bound)."""
    w = meta[M_W]
    meta[M_MARK] += 1
    mark = meta[M_MARK]
    st[F_MARK, p] = mark
    n = 0
    for q in (p - w, p + w, p - 1, p + 1):
        col = st[F_COLOR, q]
        if col == EMPTY:
            if st[F_MARK, q] != mark:
                st[F_MARK, q] = mark
                n += 1
        elif col == c:
            h = st[F_HEAD, q]
            s = h
            while True:
                for r in (s - w, s + w, s - 1, s + 1):
                    if st[F_COLOR, r] == EMPTY and st[F_MARK, r] != mark:
                        st[F_MARK, r] = mark
                        n += 1
                s = st[F_NEXT, s]
                if s == h:
                    break
    return n


@njit(cache=True)
def captures_something(st, meta, p, c):
    """True if playing p for c captures an opponent string."""
    w = meta[M_W]
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] == 3 - c and st[F_LIBS, st[F_HEAD, q]] == 1:
            return True
    return False


@njit(cache=True)
def merged_size(st, meta, p, c):
    """Stones of the string that playing p for c would make (distinct adjacent strings + 1)."""
    w = meta[M_W]
    total = 1
    h0 = -1
    h1 = -1
    h2 = -1
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] == c:
            h = st[F_HEAD, q]
            if h != h0 and h != h1 and h != h2:
                total += st[F_SIZE, h]
                if h0 == -1:
                    h0 = h
                elif h1 == -1:
                    h1 = h
                else:
                    h2 = h
    return total


@njit(cache=True)
def killable_shape(n, max_degree, degree_sum):
    """True if an eye space of n points whose adjacency has these degrees (neighbours inside the
    space) gives no two eyes when the killer moves first: up to three points any shape; four, the
    square (all degree 2, four edges) or the pyramid (a point of degree 3); five, the crossed five
    (degree 4) or the bulky five (a square and one more: five edges); six, the rabbity six (a
    crossed five and a point closing a square with its centre: six edges). The straight, bent and
    other open shapes make two eyes."""
    if n <= 3:
        return True
    if n == 4:
        return max_degree == 3 or degree_sum == 8
    if n == 5:
        return max_degree == 4 or (max_degree == 3 and degree_sum == 10)
    return n == 6 and max_degree == 4 and degree_sum == 12


@njit(cache=True)
def is_nakade_sacrifice(st, meta, p, c):
    """True if playing p for c makes a string in atari that fills an enclosed eye space of the
    opponent's and whose capture leaves a dead shape: the string and its one liberty are the
    whole space (every neighbour of the liberty is the string, an opponent stone or the edge), one
    opponent string surrounds it (with two, the taker may connect them through the space: a seki
    is not a nakade) and the string's stones form a `killable_shape`. The opponent takes the
    string by playing the liberty, which leaves exactly the string's points as its eye space, and
    the killer moves next."""
    w = meta[M_W]
    meta[M_MARK] += 1
    mark = meta[M_MARK]
    stones = np.empty(NAKADE_MAX, np.int64)
    stones[0] = p
    st[F_MARK, p] = mark
    n = 1
    for q in (p - w, p + w, p - 1, p + 1):
        if st[F_COLOR, q] != c or st[F_MARK, q] == mark:
            continue
        h = st[F_HEAD, q]
        s = h
        while True:
            if n == NAKADE_MAX:
                return False
            stones[n] = s
            st[F_MARK, s] = mark
            n += 1
            s = st[F_NEXT, s]
            if s == h:
                break
    lib = -1
    wall = -1                           # the one opponent string around the space
    max_degree = 0
    degree_sum = 0
    for i in range(n):
        s = stones[i]
        degree = 0
        for r in (s - w, s + w, s - 1, s + 1):
            col = st[F_COLOR, r]
            if st[F_MARK, r] == mark:
                degree += 1
            elif col == EMPTY:
                if lib >= 0 and r != lib:
                    return False        # two liberties: not in atari
                lib = r
            elif col == 3 - c:
                if wall >= 0 and st[F_HEAD, r] != wall:
                    return False        # two strings around it: the taker may connect out (seki)
                wall = st[F_HEAD, r]
        max_degree = max(max_degree, degree)
        degree_sum += degree
    if lib < 0:
        return False
    for r in (lib - w, lib + w, lib - 1, lib + 1):
        col = st[F_COLOR, r]
        if st[F_MARK, r] == mark:
            continue
        if col == EMPTY or col == c:
            return False                # the space is open, or shared with another own string
        if col == 3 - c and wall >= 0 and st[F_HEAD, r] != wall:
            return False
    return killable_shape(n, max_degree, degree_sum)


@njit(cache=True)
def self_atari_size(st, meta, p, c):
    """The stones of c's string through p that playing p leaves in atari, capturing nothing; 0
    where the move is no self-atari."""
    # two empty neighbours, or an own neighbour string with three liberties, keep two liberties
    # after the move: most moves are told so without walking a string
    w = meta[M_W]
    empties = 0
    for q in (p - w, p + w, p - 1, p + 1):
        col = st[F_COLOR, q]
        if col == EMPTY:
            empties += 1
        elif col == c and st[F_LIBS, st[F_HEAD, q]] >= 3:
            return 0
    if empties >= 2:
        return 0
    if captures_something(st, meta, p, c):
        return 0
    if libs_after(st, meta, p, c) > 1:
        return 0
    return merged_size(st, meta, p, c)


@njit(cache=True)
def is_bad_self_atari(st, meta, p, c):
    """True if playing p for c leaves its string of more than `SELF_ATARI_MAX` stones in atari,
    capturing nothing."""
    return self_atari_size(st, meta, p, c) > SELF_ATARI_MAX


@njit(cache=True)
def _tactical_move(st, meta, c):
    """Rules 1 and 2 of the policy: capture the last move's string or save own strings next to it.
    Returns a Loc or -1."""
    last = meta[M_LAST]
    if last < 0:
        return -1
    w = meta[M_W]
    opp = 3 - c
    if st[F_COLOR, last] == opp:
        h = st[F_HEAD, last]
        if st[F_LIBS, h] == 1:
            lib = find_liberty(st, meta, h)
            if legality(st, meta, lib, c) == LEGAL:
                return lib
    # own strings adjacent to the last move that are now in atari
    for q in (last - w, last + w, last - 1, last + 1):
        if st[F_COLOR, q] != c:
            continue
        h = st[F_HEAD, q]
        if st[F_LIBS, h] != 1:
            continue
        # capture an adjacent opponent string in atari
        s = h
        while True:
            for r in (s - w, s + w, s - 1, s + 1):
                if st[F_COLOR, r] == opp and st[F_LIBS, st[F_HEAD, r]] == 1:
                    lib = find_liberty(st, meta, st[F_HEAD, r])
                    if legality(st, meta, lib, c) == LEGAL:
                        return lib
            s = st[F_NEXT, s]
            if s == h:
                break
        lib = find_liberty(st, meta, h)
        if legality(st, meta, lib, c) == LEGAL and libs_after(st, meta, lib, c) >= 2:
            return lib
    return -1


@njit(cache=True)
def random_move(st, meta, c):
    """A uniformly random move of rule 3, or -1 (pass) when there is none."""
    n_empty = meta[M_NEMPTY]
    if n_empty == 0:
        return -1
    start = np.random.randint(n_empty)
    for k in range(n_empty):
        p = st[F_ELIST, (start + k) % n_empty]
        if is_eye(st, meta, p, c):
            continue
        if legality(st, meta, p, c) != LEGAL:
            continue
        if is_bad_self_atari(st, meta, p, c):
            continue
        return p
    return -1


@njit(cache=True)
def policy_move(st, meta, c):
    p = _tactical_move(st, meta, c)
    if p >= 0 and not is_bad_self_atari(st, meta, p, c):
        return p
    return random_move(st, meta, c)


@njit(cache=True)
def playout(st, meta, max_moves, amaf, light=False):
    """Play the board (modified in place) to the end. Returns black area minus white area (no
    komi). `amaf[p]` records the colour that first played p in this playout (0 if none)."""
    passes = 0
    moves = 0
    c = meta[M_TOPLAY]
    while passes < 2 and moves < max_moves:
        p = random_move(st, meta, c) if light else policy_move(st, meta, c)
        if p < 0:
            play_pass(meta, c)
            passes += 1
        else:
            if amaf[p] == 0:
                amaf[p] = c
            play(st, meta, p, c)
            passes = 0
        moves += 1
        c = 3 - c
    own = np.empty(st.shape[1], dtype=np.int8)
    return area_ownership(st, meta, own), own


@njit(cache=True)
def seed(s):
    np.random.seed(s)


@njit(cache=True)
def random_playouts(st0, meta0, count, max_moves, light=False):
    """Benchmark kernel: `count` playouts from a position; returns the mean score."""
    total = 0.0
    amaf = np.zeros(st0.shape[1], dtype=np.int8)
    for _ in range(count):
        st = st0.copy()
        meta = meta0.copy()
        amaf[:] = 0
        score, _own = playout(st, meta, max_moves, amaf, light)
        total += score
    return total / count
