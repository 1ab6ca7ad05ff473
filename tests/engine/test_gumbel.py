"""Gumbel AlphaZero's root (docs/algorithms.md §2.10): sequential halving shares the simulations
as the paper's schedule (mctx's), unvisited moves' q is completed with the mixed value, the
improved policy is no worse than the prior on the completed q, and the Zero search with
`gumbel` plays the halving's survivor, first in its result, beside the improved policy."""
import numpy as np
import pytest

from goengine.engine.coords import PASS, loc_to_pos
from goengine.engine.game import Game
from goengine.engine.search import gumbel as G
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.zero import ZeroSearch
from goengine.models.names import BUNDLED_DIR
from goengine.models.onnx_evaluator import OnnxEvaluator


def halve(m, n, q_true, gumbel=None, batch=1):
    """Visits of each action after n simulations of a root whose action i, once visited, has q
    q_true[i]; equal priors, so that the order is g + sigma(q) alone."""
    k = len(q_true)
    g = np.zeros(k) if gumbel is None else np.asarray(gumbel, dtype=float)
    root = G.GumbelRoot(np.full(k, 1.0 / k), g, m, n, 0.0, 50.0, 1.0)
    visits = np.zeros(k, dtype=np.int64)
    while visits.sum() < n:
        q = np.where(visits > 0, q_true, 0.0)
        for i in root.pick(q, visits, visits, min(batch, n - visits.sum())):
            visits[i] += 1
    return root, visits


@pytest.mark.parametrize("m, n, phases", [
    (4, 16, [(4, 2), (2, 4)]),            # log2 4 = 2: 16 / (2 * 4) = 2 each, then 16 / 4 = 4
    (16, 32, [(16, 1), (8, 1), (4, 2)]),  # log2 16 = 4: 32 / 64 -> 1, 32 / 32 = 1, 32 / 16 = 2
    (16, 8, [(16, 1)]),                   # n < m: half of the first round
    (3, 10, [(3, 1), (2, 2), (2, 2)]),    # ceil(log2 3) = 2; 10 / 6 -> 1, then 10 / 4 -> 2
])
def test_the_phases_are_the_papers(m, n, phases):
    assert G.halving_phases(m, n) == phases
    seq = G.considered_visits(m, n)
    assert len(seq) == n
    assert seq[0] == 0 and np.all(np.diff(seq) >= 0)


@pytest.mark.parametrize("batch", [1, 8])
def test_n16_m4_the_better_half_by_q_gets_the_second_phase(batch):
    q_true = np.array([-0.5, 0.4, -0.2, 0.9, 0.0, 0.0])    # 4 considered by g, 2 left out
    g = np.array([3.0, 2.5, 2.0, 1.5, -5.0, -6.0])
    root, visits = halve(4, 16, q_true, g, batch)
    assert root.considered.tolist() == [True, True, True, True, False, False]
    # phase 1: 2 visits each; phase 2: the best two by g + sigma(q), 1 (0.4) and 3 (0.9), 4 more
    assert visits.tolist() == [2, 6, 2, 6, 0, 0]
    assert root.chosen(np.where(visits > 0, q_true, 0.0), visits, visits) == 3


def test_n32_m16_halves_to_four():
    rng = np.random.default_rng(3)
    q_true = rng.uniform(-1, 1, 16)
    root, visits = halve(16, 32, q_true, batch=8)
    order = np.argsort(-q_true)      # g = 0 and equal priors: sigma(q) alone ranks
    assert visits[order].tolist() == [4] * 4 + [2] * 4 + [1] * 8


def test_fewer_simulations_than_considered_visit_the_top_by_g_plus_logits():
    rng = np.random.default_rng(5)
    g = rng.gumbel(size=20)
    root, visits = halve(16, 8, np.zeros(20), g)
    assert set(np.flatnonzero(visits)) == set(np.argsort(-g)[:8])
    assert visits.max() == 1


def test_mixed_value_completes_the_unvisited():
    v, q = 0.2, np.array([0.5, -0.1, 0.7])
    visits, prior = np.array([3, 1, 0]), np.array([0.5, 0.25, 0.25])
    # visited: (0.5 * 0.5 + 0.25 * -0.1) / 0.75 = 0.3; (0.2 + 4 * 0.3) / (1 + 4) = 0.28
    assert G.mixed_value(v, q, visits, prior) == pytest.approx(0.28)
    assert G.completed_q(v, q, visits, prior).tolist() == pytest.approx([0.5, -0.1, 0.28])
    assert G.mixed_value(v, q, np.zeros(3, dtype=int), prior) == v    # nothing visited


def test_the_improved_policy_is_no_worse_than_the_prior_on_completed_q():
    rng = np.random.default_rng(11)
    for _ in range(500):
        k = int(rng.integers(2, 30))
        prior = rng.dirichlet([0.3] * k)
        visits = rng.integers(0, 20, k) * (rng.random(k) < 0.5)
        q = rng.uniform(-1, 1, k)
        root = G.GumbelRoot(prior, np.zeros(k), 16, 64, rng.uniform(-1, 1),
                            rng.uniform(0, 100), rng.uniform(0, 2))
        qc = G.completed_q(root.v_root, q, visits, root.prior)
        improved = root.improved_policy(q, visits)
        assert improved.sum() == pytest.approx(1.0)
        assert improved @ qc >= root.prior @ qc - 1e-12


def test_sigma_rescales_q_and_grows_with_the_visits():
    qc = np.array([-0.4, 0.1, 0.6])
    s = G.sigma(qc, np.array([0, 2, 10]), 50.0, 1.0)
    assert s.tolist() == pytest.approx([0.0, 30.0, 60.0])     # (50 + 10) * [0, 0.5, 1]


@pytest.fixture(scope="module")
def zero9():
    return OnnxEvaluator(BUNDLED_DIR / "zero-9x9.int8.onnx", kind="zero", symmetry="none",
                         cache_size=0, seed=1)


def gumbel_search(net, seed=1, **cfg):
    return ZeroSearch(NetSearchConfig(mode="zero", gumbel=True, **cfg), net=net, seed=seed)


def test_one_simulation_plays_the_top_of_g_plus_logits(zero9):
    g = Game(9)
    res = gumbel_search(zero9, gumbel_scale=0.0).search(g, g.to_play, playouts=1)
    # no noise: g + logits ranks by the prior; the one simulation went there and it is played
    assert res.moves[0].move == max(res.moves, key=lambda s: s.prior).move
    assert res.moves[0].visits == 1 and res.root_visits == 1
    noisy = gumbel_search(zero9, seed=4).search(g, g.to_play, playouts=1)
    assert noisy.moves[0].visits == 1


def test_the_search_shares_16_simulations_over_4_moves_as_the_schedule(zero9):
    g = Game(9)
    g.play(g.to_play, g.legal_moves()[30])
    res = gumbel_search(zero9, gumbel_k=4, batch_size=8).search(g, g.to_play, playouts=16)
    visits = sorted((s.visits for s in res.moves if s.visits), reverse=True)
    assert visits == [6, 6, 2, 2]
    assert res.moves[0].visits == 6            # the survivor is played
    pi = res.improved_policy
    assert pi.dtype == np.float32 and pi.shape == (82,)
    assert pi.sum() == pytest.approx(1.0, abs=1e-5)
    for s in res.moves:                        # every legal root move has its share, in Pos order
        assert pi[81 if s.move == PASS else loc_to_pos(s.move, 9)] > 0


def test_puct_search_has_no_improved_policy_and_keeps_its_order(zero9):
    g = Game(9)
    res = ZeroSearch(NetSearchConfig(mode="zero"), net=zero9, seed=1).search(
        g, g.to_play, playouts=16)
    assert res.improved_policy is None
    assert [s.visits for s in res.moves] == sorted((s.visits for s in res.moves), reverse=True)


def test_a_time_limited_search_plays_one_of_its_most_visited_moves(zero9):
    search = gumbel_search(zero9, batch_size=4)
    first = Game(9)
    first.play(first.to_play, first.legal_moves()[10])
    search.search(first, first.to_play, playouts=24)   # its rate plans the next search's
    g = Game(9)                                        # not a continuation: a fresh tree
    res = search.search(g, g.to_play, seconds=0.3)
    assert res.simulations > 0
    assert res.moves[0].visits == max(s.visits for s in res.moves)
    assert res.improved_policy is not None
