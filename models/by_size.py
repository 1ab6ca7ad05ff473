"""`BySizeEvaluator`: one evaluator over several networks, each batch answered by the network
made for its board size.

    ev = BySizeEvaluator(OnnxEvaluator("zero.onnx"), {9: OnnxEvaluator("zero-9x9.onnx")})
    ev.evaluate(planes_9x9)     # zero-9x9.onnx answers
    ev.evaluate(planes_19x19)   # zero.onnx answers

A network trained by self-play on one size (the Zero loop's 9x9 run) plays that size better than
the fully convolutional default trained on 19x19 human games, which still plays every other size.
The engine's searches see one `engine.evaluator.Evaluator`; what they ask of a network (its heads,
cache, planes, learned komi) they ask of `ev.for_size(n)`, the network that answers n x n boards.
The networks may take different planes (a 9x9 Zero network as the value of the AlphaGo search
beside the 49-plane value network): `engine.evaluator.feature_set_for(ev, n)` names the set of
n x n boards. The evaluator's own declarations and `meta` are the default network's.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from goengine.engine.evaluator import Evaluation, Evaluator
from goengine.models.metadata import ModelError


class BySizeEvaluator(Evaluator):
    def __init__(self, default, by_size: Mapping[int, object]):
        for size, ev in by_size.items():
            for head, missing in (("policy", default.has_policy and not ev.has_policy),
                                  ("value", default.has_value and not ev.has_value)):
                if missing:   # each network fills the default's role
                    raise ModelError(f"the {size}x{size} network ({ev.meta.kind}) has no {head} "
                                     f"output, the default ({default.meta.kind}) has")
            if size not in ev.meta.board_sizes:
                raise ModelError(f"the {size}x{size} network is made for sizes "
                                 f"{list(ev.meta.board_sizes)}, not {size}")
        self.default = default
        self.by_size = dict(by_size)
        sizes = set(default.meta.board_sizes) | set(by_size)
        self.meta = replace(default.meta, board_sizes=tuple(sorted(sizes)))
        self.cache_size = default.cache_size
        self.has_policy, self.has_value = default.has_policy, default.has_value
        self.has_ownership, self.has_score = default.has_ownership, default.has_score
        self.feature_set, self.learned_komi = default.feature_set, default.learned_komi

    def for_size(self, n: int) -> Evaluator:
        """The network that answers n x n positions."""
        return self.by_size.get(n, self.default)

    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None,
                 keys: Sequence[Hashable] | None = None) -> Evaluation:
        return self.for_size(planes.shape[-1]).evaluate(planes, legal_mask, keys)


__all__ = ["BySizeEvaluator"]
