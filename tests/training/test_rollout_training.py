"""The rollout policy's training (engine-train rollout) on real Tygem games: a short run that
beats a uniform guess, the command line, and the trainer's features against the policy the engine
plays. Needs ../shared/data beside the project (skipped without it)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from goengine.engine import board as B
from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import loc
from goengine.engine.replay import initial_game
from goengine.engine.rollout.policy import RolloutPolicy
from goengine.sgf_tools.archives import iter_games
from goengine.training.rollout.cli import rollout_command
from goengine.training.rollout.data import load_games, split_heldout
from goengine.training.rollout.features import build_dictionary, count_patterns, extract_all
from goengine.training.rollout.train import train_rollout

# the Tygem archives, when ../shared/data is beside the project
TYGEM = Path(__file__).resolve().parents[3] / "shared" / "data" / "tygem9d"


@pytest.mark.skipif(not TYGEM.is_dir(), reason="no Tygem archives")
def test_tiny_training_run_beats_uniform(tmp_path):
    train, held = split_heldout([TYGEM])
    assert [f.name for f in held] == ["tygem9d-2015-06.tar.bz2"]
    assert all(f.name != "tygem9d-2015-06.tar.bz2" for f in train)
    out = tmp_path / "rollout.npz"
    m = train_rollout([TYGEM], out, positions=3000, heldout_positions=1500, dict_positions=2000,
                      min_count={"3x3": 2, "diamond": 2, "nakade": 1}, max_games=20,
                      eval_every=1000, progress=False, bench_seconds=0, log=lambda s: None)
    assert m["training_games"] == 20
    assert m["heldout_top1"] > 5 * m["uniform_top1"]
    assert m["heldout_top1"] > 0.05
    pol = RolloutPolicy.load(out)
    assert pol.meta["heldout_top1"] == m["heldout_top1"]
    assert json.loads((tmp_path / "rollout.json").read_text())["positions"] == m["positions"]
    curve = (tmp_path / "rollout.curve.csv").read_text().splitlines()
    assert curve[0].startswith("positions,") and len(curve) >= 3


@pytest.mark.skipif(not TYGEM.is_dir(), reason="no Tygem archives")
def test_rollout_command_line(tmp_path):
    out = tmp_path / "r.npz"
    res = CliRunner().invoke(rollout_command, [
        "--sgf", str(TYGEM), "--out", str(out), "--positions", "500", "--max-games", "5",
        "--dict-positions", "300", "--heldout-positions", "300", "--min-count",
        "3x3=1,diamond=1", "--bench-seconds", "0", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert out.is_file() and (tmp_path / "r.json").is_file()


@pytest.mark.skipif(not TYGEM.is_dir(), reason="no Tygem archives")
def test_training_features_match_the_playout_policy():
    """The softmax the trainer fits (feature indices + weights) is the policy the engine plays
    (RolloutPolicy built from the same keys and weights), position by position."""
    path = TYGEM / "tygem9d-2015-05.tar.bz2"
    gs = load_games([path], max_games=2)
    sel = ((gs.col <= 2) & (gs.loc >= 0)).astype(np.uint8)
    keys, counts = count_patterns(gs, sel, table_bits=18)
    dic = build_dictionary(keys, counts, {"3x3": 2, "diamond": 2, "nakade": 1})
    rng = np.random.default_rng(3)
    w = rng.normal(0, 1, len(dic))
    batch = extract_all(gs, sel, dic)
    pol = RolloutPolicy(dic.keys, w.astype(np.float32))
    w32 = pol.weights.astype(np.float64)
    records = []
    for rec in iter_games(path):
        records.append(rec)
        if len(records) == 2:
            break
    i = 0
    for rec in records:
        g = initial_game(rec)
        for colour, point in rec.moves:
            c = BLACK if colour == "b" else WHITE
            lc = -1 if point is None else loc(point[0], point[1], 19)
            if lc >= 0:
                lo, hi = batch.pos_off[i], batch.pos_off[i + 1]
                z = np.array([sum(w32[f] for f in batch.feat[j] if f >= 0) for j in range(lo, hi)])
                p_train = np.exp(z - z.max())
                p_train /= p_train.sum()
                g.meta[B.M_TOPLAY] = c
                probs = pol.move_probabilities(g)
                assert len(probs) == hi - lo
                np.testing.assert_allclose(sorted(probs.values()), np.sort(p_train), rtol=1e-6)
                t = batch.target[i]
                if t >= 0:
                    assert probs[lc] == pytest.approx(p_train[t], rel=1e-6)
                else:
                    assert lc not in probs
                i += 1
            g.play(c, lc)
    assert i == len(batch)
