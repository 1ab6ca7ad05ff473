"""Parity of the features on real games: incremental state vs a fresh replay vs a copy, and the
8 symmetries (planes of the transformed game == transformed planes of the game). The games are
fixtures in tests/data."""
from __future__ import annotations

import numpy as np
import pytest

from goengine.engine.coords import PASS, loc, loc_to_rc
from goengine.engine.features import FEATURE_SETS, extract

GAMES = ["2016-11-29-Zen19L-GodMoves.sgf",     # 19x19, long, many fights
         "2023-05-18-pachipachi-Landais.sgf",  # 19x19 handicap (AB)
         "2012-03-05-Fuego13-Zen19S.sgf",      # 13x13
         "2014-10-12-Fuego9-Orego12.sgf"]      # 9x9


@pytest.mark.parametrize("name", GAMES)
def test_incremental_equals_fresh_replay_and_copy(name, new_game, read_game, replay):
    n, handicap, moves = read_game(name)
    assert len(moves) > 40
    g = new_game(n, handicap)
    ladder_points = 0
    for i, (c, lc) in enumerate(moves):
        g.play(c, lc)
        if i % 3 and i < len(moves) - 1:
            continue
        fresh = replay(n, handicap, moves[:i + 1])
        for fs in FEATURE_SETS:
            x = extract(g, fs)
            np.testing.assert_array_equal(x, extract(fresh, fs), err_msg=f"{fs} move {i + 1}")
            np.testing.assert_array_equal(x, extract(g.copy(), fs), err_msg=f"{fs} move {i + 1}")
        x = extract(g, "alphago48", color=3 - g.to_play)
        np.testing.assert_array_equal(x, extract(fresh, "alphago48", color=3 - g.to_play))
        ladder_points += int(x[44:46].sum())
    if n == 19:
        assert ladder_points > 0  # the ladder planes were exercised


def symmetry(planes: np.ndarray, k: int) -> np.ndarray:
    """Our own D4 action on the last two axes: k % 4 quarter turns, after a transpose if k >= 4."""
    x = np.swapaxes(planes, -1, -2) if k >= 4 else planes
    return np.rot90(x, k % 4, axes=(-2, -1))


def map_loc(lc: int, k: int, n: int) -> int:
    if lc == PASS:
        return PASS
    r, c = loc_to_rc(lc, n)
    marker = np.zeros((n, n), dtype=np.int8)
    marker[r, c] = 1
    (r2,), (c2,) = np.nonzero(symmetry(marker, k))
    return loc(int(r2), int(c2), n)


@pytest.mark.parametrize("name", GAMES)
def test_symmetric_positions_give_symmetric_planes(name, new_game, read_game):
    n, handicap, moves = read_game(name)
    checkpoints = set(range(5, len(moves), 3)) | {len(moves)}
    base = new_game(n, handicap)
    expected = {}
    for i, (c, lc) in enumerate(moves, 1):
        base.play(c, lc)
        if i in checkpoints:
            expected[i] = {fs: extract(base, fs) for fs in ("alphago49", "zero17")}
    for k in range(1, 8):
        g = new_game(n, [map_loc(lc, k, n) for lc in handicap])
        for i, (c, lc) in enumerate(moves, 1):
            g.play(c, map_loc(lc, k, n))
            if i in checkpoints:
                for fs, x in expected[i].items():
                    np.testing.assert_array_equal(extract(g, fs), symmetry(x, k),
                                                  err_msg=f"{fs} symmetry {k} move {i}")
