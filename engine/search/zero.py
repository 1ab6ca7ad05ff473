"""AlphaGo Zero's PUCT search: one dual-head network gives every leaf its priors and value.

The tree, its batches of leaves and the report are engine.search.network's. Here every new leaf
is expanded with the network's priors and its value is backed up; no rollouts (lambda 0). A
network with a score head adds KataGo's static and dynamic score utilities to Q when
`score_utility` or `dynamic_score_utility` > 0 (engine.search.network's docstring). The leaves'
planes (zero17) are made for the whole batch in one call (engine.features.extract_leaves), from
the colour rows the descents kept; several searches' batches can share one network call
(engine.search.lockstep).
"""
from __future__ import annotations

import time

import numpy as np

from goengine.engine.evaluator import Evaluator
from goengine.engine.features import extract_leaves
from goengine.engine.search.network import (LeafBatch, NetSearchConfig, NetworkSearch, Position,
                                            features, run_network)

PLANES = "zero17"


class ZeroSearch(NetworkSearch):
    """AlphaGo Zero's search over the dual-head evaluator `net` (a `Search`)."""

    name = "zero"

    def __init__(self, config: NetSearchConfig, net: Evaluator, seed: int | None = None):
        super().__init__(config, seed)
        self.net = net

    def _configure(self, game) -> None:
        self._value_leads = self.net.for_size(game.size).has_score
        self._utility = self.config.score_utility if self._value_leads else 0.0

    def _dynamic_weight(self) -> float:
        return self.config.dynamic_score_utility if self._value_leads else 0.0

    def _head_net(self, size: int) -> tuple:
        return self.net, PLANES

    def _evaluate(self, planes: np.ndarray, metas: np.ndarray) -> tuple:
        """(priors, value_stm, score or None) of the positions' `planes` (zero17), counted."""
        t0 = time.perf_counter()
        ev = run_network(self.net, planes, metas)
        self._timed(t0, len(planes))
        return ev.priors, ev.value_stm, ev.score

    def _root_priors(self, pos: Position) -> np.ndarray:
        return self._evaluate(features([pos], PLANES), pos.meta[None])[0][0]

    def _prepare(self, batch: LeafBatch) -> None:
        """Every leaf is expanded and evaluated: its planes, for the whole batch at once."""
        batch.planes = extract_leaves(PLANES, batch.hists, batch.counts, batch.metas,
                                      self._game.size)

    def _net_for(self, batch: LeafBatch) -> tuple:
        return self._evaluate(batch.planes, batch.metas)


__all__ = ["ZeroSearch"]
