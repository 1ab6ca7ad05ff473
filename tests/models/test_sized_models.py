"""Networks made for one board size (models.by_size, models.names' SIZED_MODEL_FILES): the 9x9
Zero network answers 9x9 positions, the default network every other size, for the evaluator, the
search's heads, the engine's model files and a real engine-gtp process."""
import os
import re
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")


from goengine.engine.evaluator import feature_set_for  # noqa: E402
from goengine.engine.features import extract  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.engine.search.zero import ZeroSearch  # noqa: E402
from goengine.gtp.config import (MAX_DEFAULT_THREADS, EngineConfig, check_search,  # noqa: E402
                                 network_threads, resolve_auto_search, sized_load_files)
from goengine.models.by_size import BySizeEvaluator  # noqa: E402
from goengine.models.metadata import ModelError  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402


def export_zero(path, seed: int, sizes: str, **heads):
    torch.manual_seed(seed)
    net = nets.build("zero", "cpu", blocks=1, filters=8, **heads)
    export_onnx(net, "zero", path, {"training_data": "random weights", "board_sizes": sizes},
                board_size=int(sizes.split(",")[0]))
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A model folder as the engine reads it: zero.onnx (every size, no heads) and zero-9x9.onnx
    (9x9 only, with ownership and score heads), two different random nets."""
    d = tmp_path_factory.mktemp("sized")
    export_zero(d / "zero.onnx", 0, "9,13,19")
    export_zero(d / "zero-9x9.onnx", 1, "9", ownership=True, score=True)
    return d


def planes(game):
    return extract(game, "zero17")[None].astype(np.float32)


def test_each_size_is_answered_by_its_network(models):
    default = OnnxEvaluator(models / "zero.onnx", symmetry="none", cache_size=0)
    nine = OnnxEvaluator(models / "zero-9x9.onnx", symmetry="none", cache_size=0)
    ev = BySizeEvaluator(default, {9: nine})
    assert ev.meta.board_sizes == (9, 13, 19) and ev.for_size(9) is nine
    for size, answers, other in ((9, nine, default), (13, default, nine)):
        x = planes(Game(size))
        got = ev.evaluate(x)
        np.testing.assert_array_equal(got.priors, answers.evaluate(x).priors)
        assert not np.allclose(got.priors, other.evaluate(x).priors)   # the nets do differ
    assert ev.evaluate(planes(Game(9))).score is not None      # the 9x9 net's heads come along
    assert ev.evaluate(planes(Game(13))).score is None


def test_mismatched_networks_are_refused(models, tmp_path):
    default = OnnxEvaluator(models / "zero.onnx")
    with pytest.raises(ModelError, match="made for sizes"):      # a 9x9 net named for 13x13
        BySizeEvaluator(default, {13: OnnxEvaluator(models / "zero-9x9.onnx")})
    torch.manual_seed(0)
    policy = nets.build("policy", "cpu", layers=3, filters=8)
    export_onnx(policy, "policy", tmp_path / "policy.onnx", {"training_data": "random weights"})
    with pytest.raises(ModelError, match=r"9x9 network \(policy\) has no value output"):
        BySizeEvaluator(default, {9: OnnxEvaluator(tmp_path / "policy.onnx")})
    # a network on other planes may fill the role: the 9x9 Zero net as a value network's twin
    value = nets.build("value", "cpu", layers=3, filters=8, fc=8)
    export_onnx(value, "value", tmp_path / "value.onnx", {"training_data": "random weights"})
    mixed = BySizeEvaluator(OnnxEvaluator(tmp_path / "value.onnx"),
                            {9: OnnxEvaluator(models / "zero-9x9.onnx")})
    assert feature_set_for(mixed, 9, "?") == "zero17" and feature_set_for(mixed, 13, "?") == "alphago49"


def test_the_search_uses_the_size_network_and_its_heads(models):
    default = OnnxEvaluator(models / "zero.onnx", cache_size=0)
    nine = OnnxEvaluator(models / "zero-9x9.onnx", cache_size=0)
    search = ZeroSearch(NetSearchConfig(mode="zero", score_utility=0.3),
                        net=BySizeEvaluator(default, {9: nine}), seed=1)
    g9 = Game(9)
    result = search.search(g9, g9.to_play, playouts=32)
    assert nine.runs > 0 and default.runs == 0
    assert result.score_lead_black is not None                 # the 9x9 net's score head answered
    assert search.head_ownership(g9).shape == (9, 9)
    runs = nine.runs
    g13 = Game(13)
    result = search.search(g13, g13.to_play, playouts=32)
    assert default.runs > 0 and nine.runs == runs
    assert search.head_ownership(g13) is None             # the default net has no heads


def test_model_folder_files_and_precision(models, tmp_path):
    d = tmp_path / "m"
    shutil.copytree(models, d)
    cfg = EngineConfig(search="zero", model_dir=str(d))
    assert sized_load_files(cfg, "zero", on_cpu=True) == {9: str(d / "zero-9x9.onnx")}
    named = EngineConfig(search="zero", model_dir=str(d), zero_file=str(d / "zero.onnx"))
    assert sized_load_files(named, "zero", on_cpu=True) == {}          # a named file plays all
    int8 = EngineConfig(search="zero", model_dir=str(d), model_precision="int8")
    shutil.copy(d / "zero.onnx", d / "zero.int8.onnx")          # stand-in twin of the default
    assert "zero-9x9.int8.onnx" in check_search(int8)            # the size's twin is missing
    shutil.copy(d / "zero-9x9.onnx", d / "zero-9x9.int8.onnx")
    assert check_search(int8) is None
    assert sized_load_files(cfg, "zero", on_cpu=True) == {9: str(d / "zero-9x9.int8.onnx")}
    assert sized_load_files(cfg, "zero", on_cpu=False) == {9: str(d / "zero-9x9.onnx")}


def test_engine_plays_9x9_with_the_9x9_network(models, gtp_engine):
    with gtp_engine("--search", "zero", "--model-dir", str(models), "--size", "9",
                    "--playouts", "16", quiet=False) as e:
        assert re.fullmatch(r"[A-HJ]\d|pass", e.ok("genmove b", timeout=60))
        e.ok("boardsize 13")
        e.ok("clear_board")
        assert re.fullmatch(r"[A-HJ-N]\d+|pass", e.ok("genmove b", timeout=60))
        log = "\n".join(e.stderr_lines)
    assert re.search(r"loading zero model \S*/zero-9x9\.onnx\b", log), log[-2000:]
    assert re.search(r"loading zero model \S*/zero\.onnx\b", log), log[-2000:]
    # the Zero search calls its network on its own thread: every core of the machine helps
    cores = min(os.cpu_count() or 1, MAX_DEFAULT_THREADS)
    assert re.search(rf"zero-9x9\.onnx \(zero, zero17\) on \w+, {cores} thread\(s\)", log), \
        log[-2000:]


def test_auto_search_plays_each_sized_network_with_the_zero_search(models, tmp_path, gtp_engine):
    """--search auto: the AlphaGo search (or the heuristic MCTS without its models) on every
    size, except where a Zero network is made for the size: there the Zero search with it."""
    auto = resolve_auto_search(EngineConfig(model_dir=str(models)))
    assert (auto.search, auto.zero_sizes, auto.auto_search) == ("heuristic", (9,), True)
    bundled = resolve_auto_search(EngineConfig())
    assert (bundled.search, bundled.zero_sizes) == ("alphago", (9,))
    named = resolve_auto_search(EngineConfig(zero_file=str(models / "zero-9x9.onnx")))
    assert (named.search, named.zero_sizes) == ("zero", ())
    d = tmp_path / "m"
    shutil.copytree(models, d)
    (d / "zero-9x9.onnx").unlink()
    assert resolve_auto_search(EngineConfig(model_dir=str(d))).zero_sizes == ()
    # int8 asked for and no twin of the 9x9 network: it is not played rather than refused
    shutil.copy(models / "zero-9x9.onnx", d / "zero-9x9.onnx")
    assert resolve_auto_search(EngineConfig(model_dir=str(d), model_precision="int8")) \
        .zero_sizes == ()
    with gtp_engine("--model-dir", str(models), "--size", "9", "--playouts", "16") as e:
        assert e.ok("version").endswith("(heuristic, zero on 9x9)")
        assert e.ok("kata-get-param mode", timeout=120) == "zero"
        assert re.fullmatch(r"[A-HJ]\d|pass", e.ok("genmove b", timeout=60))
        e.ok("boardsize 13")
        e.ok("clear_board")
        e.fails("kata-get-param mode")             # the heuristic MCTS has no network mode
        assert re.fullmatch(r"[A-HJ-N]\d+|pass", e.ok("genmove b", timeout=60))


def test_default_engine_plays_9x9_with_the_zero_search(gtp_engine):
    """The bundled models under --search auto: 9x9 with the Zero search and zero-9x9.onnx (the
    stronger there), 13x13 and 19x19 with the AlphaGo search; a parameter set on one size holds
    on the others, and each size's search answers with its own settings."""
    with gtp_engine("--size", "19", "--playouts", "16", quiet=False) as e:
        assert e.ok("version").endswith("(alphago, zero on 9x9)")
        assert e.ok("kata-get-param mode", timeout=120) == "alphago"
        e.ok("kata-set-param maxVisits 40")
        assert e.ok("kata-get-param c_puct") == "5.0"
        for size, mode, c_puct in ((9, "zero", "1.5"), (13, "alphago", "5.0")):
            e.ok(f"boardsize {size}")
            e.ok("clear_board")
            assert e.ok("kata-get-param mode") == mode
            assert e.ok("kata-get-param c_puct") == c_puct
            assert e.ok("kata-get-param visits") == "40"
            assert e.ok("genmove b", timeout=60) != "resign"
        log = "\n".join(e.stderr_lines)
    assert re.search(r"9x9: the Zero search with \S*zero-9x9(\.int8)?\.onnx", log), log[-2000:]


def test_network_threads_by_search():
    cores = min(os.cpu_count() or 1, MAX_DEFAULT_THREADS)
    assert network_threads(EngineConfig(search="zero")) == cores
    assert network_threads(EngineConfig(search="policy")) == cores
    assert network_threads(EngineConfig(search="alphago")) == 1     # its rollouts take a core
    assert network_threads(EngineConfig(search="alphago", threads=3)) == 3
    assert network_threads(EngineConfig(search="zero", threads=1)) == 1
    assert network_threads(EngineConfig(search="alphago"), "zero") == cores   # auto's 9x9
