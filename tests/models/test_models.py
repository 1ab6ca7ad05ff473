"""models/: loading and checking model files (metadata, session, store)."""
import onnx
import pytest

from goengine.engine.features import FEATURE_SETS
from goengine.models import store
from goengine.models.metadata import EXPECTED, ROLE_KINDS, ModelError, ModelMetadata
from goengine.models.session import load_session
from goengine.training.nets import networks as nets
from goengine.training.nets.export import export_onnx


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    out = {}
    out["policy"] = d / "policy.onnx"
    export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", out["policy"], {})
    out["zero"] = d / "zero.onnx"
    export_onnx(nets.build("zero", "cpu", blocks=1, filters=8), "zero", out["zero"], {})
    out["future"] = d / "future.onnx"
    export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", out["future"],
                {"feature_version": EXPECTED["alphago48"] + 1})
    return out


def _rewrite_props(src, dst, **changes):
    """Copy an ONNX file with some metadata_props changed (value None deletes the key)."""
    proto = onnx.load(str(src))
    props = {p.key: p.value for p in proto.metadata_props}
    props.update(changes)
    del proto.metadata_props[:]
    onnx.helper.set_model_props(proto, {k: v for k, v in props.items() if v is not None})
    onnx.save(proto, str(dst))
    return dst


def test_load_session_reports_provider(files, capsys):
    model = load_session(files["zero"], 1, kind="zero", feature_set="zero17")
    assert model.provider == "CPUExecutionProvider"
    assert model.meta.kind == "zero" and model.meta.planes == 17
    assert model.input_name == "planes" and model.output_names == ("policy_logits", "value")
    assert model.fixed_size is None
    assert "CPUExecutionProvider" in capsys.readouterr().err


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="no such model file"):
        load_session(tmp_path / "nothing.onnx", 1)


def test_text_file_named_onnx(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("this is not a network\n")
    with pytest.raises(ModelError, match="not a readable ONNX model"):
        load_session(path, 1)


def test_truncated_file(files, tmp_path):
    data = files["policy"].read_bytes()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="not a readable ONNX model"):
        load_session(path, 1)


def test_feature_version_mismatch(files):
    with pytest.raises(ModelError, match="version 2.*version 1"):
        load_session(files["future"], 1)


def test_wrong_kind_or_feature_set(files):
    with pytest.raises(ModelError, match="is a 'policy' model, expected 'zero'"):
        load_session(files["policy"], 1, kind="zero")
    with pytest.raises(ModelError, match="uses feature set 'alphago48'"):
        load_session(files["policy"], 1, feature_set="alphago49")


def test_roles_a_zero_network_can_fill(files):
    """A dual-head Zero network may be the AlphaGo search's policy or value (ROLE_KINDS); a policy
    network is still no value network, nor a value network a Zero one."""
    for role in ("policy", "value", "zero"):
        assert load_session(files["zero"], 1, kind=ROLE_KINDS[role]).meta.kind == "zero"
    with pytest.raises(ModelError, match="is a 'policy' model, expected 'value' or 'zero'"):
        load_session(files["policy"], 1, kind=ROLE_KINDS["value"])


def test_missing_or_foreign_metadata(files, tmp_path):
    bare = _rewrite_props(files["policy"], tmp_path / "bare.onnx", feature_set=None, sha256=None)
    with pytest.raises(ModelError, match="lacks feature_set, sha256"):
        load_session(bare, 1)
    odd = _rewrite_props(files["policy"], tmp_path / "odd.onnx", feature_set="katago22")
    with pytest.raises(ModelError, match="unknown feature set 'katago22'"):
        load_session(odd, 1)
    bad = _rewrite_props(files["policy"], tmp_path / "bad.onnx", planes="many")
    with pytest.raises(ModelError, match="malformed metadata"):
        load_session(bad, 1)
    komi = _rewrite_props(files["zero"], tmp_path / "komi.onnx", komi="seven")
    with pytest.raises(ModelError, match="malformed metadata"):
        load_session(komi, 1)
    persp = _rewrite_props(files["zero"], tmp_path / "persp.onnx", value_perspective="black")
    with pytest.raises(ModelError, match="value_perspective"):
        load_session(persp, 1)


def test_wrong_input_shape(files, tmp_path):
    # metadata claims alphago49 (49 planes), the graph takes 48
    path = _rewrite_props(files["policy"], tmp_path / "shape.onnx",
                          feature_set="alphago49", planes="49")
    with pytest.raises(ModelError, match=r"expected float32\[B, 49, N, N\]"):
        load_session(path, 1)


def test_expected_versions_come_from_the_feature_registry():
    assert EXPECTED == {name: fs.version for name, fs in FEATURE_SETS.items()}
    assert {"alphago48", "alphago49", "zero17"} <= set(EXPECTED)


def test_metadata_check_planes():
    props = dict(kind="policy", feature_set="alphago48", feature_version="1", planes="17",
                 board_sizes="19", value_perspective="side_to_move", policy_index="row_major",
                 sha256="0" * 64)
    meta = ModelMetadata.from_props(props)
    with pytest.raises(ModelError, match="17 planes"):
        meta.check()


def test_store_paths_and_checksums(files, tmp_path):
    assert store.default_path("zero").name == "zero.onnx"
    assert store.default_path("zero").parent == store.BUNDLED_DIR
    with pytest.raises(ValueError):
        store.default_path("go-board")
    path = tmp_path / "zero.onnx"
    path.write_bytes(files["zero"].read_bytes())
    with pytest.raises(ModelError, match="not listed"):
        store.bundled("zero", tmp_path)
    digest = store.record(path)
    assert store.read_checksums(tmp_path) == {"zero.onnx": digest}
    assert store.bundled("zero", tmp_path) == path
    load_session(store.bundled("zero", tmp_path), 1, kind="zero")
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(ModelError, match="does not match"):
        store.bundled("zero", tmp_path)
    with pytest.raises(ModelError, match="no such model file"):
        store.bundled("policy", tmp_path)
