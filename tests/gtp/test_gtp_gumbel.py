"""engine-gtp --gumbel: the Zero search's Gumbel root over a real engine process on the bundled
9x9 Zero network; bad values are usage errors or GTP errors."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from goengine.models.names import BUNDLED_DIR

VERTEX = re.compile(r"[A-HJ-T][1-9]|pass")
ZERO9 = str(BUNDLED_DIR / "zero-9x9.int8.onnx")


def test_gumbel_plays_legal_moves_and_analyses(gtp_engine, sabaki_parse):
    with gtp_engine("--zero", ZERO9, "--size", "9", "--gumbel", "--gumbel-k", "4",
                    "--playouts", "16", "--seed", "3") as e:
        e.ok("boardsize 9", timeout=120)
        assert e.ok("goengine-get_param gumbel", timeout=120) == "1"
        assert e.ok("goengine-get_param gumbel_k") == "4"
        played = set()
        for colour in "bwbwbw":
            move = e.ok(f"genmove {colour}", timeout=60)
            assert VERTEX.fullmatch(move), move
            assert move == "pass" or move not in played     # genmove plays it: never twice
            played.add(move)
        line = e.analyze_once("b")
        assert sabaki_parse(line, kata=False), line
        assert e.fails("goengine-set_param gumbel_k 0").startswith("invalid value")
        assert e.fails("goengine-set_param gumbel maybe").startswith("invalid value")
        e.ok("goengine-set_param gumbel 0")
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=60))


@pytest.mark.parametrize("args, message", [
    (["--search", "heuristic", "--gumbel"], b"--gumbel changes the Zero search"),
    (["--zero", ZERO9, "--gumbel", "--gumbel-k", "0"], b"--gumbel-k"),
], ids=["heuristic", "k 0"])
def test_bad_gumbel_options_are_usage_errors(args, message, repo_root):
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", *args], capture_output=True,
                          cwd=repo_root, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_search_auto_takes_gumbel_where_zero_plays(gtp_engine):
    """--search auto plays 9x9 with the bundled zero-9x9 network: --gumbel is its."""
    with gtp_engine("--search", "auto", "--size", "9", "--gumbel", "--playouts", "8") as e:
        e.ok("boardsize 9", timeout=120)
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=120))
        assert e.ok("goengine-get_param gumbel") == "1"
