"""engine-gtp with the network searches (--search zero | alphago | policy) on tiny untrained nets."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")

from goengine.models.session import CPU, providers  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402

VERTEX = re.compile(r"[A-HJ-T](1\d|[1-9])|pass")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("gtp-models")
    for kind, net in (("zero", nets.build("zero", "cpu", blocks=1, filters=8, value_channels=2, fc=8)),
                      ("policy", nets.build("policy", "cpu", layers=3, filters=8))):
        export_onnx(net, kind, d / f"{kind}.onnx", {})
    value9 = nets.build("value", "cpu", layers=3, filters=8, fc=8, head="fc", board_size=9)
    export_onnx(value9, "value", d / "value.onnx", {})    # runs on 9x9 only
    return d


def _play_a_little(e, sabaki_parse, timeout: float = 60) -> None:
    e.ok("boardsize 9", timeout=timeout)
    move = e.ok("genmove b", timeout=timeout)
    assert VERTEX.fullmatch(move), move
    line = e.analyze_once("W")
    assert sabaki_parse(line, kata=False), line


@pytest.mark.parametrize("search", ["zero", "alphago", "policy"])
def test_network_search_plays_and_analyses(model_dir, search, gtp_engine, sabaki_parse):
    with gtp_engine("--search", search, "--model-dir", str(model_dir), "--playouts", "24") as e:
        t0 = time.monotonic()
        assert e.ask("name", timeout=5) == ("=", "goengine")
        assert time.monotonic() - e.started < 1.0 or time.monotonic() - t0 < 1.0
        _play_a_little(e, sabaki_parse)
        assert e.ok("final_status_list dead", timeout=60) == ""
        assert re.fullmatch(r"[BW]\+\d+(\.5)?|0", e.ok("final_score", timeout=60))


def test_a_fixed_size_model_refuses_other_sizes(model_dir, gtp_engine):
    with gtp_engine("--search", "alphago", "--model-dir", str(model_dir), "--size", "9",
                    "--playouts", "16") as e:
        assert e.fails("boardsize 19", timeout=60) == "unacceptable size"
        e.ok("boardsize 9")
        assert VERTEX.fullmatch(e.ok("genmove w", timeout=60))


def test_missing_models_are_a_command_line_error(tmp_path, repo_root):
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--search", "zero", "--model-dir",
                           str(tmp_path)], capture_output=True, cwd=repo_root, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert b"needs a zero model" in proc.stderr


def test_a_network_file_plays_without_a_model_directory(model_dir, tmp_path, gtp_engine, repo_root):
    """--policy / --zero FILE, as Leela Zero's -w and KataGo's -model: any exported network, from
    anywhere; --zero alone picks the Zero search."""
    own = tmp_path / "my-rl-policy.onnx"
    own.write_bytes((model_dir / "policy.onnx").read_bytes())
    with gtp_engine("--search", "policy", "--policy", str(own), "--size", "9") as e:
        assert e.ok("version").endswith("(policy)")
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=60))
    zero = tmp_path / "gen-3.onnx"
    zero.write_bytes((model_dir / "zero.onnx").read_bytes())
    with gtp_engine("--zero", str(zero), "--size", "9", "--playouts", "16") as e:
        assert e.ok("version").endswith("(zero)")
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=60))
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--policy",
                           str(tmp_path / "missing.onnx")], capture_output=True, cwd=repo_root,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and b"missing.onnx" in proc.stderr


def test_an_unreadable_network_file_is_one_log_line_and_answers_question_marks(tmp_path, repo_root):
    """A file that is no ONNX model: the server stays up, says why in one log line (no
    traceback), answers `?` to what needs the engine and goes on answering the rest."""
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(bytes(range(256)) * 20)
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--search", "policy",
                           "--policy", str(bad), "--size", "9"], capture_output=True,
                          cwd=repo_root, timeout=60, input=b"1 genmove b\n2 name\n3 quit\n")
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "?1 engine failed to load: ModelError" in out and "bad.onnx" in out
    assert "=2 goengine" in out and "=3" in out
    assert "loading the player failed" in err and "Traceback" not in err


def test_alphago_analysis_shows_value_and_rollout_parts(model_dir, gtp_engine, sabaki_parse):
    """kata-analyze of the AlphaGo search: the value network's and the rollouts' win rates of each
    move, apart (valueWinrate, rolloutWinrate), and the line still parses as Sabaki reads it."""
    with gtp_engine("--search", "alphago", "--model-dir", str(model_dir), "--size", "9",
                    "--n-thr", "1") as e:
        e.ok("boardsize 9", timeout=60)
        e.send("kata-analyze B 20\n")
        assert e.line(timeout=60) == "=\n"
        line = ""
        for _ in range(50):
            line = e.line(timeout=10)
            if "valueWinrate" in line and "rolloutWinrate" in line:
                break
        e.send("protocol_version\n")
        while e.line(timeout=5) != "\n":
            pass
        assert e.response() == ("=", "2")
        assert sabaki_parse(line, kata=True), line
        block = line.split("info ")[1].split()
        values = dict(zip(block[0::2], block[1::2]))
        assert 0 <= float(values["valueWinrate"]) <= 1 and 0 <= float(values["rolloutWinrate"]) <= 1


BUNDLED = os.path.join(os.path.dirname(__file__), "..", "..", "models", "bundled")


@pytest.mark.skipif(not os.path.isfile(os.path.join(BUNDLED, "policy.onnx")),
                    reason="no bundled policy model")
def test_default_engine_loads_the_bundled_models_and_covers_every_size(gtp_engine):
    """No options: the AlphaGo search on the bundled models; sizes the models were not made for
    are played by the heuristic MCTS instead of being refused."""
    with gtp_engine("--time-per-move", "0.3", quiet=False) as e:
        e.ok("boardsize 9", timeout=60)
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=60))
        e.ok("boardsize 7", timeout=60)
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=60))
        log = "\n".join(e.stderr_lines)
        # the int8 twins where onnxruntime runs on the CPU (--model-precision auto)
        expected = "policy.int8.onnx" if providers() == [CPU] else "/policy.onnx"
        assert "search alphago" in log and expected in log
    with gtp_engine("--search", "alphago", "--playouts", "8") as e:
        assert e.fails("boardsize 7", timeout=60) == "unacceptable size"
