"""experiments/search_vs_policy.py runs as a user runs it: a subprocess on the bundled networks,
a tiny board, both ways of valuing a leaf."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "models" / "bundled"


@pytest.mark.parametrize("lam", ["0", "0.5"])
def test_search_against_a_greedy_policy_counts_every_game(lam):
    p = subprocess.run([sys.executable, str(ROOT / "experiments" / "search_vs_policy.py"),
                        str(BUNDLED / "policy.onnx"), str(BUNDLED / "value.onnx"),
                        str(BUNDLED / "policy.onnx"), "--size", "5", "--games", "4", "--visits",
                        "8", "--lam", lam, "--sampled-moves", "2", "--workers", "2"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    m = re.search(r"lambda ([\d.]+), 8 visits\) against policy.onnx greedy, 5x5, 2 sampled moves: "
                  r"(\d) / 4 = [\d.]+ \(95% [\d.]+-[\d.]+\); as black (\d) / 2; (\d) distinct",
                  p.stdout)
    assert m, p.stdout
    assert float(m.group(1)) == float(lam)
    wins, as_black, distinct = int(m.group(2)), int(m.group(3)), int(m.group(4))
    assert as_black <= min(wins, 2) and 1 <= distinct <= 4
