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

An evaluator over several networks (models.by_size) also answers `for_size(n)`: the one that
evaluates n x n boards, whose heads the search asks about (`for_size` here).

Search knows only this Protocol. `UniformEvaluator` (here) serves tests and networkless play;
`models.onnx_evaluator.OnnxEvaluator` serves the trained networks.
"""
from __future__ import annotations

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
    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None) -> Evaluation:
        """planes float32[B, C, N, N], legal_mask bool[B, N*N+1] or None -> Evaluation."""
        ...


def for_size(evaluator, n: int):
    """The evaluator that answers n x n positions: a by-size evaluator's network for that size,
    any other evaluator itself."""
    pick = getattr(evaluator, "for_size", None)
    return evaluator if pick is None else pick(n)


def feature_set_for(evaluator, n: int, default: str) -> str:
    """The feature set of the network that answers n x n positions, from its metadata; `default`
    for an evaluator without metadata."""
    meta = getattr(for_size(evaluator, n), "meta", None)
    return getattr(meta, "feature_set", default)


def uniform_priors(batch: int, n: int, legal_mask: np.ndarray | None) -> np.ndarray:
    """float32[B, N*N+1]: equal probability on every legal move (all moves when mask is None)."""
    if legal_mask is None:
        return np.full((batch, n * n + 1), 1.0 / (n * n + 1), dtype=np.float32)
    mask = np.asarray(legal_mask, dtype=bool)
    counts = np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return (mask / counts).astype(np.float32)


class UniformEvaluator:
    """Equal priors over the legal moves and value 0: search guided only by its own visits."""

    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None) -> Evaluation:
        batch, n = planes.shape[0], planes.shape[-1]
        return Evaluation(priors=uniform_priors(batch, n, legal_mask),
                          value_stm=np.zeros(batch, dtype=np.float32))
