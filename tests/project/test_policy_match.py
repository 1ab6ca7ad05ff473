"""experiments/policy_match.py runs as a user runs it: a subprocess on the bundled policy, a tiny
board, in this process (`--workers 0`), with each way the networks see the board."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "models" / "bundled" / "policy.onnx"


def _match(*args: str) -> tuple[str, int, int, int]:
    p = subprocess.run([sys.executable, str(ROOT / "experiments" / "policy_match.py"), str(POLICY),
                        str(POLICY), "--size", "5", "--games", "8", "--workers", "0", *args],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    m = re.search(r"5x5, (.*): (\d) / 8 = [\d.]+ \(95% \+- [\d.]+\); as black (\d) / 4; "
                  r"(\d) distinct games", p.stdout)
    assert m, p.stdout
    return m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))


def test_averaging_players_replay_one_game_per_colour():
    """Greedy from the first move, a network averaging the 8 symmetries answers each position
    the same way every time: the 4 games with each colour are one game."""
    how, wins, as_black, distinct = _match("--sampled-moves", "0", "--symmetry", "average")
    assert how == "0 moves at temperature 1.0, then greedy, symmetry average"
    assert distinct <= 2 and wins in (0, 4, 8) and as_black in (0, 4)


def test_random_symmetries_make_greedy_games_differ():
    """The same, each network call on a random symmetry (as the searches evaluate): the policy
    is not symmetric, so its most probable move changes with the draw and the games differ."""
    how, _, _, distinct = _match("--sampled-moves", "0", "--symmetry", "random", "--seed", "3")
    assert how == "0 moves at temperature 1.0, then greedy, symmetry random"
    assert distinct > 2


@pytest.mark.parametrize("second", ["random", "none"])
def test_each_network_sees_the_board_its_own_way(second):
    how, wins, as_black, distinct = _match("--sampled-moves", "2", "--symmetry", "average",
                                           "--second-symmetry", second)
    assert how == f"2 moves at temperature 1.0, then greedy, symmetry average against {second}"
    assert as_black <= min(wins, 4) and 1 <= distinct <= 8
