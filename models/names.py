"""The bundled models' folder and the file name of each kind's default model, in plain Python:
the GTP server finds models before it loads onnxruntime or numba (tests/gtp/test_gtp_units.py checks that it loads neither)."""
from __future__ import annotations

from pathlib import Path

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
MODEL_FILES = {"policy": "policy.onnx", "value": "value.onnx", "zero": "zero.onnx",
               "rollout": "rollout.npz"}

# networks made for one board size, loaded beside the kind's default and used on that size only
# (a search on a 9x9 board asks zero-9x9.onnx, every other size zero.onnx: models.by_size). A
# role may take a network of another kind that fills it (models.metadata.ROLE_KINDS): the 9x9
# Zero network as the AlphaGo search's 9x9 value was measured no stronger than value.onnx
# (docs/algorithms.md §2.3), so value.onnx stays the value on every size.
SIZED_MODEL_FILES = {"zero": {9: "zero-9x9.onnx"}}

# opening books (engine.book, `engine-train book`) bundled for a board size: `--search auto` plays
# them on that size at the komi and scoring they were made for
BOOK_FILES = {9: "book-9x9.json"}

# the RL policy (`engine-train rl`), bundled beside the SL one for `--search policy --policy
# models/bundled/rl-policy.onnx`; no search loads it by default
RL_POLICY_FILE = "rl-policy.onnx"

INT8_SUFFIX = ".int8.onnx"      # training.export.quantize's file beside the float one


def int8_variant(path: str | Path) -> Path:
    """The int8 file beside the float model `path`: policy.onnx -> policy.int8.onnx."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".onnx") + INT8_SUFFIX)


__all__ = ["BOOK_FILES", "BUNDLED_DIR", "INT8_SUFFIX", "MODEL_FILES", "RL_POLICY_FILE", "SIZED_MODEL_FILES", "int8_variant"]
