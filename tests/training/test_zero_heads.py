"""KataGo's auxiliary heads in the Zero loop: ZeroNet's ownership and score heads and their export,
the self-play records' final ownership and score (checked against the rules core), their shards
and symmetries, the loss, the heads in GTP analysis, and the Zero search's score utility; on 5x5
with a one-block, 8-filter net, real onnxruntime sessions and real engine processes."""
import csv
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray")

from goengine.engine import symmetry  # noqa: E402
from goengine.engine.board import BLACK, WHITE  # noqa: E402
from goengine.engine.coords import PASS, format_gtp, parse_gtp, pos_to_loc  # noqa: E402
from goengine.engine.evaluator import Evaluation, UniformEvaluator, uniform_priors  # noqa: E402
from goengine.engine.features import extract  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.rules import Rules  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.engine.search.zero import ZeroSearch  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.models.store import default_path  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import run_torch  # noqa: E402
from goengine.training.workers.selfplay import SelfPlayWorker  # noqa: E402
from goengine.training.workers.pool import WorkerPool  # noqa: E402
from goengine.training.zero.loop import ZeroConfig, ZeroRun  # noqa: E402
from goengine.training.zero.selfplay import ZeroGamesJob, zero_rules  # noqa: E402
from goengine.training.zero.shards import Window, ZeroShards, load_window  # noqa: E402
from goengine.training.nets.optimizers import build_optimizer  # noqa: E402
from goengine.training.zero.train import sample_batch, train_step  # noqa: E402

from positions import load_board  # noqa: E402
from zero_nets import TINY, export_tiny_zero  # noqa: E402



@pytest.fixture(scope="module")
def heads_net(tmp_path_factory):
    """(torch net, ONNX path) of a tiny Zero net with both heads and random weights."""
    return export_tiny_zero(tmp_path_factory.mktemp("zero-heads"), "heads.onnx",
                            ownership=True, score=True)


def play(onnx_path, job):
    w = SelfPlayWorker()
    w.load("best", onnx_path.read_bytes(), kind="zero")
    return w.play(job)


# ---- the net and its file ---------------------------------------------------------------------

def test_heads_shapes_export_and_symmetry_averaging(heads_net):
    net, path = heads_net
    x = np.zeros((3, 17, 5, 5), np.float32)
    logits, value, own, score = run_torch(net, x)     # eval mode: the BN statistics stay
    assert (logits.shape, value.shape, own.shape, score.shape) == (
        (3, 26), (3,), (3, 25), (3,))
    assert net.output_names == ("policy_logits", "value", "ownership", "score")
    # without heads: (logits, value) as before, so old checkpoints and files are unchanged
    plain = nets.build("zero", "cpu", **TINY)
    assert len(run_torch(plain, x)) == 2 and not any("own_head" in k or "score_head" in k
                                          for k in plain.state_dict())
    # --init-from a net without heads: its weights, and fresh heads beside them
    grown = nets.with_heads(plain, ownership=True, score=True)
    assert grown.output_names == net.output_names and grown.config["score"]
    assert all(torch.equal(v, grown.state_dict()[k]) for k, v in plain.state_dict().items())
    ev = OnnxEvaluator(path, kind="zero", symmetry="average", cache_size=0)
    assert ev.has_ownership and ev.has_score and ev.meta.aux_outputs == ("ownership", "score")
    g = Game(5)
    for m in ("C3", "D4", "B2"):
        g.play(g.to_play, parse_gtp(m, 5))
    planes = extract(g, "zero17")
    got = ev.evaluate(planes[None])
    # the average of the 8 symmetries' torch outputs, the ownership mapped back to the board
    rows = np.stack([symmetry.apply(planes, k) for k in range(8)]).astype(np.float32)
    _, values, owns, scores = run_torch(net, rows)
    back = np.stack([symmetry.invert_policy(owns[k], k, 5) for k in range(8)])
    assert np.allclose(got.ownership[0], back.mean(0), atol=1e-4)
    assert got.score[0] == pytest.approx(scores.mean(), abs=1e-3)
    assert got.value_stm[0] == pytest.approx(values.mean(), abs=1e-4)
    # the bundled net (no heads) loads as before
    bundled = OnnxEvaluator(default_path("zero"), kind="zero")
    assert not bundled.has_ownership and not bundled.has_score
    ev9 = bundled.evaluate(extract(Game(9), "zero17")[None])
    assert ev9.ownership is None and ev9.score is None and ev9.priors.shape == (1, 82)


# ---- the targets in the records ----------------------------------------------------------------

def replay(r) -> Game:
    g = Game(r.size, zero_rules(r.komi))
    for pos in r.moves:
        g.play(g.to_play, PASS if pos == r.size ** 2 else pos_to_loc(int(pos), r.size))
    return g


def test_records_carry_the_final_ownership_and_score_through_the_shards(heads_net, tmp_path):
    _, path = heads_net
    played = play(path, ZeroGamesJob(pairs=[("best", "best")] * 2, size=5, komi=0.5, visits=8,
                                     seed=4, resign_threshold=0))
    resigned = play(path, ZeroGamesJob(pairs=[("best", "best")], size=5, komi=0.5, visits=8,
                                       seed=5, resign_threshold=0.99, no_resign_fraction=0))
    assert resigned[0].resigned and len(resigned[0].own) == 0
    for r in played:
        g = replay(r)
        owner = g.ownership().reshape(-1)
        assert not r.resigned and r.score == g.area_score()
        assert (r.own == np.where(owner == BLACK, 1, np.where(owner == WHITE, -1, 0))).all()
        assert r.own.sum() - r.komi == pytest.approx(r.score)    # the score counts that area
    shards = ZeroShards(tmp_path)
    shards.write(played + resigned, "a.npz", 1)
    w = load_window(tmp_path, 10)
    start = 0
    for r in played + resigned:
        rows = slice(start, start + len(r.moves))
        start += len(r.moves)
        if r.resigned:
            assert (w.mask[rows] == 0).all() and (w.own[rows] == 0).all()
            continue
        sign = np.where(np.arange(len(r.moves)) % 2 == 0, 1, -1)    # Black moves first
        assert (w.mask[rows] == 1).all()
        assert (w.own[rows] == sign[:, None] * r.own[None]).all()
        assert np.allclose(w.score[rows], sign * r.score)
        # the side to move's view: its own points minus the other's, komi against Black
        assert np.allclose(w.own[rows].sum(1) - sign * r.komi, w.score[rows])
    # a shard written before the targets existed reads with mask 0
    with np.load(tmp_path / "a.npz") as a:
        old = {k: a[k] for k in a.files if k != "own"}
    np.savez_compressed(tmp_path / "a.npz", **old)
    old_window = load_window(tmp_path, 10)
    assert (old_window.mask == 0).all() and len(old_window.z) == len(w.z)


def test_a_symmetry_moves_the_ownership_target_with_the_planes():
    """Each position's plane 0 (own stones) is its ownership target's +1 points: whatever
    symmetry the batch draws, they must still agree."""
    rng = np.random.default_rng(0)
    p, n = 40, 5
    own = rng.integers(-1, 2, size=(p, n * n)).astype(np.int8)
    planes = np.zeros((p, 17, n, n), np.uint8)
    planes[:, 0] = (own == 1).reshape(p, n, n)
    window = Window(np.packbits(planes.reshape(p, -1), axis=1),
                    np.full((p, n * n + 1), 1 / (n * n + 1), np.float32),
                    np.zeros(p, np.float32), 1, own, np.zeros(p, np.float32),
                    np.ones(p, np.float32))
    batch = sample_batch(window, n, 200, rng)
    assert (batch.planes[:, 0].reshape(200, -1) == (batch.own == 1)).all()
    assert not np.array_equal(batch.own, window.own[:0])     # non-empty, and asymmetric rows
    assert len({tuple(r) for r in batch.own}) > p            # several symmetries of each row


# ---- training ----------------------------------------------------------------------------------

def test_training_with_heads_lowers_the_loss(heads_net, tmp_path):
    _, path = heads_net
    ZeroShards(tmp_path).write(play(path, ZeroGamesJob(pairs=[("best", "best")] * 3, size=5,
                                                       visits=8, seed=2, resign_threshold=0)),
                               "a.npz", 1)
    window = load_window(tmp_path, 10)
    rng = np.random.default_rng(0)
    batch = sample_batch(window, 5, 64, rng)
    torch.manual_seed(0)
    net = nets.build("zero", "cpu", **TINY, ownership=True, score=True)
    opt = build_optimizer(net, "adam", 3e-3, 1e-4)
    first = train_step(net, opt, batch)
    for _ in range(20):
        last = train_step(net, opt, batch)
    assert last[0] < first[0] and last[3] < first[3] and last[4] < first[4]
    assert last[5] == 64                                   # every game was played out
    # the same batch, no heads: their figures are nan and the loss is AlphaGo Zero's alone
    plain = nets.build("zero", "cpu", **TINY)
    parts = train_step(plain, build_optimizer(plain, "adam", 3e-3, 1e-4), batch)
    assert math.isnan(parts[3]) and math.isnan(parts[4])
    assert parts[0] == pytest.approx(parts[1] + parts[2], rel=1e-5)


def curve_row(run_dir: Path) -> dict:
    with (run_dir / "curve.csv").open(newline="") as f:
        return list(csv.DictReader(f))[-1]


@pytest.mark.parametrize("heads", ["ownership,score", "none"])
def test_loop_generation_with_and_without_heads(tmp_path, heads):
    cfg = ZeroConfig(size=5, komi=0.5, generations=1, games=2, games_per_job=2, visits=8,
                     steps=3, batch_size=16, gating=False, resign_threshold=0, heads=heads,
                     **TINY)
    ZeroRun(cfg, tmp_path, None, WorkerPool(workers=0), resume=False,
            log=lambda s: None).run()
    net, _ = nets.load_checkpoint(tmp_path / "checkpoint.pt")
    row = curve_row(tmp_path)
    ev = OnnxEvaluator(tmp_path / "registry" / "gen-0001.onnx", kind="zero")
    if heads == "none":
        assert net.output_names == ("policy_logits", "value") and not ev.has_score
        assert row["ownership_mse"] == row["score_mae"] == ""
    else:
        assert ev.has_ownership and ev.has_score
        assert 0 < float(row["ownership_mse"]) < 4 and float(row["score_mae"]) > 0


# the heads in kata-analyze and gogui-ownership with a Zero net: tests/gtp/test_gtp_value_heads.py


# ---- the score utility -------------------------------------------------------------------------

class RulesScoreEvaluator(UniformEvaluator):
    """Uniform priors; the score of a position is the rules core's Tromp-Taylor area count of
    its stones (rebuilt from the zero17 planes) at `komi`, the value its sign: every position of
    the test is a sure win, so that only the score tells the moves apart."""

    has_value, has_score = True, True

    def __init__(self, komi: float):
        self.komi = komi

    def evaluate(self, planes, legal_mask=None, keys=None) -> Evaluation:
        scores = []
        for p in planes:
            black = p[16, 0, 0] == 1                      # plane 16: Black to move
            mine, theirs = ("X", "O") if black else ("O", "X")
            text = "\n".join("".join(mine if p[0, r, c] else theirs if p[8, r, c] else "."
                                     for c in range(p.shape[-1])) for r in range(p.shape[-1]))
            black_lead = load_board(text, Rules(komi=self.komi)).area_score()
            scores.append(black_lead if black else -black_lead)
        scores = np.asarray(scores, np.float32)
        return Evaluation(priors=uniform_priors(len(planes), planes.shape[-1], legal_mask),
                          value_stm=np.sign(scores), score=scores)


# Black leads whatever is played (White has no legal move but pass); capturing at D3 wins by
# 4.5 at komi 20.5, passing or E5 by 1.5
SURE_WIN = """
X X X X .
X . X O X
X X X . X
X X X X X
X X X X X
"""


def root_visits(score_utility: float) -> tuple[dict, float]:
    komi = 20.5
    g = load_board(SURE_WIN, Rules(komi=komi))
    search = ZeroSearch(NetSearchConfig(mode="zero", score_utility=score_utility, c_puct=1.0,
                                        value_komi=komi), net=RulesScoreEvaluator(komi),
                        seed=1)
    result = search.search(g, BLACK, visits=300)
    if score_utility:      # the value's win rate, reported as the value's
        best = result.moves[0]
        assert best.value_winrate == best.winrate and best.rollout_winrate is None
    return ({"pass" if s.move == PASS else format_gtp(s.move, 5): s.visits
             for s in result.moves}, result.winrate)


def test_score_utility_prefers_the_larger_sure_win():
    plain, winrate = root_visits(0.0)
    assert set(plain) == {"D3", "E5", "pass"} and winrate == 1.0
    assert max(plain.values()) - min(plain.values()) <= 0.1 * sum(plain.values())
    scored, winrate = root_visits(1.0)
    assert scored["D3"] > 1.5 * max(scored["E5"], scored["pass"]), scored
    assert winrate == 1.0          # the win rate reported is the value's, not the utility
