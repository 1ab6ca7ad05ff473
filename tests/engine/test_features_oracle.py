"""The candidate planes against a slow oracle on real game positions: every legal move is played
out with the rules core (engine.board.play on a copy) and the ladders are read by a plain recursive
reader written from the definitions in engine/features/ladder.py, without its prefilter, pool or
explicit stack."""
from __future__ import annotations

import numpy as np
import pytest

from goengine.engine import board as B
from goengine.engine.coords import loc
from goengine.engine.features import extract, get
from goengine.engine.features.ladder import MAX_LADDER_PLIES
from features_positions import decode
from sample_games import kgs_files


def neighbours(p, w):
    return (p - w, p + w, p - 1, p + 1)


def stones(st, head):
    s = head
    while True:
        yield s
        s = st[B.F_NEXT, s]
        if s == head:
            return


def after(st, meta, p, c):
    s2, m2 = st.copy(), meta.copy()
    captured = B.play(s2, m2, p, c)
    return s2, m2, captured


def libs_of(st, stone):
    return int(st[B.F_LIBS, st[B.F_HEAD, stone]])


def runner_escapes(st, meta, prey, chaser, depth):
    """Runner to move, in atari: True if some legal runner move gets it out of the ladder."""
    if depth >= MAX_LADDER_PLIES:
        return True
    w = int(meta[B.M_W])
    runner = 3 - chaser
    head = st[B.F_HEAD, prey]
    options = []
    for s in stones(st, head):
        for q in neighbours(s, w):
            if st[B.F_COLOR, q] == chaser and libs_of(st, q) == 1:
                options.append(B.find_liberty(st, meta, st[B.F_HEAD, q]))
    options.append(B.find_liberty(st, meta, head))
    for x in dict.fromkeys(options):
        if B.legality(st, meta, x, runner) != B.LEGAL:
            continue
        s2, m2, _ = after(st, meta, x, runner)
        libs = libs_of(s2, prey)
        if libs >= 3:
            return True
        if libs == 1:
            if B.legality(s2, m2, B.find_liberty(s2, m2, s2[B.F_HEAD, prey]), chaser) != B.LEGAL:
                return True
            continue
        if not chaser_captures(s2, m2, prey, chaser, depth + 1):
            return True
    return False


def chaser_captures(st, meta, prey, chaser, depth):
    """Chaser to move, the runner has two liberties: True if one of the two ataris works."""
    if depth >= MAX_LADDER_PLIES:
        return False
    two = np.empty(2, dtype=np.int64)
    B.find_two_liberties(st, meta, st[B.F_HEAD, prey], two)
    for x in two:
        if B.legality(st, meta, x, chaser) != B.LEGAL:
            continue
        s2, m2, _ = after(st, meta, x, chaser)
        if libs_of(s2, prey) == 1 and not runner_escapes(s2, m2, prey, chaser, depth + 1):
            return True
    return False


def oracle_ladder_capture(st, meta, p, c):
    w = int(meta[B.M_W])
    for q in neighbours(p, w):
        if st[B.F_COLOR, q] == 3 - c and libs_of(st, q) == 2:
            s2, m2, _ = after(st, meta, p, c)
            if libs_of(s2, q) == 1 and not runner_escapes(s2, m2, q, c, 1):
                return True
    return False


def oracle_ladder_escape(st, meta, p, c):
    w = int(meta[B.M_W])
    prey = []
    for q in neighbours(p, w):
        if st[B.F_COLOR, q] == c and libs_of(st, q) == 1:
            prey.append(q)
        if st[B.F_COLOR, q] == 3 - c and libs_of(st, q) == 1:
            for s in stones(st, st[B.F_HEAD, q]):
                prey += [r for r in neighbours(s, w)
                         if st[B.F_COLOR, r] == c and libs_of(st, r) == 1]
    for t in prey:
        s2, m2, _ = after(st, meta, p, c)
        libs = libs_of(s2, t)
        if libs >= 3 or (libs == 2 and not chaser_captures(s2, m2, t, 3 - c, 1)):
            return True
    return False


def oracle_planes(game):
    """{name: int[N, N]} of the candidate groups by playing every move out (-1 = no candidate)."""
    st, meta, c, n = game.st, game.meta, game.to_play, game.size
    names = ("capture_size", "self_atari_size", "liberties_after_move", "ladder_capture",
             "ladder_escape", "sensibleness")
    out = {k: np.full((n, n), -1) for k in names}
    for r in range(n):
        for col in range(n):
            p = loc(r, col, n)
            if B.legality(st, meta, p, c) != B.LEGAL:
                continue
            s2, _, captured = after(st, meta, p, c)
            libs, size = libs_of(s2, p), int(s2[B.F_SIZE, s2[B.F_HEAD, p]])
            out["capture_size"][r, col] = min(captured, 7)
            out["liberties_after_move"][r, col] = min(libs, 8)
            out["self_atari_size"][r, col] = min(size, 8) if libs == 1 else -1
            out["sensibleness"][r, col] = 0 if B.is_eye(st, meta, p, c) else 1
            out["ladder_capture"][r, col] = int(oracle_ladder_capture(st, meta, p, c))
            out["ladder_escape"][r, col] = int(oracle_ladder_escape(st, meta, p, c))
    return out


# the 19 KGS samples of ../shared/data when it is there, else the fixtures of tests/data
ALL_SAMPLES = [p.name for p in kgs_files()]


@pytest.mark.parametrize("name", ALL_SAMPLES)
def test_candidate_planes_match_playing_every_move(name, new_game, read_game):
    fs = get("alphago48")
    n, handicap, moves = read_game(name)
    g = new_game(n, handicap)
    for i, (c, lc) in enumerate(moves, 1):
        g.play(c, lc)
        x = extract(g, fs)
        want = oracle_planes(g)
        for group in ("capture_size", "self_atari_size", "liberties_after_move"):
            got = decode(x[fs.slice(group)], 0 if group == "capture_size" else 1)
            np.testing.assert_array_equal(got, want[group], err_msg=f"{group} move {i}")
        legal = want["capture_size"] >= 0
        for group in ("ladder_capture", "ladder_escape", "sensibleness"):
            got = x[fs.offsets[group]].astype(int)
            np.testing.assert_array_equal(got[legal], want[group][legal], err_msg=f"{group} move {i}")
            assert not got[~legal].any(), f"{group} set at a non-candidate, move {i}"
