"""KataGo's forced playouts and policy target pruning (docs/algorithms.md §4.6): the root child
short of its forced visits is searched first, the policy target takes those visits back where
PUCT alone would not have given them, and only the noised self-play searches use either."""
import math

import numpy as np
import pytest

from goengine.engine.evaluator import UniformEvaluator
from goengine.engine.game import Game
from goengine.engine.search import tree as T
from goengine.engine.search.lockstep import Lockstep
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.zero import ZeroSearch
from goengine.training.zero.selfplay import (ZeroGamesJob, make_search, play_zero_games,
                                             visit_distribution, zero_rules)


def root_with(priors, visits, wins):
    """A tree whose root has one child per prior, with these visits and value sums (the
    child's mover's view, as the tree keeps them)."""
    tree = T.Tree(1000)
    k = len(priors)
    T.alloc_children(tree.ti, tree.tf, tree.tm, tree.root, np.arange(k, dtype=np.int32),
                     np.asarray(priors, dtype=np.float64), k)
    kids = np.arange(1, k + 1)
    tree.ti[T.I_N, kids] = visits
    tree.ti[T.I_NV, kids] = visits
    tree.tf[T.F_WV, kids] = wins
    tree.ti[T.I_N, tree.root] = sum(visits)
    return tree


def test_forced_child_is_the_one_furthest_below_sqrt_k_p_n():
    tree = root_with([0.6, 0.3, 0.1], [50, 2, 0], [0.0] * 3)
    # N = 52: forced shares 7.9, 5.6, 3.2 visits: child 2 lacks 3.6, child 3 lacks 3.2
    assert T.forced_child(tree.ti, tree.tf, tree.root, 2.0) == 2
    tree.ti[T.I_N, 2] = 6          # N = 56: child 2 has its 5.8, child 3 lacks 3.3
    assert T.forced_child(tree.ti, tree.tf, tree.root, 2.0) == 3
    tree.ti[T.I_FLAGS, 3] |= T.PRUNED
    assert T.forced_child(tree.ti, tree.tf, tree.root, 2.0) == -1   # pruned children never
    tree.ti[T.I_FLAGS, 3] = 0
    tree.ti[T.I_N, 3] = 4
    assert T.forced_child(tree.ti, tree.tf, tree.root, 2.0) == -1   # every share met


def brute_force_pruned(priors, visits, q, c, k):
    """The pruning rule written out: every child but the most visited loses visits, one at a
    time and at most its forced number, while its PUCT score stays below the best child's."""
    total = sum(visits)
    best = int(np.argmax(visits))
    sq = math.sqrt(total)
    best_score = q[best] + c * priors[best] * sq / (1 + visits[best])
    out = list(visits)
    for i, n in enumerate(visits):
        if i == best or n == 0:
            continue
        floor = n - math.sqrt(k * priors[i] * total)
        m = n
        while m - 1 >= floor and m - 1 >= 0 and q[i] + c * priors[i] * sq / m < best_score:
            m -= 1
        if m < n:
            out[i] = 0 if m <= 1 else m
    return out


def test_pruned_visits_match_the_rule_on_random_roots():
    rng = np.random.default_rng(7)
    for _ in range(300):
        k = int(rng.integers(2, 9))
        priors = rng.dirichlet([0.5] * k)
        visits = [int(v) for v in rng.integers(0, 60, size=k)]
        if sum(visits) == 0:
            continue
        q = rng.uniform(-1, 1, size=k)
        tree = root_with(priors, visits, [qi * n for qi, n in zip(q, visits)])
        q = [qi if n else 0.0 for qi, n in zip(q, visits)]
        got = T.pruned_visits(tree.ti, tree.tf, tree.root, 1.5, 0.0, 2.0)
        want = brute_force_pruned(priors, visits, q, 1.5, 2.0)
        assert list(got) == want, (priors, visits, q)
        best = int(np.argmax(visits))
        assert got[best] == visits[best]
        assert all(0 <= g <= v for g, v in zip(got, visits))


def test_a_move_searched_only_by_force_leaves_the_target():
    # child 2: a poor move (q -0.8) with no more than its forced visits sqrt(2 * 0.05 * 100)
    tree = root_with([0.75, 0.05, 0.2], [91, 3, 6], [0.3 * 91, -0.8 * 3, 0.25 * 6])
    got = T.pruned_visits(tree.ti, tree.tf, tree.root, 1.5, 0.0, 2.0)
    assert list(got) == [91, 0, 6]   # child 3 is nearly as good as the best: PUCT wanted them


class FixedRandomValue(UniformEvaluator):
    """Equal priors, and a value that is a fixed random function of the position: the root's
    moves differ in Q, as with a real network, so PUCT alone would not visit them alike."""

    has_value = True

    def __init__(self, seed=0):
        self.weights = None
        self.rng = np.random.default_rng(seed)

    def evaluate(self, planes, legal_mask=None, keys=None):
        ev = super().evaluate(planes, legal_mask)
        flat = planes.reshape(len(planes), -1)
        if self.weights is None:
            self.weights = self.rng.normal(size=flat.shape[1])
        value = np.tanh(flat @ self.weights / 2).astype(np.float32)
        return type(ev)(priors=ev.priors, value_stm=value)


def search_with(forced_k, seed=3, visits=300):
    cfg = NetSearchConfig(mode="zero", c_puct=1.5, dirichlet_alpha=0.5, forced_k=forced_k,
                          batch_size=4)
    search = ZeroSearch(cfg, net=FixedRandomValue(), seed=seed)
    g = Game(5, zero_rules(0.5))
    return search, search.search(g, g.to_play, visits=visits)


def test_the_noised_root_gives_every_child_its_forced_visits():
    search, result = search_with(2.0)
    total = sum(s.visits for s in result.moves)
    for s in result.moves:
        # its share, less the few visits still in flight in the last batch
        assert s.visits >= math.floor(math.sqrt(2.0 * s.prior * total)) - 4
        assert 0 <= s.target_visits <= s.visits
    best = result.moves[0]
    assert best.target_visits == best.visits
    pi = visit_distribution(result, 5)
    assert pi.sum() == pytest.approx(1)
    assert sum(s.target_visits for s in result.moves) < total      # something was taken back
    _, plain = search_with(0.0)
    assert all(s.target_visits is None for s in plain.moves)


def test_only_the_noised_full_searches_force_playouts(monkeypatch):
    seen = []
    real = Lockstep.start

    def spy(self, key, search, game, color, visits):
        seen.append((visits, search.config.dirichlet_alpha > 0, search.config.forced_k))
        return real(self, key, search, game, color, visits)

    monkeypatch.setattr(Lockstep, "start", spy)     # where self-play starts each search
    job = ZeroGamesJob(pairs=[("best", "best")] * 2, size=5, komi=0.5, visits=16, seed=5,
                       resign_threshold=0.0, fast_visits=4, full_fraction=0.3,
                       forced_playouts=2.0)
    play_zero_games({"best": UniformEvaluator()}, job)
    assert set(seen) == {(16, True, 2.0), (4, False, 0.0)}
    gating = ZeroGamesJob(pairs=[], size=5, noise=False, forced_playouts=2.0)
    assert make_search(UniformEvaluator(), gating, 1).config.forced_k == 0.0
