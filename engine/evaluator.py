"""The one interface search uses to ask a network (or a stand-in) about positions.

An `Evaluator` takes a batch of feature tensors, as made by `engine.features.extract`, and answers
with an `Evaluation`:

    planes      float32[B, C, N, N]   the positions, from the side to move (row 0 at the top)
    legal_mask  bool[B, N*N+1] | None legal moves, Pos order with pass last; None = all legal
    ->
    priors      float32[B, N*N+1]     move probabilities, Pos order with pass last; each row sums
                                      to 1 and is 0 on illegal moves
    value_stm   float32[B]            expected outcome for the side to move, in [-1, 1]
    ownership   float32[B, N*N] | None  optional, +1 = owned by the side to move
    score       float32[B] | None     optional, the final area score for the side to move, in
                                      points, komi included

Besides `evaluate`, an evaluator declares what the searches ask of a network before they call it
(every implementation states each, `UniformEvaluator` the answers of a stand-in without heads):

    cache_size      positions kept in its cache; > 0: `evaluate` takes `keys`, one per position,
                    and answers a key seen before from the cache (0: keys are ignored)
    has_policy      the priors are the network's (False: uniform over the legal moves)
    has_value       the value is the network's (False: 0)
    has_ownership   every Evaluation carries `ownership`
    has_score       every Evaluation carries `score`
    feature_set     the planes it takes (engine.features.registry); None: any planes (a stand-in)
    learned_komi    the komi its value learned at; None: not said (engine.search.komi)
    for_size(n)     the evaluator that answers n x n boards, whose declarations hold there: itself,
                    or for an evaluator over several networks (models.by_size) the network made
                    for that size

Search knows only this Protocol. `UniformEvaluator` (here) serves tests and networkless play;
`models.onnx_evaluator.OnnxEvaluator` serves the trained networks.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Evaluation:
    priors: np.ndarray                    # float32[B, N*N+1], pass last
    value_stm: np.ndarray                 # float32[B], side to move, in [-1, 1]
    ownership: np.ndarray | None = None   # float32[B, N*N], +1 = side to move
    score: np.ndarray | None = None       # float32[B], points for the side to move


class Evaluator(Protocol):
    cache_size: int
    has_policy: bool
    has_value: bool
    has_ownership: bool
    has_score: bool
    feature_set: str | None
    learned_komi: float | None

    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None,
                 keys: Sequence[Hashable] | None = None) -> Evaluation:
        """planes float32[B, C, N, N], legal_mask bool[B, N*N+1] or None, keys: B position keys
        (used when `cache_size` > 0) or None -> Evaluation."""
        ...

    def for_size(self, n: int) -> Evaluator:
        """The evaluator that answers n x n positions."""
        ...


def feature_set_for(evaluator: Evaluator | None, n: int, default: str) -> str:
    """The feature set of the network that answers n x n positions; `default` for a stand-in
    that takes any planes, or no evaluator."""
    return default if evaluator is None else evaluator.for_size(n).feature_set or default


def uniform_priors(batch: int, n: int, legal_mask: np.ndarray | None) -> np.ndarray:
    """float32[B, N*N+1]: equal probability on every legal move (all moves when mask is None)."""
    if legal_mask is None:
        return np.full((batch, n * n + 1), 1.0 / (n * n + 1), dtype=np.float32)
    mask = np.asarray(legal_mask, dtype=bool)
    counts = np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return (mask / counts).astype(np.float32)


class UniformEvaluator(Evaluator):
    """Equal priors over the legal moves and value 0: search guided only by its own visits. The
    base of the tests' stand-in networks, which override `evaluate` (and the heads they add)."""

    cache_size = 0
    has_policy = has_value = has_ownership = has_score = False
    feature_set = None
    learned_komi = None

    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None,
                 keys: Sequence[Hashable] | None = None) -> Evaluation:
        batch, n = planes.shape[0], planes.shape[-1]
        return Evaluation(priors=uniform_priors(batch, n, legal_mask),
                          value_stm=np.zeros(batch, dtype=np.float32))

    def for_size(self, n: int) -> Evaluator:
        return self
