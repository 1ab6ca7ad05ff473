import numpy as np
import pytest
import torch

from goengine.engine import symmetry
from goengine.engine.features import extract
from goengine.engine.replay import positions
from goengine.sgf_tools import iter_games
from goengine.training.data.dataset import REPLAY_RULES
from goengine.training.nets import networks as nets
from goengine.training.nets.export import run_torch
from goengine.training.nets.loop import init_from
from sample_games import GAMES

CASES = [(kind, preset) for kind in nets.KINDS for preset in ("cpu", "paper")]


def _planes(c: int, n: int, b: int = 2, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, (b, c, n, n)).astype(np.float32)


@pytest.mark.parametrize("kind,preset", CASES)
def test_presets_forward_on_9_and_19(kind, preset):
    net = nets.build(kind, preset)
    sizes = [19] if net.fixed_board_size else [9, 19]
    for n in sizes:
        out = run_torch(net, _planes(net.config["planes"], n))
        if kind == "policy":
            (logits,) = out
            assert logits.shape == (2, n * n)
        elif kind == "value":
            (value,) = out
            assert value.shape == (2,) and np.all(np.abs(value) <= 1)
        else:
            logits, value = out
            assert logits.shape == (2, n * n + 1)
            assert value.shape == (2,) and np.all(np.abs(value) <= 1)
        assert all(np.isfinite(o).all() for o in out)


def _convs(net):   # by class name: torch itself is imported only under training/
    return [m for m in net.modules() if type(m).__name__ == "Conv2d"]


def test_paper_architectures_have_the_published_layers():
    policy = nets.build("policy", "paper")
    convs = _convs(policy)
    assert len(convs) == 13                                     # 12 of 192 filters, then 1x1
    assert convs[0].kernel_size == (5, 5) and convs[0].in_channels == 48
    assert all(c.kernel_size == (3, 3) and c.out_channels == 192 for c in convs[1:12])
    assert convs[12].kernel_size == (1, 1) and convs[12].out_channels == 1

    value = nets.build("value", "paper")
    convs = _convs(value)
    assert len(convs) == 13 and convs[0].in_channels == 49      # layers 1..13, then FC 256, tanh
    assert value.fc[0].in_features == 361 and value.fc[0].out_features == 256

    zero = nets.build("zero", "paper")
    assert len(zero.tower) == 19 and zero.stem[0][0].out_channels == 256
    assert zero.stem[0][0].in_channels == 17


def test_fixed_size_heads_refuse_other_sizes():
    value = nets.build("value", "cpu", head="fc", board_size=9)
    assert run_torch(value, _planes(49, 9))[0].shape == (2,)
    with pytest.raises(ValueError, match="fixed to 9x9"):
        run_torch(value, _planes(49, 19))
    zero = nets.build("zero", "cpu", policy_head="fc", value_head="fc", value_channels=1,
                      board_size=9)
    logits, value = run_torch(zero, _planes(17, 9))
    assert logits.shape == (2, 82) and value.shape == (2,)
    with pytest.raises(ValueError):
        run_torch(zero, _planes(17, 13))


@pytest.mark.parametrize("n", [9, 13, 19])
def test_position_bias_is_symmetric(n):
    bias = nets.PositionBias()
    bias.table.data.normal_()
    b = bias.map(n, n).detach().numpy()
    assert len(np.unique(b)) == ((n + 1) // 2) * ((n + 1) // 2 + 1) // 2   # one value per orbit
    for k in range(8):
        np.testing.assert_array_equal(symmetry.apply(b, k), b)
    # points near the edge agree across sizes: distance to the edge is what matters
    b19 = bias.map(19, 19).detach().numpy()
    np.testing.assert_array_equal(b[:3, :3], b19[:3, :3])


def test_config_and_checkpoint_round_trip(tmp_path):
    net = nets.build("zero", "cpu", blocks=1, filters=8)
    assert net.config["kind"] == "zero" and net.config["blocks"] == 1
    path = tmp_path / "zero.pt"
    nets.save_checkpoint(net, path, step=12)
    loaded, ckpt = nets.load_checkpoint(path)
    assert ckpt["step"] == 12 and loaded.config == net.config
    assert nets.weights_sha256(loaded) == nets.weights_sha256(net)
    x = _planes(17, 9)
    for a, b in zip(run_torch(net, x), run_torch(loaded, x)):
        np.testing.assert_array_equal(a, b)
    assert nets.weights_sha256(nets.build("zero", "cpu", blocks=1, filters=8)) != \
        nets.weights_sha256(net)


def test_build_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown kind"):
        nets.build("rollout", "cpu")
    with pytest.raises(ValueError, match="unknown preset"):
        nets.build("policy", "huge")


WIDEN_CASES = [("policy", {}), ("value", dict(ownership=True, score=True)),
               ("value", dict(head="fc", board_size=9))]


@pytest.mark.parametrize("kind,extra", WIDEN_CASES)
def test_widen_computes_the_same_function(kind, extra):
    """Net2WiderNet: 8 -> 13 filters, every output (value, ownership, score, policy logits) the
    same without noise; with the default noise close (within a tenth of each output's scale:
    the score head answers in points) but the copies no longer identical."""
    torch.manual_seed(0)            # the same random net every run
    net = nets.build(kind, "cpu", layers=4, filters=8, **extra)
    x = _planes(net.config["planes"], 9, b=4)
    exact = nets.widen(net, 13, noise=0.0)
    assert exact.config["filters"] == 13 and exact.trunk[0].weight.shape[0] == 13
    for a, b in zip(run_torch(net, x), run_torch(exact, x)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    noisy = nets.widen(net, 13)
    w = noisy.trunk[2].weight.detach()
    assert not any(np.allclose(w[j], w[i]) for j in range(8, 13) for i in range(8))
    for a, b in zip(run_torch(net, x), run_torch(noisy, x)):
        np.testing.assert_allclose(a, b, rtol=0.1, atol=0.05 * max(1.0, float(np.abs(a).max())))


def test_widen_refuses_narrowing_and_other_nets():
    with pytest.raises(ValueError, match="narrower"):
        nets.widen(nets.build("value", "cpu", layers=4, filters=8), 4)
    with pytest.raises(ValueError, match="AlphaGo policy or value"):
        nets.widen(nets.build("zero", "cpu", blocks=1, filters=8), 16)


def test_init_from_continues_a_value_net_whole_and_widened(tmp_path):
    """A value run started from a value checkpoint keeps its heads (not only the trunk) and, from
    a narrower one, is widened to the same function; from a policy it takes the trunk alone."""
    value = nets.build("value", "cpu", layers=4, filters=8, ownership=True, score=True)
    nets.save_checkpoint(value, tmp_path / "value.pt")
    x = _planes(49, 9, b=4)
    for filters in (8, 12):
        net = nets.build("value", "cpu", layers=4, filters=filters, ownership=True, score=True)
        note = init_from(net, tmp_path / "value.pt")
        assert ("widened from 8 to 12 filters" in note) == (filters == 12)
        for a, b in zip(run_torch(value, x), run_torch(net, x)):
            np.testing.assert_allclose(a, b, rtol=0.1, atol=0.05)
    policy = nets.build("policy", "cpu", layers=4, filters=8)
    nets.save_checkpoint(policy, tmp_path / "policy.pt")
    net = nets.build("value", "cpu", layers=4, filters=8)
    fresh_fc = net.fc[0].weight.detach().clone()
    assert init_from(net, tmp_path / "policy.pt") == "6 tensors"
    np.testing.assert_array_equal(net.fc[0].weight.detach(), fresh_fc)
    np.testing.assert_array_equal(net.trunk[0].weight.detach()[:, :48], policy.trunk[0].weight.detach())


def _tygem_planes(feature_set: str, count: int) -> torch.Tensor:
    """Planes of real positions: every 10th move of the Tygem fixtures."""
    out = []
    for folder in ("tygem9d-2015-05", "tygem9d-2015-06"):
        for record in iter_games(GAMES / folder):
            out += [extract(g, feature_set) for i, (g, _c, _lc) in
                    enumerate(positions(record, REPLAY_RULES)) if i % 10 == 0]
    return torch.from_numpy(np.stack(out[:count]).astype(np.float32))


def test_a_fresh_value_net_tells_positions_apart():
    """He initialisation: through 13 plain ReLU convolutions the fresh value net's output still
    depends on the position (PyTorch's default init left a spread of ~1e-7 over positions: the
    constant a value net on noisy outcomes then never leaves)."""
    torch.manual_seed(0)
    planes = _tygem_planes("alphago49", 128)
    net = nets.build("value", "cpu").eval()
    with torch.no_grad():
        pre = net.fc[2](net.fc[1](net.fc[0](net.pooled(net.trunk(planes))))).squeeze(1)
    assert float(pre.std()) > 1e-3


def test_a_policy_trunk_under_a_new_value_head_is_scaled_to_unit_size(tmp_path):
    """init_from with sample planes: the SL policy's trunk keeps its features (the same up to one
    factor) and the value head reads them at unit size, so its tanh starts unsaturated."""
    torch.manual_seed(0)
    planes = _tygem_planes("alphago49", 128)
    policy = nets.build("policy", "cpu")
    with torch.no_grad():      # a trained trunk's scale: features in the hundreds
        for m in _convs(policy.trunk):
            m.weight.mul_(2.0)
    nets.save_checkpoint(policy, tmp_path / "policy.pt")
    plain, scaled = nets.build("value", "cpu").eval(), nets.build("value", "cpu").eval()
    init_from(plain, tmp_path / "policy.pt")
    msg = init_from(scaled, tmp_path / "policy.pt", planes[:64])
    assert float(msg.split("by 1/")[1].split()[0]) > 10
    with torch.no_grad():
        before, after = plain.trunk(planes), scaled.trunk(planes)
        factor = float((before * after).sum() / (after * after).sum())
        assert torch.allclose(after * factor, before, rtol=1e-3, atol=1e-4 * float(before.abs().max()))
        assert float(scaled.pooled(scaled.trunk(planes[:64])).pow(2).mean().sqrt()) == pytest.approx(1, rel=1e-3)
        assert float(plain.pooled(before).pow(2).mean().sqrt()) > 10
    # a value net continued from a value net keeps its scale: nothing is rescaled
    nets.save_checkpoint(scaled, tmp_path / "value.pt")
    again = nets.build("value", "cpu")
    assert "scaled" not in init_from(again, tmp_path / "value.pt", planes[:64])
