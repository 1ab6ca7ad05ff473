"""The value heads' targets from human games (docs/algorithms.md §4.3): a counted game's final
ownership after the engine's dead-stone judgement and its recorded margin, mask 0 for resigned
games and for counted games the judgement disagrees with; the shards' `aux_mask`, the masked
heads' loss, and `engine-train value --sgf --heads auto` end to end."""
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from goengine.engine.colors import BLACK, WHITE  # noqa: E402
from goengine.engine.deadstones import judge  # noqa: E402
from goengine.engine.replay import replay  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.sgf_tools import FilterConfig, iter_games  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.data.dataset import REPLAY_RULES, PackedPositions, ShardWriter  # noqa: E402
from goengine.training.data.shard_build import build_shards  # noqa: E402
from goengine.training.nets.loop import TrainConfig, _loss  # noqa: E402

GAMES = Path(__file__).parents[1] / "data" / "games"
COUNTED = GAMES / "tygem9d-2015-06" / "2015-06-01-796677367.sgf"     # W+5.5, komi 6.5
RESIGNED = GAMES / "tygem9d-2015-05" / "2015-05-01-790141750.sgf"    # W+R
TIMED_OUT = GAMES / "tygem9d-2015-05" / "2015-05-01-790141654.sgf"   # B+T
DISAGREES = GAMES / "2008-09-16-Fuego-masaician.sgf"    # B+13.50 recorded, area count W+10.5
PLANES = 49
ANY = FilterConfig(sizes=None, require_result=True)


def build(tmp_path, source, per_game=4):
    """The positions of one game (all in the training split) and the build's statistics."""
    stats = build_shards([source], tmp_path, "alphago49", ANY, heldout_fraction=0.0,
                         positions_per_game=per_game, aux_targets=True)
    return PackedPositions(tmp_path, "train", 19, PLANES), stats


def test_counted_game_targets_are_the_judged_area_ownership_and_the_recorded_margin(tmp_path):
    record = next(iter_games(COUNTED))
    data, stats = build(tmp_path, COUNTED)
    assert stats.targets == {"targets": 1, "disagreed": 0, "not_counted": 0}
    final = replay(record, REPLAY_RULES)
    dead = judge(final).dead
    assert dead                                       # the count takes dead stones off
    owner = final.ownership(dead).reshape(-1)
    own_black = np.where(owner == BLACK, 1, np.where(owner == WHITE, -1, 0))
    assert final.area_score(dead) < 0                 # the area count names White, as recorded
    planes, _, z, own, score, mask = data.batch(np.arange(len(data)), symmetry=0, aux=True)
    sign = np.where(planes[:, 48, 0, 0] == 1, 1, -1)  # plane 48: black to move
    assert len(data) == 4
    assert (mask == 1).all()
    assert np.array_equal(own, sign[:, None] * own_black[None])   # the side to move's view
    assert np.array_equal(score, -5.5 * sign)         # W+5.5: the recorded margin, not the count
    assert np.array_equal(z, np.sign(score))
    meta = json.loads((tmp_path / "dataset.json").read_text())
    assert meta["targets"] == ["z", "own", "score"]
    assert meta["stats"]["targets"]["targets"] == 1
    assert meta["stats"]["komi"] == {"6.5": 1}        # the komi its outcome was played at


@pytest.mark.parametrize("source", [RESIGNED, TIMED_OUT])
def test_resigned_and_timed_out_games_have_no_targets(tmp_path, source):
    data, stats = build(tmp_path, source)
    assert stats.targets == {"targets": 0, "disagreed": 0, "not_counted": 1}
    _, _, z, own, score, mask = data.batch(np.arange(len(data)), symmetry=0, aux=True)
    assert len(data) == 4 and (mask == 0).all() and not own.any() and not score.any()
    assert set(np.abs(z)) == {1}                      # the value head still learns the outcome


def test_counted_game_judged_for_the_other_winner_has_no_targets_and_is_counted(tmp_path):
    record = next(iter_games(DISAGREES))
    assert record.margin == 13.5 and record.winner == "b"
    final = replay(record, REPLAY_RULES)
    assert final.area_score(judge(final).dead) < 0
    data, stats = build(tmp_path, DISAGREES)
    assert stats.targets == {"targets": 0, "disagreed": 1, "not_counted": 0}
    assert "1 counted games judged for the other winner" in stats.summary()
    _, _, _, own, _, mask = data.batch(np.arange(len(data)), symmetry=0, aux=True)
    assert (mask == 0).all() and not own.any()


def test_shards_round_trip_aux_mask_and_older_shards_read_as_mask_one(tmp_path):
    n, packed = 5, (PLANES * 25 + 7) // 8
    rng = np.random.default_rng(0)
    w = ShardWriter(tmp_path, "train-5", 8, packed, points=n * n)
    own = rng.integers(-1, 2, size=(3, n * n)).astype(np.int8)
    w.add(np.zeros(packed, np.uint8), 0, 1, n, own[0], 4.5)
    w.add(np.zeros(packed, np.uint8), 0, -1, n)                    # no targets
    w.add(np.zeros(packed, np.uint8), 0, 1, n, own[2], -2.5)
    w.flush()
    _, _, _, got_own, score, mask = PackedPositions(tmp_path, "train", n, PLANES).batch(
        np.arange(3), symmetry=0, aux=True)
    assert mask.tolist() == [1, 0, 1] and score.tolist() == [4.5, 0, -2.5]
    assert np.array_equal(got_own[[0, 2]], own[[0, 2]]) and not got_own[1].any()
    np.savez(tmp_path / "train-5-00001.npz", x=np.zeros((2, packed), np.uint8),
             move=np.zeros(2, np.int16), z=np.ones(2, np.int8), size=np.full(2, n, np.int8),
             own=own[:2], score=np.array([1.5, 2.5], np.float32))       # before aux_mask
    data = PackedPositions(tmp_path, "train", n, PLANES)
    assert data.has_aux and data.aux_mask.tolist() == [1, 0, 1, 1, 1]


def head_grads(net, batch, mask, cfg):
    net.zero_grad()
    loss, _, _ = _loss(net, "value", *batch, mask=mask, cfg=cfg)
    loss.backward()
    grads = [p.grad.clone() for p in [*net.own_head.parameters(),
                                      *net.score_head.parameters()]]
    return float(loss.detach()), grads


def test_masked_positions_give_the_heads_no_loss_and_no_gradient():
    torch.manual_seed(0)
    n = 5
    net = nets.build("value", "cpu", layers=2, filters=8, fc=16, ownership=True, score=True)
    cfg = TrainConfig(kind="value", heads=("ownership", "score"))
    planes = torch.rand(4, PLANES, n, n)
    z = torch.tensor([1.0, -1.0, 1.0, -1.0])
    own = torch.randint(-1, 2, (4, n * n)).float()
    score = torch.tensor([30.0, -12.0, 7.5, -3.5])
    batch = (planes, torch.zeros(4, dtype=torch.long), z, own, score)
    none = torch.zeros(4)
    loss, grads = head_grads(net, batch, none, cfg)
    value = net(planes)[0].detach()
    assert loss == pytest.approx(float(((value - z) ** 2).mean()), rel=1e-6)
    assert all(not g.any() for g in grads)
    # other targets on masked rows change nothing; the unmasked rows alone make the heads' loss
    other = (planes, batch[1], z, -own, score * 3)
    mixed = torch.tensor([1.0, 0.0, 1.0, 0.0])
    loss_a, grads_a = head_grads(net, batch, mixed, cfg)
    loss_b, grads_b = head_grads(net, (planes, batch[1], z, torch.where(mixed[:, None] > 0, own,
                                                                         -own),
                                       torch.where(mixed > 0, score, 3 * score)), mixed, cfg)
    assert loss_a == pytest.approx(loss_b) and all(torch.equal(a, b) for a, b in zip(grads_a, grads_b))
    assert any(g.any() for g in grads_a)
    assert head_grads(net, other, none, cfg)[0] == pytest.approx(loss)


def value_on_human_games(engine_train, out, *extra):
    return engine_train("value", "--sgf", GAMES / "tygem9d-2015-05", "--sgf",
                        GAMES / "tygem9d-2015-06", "--out", out, "--heads", "auto", "--steps", 4,
                        "--batch-size", 4, "--eval-every", 2, "--eval-positions", 16,
                        "--threads", 1, "--min-rank", "", "--heldout-fraction", 0.3,
                        "--judge-playouts", 400, *extra, ok=False)


def test_value_on_human_games_trains_the_heads_and_exports_them(engine_train, tmp_path):
    out = tmp_path / "run"
    p = value_on_human_games(engine_train, out)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "own_mse" in p.stdout and "score_mae" in p.stdout
    meta = json.loads((out / "data" / "dataset.json").read_text())
    # the B+T game is dropped (its outcome is the clock's); 4 counted, 3 resigned
    assert meta["stats"]["targets"] == {"targets": 4, "disagreed": 0, "not_counted": 3}
    assert meta["stats"]["filtered"]["rejected"] == {"time or forfeit": 1}
    assert json.loads((out / "train_config.json").read_text())["heads"] == ["ownership", "score"]
    ev = OnnxEvaluator(out / "value.onnx", kind="value")
    assert ev.learned_komi == 6.5      # Tygem's komi: the engine moves the value to the game's
    got = ev.evaluate(np.zeros((2, PLANES, 19, 19), dtype=np.float32))
    assert got.ownership.shape == (2, 361) and got.score.shape == (2,)


@pytest.mark.slow
def test_off_board_results_keep_takes_the_timed_out_game_and_a_dataset_keeps_its_filters(
        engine_train, tmp_path):
    out = tmp_path / "run"
    nets.save_checkpoint(nets.build("policy", "cpu"), tmp_path / "policy.pt")
    p = value_on_human_games(engine_train, out, "--off-board-results", "keep", "--init-from",
                             tmp_path / "policy.pt")
    assert p.returncode == 0, p.stderr[-3000:]
    # a policy's trunk under the new value head, scaled on the run's own training positions
    assert "the trunk's output scaled by 1/" in p.stdout + p.stderr
    meta = json.loads((out / "data" / "dataset.json").read_text())
    assert meta["stats"]["targets"] == {"targets": 4, "disagreed": 0, "not_counted": 4}
    # the same sources built with other filters are not silently reused
    p = value_on_human_games(engine_train, out, "--off-board-results", "drop")
    assert p.returncode == 2 and "other filters" in p.stderr
