"""engine-train zero-grow: a run's network grown (net2net) computes what it computed, trains on
the run's games with a held-out measurement, and the loop resumes with the bigger net."""
import csv
import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import onnxruntime as ort  # noqa: E402

from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.zero.grow import cosine_lr, grow  # noqa: E402
from goengine.training.zero.registry import Registry  # noqa: E402


def trained_looking(net, seed=1):
    """Random batch-norm statistics and affine parameters, as a trained net has."""
    g = torch.Generator().manual_seed(seed)
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.rand(n, generator=g) * 2 - 1)
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.rand(n, generator=g) - 0.5)
    return net


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_grown_net_computes_what_the_net_computes(mode):
    torch.manual_seed(0)
    net = trained_looking(nets.build("zero", "cpu", blocks=2, filters=8, ownership=True,
                                     score=True))
    big = grow(net, 5, 12)
    assert len(big.tower) == 5 and big.config["filters"] == 12 and big.config["blocks"] == 5
    assert sum(p.numel() for p in big.parameters()) > sum(p.numel() for p in net.parameters())
    x = (torch.rand(16, 17, 9, 9) < 0.3).float()
    getattr(net, mode)()
    getattr(big, mode)()
    with torch.no_grad():
        for a, b in zip(net(x), big(x)):
            assert torch.allclose(a, b, atol=1e-5), float((a - b).abs().max())
    # the new filters are live: training moves the grown net's outputs
    big.train()
    opt = torch.optim.SGD(big.parameters(), lr=0.1)
    big(x)[1].sum().backward()
    opt.step()
    big.eval()
    net.eval()
    with torch.no_grad():
        assert not torch.allclose(net(x)[1], big(x)[1], atol=1e-4)


def test_grow_only_grows():
    net = nets.build("zero", "cpu", blocks=2, filters=8)
    with pytest.raises(ValueError, match="at least as many"):
        grow(net, 1, 8)
    with pytest.raises(ValueError, match="at least as many"):
        grow(net, 2, 4)


def test_cosine_learning_rate():
    assert cosine_lr(1e-3, 0.0) == pytest.approx(1e-3)
    assert cosine_lr(1e-3, 0.5) == pytest.approx(5e-4)
    assert cosine_lr(1e-3, 1.0) == pytest.approx(0.0, abs=1e-12)
    assert cosine_lr(1e-3, 2.0) == pytest.approx(0.0, abs=1e-12)
    assert cosine_lr(1e-3, 0.0, warmup=0.1) == 0.0
    half_ramp = 0.5e-3 * 0.5 * (1 + np.cos(0.05 * np.pi))
    assert cosine_lr(1e-3, 0.05, warmup=0.1) == pytest.approx(half_ramp)
    assert cosine_lr(1e-3, 0.5, warmup=0.1) == pytest.approx(5e-4)


def zero_args(out, *extra):
    return ["zero", "--out", out, "--size", 5, "--komi", 0.5, "--games", 4, "--games-per-job", 1,
            "--visits", 8, "--steps", 4, "--batch-size", 16, "--blocks", 1, "--filters", 8,
            "--resign-threshold", 0, "--no-gating", "--workers", 0, *extra]


@pytest.mark.slow
def test_grown_net_trains_on_the_run_and_the_run_resumes_with_it(engine_train, tmp_path):
    run = tmp_path / "run"
    engine_train(*zero_args(run, "--generations", "2"))
    out = tmp_path / "grown"
    p = engine_train("zero-grow", "--run",
                     str(run), "--out", str(out), "--blocks", "2", "--filters", "12",
                     "--games", "8", "--holdout-every", "4", "--batch-size", "16",
                     "--steps", "6", "--eval-every", "3", "--device", "cpu",
                     "--threads", "1", "--batch-threads", "1")
    result = json.loads(p.stdout.strip().splitlines()[-1])
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [int(r["step"]) for r in rows] == [0, 3, 6]
    # step 0 is the run's own net on the held-out positions
    assert float(rows[0]["loss"]) == pytest.approx(result["base"]["loss"], abs=1e-4)
    kept = [r for r in rows if r["best"] == "1"][-1]
    assert result["best"]["step"] == int(kept["step"])
    assert min(float(r["loss"]) for r in rows[1:]) == pytest.approx(float(kept["loss"]))
    assert (out / "curve.png").exists()
    grown, ckpt = nets.load_checkpoint(out / "checkpoint.pt")
    assert len(grown.tower) == 2 and grown.config["filters"] == 12
    assert json.loads(ckpt["zero_config"])["filters"] == 12
    session = ort.InferenceSession(str(out / "grown.onnx"), providers=["CPUExecutionProvider"])
    outs = session.run(None, {session.get_inputs()[0].name: np.zeros((1, 17, 5, 5), np.float32)})
    assert outs[0].shape == (1, 26)
    # the run continues with the grown net: its next generation is the bigger network
    shutil.copyfile(out / "checkpoint.pt", run / "checkpoint.pt")
    engine_train(*zero_args(run, "--generations", "3", "--resume"))
    assert [r["generation"] for r in Registry(run / "registry").rows] == [0, 1, 2, 3]
    after, _ = nets.load_checkpoint(run / "checkpoint.pt")
    assert len(after.tower) == 2 and after.config["filters"] == 12


@pytest.mark.slow
def test_zero_grow_refuses_a_run_with_too_few_shards(engine_train, tmp_path):
    run = tmp_path / "run"
    engine_train(*zero_args(run, "--generations", "1", "--games", "1"))
    p = engine_train("zero-grow", "--run",
                     str(run), "--out", str(tmp_path / "g"), "--steps", "1",
                     "--device", "cpu", ok=False)
    assert p.returncode != 0 and "too few to hold out" in p.stderr
