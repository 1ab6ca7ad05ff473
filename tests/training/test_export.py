import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from click.testing import CliRunner
from onnx import numpy_helper

from goengine.models.metadata import EXPECTED, KEYS, ModelMetadata
from goengine.training.nets import networks as nets
from goengine.training.nets.export import (ExportError, export_onnx, flush_denormals_file,
                                           run_torch)
from goengine.training.export.cli import flush_denormals_command

VARIANTS = [
    ("policy", "cpu", {}),
    ("policy", "paper", {}),
    ("value", "cpu", {}),
    ("value", "paper", {}),
    ("value", "cpu", dict(head="fc", board_size=9)),
    ("zero", "cpu", {}),
    ("zero", "paper", {}),
    ("zero", "cpu", dict(policy_head="fc", value_head="fc", value_channels=1, board_size=9)),
]


def _session(path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("kind,preset,overrides", VARIANTS,
                         ids=[f"{k}-{p}{'-fixed' if o else ''}" for k, p, o in VARIANTS])
def test_export_parity_in_onnxruntime(tmp_path, kind, preset, overrides):
    net = nets.build(kind, preset, **overrides)
    path = tmp_path / f"{kind}.onnx"
    export_onnx(net, kind, path, {"training_data": "random init"})
    session = _session(path)
    sizes = [net.fixed_board_size] if net.fixed_board_size else [9, 13, 19]
    for n in sizes:   # parity checked again here, independently of export's own check
        x = np.random.default_rng(n).integers(0, 2, (4, net.config["planes"], n, n))
        x = x.astype(np.float32)
        got = session.run(None, {"planes": x})
        want = run_torch(net, x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, atol=1e-4, rtol=0)


def test_metadata_reads_back(tmp_path):
    net = nets.build("zero", "cpu", blocks=1, filters=8)
    path = tmp_path / "zero.onnx"
    props = export_onnx(net, "zero", path, {"training_data": "selfplay run 7",
                                            "heldout_top1": "0.41", "komi": 7.0})
    read = _session(path).get_modelmeta().custom_metadata_map
    assert read == props and set(read) == set(KEYS) - {"quantization"}   # float weights
    meta = ModelMetadata.from_props(read)
    meta.check(kind="zero", feature_set="zero17")
    assert meta.feature_version == EXPECTED["zero17"] and meta.planes == 17
    assert read["komi"] == "7" and meta.learned_komi == 7.0
    export_onnx(net, "zero", path, {})                   # no komi given: the file says none
    assert ModelMetadata.from_props(_session(path).get_modelmeta().custom_metadata_map
                                    ).learned_komi is None
    assert meta.board_sizes == (9, 13, 19)
    assert meta.value_perspective == "side_to_move" and meta.policy_index == "row_major+pass"
    assert meta.sha256 == nets.weights_sha256(net)
    assert meta.training_data == "selfplay run 7" and meta.heldout_top1 == "0.41"
    assert json.loads(meta.net_config) == net.config
    assert nets.from_config(json.loads(meta.net_config)).config == net.config


def test_fixed_size_export_says_so(tmp_path):
    net = nets.build("value", "cpu", head="fc", board_size=9, layers=3, filters=8)
    props = export_onnx(net, "value", tmp_path / "v.onnx", {"board_sizes": "9,13,19"})
    assert props["board_sizes"] == "9" and props["policy_index"] == "none"
    shape = _session(tmp_path / "v.onnx").get_inputs()[0].shape
    assert shape[1:] == [49, 9, 9] and isinstance(shape[0], str)


def test_failed_parity_writes_nothing(tmp_path):
    net = nets.build("policy", "cpu", layers=3, filters=8)
    with pytest.raises(ExportError, match="differs from torch"):
        export_onnx(net, "policy", tmp_path / "p.onnx", {}, atol=-1.0)
    assert list(tmp_path.iterdir()) == []


def test_export_replaces_atomically(tmp_path):
    path = tmp_path / "p.onnx"
    first = export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", path, {})
    second = export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", path, {})
    assert first["sha256"] != second["sha256"]
    assert _session(path).get_modelmeta().custom_metadata_map["sha256"] == second["sha256"]
    assert [p.name for p in tmp_path.iterdir()] == ["p.onnx"]


def test_export_refuses_derived_or_unknown_keys(tmp_path):
    net = nets.build("policy", "cpu", layers=3, filters=8)
    for key in ("sha256", "planes", "colour"):
        with pytest.raises(ValueError, match="metadata keys"):
            export_onnx(net, "policy", tmp_path / "p.onnx", {key: "x"})
    with pytest.raises(ValueError, match="cannot export"):
        export_onnx(net, "rollout", tmp_path / "p.onnx", {})


def test_export_keeps_training_mode(tmp_path):
    net = nets.build("zero", "cpu", blocks=1, filters=8)
    net.train()
    export_onnx(net, "zero", tmp_path / "z.onnx", {})
    assert net.training


def _subnormal(path) -> int:
    tiny = np.finfo(np.float32).tiny
    return sum(int(((w != 0) & (np.abs(w) < tiny)).sum())
               for w in (numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer)
               if w.dtype == np.float32)


def _with_subnormal_weights(net, count: int = 200):
    """The first conv's weights: `count` of them subnormal, as a long run's weight decay makes."""
    w = next(p for p in net.parameters() if p.dim() == 4)
    with torch.no_grad():
        w.view(-1)[:count] = torch.full((count,), 1e-40)
    assert int((w.abs() < np.finfo(np.float32).tiny).sum()) >= count
    return net


def test_export_writes_no_subnormal_weights(tmp_path):
    """Subnormal weights make a CPU 5-20x slower per evaluation; the exported file has them as
    zeros and still reproduces the net (the parity check)."""
    net = _with_subnormal_weights(nets.build("zero", "cpu", blocks=1, filters=8))
    path = tmp_path / "zero.onnx"
    export_onnx(net, "zero", path, {})
    assert _subnormal(path) == 0


def test_flush_denormals_rewrites_an_older_file_the_same(tmp_path):
    net = _with_subnormal_weights(nets.build("zero", "cpu", blocks=1, filters=8))
    path = tmp_path / "old.onnx"
    export_onnx(net, "zero", path, {"komi": 7})
    proto = onnx.load(str(path))               # as an export before the flush wrote it
    init = max((i for i in proto.graph.initializer if i.data_type == onnx.TensorProto.FLOAT),
               key=lambda i: int(np.prod(i.dims)))          # a conv's weights
    w = numpy_helper.to_array(init).copy()
    w.reshape(-1)[:200] = np.float32(1e-40)
    init.CopyFrom(numpy_helper.from_array(w, init.name))
    onnx.save(proto, str(path))
    assert _subnormal(path) == 200
    x = np.random.default_rng(0).integers(0, 2, (4, 17, 9, 9)).astype(np.float32)
    before = _session(path).run(None, {"planes": x})
    meta_before = _session(path).get_modelmeta().custom_metadata_map
    result = CliRunner().invoke(flush_denormals_command, [str(path)])
    assert result.exit_code == 0 and "200 subnormal weights set to zero" in result.output
    assert _subnormal(path) == 0
    assert _session(path).get_modelmeta().custom_metadata_map == meta_before
    for a, b in zip(before, _session(path).run(None, {"planes": x})):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=0)
    assert flush_denormals_file(path) == 0                          # nothing left to do
    bad = tmp_path / "bad.onnx"
    bad.write_text("not a model")
    result = CliRunner().invoke(flush_denormals_command, [str(bad)])
    assert result.exit_code == 1 and "not a readable ONNX model" in result.output
