"""Shared layer: the model files of any stage: their int8 twins, their held-out figures, and the
`export`, `flush-denormals`, `quantize` and `eval` commands."""
