"""Training precision: --precision on engine-train sl / value / rl, bfloat16 steps that learn, the
fallback to float32 on a CPU without bfloat16 arithmetic, and auto settled by timing the net."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from goengine.engine.features import extract
from goengine.engine.game import Game
from goengine.training.nets import networks as nets, precision
from goengine.training.nets.loop import TrainConfig, make_optimizer, train_step
from goengine.training.rl.loop import learner_positions, reinforce_step
from goengine.training.workers.selfplay import GameResult
from training_games import FIXTURE as GAMES

CPU = torch.device("cpu")


def test_resolve_picks_bf16_only_where_the_hardware_has_it(monkeypatch):
    assert precision.resolve("fp32", CPU) == "fp32"
    assert precision.resolve("bf16", torch.device("cuda")) == "bf16"
    assert precision.resolve("auto", torch.device("cuda")) == "bf16"
    want = "bf16" if precision.cpu_has_bf16() else "fp32"
    assert precision.resolve("auto", CPU) == "fp32"     # on a CPU, `choose` times the net first
    assert precision.resolve("bf16", CPU) == want
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    assert precision.resolve("auto", CPU) == "fp32"
    assert precision.resolve("bf16", CPU) == "fp32"
    with pytest.raises(ValueError):
        precision.resolve("fp16", CPU)


@pytest.mark.parametrize("fp32_s, bf16_s, want", [(0.010, 0.004, "bf16"), (0.010, 0.0085, "fp32"),
                                                  (0.007, 0.010, "fp32")])
def test_auto_on_a_cpu_takes_bf16_only_where_the_timing_finds_it_faster(monkeypatch, fp32_s,
                                                                       bf16_s, want):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)
    timed = {"fp32": fp32_s, "bf16": bf16_s}
    monkeypatch.setattr(precision, "step_seconds", lambda net, p, *a, **k: timed[p])
    net = nets.build("policy", "cpu", layers=3, filters=4)
    said = []
    assert precision.choose("auto", CPU, net, 9, log=said.append) == want
    assert f"({fp32_s / bf16_s:.2f}x): {want}" in said[0]
    # asked for by name, nothing is timed
    monkeypatch.setattr(precision, "step_seconds", lambda *a, **k: pytest.fail("timed"))
    assert precision.choose("fp32", CPU, net, 9) == "fp32"
    assert precision.choose("bf16", CPU, net, 9) == "bf16"
    assert precision.choose("auto", torch.device("cuda"), net, 9) == "bf16"
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    assert precision.choose("auto", CPU, net, 9) == "fp32"


@pytest.mark.parametrize("kind", ["policy", "zero"])
def test_the_timing_probe_changes_neither_the_net_nor_the_random_stream(kind):
    torch.manual_seed(3)
    net = nets.build(kind, "cpu", **({"blocks": 2} if kind == "zero" else {"layers": 3}),
                     filters=8).eval()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    rng_before = torch.get_rng_state()
    seconds = precision.step_seconds(net, "fp32", 7, batch=8, seconds=0.05)
    assert 0 < seconds < 5
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert not net.training and all(p.grad is None for p in net.parameters())
    assert torch.equal(torch.get_rng_state(), rng_before)


def _conv_dtypes(net):
    seen = []
    for m in net.modules():
        if isinstance(m, torch.nn.Conv2d):
            m.register_forward_hook(lambda mod, inp, out: seen.append(out.dtype))
    return seen


@pytest.mark.parametrize("channels_last", [True, False])
def test_a_bf16_sl_step_computes_in_bf16_and_lowers_the_loss(channels_last):
    torch.manual_seed(0)
    net = nets.build("policy", "cpu", layers=3, filters=8)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
    opt = make_optimizer(net, TrainConfig(lr=3e-3))
    rng = np.random.default_rng(0)
    batch = (rng.integers(0, 2, (16, 48, 5, 5)).astype(np.float32),
             rng.integers(0, 25, 16).astype(np.int64), np.zeros(16, np.float32))
    dtypes = _conv_dtypes(net)
    first, _ = train_step(net, opt, "policy", batch, precision="bf16", channels_last=channels_last)
    assert set(dtypes) == {torch.bfloat16}
    for _ in range(30):
        last, _ = train_step(net, opt, "policy", batch, precision="bf16",
                             channels_last=channels_last)
    assert last < 0.7 * first, (first, last)
    assert all(p.dtype == torch.float32 for p in net.parameters())


@pytest.mark.parametrize("score, sign", [(12.5, 1), (-3.5, -1)])
def test_a_bf16_reinforce_step_moves_the_probability_with_the_outcome(score, sign):
    n, move = 5, 7
    planes = extract(Game(n), "alphago48").astype(np.uint8)
    mask = np.ones(n * n, dtype=bool)
    record = GameResult("rl", "sl", n, 7.5, np.array([move], np.int16), score, True,
                        x=np.packbits(planes.reshape(-1))[None], move=np.array([move], np.int16),
                        mask=np.packbits(mask)[None], baseline=np.zeros(1, np.float32),
                        colour=np.ones(1, np.int8))
    torch.manual_seed(0)
    net = nets.build("policy", "cpu", layers=3, filters=8).to(memory_format=torch.channels_last)

    def p_move():
        with torch.no_grad():
            return float(torch.softmax(net(torch.from_numpy(planes[None].astype(np.float32))),
                                       1)[0, move])
    before = p_move()
    reinforce_step(net, torch.optim.SGD(net.parameters(), lr=0.5), learner_positions([record], n),
                   1, n, chunk=512, precision="bf16")
    assert (p_move() - before) * sign > 0


@pytest.mark.parametrize("option", ["bf16", "fp32", "auto"])
def test_sl_accepts_precision_and_says_what_it_runs(engine_train, tmp_path, option):
    p = engine_train("sl", "--sgf", GAMES, "--out", tmp_path / "run", "--sizes", 9,
                     "--min-rank", "", "--steps", 4, "--batch-size", 8,
                     "--eval-every", 4, "--eval-positions", 50, "--threads", 1,
                     "--heldout-fraction", 0.1, "--precision", option,
                     "--no-channels-last")
    if option == "auto":
        # settled by timing where the CPU has bfloat16 arithmetic, else float32 without a probe
        timed = "precision auto: a 9x9 training pass of 8 takes" in p.stderr
        assert timed == precision.cpu_has_bf16()
        assert ("precision bf16 (auto)" in p.stderr) or ("precision fp32 (auto)" in p.stderr)
    else:
        ran = "bf16" if option == "bf16" and precision.cpu_has_bf16() else "fp32"
        assert f"precision {ran} ({option}), channels-last False" in p.stderr
    assert (tmp_path / "run" / "policy.onnx").exists()


@pytest.mark.parametrize("command", ["sl", "value", "rl"])
def test_precision_options_are_on_every_training_command(engine_train, command):
    p = engine_train(command, "--help", ok=False)
    assert p.returncode == 0
    assert "--precision [auto|fp32|bf16]" in p.stdout and "--channels-last" in p.stdout
    bad = engine_train(command, "--out", "x", "--precision", "fp16", ok=False)
    assert bad.returncode == 2 and "fp16" in bad.stderr
