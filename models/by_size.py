"""`BySizeEvaluator`: one evaluator over several networks, each batch answered by the network
made for its board size.

    ev = BySizeEvaluator(OnnxEvaluator("zero.onnx"), {9: OnnxEvaluator("zero-9x9.onnx")})
    ev.evaluate(planes_9x9)     # zero-9x9.onnx answers
    ev.evaluate(planes_19x19)   # zero.onnx answers

A network trained by self-play on one size (the Zero loop's 9x9 run) plays that size better than
the fully convolutional default trained on 19x19 human games, which still plays every other size.
The engine's searches see one `engine.evaluator.Evaluator`; what they ask of a network's heads
(`has_ownership`, `has_score`) they ask of `engine.evaluator.for_size(ev, n)`, the network that
answers n x n boards. The networks may take different planes (a 9x9 Zero network as the value of
the AlphaGo search beside the 49-plane value network): `engine.evaluator.feature_set_for(ev, n)`
names the set of n x n boards, and `meta` is the default network's.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from goengine.engine.evaluator import Evaluation
from goengine.models.metadata import ModelError


class BySizeEvaluator:
    def __init__(self, default, by_size: Mapping[int, object]):
        for size, ev in by_size.items():
            for head in ("policy", "value"):   # each network fills the default's role
                if getattr(default, f"has_{head}", False) and not getattr(ev, f"has_{head}", False):
                    raise ModelError(f"the {size}x{size} network ({ev.meta.kind}) has no {head} "
                                     f"output, the default ({default.meta.kind}) has")
            if size not in ev.meta.board_sizes:
                raise ModelError(f"the {size}x{size} network is made for sizes "
                                 f"{list(ev.meta.board_sizes)}, not {size}")
        self.default = default
        self.by_size = dict(by_size)
        sizes = set(default.meta.board_sizes) | set(by_size)
        self.meta = replace(default.meta, board_sizes=tuple(sorted(sizes)))

    def for_size(self, n: int):
        """The network that answers n x n positions."""
        return self.by_size.get(n, self.default)

    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None,
                 keys: Sequence[Hashable] | None = None) -> Evaluation:
        return self.for_size(planes.shape[-1]).evaluate(planes, legal_mask, keys)


__all__ = ["BySizeEvaluator"]
