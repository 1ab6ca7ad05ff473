"""The bundled models' folder and the file name of each kind's default model, in plain Python:
the GTP server finds models before it loads onnxruntime or numba (tests/test_models_names.py)."""
from __future__ import annotations

from pathlib import Path

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
MODEL_FILES = {"policy": "policy.onnx", "value": "value.onnx", "zero": "zero.onnx",
               "rollout": "rollout.npz"}

__all__ = ["BUNDLED_DIR", "MODEL_FILES"]
