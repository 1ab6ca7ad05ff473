"""A dual-head Zero network inside the AlphaGo search (docs/algorithms.md §2.3): as its policy
and its value at once, one network call per batch gives both, and the search is the one that two
separate evaluators of the same file would have run; on engine-gtp, `--policy Z --value Z` loads
the file once and plays, and a network that cannot fill a role is refused with the reason.
Real onnxruntime sessions on a tiny 5x5 net, real engine processes."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")

from goengine.engine.game import Game  # noqa: E402
from goengine.engine.search.alphago import AlphaGoSearch  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.models.by_size import BySizeEvaluator  # noqa: E402
from goengine.models.metadata import ROLE_KINDS  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402

from zero_nets import export_tiny_zero  # noqa: E402


@pytest.fixture(scope="module")
def zero_file(tmp_path_factory):
    return export_tiny_zero(tmp_path_factory.mktemp("zero-in-alphago"), "zero.onnx")[1]


def _evaluator(path, role):
    # no cache and no random symmetry: every call is a session run, every answer reproducible
    return OnnxEvaluator(path, kind=ROLE_KINDS[role], symmetry="none", cache_size=0, seed=1)


def _search(policy, value, visits=96):
    # lambda 0: no rollouts; n_thr 2: expansions below the root within a short search
    cfg = NetSearchConfig(mode="alphago", lam=0.0, batch_size=8, n_thr=2)
    s = AlphaGoSearch(cfg, policy=policy, value=value, policy_features="zero17",
                      value_features="zero17", seed=3)
    g = Game(5)
    g.play(g.to_play, g.legal_moves()[6])
    return s, s.search(g, g.to_play, visits=visits)


def test_one_zero_network_in_both_roles_costs_one_call_per_batch(zero_file):
    shared = _evaluator(zero_file, "policy")
    one, res_one = _search(shared, shared)
    policy, value = _evaluator(zero_file, "policy"), _evaluator(zero_file, "value")
    two, res_two = _search(policy, value)
    assert one._one_net() and not two._one_net()
    # the same search: the same root statistics, move by move
    assert [(m.move, m.visits) for m in res_one.moves] == [(m.move, m.visits) for m in res_two.moves]
    assert res_one.moves[0].winrate == pytest.approx(res_two.moves[0].winrate, abs=1e-6)
    # one run for the root's priors, then one per batch, where two evaluators needed a value run
    # per batch and a policy run for every batch with a leaf to expand
    assert shared.runs == 1 + value.runs
    assert policy.runs > 1 and shared.runs < policy.runs + value.runs


def test_engine_gtp_plays_the_alphago_search_on_one_zero_network(zero_file, tmp_path, gtp_engine):
    with gtp_engine("--search", "alphago", "--policy", str(zero_file), "--value", str(zero_file),
                    "--size", "5", "--playouts", "32", quiet=False) as e:
        e.wait_loaded()
        assert e.ok("version").endswith("(alphago)")
        move = e.ok("genmove b", timeout=60)
        assert move != "resign"
        log = "\n".join(e.stderr_lines)
        assert "loading policy model" in log and "the one loaded already" in log
        assert log.count("loading value model") == 0


def test_a_policy_network_is_no_value_network(zero_file, tmp_path, gtp_engine):
    policy = tmp_path / "policy.onnx"
    export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", policy, {})
    with gtp_engine("--search", "alphago", "--policy", str(zero_file), "--value", str(policy),
                    "--size", "5", "--playouts", "16") as e:
        reason = e.fails("genmove b", timeout=120)
        assert "is a 'policy' model, expected 'value' or 'zero'" in reason
        assert e.ask("name") == ("=", "goengine")        # the server keeps answering


def test_a_by_size_value_takes_each_networks_own_planes(zero_file, tmp_path):
    """The value role filled by a 49-plane value network on every size but 5x5, where the 5x5
    Zero network answers on its 17 planes: each search sends each network its own planes."""
    export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", tmp_path / "p.onnx", {})
    export_onnx(nets.build("value", "cpu", layers=3, filters=8, fc=8), "value", tmp_path / "v.onnx",
                {})
    policy = _evaluator(tmp_path / "p.onnx", "policy")
    value49, zero5 = _evaluator(tmp_path / "v.onnx", "value"), _evaluator(zero_file, "value")
    value = BySizeEvaluator(value49, {5: zero5})
    s = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=0.0), policy=policy, value=value,
                      policy_features="alphago48", value_features="alphago49", seed=1)
    for size, network in ((5, zero5), (7, value49), (5, zero5)):
        before = (zero5.runs, value49.runs)
        g = Game(size)
        res = s.search(g, g.to_play, playouts=24)
        assert res.simulations >= 24
        ran = (zero5.runs - before[0], value49.runs - before[1])
        assert ran == ((ran[0], 0) if network is zero5 else (0, ran[1])) and max(ran) > 0
