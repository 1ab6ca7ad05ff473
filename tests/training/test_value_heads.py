"""The value net's auxiliary heads (ownership, score): shapes on any board size, their losses, ONNX
export with named outputs and parity through onnxruntime, OnnxEvaluator with and without them,
and `engine-train value --heads` on value-data shards."""
import csv
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

from goengine.engine import symmetry  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.data.dataset import PackedPositions, ShardWriter  # noqa: E402
from goengine.training.nets.export import export_onnx, parity_inputs, run_torch  # noqa: E402
from goengine.training.nets.loop import TrainConfig, aux_loss, head_args, train  # noqa: E402


def small(**heads):
    torch.manual_seed(0)
    return nets.build("value", "cpu", layers=3, filters=8, fc=16, **heads)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("heads")
    out = {}
    for name, heads in (("plain", {}), ("both", {"ownership": True, "score": True}),
                        ("score", {"score": True})):
        net = small(**heads)
        # a non-zero score bias: an untrained head would answer ~0 and hide a missing N^2
        if net.score_head is not None:
            torch.nn.init.constant_(net.score_head.bias, 0.3)
        export_onnx(net, "value", d / f"{name}.onnx", {"training_data": "random weights"})
        out[name] = (net, d / f"{name}.onnx")
    return out


@pytest.mark.parametrize("n", [5, 7, 9, 19])
def test_heads_shapes_on_every_size(n):
    net = small(ownership=True, score=True)
    value, own, score = net(torch.zeros(3, 49, n, n))
    assert value.shape == (3,) and own.shape == (3, n * n) and score.shape == (3,)
    assert own.abs().max() <= 1 and net.output_names == ("value", "ownership", "score")
    assert small()(torch.zeros(3, 49, n, n)).shape == (3,)          # no heads: a tensor, as before


def test_score_is_in_points_and_the_loss_on_score_over_n2():
    net = small(score=True)
    torch.nn.init.constant_(net.score_head.weight, 0.0)
    torch.nn.init.constant_(net.score_head.bias, 0.5)
    for n in (7, 9):
        _, score = net(torch.zeros(2, 49, n, n))
        assert torch.allclose(score, torch.full((2,), 0.5 * n * n))
        terms = aux_loss({"score": score}, None, torch.zeros(2), n)
        assert float(terms["score"].detach()) == pytest.approx(0.25)         # (0.5 n^2 / n^2)^2


def test_head_args_refuse_unknown_heads_and_other_kinds():
    assert head_args(TrainConfig(kind="value", heads=("ownership",))) == {"ownership": True,
                                                                          "score": False}
    with pytest.raises(ValueError):
        head_args(TrainConfig(kind="value", heads=("liberties",)))
    with pytest.raises(ValueError):
        head_args(TrainConfig(kind="policy", heads=("score",)))


def test_export_names_the_heads_and_onnxruntime_matches_torch(exported):
    for name, want in (("plain", []), ("both", ["ownership", "score"]), ("score", ["score"])):
        net, path = exported[name]
        proto = onnx.load(str(path))
        props = {p.key: p.value for p in proto.metadata_props}
        assert [o.name for o in proto.graph.output] == ["value"] + want
        assert props["heads"] == ",".join(want)
        ev = OnnxEvaluator(path, kind="value", symmetry="none", cache_size=0)
        assert (ev.has_ownership, ev.has_score) == ("ownership" in want, "score" in want)
        for n in (7, 9, 13):
            x = parity_inputs("alphago49", 49, n, np.random.default_rng(n))
            got = ev.evaluate(x)
            ref = dict(zip(net.output_names, run_torch(net, x)))
            assert np.allclose(got.value_stm, ref["value"], atol=1e-5)
            if "ownership" in want:
                assert got.ownership.shape == (4, n * n)
                assert np.allclose(got.ownership, ref["ownership"], atol=1e-5)
            else:
                assert got.ownership is None
            if "score" in want:
                assert np.allclose(got.score, ref["score"], atol=1e-4 * n * n)
                assert np.abs(got.score).max() > 0.1 * n * n            # points, not / N^2
            else:
                assert got.score is None


def test_evaluator_maps_ownership_back_through_the_symmetries_and_caches_it(exported):
    net, path = exported["both"]
    n = 9
    x = parity_inputs("alphago49", 49, n, np.random.default_rng(1))
    ev = OnnxEvaluator(path, kind="value", symmetry="average", cache_size=100)
    got = ev.evaluate(x, keys=[10, 11, 12, 13])
    want_own, want_score = np.zeros((4, n * n)), np.zeros(4)
    for k in range(8):
        _, own, score = run_torch(net, np.ascontiguousarray(symmetry.apply(x, k)))
        want_own += symmetry.invert_policy(own, k, n) / 8
        want_score += score / 8
    assert np.allclose(got.ownership, want_own, atol=1e-5)
    assert np.allclose(got.score, want_score, atol=1e-3)
    again = ev.evaluate(x[[2, 0]], keys=[12, 10])
    assert ev.cache_hits == 2
    assert np.array_equal(again.ownership, got.ownership[[2, 0]])
    assert np.array_equal(again.score, got.score[[2, 0]])



@pytest.mark.slow
def test_value_training_with_heads_on_value_data(engine_train, tmp_path):
    data = tmp_path / "vdata"
    engine_train("value-data", "--out", data, "--size", 5, "--games", 24, "--positions-per-game", 3,
                 "--heldout-fraction", 0.25, "--batch-games", 12, "--workers", 0)
    out = tmp_path / "run"
    p = engine_train("value", "--data-dir", data, "--out", out, "--steps", 6, "--batch-size", 8,
                     "--eval-every", 3, "--eval-positions", 64, "--threads", 1,
                     "--heads", "ownership,score", "--ownership-weight", 1.5, "--score-weight", 1)
    assert "own_mse" in p.stdout and "score_mae" in p.stdout
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [int(r["step"]) for r in rows] == [3, 6]
    assert 0 <= float(rows[-1]["heldout_own_mse"]) <= 4
    assert 0 <= float(rows[-1]["heldout_score_mae"]) <= 2 * 25
    assert json.loads((out / "train_config.json").read_text())["heads"] == ["ownership", "score"]
    ev = OnnxEvaluator(out / "value.onnx", kind="value")
    got = ev.evaluate(np.zeros((2, 49, 9, 9), dtype=np.float32))
    assert got.ownership.shape == (2, 81) and got.score.shape == (2,)
    bad = engine_train("value", "--data-dir", data, "--out", tmp_path / "bad", "--steps", 1,
                       "--heads", "ownership,territory", ok=False)
    assert bad.returncode == 2 and "territory" in bad.stderr and "Traceback" not in bad.stderr


def test_shards_without_targets_refuse_the_heads(tmp_path):
    """Shards without own / score arrays (policy data, older human-game shards) cannot train the
    heads: a clear error, not a batch of zeros that would teach every point to be neutral."""
    for split in ("train", "heldout"):
        w = ShardWriter(tmp_path, f"{split}-5", 8, (49 * 25 + 7) // 8)
        for _ in range(3):
            w.add(np.zeros((49 * 25 + 7) // 8, np.uint8), 0, 1, 5)
        w.flush()
    data = PackedPositions(tmp_path, "train", 5, 49)
    assert not data.has_aux and len(data.batch(np.arange(3), symmetry=0)) == 3
    with pytest.raises(ValueError, match="no ownership"):
        data.batch(np.arange(3), symmetry=0, aux=True)
    (tmp_path / "dataset.json").write_text(json.dumps({"planes": 49}))
    with pytest.raises(ValueError, match="value-data"):
        train(TrainConfig(kind="value", steps=1, heads=("ownership",), threads=1), tmp_path,
              tmp_path / "run", log=lambda m: None)


def test_net_size_options_build_the_net_they_name(engine_train, tmp_path):
    """`--net-filters` / `--net-layers` replace the preset's width and depth: the checkpoint's
    net and the exported ONNX file are that net, and its trunk has that many convolutions."""
    data = tmp_path / "vdata"
    engine_train("value-data", "--out", data, "--size", 5, "--games", 12, "--positions-per-game", 3,
                 "--heldout-fraction", 0.25, "--batch-games", 12, "--workers", 0)
    out = tmp_path / "run"
    engine_train("value", "--data-dir", data, "--out", out, "--steps", 2, "--batch-size", 8,
                 "--eval-every", 2, "--eval-positions", 16, "--threads", 1, "--heads", "none",
                 "--net-filters", 12, "--net-layers", 4)
    net, _ = nets.load_checkpoint(out / "checkpoint.pt")
    assert (net.config["filters"], net.config["layers"]) == (12, 4)
    convs = [m for m in net.trunk if isinstance(m, torch.nn.Conv2d)]
    assert len(convs) == 3 and all(c.out_channels == 12 for c in convs)   # layers 1..L-1
    got = OnnxEvaluator(out / "value.onnx", kind="value").evaluate(
        np.zeros((1, 49, 5, 5), dtype=np.float32))
    assert got.value_stm.shape == (1,)
    assert json.loads((out / "train_config.json").read_text())["net_filters"] == 12
