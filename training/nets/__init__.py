"""Shared layer: the networks and what trains and exports them (precision, optimizers, the
supervised loop, learning curves and their plots, ONNX export and import)."""
