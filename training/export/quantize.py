"""int8 networks for the CPU: static quantization of an exported ONNX model (docs/algorithms.md §3.2).

    engine-train quantize --model models/bundled/policy.onnx --sgf ../shared/data/tygem9d/tygem9d-2015-05.tar.bz2 \\
        --out policy.int8.onnx

onnxruntime's static quantizer in QDQ form: weights int8 per output channel, activations uint8
with ranges calibrated on real positions (the planes the engine computes for the model's feature
set, from games of `--sgf`), so the convolutions run as int8 matrix products (VNNI on x86 CPUs).
Dynamic quantization would leave the convolutions in float: these nets are almost all
convolutions. The int8 outputs are checked against the float ones on the calibration positions,
and where rare huge activations make them stray, the last convolutions stay float
(`quantize_model`). The file keeps the model's metadata (the engine checks it as for any model) and
adds `quantization`, which says how it was made; `sha256` still names the trained float weights.

`benchmarks/bench_int8.py` measures evaluations/s and held-out accuracy against the float model.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import click
import numpy as np
import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

from goengine.engine.coords import PASS
from goengine.engine.features import extract
from goengine.engine.replay import ReplayError, positions
from goengine.models.metadata import ModelError
from goengine.models.session import load_session
from goengine.sgf_tools import ReadStats, iter_games
from goengine.training.data.dataset import REPLAY_RULES

CALIBRATION_BATCH = 16


def calibration_planes(sgf_paths, feature_set: str, count: int = 512, every: int = 7,
                       sizes=(19,)) -> np.ndarray:
    """float32[count, C, N, N]: every `every`-th position of the games in `sgf_paths` (board
    sizes `sizes`), as the engine computes them for `feature_set`; fewer when the games run out."""
    xs: list[np.ndarray] = []
    for src in sgf_paths:
        for record in iter_games(src, ReadStats()):
            if record.size not in sizes:
                continue
            try:
                for i, (game, _color, move) in enumerate(positions(record, REPLAY_RULES)):
                    if move != PASS and i % every == 0:
                        xs.append(extract(game, feature_set))
            except ReplayError:
                continue
            if len(xs) >= count:
                return np.stack(xs[:count]).astype(np.float32)
    if not xs:
        raise click.UsageError(f"no {'/'.join(f'{n}x{n}' for n in sizes)} positions in "
                               f"{', '.join(map(str, sgf_paths))}")
    return np.stack(xs).astype(np.float32)


class _Batches(CalibrationDataReader):
    def __init__(self, input_name: str, planes: np.ndarray):
        self._it = iter([{input_name: planes[i:i + CALIBRATION_BATCH]}
                         for i in range(0, len(planes), CALIBRATION_BATCH)])

    def get_next(self):
        return next(self._it, None)


# How closely the int8 model must follow the float one on the calibration positions: the top-1
# move of each policy output (the bundled SL policy's int8 twin: 0.90, for 0.2 points of held-out
# top-1), and the mean error of every other output in units of its spread.
MIN_TOP1_AGREEMENT = 0.85
MAX_RELATIVE_ERROR = 0.1
# A network without batch norm can grow rare huge activations in its last layers (one SL policy:
# 10,142 at the last convolution where 99% are below 42); a uint8 range stretched to them leaves
# the usual values a few steps, and the policy's top-1 fell to 0.3%. Those layers stay float.
MAX_FLOAT_CONVOLUTIONS = 3


def float_tail(model: onnx.ModelProto, convolutions: int) -> list[str]:
    """The names of the nodes from the `convolutions`-th last Conv to the end of the (topologically
    sorted) graph: the part that stays in float. Nothing for 0."""
    if convolutions <= 0:
        return []
    nodes = list(model.graph.node)
    convs = [i for i, n in enumerate(nodes) if n.op_type == "Conv"]
    start = convs[-min(convolutions, len(convs))]
    return [n.name for n in nodes[start:]]


def follows_float(names, reference, quantized) -> tuple[bool, str]:
    """Whether the quantized outputs follow the float ones (the thresholds above), and how."""
    ok, said = True, []
    for name, a, b in zip(names, reference, quantized):
        if "policy" in name:
            agreement = float((a.argmax(1) == b.argmax(1)).mean())
            ok &= agreement >= MIN_TOP1_AGREEMENT
            said.append(f"{name} top-1 agreement {agreement:.3f}")
        else:
            error = float(np.abs(a - b).mean() / (a.std() + 1e-6))
            ok &= error <= MAX_RELATIVE_ERROR
            said.append(f"{name} relative error {error:.3f}")
    return ok, ", ".join(said)


def quantize_model(src: Path, dst: Path, planes: np.ndarray, described: str) -> Path:
    """Write the int8 (QDQ) version of the ONNX model `src` to `dst`, calibrated on `planes`;
    the metadata of `src` is carried over, with `quantization` = `described` (and the float tail,
    where one was needed). The whole network is quantized unless its outputs then stray from the
    float model's on `planes` (`follows_float`); then the last convolution and what follows it
    stay float, then the last two, up to MAX_FLOAT_CONVOLUTIONS (beyond: ModelError)."""
    session = load_session(src)                       # refuses a model the engine could not use
    props = {p.key: p.value for p in onnx.load(str(src)).metadata_props}
    names = [o.name for o in session.session.get_outputs()]
    reference = session.session.run(names, {session.input_name: planes})
    tried = []
    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        # ONNX shape inference and folded batch norms first (the symbolic one cannot follow the
        # Zero net's pooled pass logit)
        quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
        pre_model = onnx.load(str(pre))
        for k in range(MAX_FLOAT_CONVOLUTIONS + 1):
            out = Path(tmp) / f"int8-{k}.onnx"
            quantize_static(str(pre), str(out), _Batches(session.input_name, planes),
                            quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            nodes_to_exclude=float_tail(pre_model, k))
            trial = load_session(out)
            ok, how = follows_float(names, reference,
                                    trial.session.run(names, {trial.input_name: planes}))
            tried.append(f"{k} float convolutions: {how}")
            if ok:
                break
        else:
            raise ModelError(f"{src}: the int8 model does not follow the float one on the "
                             f"calibration positions ({'; '.join(tried)})")
        model = onnx.load(str(out))
    if k:
        described += (f"; the last {k} convolution{'s' if k > 1 else ''} and what follows in "
                      f"float (activation outliers)")
    del model.metadata_props[:]
    for key, value in {**props, "quantization": described}.items():
        model.metadata_props.add(key=key, value=value)
    tmp_dst = dst.with_suffix(".tmp.onnx")
    onnx.save(model, str(tmp_dst))
    tmp_dst.replace(dst)
    load_session(dst)                                 # the engine loads what was written
    return dst


__all__ = ["calibration_planes", "float_tail", "follows_float", "quantize_model"]
