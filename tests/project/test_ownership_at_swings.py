"""experiments/ownership_at_swings.py runs as a user runs it: a subprocess on the bundled
networks, the regression set and the match records it points to."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^(\S+): lost (\d+) \(ownership (\S+), (\d+) given to goengine\), "
                  r"kept (\d+) \(ownership (\S+)\)$", re.M)
POSITION = re.compile(r"^(\S+): (?:lost \d+|left out \(.*has no ownership head\))", re.M)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "experiments" / "ownership_at_swings.py"),
                           *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_every_position_split_into_lost_and_kept_stones():
    """One line per position of the set, in its order (a 19x19 one left out where the bundled
    value network has no ownership head; every 9x9 one measured); ownerships in [-1, 1]; the
    summary counts the positions that lost a group of --group stones and adds up their lost
    stones."""
    p = _run("--after", "20", "--group", "2")
    assert p.returncode == 0, p.stderr[-3000:]
    lines = LINE.findall(p.stdout)
    positions = json.loads((ROOT / "benchmarks" / "regression" /
                            "positions.json").read_text())["positions"]
    assert POSITION.findall(p.stdout) == [q["id"] for q in positions]
    assert {line[0] for line in lines} >= {q["id"] for q in positions if q["size"] == 9}
    for _, lost, own_lost, safe, kept, own_kept in lines:
        assert int(safe) <= int(lost)
        for own, count in ((own_lost, lost), (own_kept, kept)):
            assert (own == "-") == (int(count) == 0)
            assert own == "-" or -1.0 <= float(own) <= 1.0
    groups = [int(line[1]) for line in lines if int(line[1]) >= 2]
    m = re.search(r"^(\d+) positions lost 2 or more stones within 20 moves: (\d+) stones lost",
                  p.stdout, re.M)
    if groups:
        assert m and int(m.group(1)) == len(groups) and int(m.group(2)) == sum(groups)
    else:
        assert "no position lost" in p.stdout


def test_goengines_own_move_loses_none_of_its_stones():
    """One move past the position is goengine's own move (no suicide under the rules), so no
    stone of its counts as lost there."""
    p = _run("--after", "1")
    assert p.returncode == 0, p.stderr[-3000:]
    lines = LINE.findall(p.stdout)
    assert lines and all(int(line[1]) == 0 for line in lines)
    assert "no position lost 3 or more stones within 1 moves" in p.stdout
