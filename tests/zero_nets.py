"""Tiny Zero networks for the tests: one block of 8 filters, random weights, exported for 5x5 as
the loop exports its generations."""
import torch

from goengine.training.nets import networks as nets
from goengine.training.nets.export import export_onnx

TINY = dict(blocks=1, filters=8)


def export_tiny_zero(directory, name: str, seed: int = 0, **heads):
    """(torch net, ONNX path) of a tiny Zero net (random weights from `seed`) with the given
    heads."""
    torch.manual_seed(seed)
    net = nets.build("zero", "cpu", **TINY, **heads)
    path = directory / name
    export_onnx(net, "zero", path, {"training_data": "random weights", "board_sizes": "5"},
                board_size=5)
    return net, path
