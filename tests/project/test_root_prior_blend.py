"""experiments/root_prior_blend.py runs as a user runs it: a subprocess on the bundled networks
and the regression set, one playout a search, so that the root's priors alone pick the move."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_blend_reaches_the_root_priors():
    """With one playout the search plays its root's most probable move: the Zero network's at
    W 0, the SL policy's at W 1. The two networks disagree on some of the 15 9x9 positions, so
    the moves differ there, and each weight's count line covers every position."""
    p = subprocess.run([sys.executable, str(ROOT / "experiments" / "root_prior_blend.py"),
                        "--weight", "0", "--weight", "1", "--playouts", "1", "--seeds", "1"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    played = {}
    for w, pid, move in re.findall(r"^  W (\S+) (\S+): game \S+, acceptable \[.*\], played (\S+)$",
                                   p.stdout, re.M):
        played.setdefault(w, {})[pid] = move
    assert set(played) == {"0", "1"} and len(played["0"]) == len(played["1"]) == 15
    assert any(played["0"][pid] != played["1"][pid] for pid in played["0"])
    for w in ("0", "1"):
        assert re.search(rf"^W {w}, 1 playouts: \d+ of 15 in the acceptable set$", p.stdout, re.M)


def test_a_size_without_positions_is_a_usage_error():
    p = subprocess.run([sys.executable, str(ROOT / "experiments" / "root_prior_blend.py"),
                        "--size", "13", "--weight", "0"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 2 and "no 13x13 positions" in p.stderr
    assert "Traceback" not in p.stderr
