"""Export a trained net to the ONNX file the engine plays with, and prove it computes the same.

    from goengine.training.nets.networks import build
    from goengine.training.nets.export import export_onnx
    export_onnx(build("policy", "cpu"), "policy", "models/bundled/policy_cpu.onnx",
                {"training_data": "KGS 2004-2019 6d+", "heldout_top1": "0.512"})

The file has input `planes` float32[B, C, N, N] with dynamic B, and dynamic N as well when the net
is fully convolutional (one file runs on 9, 13 and 19); outputs are named as in `models.metadata`. The
contract goes into `metadata_props` (see `models.metadata` for the keys). Before the file appears at
`path`, onnxruntime must reproduce torch's outputs within `atol` on sizes 9 and 19 (only
`board_size` for a fixed-size net; the score head's points within `atol` * N^2); otherwise
`ExportError` and nothing is written. The inputs are
the planes of real positions (random games at several move numbers, engine.features), what the
engine will feed it: random 0/1 planes, which no position has, drive a trained net's logits to
magnitudes where float32 rounding alone exceeds 1e-4.

Export uses the TorchScript-based exporter (`dynamo=False`): it handles the dynamic H/W of
`PositionBias` and needs no onnxscript, which is not installed here.
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
import torch
from torch import nn

from goengine.engine.board import is_eye
from goengine.engine.colors import EMPTY
from goengine.engine.coords import all_locs
from goengine.engine.features import FEATURE_SETS, extract
from goengine.engine.game import Game
from goengine.models.metadata import (AUX_OUTPUTS, DEFAULT_FEATURE_SET, EXPECTED, INPUT_NAME,
                                     OUTPUT_NAMES, PLANES, POLICY_INDEX, VALUE_PERSPECTIVE,
                                     ModelMetadata)
from goengine.training.nets.networks import GoNet, weights_sha256

OPSET = 17
PARITY_SIZES = (9, 19)
DYNAMIC_BOARD_SIZES = "9,13,19"
# What the caller may set; everything else is derived from the net.
CALLER_KEYS = ("feature_set", "feature_version", "board_sizes", "training_data", "heldout_top1",
               "komi")
# What a Zero loop's registry adds to a promoted network (models.metadata ignores them).
REGISTRY_KEYS = ("generation", "selfplay_games", "train_steps", "gating")


class ExportError(RuntimeError):
    """The exported file does not reproduce the torch net (or could not be written)."""


def flush_denormals(proto: onnx.ModelProto) -> int:
    """Set the float32 weights of `proto` that are subnormal (nonzero, below 1.2e-38) to zero;
    returns how many there were.

    Weight decay shrinks the weights of channels a net stops using toward zero, and over a long
    run (the 9x9 Zero run: 101 at generation 10, 28,244 of 275,769 at generation 80) they pass
    below float32's smallest normal number. A CPU computes with subnormal operands 10-100 times
    slower, and onnxruntime's one-thread sessions do not flush them: generation 80 evaluated 20
    times slower than generation 10 of the same shape (docs/algorithms.md §3.2). As zeros they
    change no output by more than 1e-38 per product."""
    flushed = 0
    for init, w, sub in _subnormal_weights(proto):
        n = int(sub.sum())
        if n:
            init.CopyFrom(numpy_helper.from_array(np.where(sub, np.float32(0), w), init.name))
            flushed += n
    return flushed


def count_subnormal(proto: onnx.ModelProto) -> int:
    """How many float32 weights of `proto` are subnormal (what flush_denormals would zero)."""
    return sum(int(sub.sum()) for _, _, sub in _subnormal_weights(proto))


def _subnormal_weights(proto: onnx.ModelProto):
    """(initializer, its float32 array, mask of its subnormal entries) for each float tensor."""
    tiny = np.finfo(np.float32).tiny
    for init in proto.graph.initializer:
        if init.data_type == onnx.TensorProto.FLOAT:
            w = numpy_helper.to_array(init)
            yield init, w, (w != 0) & (np.abs(w) < tiny)


def flush_denormals_file(path: str | os.PathLike) -> int:
    """flush_denormals on the file at `path`, rewritten atomically (metadata kept) when it had
    any; returns how many weights were flushed."""
    path = Path(path)
    proto = onnx.load(str(path))
    flushed = flush_denormals(proto)
    if flushed:
        _save_atomic(proto, path)
    return flushed


def _save_atomic(proto: onnx.ModelProto, path: Path) -> None:
    """Write `proto` to `path` through a temporary file beside it: `path` is the old file or the
    whole new one, never half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        onnx.save(proto, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def export_onnx(model: GoNet, kind: str, path: str | os.PathLike, metadata: dict,
                board_size: int = 19, atol: float = 1e-4) -> dict[str, str]:
    """Write `model` as ONNX to `path` (atomically) after the parity check; returns its props."""
    if kind not in OUTPUT_NAMES:
        raise ValueError(f"cannot export kind {kind!r}; expected one of {sorted(OUTPUT_NAMES)}")
    unknown = set(metadata) - set(CALLER_KEYS)
    if unknown:
        raise ValueError(f"metadata keys {sorted(unknown)} are derived from the net or unknown; "
                         f"the caller may set {CALLER_KEYS}")
    path = Path(path)
    fixed = model.fixed_board_size
    size = fixed or board_size
    props = _props(model, kind, metadata, fixed)
    was_training = model.training
    model.eval()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        _torch_export(model, kind, tmp, int(props["planes"]), size, dynamic_hw=fixed is None)
        proto = onnx.load(tmp)
        onnx.helper.set_model_props(proto, props)
        flush_denormals(proto)
        onnx.checker.check_model(proto)
        onnx.save(proto, tmp)
        _check_parity(model, tmp, int(props["planes"]), props["feature_set"],
                      (size,) if fixed else PARITY_SIZES, atol)
        os.replace(tmp, path)
    finally:
        model.train(was_training)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return props


def output_names(model: GoNet, kind: str) -> tuple[str, ...]:
    """The ONNX outputs of `model`: the kind's own (models.metadata.OUTPUT_NAMES), then the
    auxiliary heads the net has (`GoNet.output_names`, e.g. a ValueNet with ownership and score)."""
    own = OUTPUT_NAMES[kind]
    names = model.output_names
    if names[:len(own)] != own or any(n not in AUX_OUTPUTS for n in names[len(own):]):
        raise ValueError(f"a {kind} net must output {own} then some of {AUX_OUTPUTS}, not {names}")
    return names


def with_registry_metadata(src: str | os.PathLike, dst: str | os.PathLike, extra: dict) -> None:
    """Copy the exported file `src` to `dst` (atomically) with the REGISTRY_KEYS of `extra` added
    to its metadata: the same weights, already parity-checked, under their registry entry."""
    unknown = set(extra) - set(REGISTRY_KEYS)
    if unknown:
        raise ValueError(f"registry keys {sorted(unknown)} unknown; expected {REGISTRY_KEYS}")
    proto = onnx.load(str(src))
    props = {p.key: p.value for p in proto.metadata_props}
    props.update({k: str(v) for k, v in extra.items()})
    onnx.helper.set_model_props(proto, props)
    _save_atomic(proto, Path(dst))


def _props(model: GoNet, kind: str, metadata: dict, fixed: int | None) -> dict[str, str]:
    config = model.config
    feature_set = metadata.get("feature_set", DEFAULT_FEATURE_SET[kind])
    planes = config.get("planes") or PLANES[feature_set]
    props = {
        "kind": kind,
        "feature_set": feature_set,
        "feature_version": str(metadata.get("feature_version", EXPECTED.get(feature_set, 1))),
        "planes": str(planes),
        # a fixed-size net runs on its own size only, whatever the caller says
        "board_sizes": str(fixed or metadata.get("board_sizes", DYNAMIC_BOARD_SIZES)),
        "value_perspective": VALUE_PERSPECTIVE,
        "policy_index": POLICY_INDEX[kind],
        "training_data": str(metadata.get("training_data", "")),
        "heldout_top1": str(metadata.get("heldout_top1", "")),
        "sha256": weights_sha256(model),
        "net_config": json.dumps(config, sort_keys=True),
        "heads": ",".join(output_names(model, kind)[len(OUTPUT_NAMES[kind]):]),
    }
    if "komi" in metadata:          # absent: the file says nothing, and the engine reads 7.5
        props["komi"] = f"{float(metadata['komi']):g}"
    ModelMetadata.from_props(props, "export")   # the file must parse back
    return props


def _torch_export(model: GoNet, kind: str, path: str, planes: int, size: int,
                  dynamic_hw: bool) -> None:
    outputs = output_names(model, kind)
    axes = {INPUT_NAME: {0: "batch", 2: "height", 3: "width"} if dynamic_hw else {0: "batch"}}
    per_point = {"policy_logits": "moves", "ownership": "points"}
    for name in outputs:
        axes[name] = {0: "batch", 1: per_point[name]} if name in per_point and dynamic_hw \
            else {0: "batch"}
    dummy = torch.zeros(2, planes, size, size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the legacy exporter's deprecation and tracer warnings
        torch.onnx.export(model, (dummy,), path, dynamo=False, opset_version=OPSET,
                          input_names=[INPUT_NAME], output_names=list(outputs),
                          dynamic_axes=axes, do_constant_folding=True)


def run_torch(model: nn.Module, planes: np.ndarray) -> list[np.ndarray]:
    """The torch net's outputs (eval mode) on float32[B, C, N, N] planes, as numpy, in the ONNX
    output order."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32)))
    finally:
        model.train(was_training)
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def parity_inputs(feature_set: str, planes: int, n: int, rng) -> np.ndarray:
    """float32[4, planes, n, n]: the planes of positions after 0, n*n/8, n*n/4 and n*n/2 random
    legal moves (own eyes left alone), or random 0/1 planes for a plane count that is not
    `feature_set`'s (a test net)."""
    if feature_set not in FEATURE_SETS or PLANES.get(feature_set) != planes:
        return rng.integers(0, 2, (4, planes, n, n)).astype(np.float32)
    out = []
    for moves in (0, n * n // 8, n * n // 4, n * n // 2):
        g = Game(n)
        for _ in range(moves):
            move = random_move(g, rng)
            if move is None:
                break
            g.play(g.to_play, move)
        out.append(extract(g, feature_set))
    return np.stack(out).astype(np.float32)


def random_move(g: Game, rng) -> int | None:
    """A random legal move for the side to play that fills none of its own eyes (None: none is
    left): the empty points tried in a random order, each judged on its own, where listing every
    legal move first (Game.legal_moves, a superko check per point) made an export's parity
    check cost seconds."""
    c = g.to_play
    empty = [lc for lc in all_locs(g.size) if g.color_at(lc) == EMPTY]
    for i in rng.permutation(len(empty)):
        lc = empty[i]
        if not is_eye(g.st, g.meta, lc, c) and g.is_legal(c, lc):
            return lc
    return None


def _check_parity(model: GoNet, path: str, planes: int, feature_set: str,
                  sizes: tuple[int, ...], atol: float) -> None:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for n in sizes:
        x = parity_inputs(feature_set, planes, n, rng)
        got = session.run(None, {INPUT_NAME: x})
        for name, w, g in zip(session.get_outputs(), run_torch(model, x), got):
            if w.shape != g.shape:
                raise ExportError(f"{name.name} on {n}x{n}: onnxruntime shape {g.shape}, "
                                  f"torch {w.shape}")
            err = float(np.max(np.abs(w - g)))
            # float32 rounding grows with the outputs: the score is in points (the head's output
            # times N^2), and a sharp policy's logits reach tens (an RL policy's, for one)
            scale = max(n * n if name.name == "score" else 1.0, float(np.max(np.abs(w))))
            tol = atol * scale
            if not err <= tol:
                raise ExportError(f"{name.name} on {n}x{n}: onnxruntime differs from torch by "
                                  f"{err:.3g} > {tol:.3g}")
