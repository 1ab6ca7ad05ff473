"""AlphaGo Zero's PUCT search: one dual-head network gives every leaf its priors and value.

The tree, its batches of leaves and the report are engine.search.network's. Here every new leaf
is expanded with the network's priors and its value is backed up; no rollouts (lambda 0). A
network with a score head adds KataGo's static and dynamic score utilities to Q when
`score_utility` or `dynamic_score_utility` > 0 (engine.search.network's docstring). The leaves'
planes (zero17) are made for the whole batch in one call (engine.features.extract_leaves), from
the colour rows the descents kept; several searches' batches can share one network call
(engine.search.lockstep).

With `config.gumbel` the root is Gumbel AlphaZero's (engine.search.gumbel, docs/algorithms.md
§2.10): sequential halving forces each descent's root child (PUCT below it), the move played is
the halving's survivor, first in the result's moves, and the result carries the improved policy.
Its simulation budget is the run's count limit; a search limited by time alone plans for the
simulations its previous searches ran in that time (OPEN_BUDGET before any, and for a search
with no limit at all: analysis, pondering); past its plan the last phase goes on.
"""
from __future__ import annotations

import time

import numpy as np

from goengine.engine import board as B
from goengine.engine.coords import PASS, loc_to_pos
from goengine.engine.evaluator import Evaluation, Evaluator
from goengine.engine.features import extract_leaves
from goengine.engine.search import tree as T
from goengine.engine.search.criticality import LeafOwnership
from goengine.engine.search.gumbel import GumbelRoot
from goengine.engine.search.leaves import score_utility
from goengine.engine.search.network import (LeafBatch, NetSearchConfig, NetworkSearch, Position,
                                            features, run_network)
from goengine.engine.search.result import SearchResult, principal_variation

PLANES = "zero17"
OPEN_BUDGET = 800   # the Gumbel root's plan with no count limit and no rate known yet (the
                    # paper's Go searches: 800 simulations)


class ZeroSearch(NetworkSearch):
    """AlphaGo Zero's search over the dual-head evaluator `net` (a `Search`)."""

    name = "zero"

    def __init__(self, config: NetSearchConfig, net: Evaluator, seed: int | None = None):
        super().__init__(config, seed)
        self.net = net
        self._gumbel = None     # (GumbelRoot, root children, their visits before the search)
        self._rate = None       # simulations per second of the last search (the Gumbel plan)
        self._leaf_own = None   # the leaves' ownership and value sums, with criticality on

    def begin(self, game, color, dead_at_terminals: np.ndarray | None = None,
              budget: int | None = None, seconds: float | None = None) -> None:
        super().begin(game, color, dead_at_terminals, budget, seconds)
        self._gumbel = None     # made at the first descent, once superko has pruned the root

    def _configure(self, game) -> None:
        net = self.net.for_size(game.size)
        self._value_leads = net.has_score
        self._utility = self.config.score_utility if self._value_leads else 0.0
        self._leaf_own = (LeafOwnership(game.st.shape[1])
                          if self.config.criticality > 0 and net.has_ownership else None)

    def _leaf_ownership(self) -> LeafOwnership | None:
        return self._leaf_own

    def _dynamic_weight(self) -> float:
        return self.config.dynamic_score_utility if self._value_leads else 0.0

    def _head_net(self, size: int) -> tuple:
        return self.net, PLANES

    def _evaluate(self, planes: np.ndarray, metas: np.ndarray) -> Evaluation:
        """The network's answers for the positions' `planes` (zero17), counted."""
        t0 = time.perf_counter()
        ev = run_network(self.net, planes, metas)
        self._timed(t0, len(planes))
        return ev

    def _root_priors(self, pos: Position) -> np.ndarray:
        return self._evaluate(features([pos], PLANES), pos.meta[None]).priors[0]

    def _prepare(self, batch: LeafBatch) -> None:
        """Every leaf is expanded and evaluated: its planes, for the whole batch at once."""
        batch.planes = extract_leaves(PLANES, batch.hists, batch.counts, batch.metas,
                                      self._game.size)

    def _net_for(self, batch: LeafBatch) -> tuple:
        ev = self._evaluate(batch.planes, batch.metas)
        if self._leaf_own is not None:
            self._leaf_own.add_predictions(ev.ownership, ev.value_stm, batch.metas,
                                           self._game.size)
        return ev.priors, ev.value_stm, ev.score

    # ---- the Gumbel root ----------------------------------------------------------------------
    def _plan(self) -> int:
        """The simulations sequential halving shares out: the count limit, else the last
        search's rate times the time limit, else OPEN_BUDGET."""
        budget, seconds = self._limits
        if budget is not None:
            return max(0, budget)
        if seconds is not None and self._rate is not None:
            return max(1, int(self._rate * seconds))
        return OPEN_BUDGET

    def _root_value(self) -> float:
        """The network's value of the root for its player to move, as the tree's Q holds it
        (the score utility's where that is on)."""
        pos = self._root_position()
        ev = self._evaluate(features([pos], PLANES), pos.meta[None])
        v_black, lead, _ = self._black_values(pos.meta[None], ev.value_stm, ev.score)
        u = score_utility(float(v_black[0]), float(lead[0]), self._util)
        return u if self._color == B.BLACK else -u

    def _root_stats(self, kids: np.ndarray) -> tuple:
        """(q, visits) of the root children `kids`, q for their mover (the root's player)."""
        t = self.tree
        visits = t.ti[T.I_N, kids].astype(np.int64)
        q = np.array([T.node_q(t.ti, t.tf, int(ch), self._lam) if n > 0 else 0.0
                      for ch, n in zip(kids, visits)])
        return q, visits

    def _gumbel_root(self) -> tuple:
        """(GumbelRoot, root children, their visits before this search) of this search: the
        legal root children, their priors and fresh Gumbel noise from the search's generator."""
        if self._gumbel is None:
            cfg, t = self.config, self.tree
            kids = np.array([ch for ch in t.children(t.root)
                             if not t.ti[T.I_FLAGS, ch] & T.PRUNED], dtype=np.int64)
            g = cfg.gumbel_scale * self._rng.gumbel(size=len(kids))
            root = GumbelRoot(t.tf[T.F_P, kids].copy(), g, cfg.gumbel_k, self._plan(),
                              self._root_value(), cfg.gumbel_c_visit, cfg.gumbel_c_scale)
            self._gumbel = (root, kids, t.ti[T.I_N, kids].astype(np.int64))
        return self._gumbel

    def root_children(self, want: int) -> np.ndarray:
        if not self.config.gumbel:
            return super().root_children(want)
        root, kids, before = self._gumbel_root()
        if len(kids) == 0:
            return super().root_children(want)
        q, visits = self._root_stats(kids)
        return kids[root.pick(q, visits, visits - before, want)]

    def result(self, ran: int, elapsed: float) -> SearchResult:
        res = super().result(ran, elapsed)
        if ran >= self.chunk and elapsed > 0:
            self._rate = ran / elapsed
        if self.config.gumbel:
            self._gumbel_result(res)
        return res

    def _gumbel_result(self, res: SearchResult) -> None:
        """The halving's survivor first in `res.moves` (the move played; the rest by visits),
        and the improved policy, float32[N*N+1] in Pos order, pass last."""
        root, kids, before = self._gumbel_root()
        if len(kids) == 0:
            return
        n, t = self._game.size, self.tree
        q, visits = self._root_stats(kids)
        moves = t.ti[T.I_MOVE, kids]
        policy = np.zeros(n * n + 1, dtype=np.float32)
        pos = [n * n if mv == PASS else loc_to_pos(int(mv), n) for mv in moves]
        policy[pos] = root.improved_policy(q, visits)
        res.improved_policy = policy
        best = int(moves[root.chosen(q, visits, visits - before)])
        first = [s for s in res.moves if s.move == best]
        res.moves = first + [s for s in res.moves if s.move != best]
        for i, s in enumerate(res.moves):
            s.order = i
        if first and not first[0].pv:
            first[0].pv = principal_variation(t, int(T.find_child(t.ti, t.root, best)))


__all__ = ["ZeroSearch"]
