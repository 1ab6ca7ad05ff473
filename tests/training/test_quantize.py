"""int8 static quantization (training.export.quantize): the file the engine loads, its metadata, and
outputs that follow the float model's, calibrated on real positions from tests/data."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402

from goengine.gtp.config import EngineConfig, load_file  # noqa: E402

from goengine.models.session import load_session  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402
from goengine.models.metadata import ModelError  # noqa: E402
from goengine.training.export import quantize  # noqa: E402
from goengine.training.export.cli import quantize_command  # noqa: E402
from goengine.training.export.quantize import (calibration_planes, float_tail,  # noqa: E402
                                               follows_float, quantize_model)

GAMES = Path(__file__).parents[1] / "data" / "games" / "tygem9d-2015-05"


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    """A small trained-looking policy: random weights, exported as the engine's policy files are."""
    d = tmp_path_factory.mktemp("q")
    torch.manual_seed(0)
    net = nets.build("policy", "cpu", layers=3, filters=16)
    export_onnx(net, "policy", d / "policy.onnx", {"training_data": "random weights"})
    return d / "policy.onnx"


def test_calibration_planes_are_the_engine_features_of_real_games():
    planes = calibration_planes([GAMES], "alphago48", count=64, every=5)
    assert planes.shape == (64, 48, 19, 19) and planes.dtype == np.float32
    assert set(np.unique(planes)) <= {0.0, 1.0}
    assert planes[:, 3].sum() > 0                     # the all-ones plane of alphago48


def test_quantized_policy_loads_keeps_metadata_and_follows_the_float_outputs(policy, tmp_path):
    planes = calibration_planes([GAMES], "alphago48", count=128, every=3)
    out = quantize_model(policy, tmp_path / "policy.int8.onnx", planes, "int8 test")
    props = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    float_props = {p.key: p.value for p in onnx.load(str(policy)).metadata_props}
    assert props == {**float_props, "quantization": "int8 test"}
    ops = {n.op_type for n in onnx.load(str(out)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    q, f = load_session(out), load_session(policy)
    assert q.meta.quantization == "int8 test" and f.meta.quantization == ""
    x = planes[:32]
    a = f.session.run(None, {f.input_name: x})[0]
    b = q.session.run(None, {q.input_name: x})[0]
    corr = [np.corrcoef(a[i], b[i])[0, 1] for i in range(len(x))]
    assert min(corr) > 0.95
    assert out.stat().st_size < policy.stat().st_size


@pytest.fixture(scope="module")
def outlier_policy(tmp_path_factory):
    """A policy whose last convolution has one channel at 10,000 that the head ignores: as in a
    long-trained net without batch norm, one uint8 range for the whole tensor then leaves every
    other channel no resolution, although the float outputs never see that channel."""
    d = tmp_path_factory.mktemp("q_outlier")
    torch.manual_seed(1)
    net = nets.build("policy", "cpu", layers=3, filters=16)
    first, last = net.trunk[0], net.trunk[2]
    with torch.no_grad():
        first.weight[0] = 0.0
        first.weight[0, 3, 2, 2] = 1.0            # channel 0 = alphago48's all-ones plane
        first.bias[0] = 0.0
        last.weight[0] = 0.0
        last.weight[0, 0, 1, 1] = 1e4
        last.bias[0] = 0.0
        net.head.weight[0, 0] = 0.0
    export_onnx(net, "policy", d / "policy.onnx", {"training_data": "planted outlier"})
    return d / "policy.onnx"


def test_float_tail_is_the_last_convolutions_and_what_follows(policy):
    model = onnx.load(str(policy))
    names = [n.name for n in model.graph.node]
    convs = [n.name for n in model.graph.node if n.op_type == "Conv"]
    assert float_tail(model, 0) == []
    assert float_tail(model, 1) == names[names.index(convs[-1]):]
    assert float_tail(model, 2) == names[names.index(convs[-2]):]
    assert float_tail(model, 99) == names[names.index(convs[0]):]


def test_follows_float_judges_policy_agreement_and_value_error():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(100, 81)).astype(np.float32)
    value = rng.uniform(-1, 1, size=(100, 1)).astype(np.float32)
    names = ["policy_logits", "value"]
    assert follows_float(names, [logits, value], [logits + 1e-4, value + 0.01])[0]
    shuffled = logits[:, rng.permutation(81)]
    ok, how = follows_float(names, [logits, value], [shuffled, value])
    assert not ok and "policy_logits top-1 agreement" in how
    ok, how = follows_float(names, [logits, value], [logits, -value])
    assert not ok and "value relative error" in how


def test_activation_outliers_keep_the_last_convolutions_float(outlier_policy, tmp_path,
                                                               monkeypatch):
    planes = calibration_planes([GAMES], "alphago48", count=128, every=3)
    out = quantize_model(outlier_policy, tmp_path / "p.int8.onnx", planes, "int8 test")
    said = load_session(out).meta.quantization
    assert said.startswith("int8 test; the last ") and "in float (activation outliers)" in said
    # on positions it was not calibrated on it follows the float model too: the quantizer's own
    # threshold, less two standard errors of an agreement of 0.85 measured on 128 positions
    # (onnxruntime's int8 kernels differ between CPUs by a position or two here: 54 of 64 on an
    # AMD EPYC with AVX2 alone)
    held = calibration_planes([GAMES], "alphago48", count=128, every=5)[::-1].copy()
    f, q = load_session(outlier_policy), load_session(out)
    a = f.session.run(None, {f.input_name: held})[0]
    b = q.session.run(None, {q.input_name: held})[0]
    margin = 2 * (0.85 * 0.15 / len(held)) ** 0.5
    assert (a.argmax(1) == b.argmax(1)).mean() >= quantize.MIN_TOP1_AGREEMENT - margin
    # the whole network in int8 strays: with no float tail allowed the model is refused
    monkeypatch.setattr(quantize, "MAX_FLOAT_CONVOLUTIONS", 0)
    with pytest.raises(ModelError, match="does not follow the float one"):
        quantize_model(outlier_policy, tmp_path / "p2.int8.onnx", planes, "int8 test")
    r = CliRunner().invoke(quantize_command, ["--model", str(outlier_policy), "--sgf", str(GAMES),
                                              "--out", str(tmp_path / "p3.onnx")])
    assert r.exit_code == 1 and "does not follow the float one" in r.output
    assert not (tmp_path / "p2.int8.onnx").exists() and not (tmp_path / "p3.onnx").exists()


def test_quantize_command_and_bad_input(policy, tmp_path):
    runner = CliRunner()
    out = tmp_path / "p8.onnx"
    r = runner.invoke(quantize_command, ["--model", str(policy), "--sgf", str(GAMES),
                                         "--out", str(out), "--positions", "32"])
    assert r.exit_code == 0, r.output
    assert "32 19x19 calibration positions" in r.output and load_session(out)
    r = runner.invoke(quantize_command, ["--model", str(policy), "--sgf", str(GAMES),
                                         "--out", str(out), "--size", "9"])
    assert r.exit_code == 2 and "no 9x9 positions" in r.output
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    r = runner.invoke(quantize_command, ["--model", str(bad), "--sgf", str(GAMES),
                                         "--out", str(out)])
    assert r.exit_code == 1 and "not a readable ONNX model" in r.output


# ---- which file the engine loads -------------------------------------------------------------

def test_load_file_prefers_the_int8_twin_on_the_cpu_only(tmp_path):
    (tmp_path / "policy.onnx").write_bytes(b"f")
    cfg = EngineConfig(search="policy", model_dir=str(tmp_path))
    assert load_file(cfg, "policy", on_cpu=True) == str(tmp_path / "policy.onnx")   # no twin yet
    (tmp_path / "policy.int8.onnx").write_bytes(b"q")
    assert load_file(cfg, "policy", on_cpu=True) == str(tmp_path / "policy.int8.onnx")
    assert load_file(cfg, "policy", on_cpu=False) == str(tmp_path / "policy.onnx")   # a GPU
    fp32 = EngineConfig(search="policy", model_dir=str(tmp_path), model_precision="fp32")
    assert load_file(fp32, "policy", on_cpu=True) == str(tmp_path / "policy.onnx")
    named = EngineConfig(search="policy", policy_file=str(tmp_path / "policy.onnx"))
    assert load_file(named, "policy", on_cpu=True) == str(tmp_path / "policy.onnx")


def test_engine_plays_with_the_int8_file_and_refuses_a_missing_one(policy, tmp_path, gtp_engine,
                                                                    repo_root):
    d = tmp_path / "models"
    d.mkdir()
    shutil.copy(policy, d / "policy.onnx")
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--search", "policy",
                           "--model-dir", str(d), "--model-precision", "int8"],
                          capture_output=True, cwd=repo_root, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and b"policy.int8.onnx" in proc.stderr
    planes = calibration_planes([GAMES], "alphago48", count=32)
    quantize_model(policy, d / "policy.int8.onnx", planes, "int8 test")
    for precision, loaded in (("auto", "policy.int8.onnx"), ("fp32", "policy.onnx")):
        with gtp_engine("--search", "policy", "--model-dir", str(d), "--size", "9",
                        "--model-precision", precision, quiet=False) as e:
            assert re.fullmatch(r"[A-HJ]\d|pass", e.ok("genmove b", timeout=60))
            log = "\n".join(e.stderr_lines)
        assert re.search(rf"loading policy model \S*/{re.escape(loaded)}\b", log), log[-2000:]
