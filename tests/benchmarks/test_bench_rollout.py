"""benchmarks/bench_rollout.py run as a user runs it, on real held-out games at a tiny budget: it
prints a speed row and a value error for each set of playout rules (no figure asserted), and a
rule out of range is a usage error."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_rollout.py"
GAMES = ROOT / "tests" / "data" / "games" / "tygem9d-2015-06"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--sizes", "9", "--seconds", "0.2",
                           "--heldout", str(GAMES), *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=600)


def test_each_set_of_rules_gets_a_speed_row_and_a_value_error():
    """A set without the big self-atari rule's chance takes its default (1)."""
    proc = _run("--positions", "50", "--value-positions", "4", "--value-playouts", "2",
                "--rules", "0:0:0,1:0.5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("   9 ")]
    assert [r[1] for r in rows] == ["0:0:0", "1:0.5:1"] and rows[0][6] == "1.00", proc.stdout
    assert "rules 0:0:0: MSE" in proc.stdout and "rules 1:0.5:1: MSE" in proc.stdout, proc.stdout
    assert "held-out top-1" in proc.stdout


def test_a_rule_out_of_range_is_a_usage_error():
    for text, words in (("0:0,1.5:0", "self_atari rule"), ("0:x", "--rules"),
                        ("0:0:1:1", "--rules"), ("0:0:2", "big_self_atari rule")):
        proc = _run("--rules", text)
        assert proc.returncode == 2 and words in proc.stderr, (text, proc.stderr)
        assert "Traceback" not in proc.stderr
