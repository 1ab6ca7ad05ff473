"""The search's value as a value target in the Zero loop: each self-play position records q, its
search's value for the side to move; the shards keep it; `--q-weight w` trains on
(1 - w) z + w q, and shards written before q train on z (docs/algorithms.md §4.6)."""
import numpy as np
import pytest

from goengine.engine.evaluator import Evaluation, UniformEvaluator, uniform_priors
from goengine.training.zero.selfplay import ZeroGamesJob, play_zero_games
from goengine.training.zero.shards import ZeroShards, load_window

torch = pytest.importorskip("torch")

from goengine.training.workers.pool import WorkerPool  # noqa: E402
from goengine.training.zero.loop import ZeroConfig, ZeroRun  # noqa: E402

from zero_nets import TINY  # noqa: E402


class ConstantValue(UniformEvaluator):
    """Uniform priors, every position worth `value` to its side to move (at komi 7.5, the komi
    the search takes a network without its own to have learned at: no komi shift)."""

    has_value = True

    def __init__(self, value: float):
        self.value = value

    def evaluate(self, planes, legal_mask=None, keys=None) -> Evaluation:
        return Evaluation(priors=uniform_priors(len(planes), planes.shape[-1], legal_mask),
                          value_stm=np.full(len(planes), self.value, np.float32))


def games(value=0.3, n_games=2):
    job = ZeroGamesJob(pairs=[("best", "best")] * n_games, size=5, komi=7.5, visits=8, seed=3,
                       resign_threshold=0, play_on=12)
    return play_zero_games({"best": ConstantValue(value)}, job)


def test_each_position_records_its_search_value_for_the_side_to_move():
    for r in games(0.3):
        assert r.q.shape == r.ply.shape and np.all(np.abs(r.q) <= 1)
        # no game can end within 8 visits before move 10 (nobody passes before move 12), so
        # every child of the root is a position worth 0.3 to the opponent: -0.3 to the mover
        early = r.ply < 10
        assert early.sum() == 10 and np.allclose(r.q[early], -0.3, atol=1e-6)


def test_the_value_target_mixes_the_outcome_with_q_and_old_shards_keep_z(tmp_path):
    played = games(0.3)
    ZeroShards(tmp_path).write(played, "a.npz", 1)
    z = np.concatenate([r.z() for r in played])
    q = np.concatenate([r.q for r in played])
    plain = load_window(tmp_path, 10)
    assert np.array_equal(plain.z, z) and np.allclose(plain.q, q, atol=1e-3)   # float16
    mixed = load_window(tmp_path, 10, q_weight=0.25)
    assert np.allclose(mixed.z, 0.75 * z + 0.25 * plain.q)
    assert np.array_equal(mixed.pi, plain.pi) and np.array_equal(mixed.own, plain.own)
    # a shard written before q existed: no q, the outcome alone whatever the weight
    with np.load(tmp_path / "a.npz") as a:
        old = {k: a[k] for k in a.files if k != "q"}
    np.savez_compressed(tmp_path / "a.npz", **old)
    assert load_window(tmp_path, 10).q is None
    assert np.array_equal(load_window(tmp_path, 10, q_weight=0.5).z, z)


def test_a_window_of_old_and_new_shards_mixes_only_where_q_is_known(tmp_path):
    first, second = games(0.3, 1), games(-0.2, 1)
    shards = ZeroShards(tmp_path)
    shards.write(first, "a.npz", 1)
    shards.write(second, "b.npz", 2)
    with np.load(tmp_path / "a.npz") as a:
        np.savez_compressed(tmp_path / "a.npz", **{k: a[k] for k in a.files if k != "q"})
    w = load_window(tmp_path, 10, q_weight=0.5)
    old = len(first[0].ply)
    assert np.isnan(w.q[:old]).all() and np.array_equal(w.z[:old], first[0].z())
    assert np.allclose(w.z[old:], 0.5 * second[0].z() + 0.5 * w.q[old:])


def test_a_loop_generation_trains_on_the_mixed_targets(tmp_path):
    cfg = ZeroConfig(size=5, komi=0.5, generations=1, games=2, games_per_job=2, visits=8,
                     steps=3, batch_size=16, gating=False, resign_threshold=0, q_weight=0.5,
                     **TINY)
    ZeroRun(cfg, tmp_path, None, WorkerPool(workers=0), resume=False, log=lambda s: None).run()
    window = load_window(tmp_path / "games", 10, q_weight=0.5)
    assert window.q is not None and len(window.q) == len(window.z)
    # mixed targets are no longer only +-1 (a draw-free 5x5 game at komi 0.5)
    assert np.any(np.abs(np.abs(window.z) - 1) > 1e-3)
    assert (tmp_path / "registry" / "gen-0001.onnx").exists()
