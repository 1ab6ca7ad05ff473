"""Open a model file as an onnxruntime session, after checking it is one this engine can use.

    model = load_session("models/bundled/zero.onnx", threads=1, kind="zero")
    model.session.run(None, {model.input_name: planes})

Every way a file can be unusable ends in `ModelError` with the path and the reason: missing file,
not ONNX (text, truncated bytes), metadata missing or for another contract (kind, feature set,
feature version, planes), or an input that is not float32[B, planes, N, N].
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort

from goengine.models.metadata import INPUT_NAME, OUTPUT_NAMES, ModelError, ModelMetadata

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"


@dataclass(frozen=True)
class ModelSession:
    session: ort.InferenceSession
    meta: ModelMetadata
    path: Path
    provider: str                   # the provider that runs the graph, e.g. CPUExecutionProvider
    input_name: str                 # "planes"
    output_names: tuple[str, ...]   # ("policy_logits", "value") for zero
    fixed_size: int | None          # N when the file accepts only one board size, else None


def providers() -> list[str]:
    """CUDA first when this onnxruntime build offers it, CPU always."""
    return [CUDA, CPU] if CUDA in ort.get_available_providers() else [CPU]


def load_session(path: str | os.PathLike, threads: int = 1, *,
                 kind: str | tuple[str, ...] | None = None,
                 feature_set: str | None = None) -> ModelSession:
    """Load and check `path`; `kind` (or one of a tuple of kinds) / `feature_set`, when given,
    must match the file's metadata."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3   # errors only; ours are raised as ModelError
    try:
        session = ort.InferenceSession(str(path), opts, providers=providers())
    except Exception as e:   # onnxruntime raises InvalidProtobuf, Fail, ... for unreadable files
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"{path}: not a readable ONNX model ({reason})") from None
    meta = ModelMetadata.from_props(session.get_modelmeta().custom_metadata_map, str(path))
    meta.check(str(path), kind=kind, feature_set=feature_set)
    fixed_size = _check_io(session, meta, path)
    provider = session.get_providers()[0]
    print(f"models: {path.name} ({meta.kind}, {meta.feature_set}) on {provider}, "
          f"{threads} thread(s)", file=sys.stderr)
    return ModelSession(session, meta, path, provider, INPUT_NAME,
                        tuple(o.name for o in session.get_outputs()), fixed_size)


def _check_io(session: ort.InferenceSession, meta: ModelMetadata, path: Path) -> int | None:
    """Check input float32[B, planes, N, N] and the output names; return N if it is fixed."""
    inputs = session.get_inputs()
    if len(inputs) != 1 or inputs[0].name != INPUT_NAME:
        raise ModelError(f"{path}: expected one input named {INPUT_NAME!r}, "
                         f"got {[i.name for i in inputs]}")
    inp = inputs[0]
    shape = list(inp.shape)
    if inp.type != "tensor(float)" or len(shape) != 4 or shape[1] != meta.planes:
        raise ModelError(f"{path}: input {inp.name} is {inp.type}{shape}, expected "
                         f"float32[B, {meta.planes}, N, N] for {meta.feature_set}")
    h, w = shape[2], shape[3]
    fixed = isinstance(h, int) or isinstance(w, int)
    if fixed and (h != w or h not in meta.board_sizes):
        raise ModelError(f"{path}: input board {h}x{w} does not match board_sizes "
                         f"{meta.board_sizes}")
    want = OUTPUT_NAMES.get(meta.kind, ()) + meta.aux_outputs
    have = [o.name for o in session.get_outputs()]
    if any(name not in have for name in want):
        raise ModelError(f"{path}: a {meta.kind} model must output {list(want)}, has {have}")
    return h if fixed else None
