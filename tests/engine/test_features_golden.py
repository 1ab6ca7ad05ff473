"""Golden planes: every feature set at fixed positions of a real game, stored bit-packed in
tests/data/features/golden_planes.npz. A difference means the meaning of a plane changed: bump the
set's version in engine/features/registry.py (model files carry it) and regenerate on purpose:

    GOENGINE_REGEN_GOLDEN=1 python -m pytest tests/engine/test_features_golden.py
"""
from __future__ import annotations

import os
import pathlib

import numpy as np

from goengine.engine.features import FEATURE_SETS, FEATURE_VERSIONS, extract_into

GOLDEN = pathlib.Path(__file__).parents[1] / "data" / "features" / "golden_planes.npz"
GAME = "2016-11-29-Zen19L-GodMoves.sgf"
MOVES = (1, 2, 9, 50, 101, 150, 200)


def compute(read_game, new_game) -> dict[str, np.ndarray]:
    n, handicap, moves = read_game(GAME)
    g = new_game(n, handicap)
    out = {}
    for i, (c, lc) in enumerate(moves, 1):
        g.play(c, lc)
        if i in MOVES:
            for name, fs in FEATURE_SETS.items():
                buf = np.empty((fs.num_planes, n, n), dtype=np.uint8)
                extract_into(g, fs, buf)
                out[f"{name}_v{fs.version}_move{i}"] = np.packbits(buf.reshape(-1))
    return out


def test_planes_match_the_golden_file(read_game, new_game):
    got = compute(read_game, new_game)
    if os.environ.get("GOENGINE_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(GOLDEN, **got)
    want = np.load(GOLDEN)
    assert set(want.files) == set(got), (
        f"golden file has {sorted(want.files)[:3]}..., versions now {FEATURE_VERSIONS}")
    for key in sorted(got):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
