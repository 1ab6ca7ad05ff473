"""Fair-komi self-play (`engine-train zero --fair-komi`): each generation at the komi at which Black
would have won half of the previous one's games; the shards keep each game's komi, the training
window's score targets are moved to the window's komi, and the exported networks say that komi."""
import csv
import json
import math

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray")

from goengine.engine.evaluator import UniformEvaluator  # noqa: E402
from goengine.engine.search.komi import KOMI_SCALE, SHARE_LIMIT, fair_komi  # noqa: E402
from goengine.training.workers.pool import WorkerPool  # noqa: E402
from goengine.training.zero.loop import ZeroConfig, ZeroRun, next_komi  # noqa: E402
from goengine.training.zero.selfplay import ZeroGamesJob, play_zero_games  # noqa: E402
from goengine.training.zero.shards import (ZeroShards, black_share, load_window,  # noqa: E402
                                           positions_of, window_komi)
from zero_nets import TINY  # noqa: E402


def test_fair_komi_is_where_the_score_model_gives_black_half():
    assert fair_komi(7.5, 0.5, 9) == pytest.approx(7.5)
    s = KOMI_SCALE * 9
    for share in (0.07, 0.3, 0.8):
        k = fair_komi(7.0, share, 9)
        # the logistic score model: P(Black wins at 7) = sigmoid((mu - 7) / s), mu the fair komi
        assert 1 / (1 + math.exp(-(k - 7.0) / s)) == pytest.approx(share)
    assert fair_komi(7.0, 0.07, 9) < fair_komi(7.0, 0.3, 9) < 7.0 < fair_komi(7.0, 0.8, 9)
    # a clean sweep says "far off", not infinitely far
    assert fair_komi(7.0, 0.0, 9) == pytest.approx(fair_komi(7.0, SHARE_LIMIT, 9))
    assert math.isfinite(fair_komi(7.0, 1.0, 19))
    # a wider spread on a larger board: the same share moves the komi further
    assert abs(fair_komi(7.0, 0.3, 19) - 7.0) > abs(fair_komi(7.0, 0.3, 9) - 7.0)


def test_next_komi_moves_at_most_a_step_to_a_half_point():
    assert next_komi(7.0, 0.07, 9, step=2.0) == 5.5        # fair -3.5: held to 5, then 5.5
    assert next_komi(7.5, 0.5, 9, step=2.0) == 7.5
    assert next_komi(7.5, 0.55, 9, step=2.0) == 8.5        # fair 8.3: the nearest half point
    assert next_komi(0.5, 0.99, 9, step=3.0) == 3.5
    for share in np.linspace(0.0, 1.0, 11):
        k = next_komi(2.5, share, 9, step=1.5)
        assert abs(k - 2.5) <= 1.5 + 0.5 and k % 1 == 0.5


def games_at(komi, seed):
    job = ZeroGamesJob(pairs=[("best", "best")] * 2, size=5, komi=komi, visits=8, seed=seed,
                       noise=False, resign_threshold=0.0, no_resign_fraction=0.0)
    return play_zero_games({"best": UniformEvaluator()}, job)


def test_window_moves_the_score_targets_to_its_komi(tmp_path):
    low, high = games_at(2.5, 1), games_at(6.5, 2)
    shards = ZeroShards(tmp_path, info={"size": 5, "komi": 7.5})
    shards.write(low, "a.npz", 1)
    shards.write(high, "b.npz", 2)
    assert window_komi(tmp_path, 4) == pytest.approx(4.5)
    assert window_komi(tmp_path, 2) == pytest.approx(6.5)        # the newest shard alone
    window = load_window(tmp_path, 4)
    assert window.komi == pytest.approx(4.5)
    start = 0
    for name, results in (("a.npz", low), ("b.npz", high)):
        with np.load(tmp_path / name) as a:
            assert a["komi"].tolist() == [r.komi for r in results]
            game, ply = positions_of(a)
        for g, r in enumerate(results):
            rows = start + np.flatnonzero(game == g)
            margin = r.score + r.komi                 # Black's margin on the board
            sign = np.where(ply[game == g] % 2 == 0, 1.0, -1.0)
            np.testing.assert_allclose(window.score[rows], sign * (margin - 4.5), atol=1e-5)
            assert (window.z[rows] == sign * r.winner).all()   # outcomes stay the game's own
        start += len(game)
    share, games, komi = black_share(tmp_path, 1)
    assert games == 2 and komi == 2.5
    assert share == pytest.approx(np.mean([(r.winner > 0) + 0.5 * (r.winner == 0) for r in low]))
    assert black_share(tmp_path, 3) == (0.5, 0, 7.5)          # no games: the run's komi


def test_fair_komi_run_moves_its_komi_and_its_networks_say_so(tmp_path):
    cfg = ZeroConfig(size=5, komi=0.5, fair_komi=True, komi_step=3.0, generations=2, games=4,
                     games_per_job=2, visits=8, steps=2, batch_size=16, gating=False,
                     resign_threshold=0.0, **TINY)
    pool = WorkerPool(workers=0)
    try:
        ZeroRun(cfg, tmp_path, None, pool, resume=False, log=lambda s: None).run()
    finally:
        pool.close()
    rows = list(csv.DictReader((tmp_path / "curve.csv").open()))
    assert [r["komi"] for r in rows][0] == "0.5"
    share1 = float(rows[0]["black_share"])
    second = next_komi(0.5, share1, 5, 3.0)
    assert float(rows[1]["komi"]) == second
    manifest = json.loads((tmp_path / "games" / "manifest.json").read_text())
    assert {s["generation"]: s["komi"] for s in manifest["shards"]} == {1: 0.5, 2: second}
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["komi"] == next_komi(second, float(rows[1]["black_share"]), 5, 3.0)
    props = {p.key: p.value for p in onnx.load(str(tmp_path / "registry" / "gen-0002.onnx"))
             .metadata_props}
    assert float(props["komi"]) == pytest.approx((0.5 + second) / 2)   # the window's mean
    # a fixed-komi run ignores the komi a fair one reached
    fixed = ZeroRun(ZeroConfig(**{**cfg.__dict__, "fair_komi": False, "generations": 2}),
                    tmp_path, None, WorkerPool(workers=0), resume=True, log=lambda s: None)
    assert fixed.selfplay_komi == 0.5
