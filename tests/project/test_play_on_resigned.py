"""experiments/play_on_resigned.py runs as a user runs it: a subprocess that plays a resigned game
of a match record on with a real engine-gtp against a real GNU Go."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from goengine.match.summary import GameResult
from goengine.sgf_tools import read_sgf, write_sgf

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "experiments" / "play_on_resigned.py"
GNUGO = "/usr/games/gnugo"
needs_gnugo = pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go not installed")


def _record(tmp_path: Path, open_loss_sgf: bytes) -> Path:
    """A one-game match record in engine-match's form: goengine (black) resigned after the real
    game's first 30 moves; game 2, won by goengine, is not played on."""
    d = tmp_path / "match"
    d.mkdir()
    game = read_sgf(open_loss_sgf)
    (d / "game-0001.sgf").write_bytes(write_sgf(dataclasses.replace(game, moves=game.moves[:30],
                                                                   result="W+R")))
    (d / "game-0002.sgf").write_bytes(open_loss_sgf)
    rows = [GameResult(1, "A", "B", "goengine default", "GNU Go", "B", "W", "W+R", "resign",
                       moves=30),
            GameResult(2, "B", "A", "GNU Go", "goengine default", "B", "W", "W+R", "resign",
                       moves=60)]
    (d / "results.jsonl").write_text("".join(json.dumps(r.as_dict()) + "\n" for r in rows))
    options = {"size": 9, "komi": 7.0, "rules": "chinese", "time_per_move": None}
    (d / "match.json").write_text(json.dumps({"options": options}))
    return d


def _engine_gtp() -> str:
    exe = shutil.which("engine-gtp")
    argv = [exe] if exe else [sys.executable, "-m", "goengine.gtp.main"]
    return shlex.join(argv + ["--playouts", "32", "--resign-threshold", "0"])


@needs_gnugo
def test_a_resigned_game_is_played_on(tmp_path, open_loss_sgf):
    d = _record(tmp_path, open_loss_sgf)
    out = tmp_path / "on"
    p = subprocess.run([sys.executable, str(SCRIPT), str(d), "--engine", _engine_gtp(),
                        "--opponent", f"{GNUGO} --mode gtp --level 1", "--out", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    line = re.search(r"^game 1 \(goengine B, resigned at move 30\): played on to (\S+) in (\d+) "
                     r"moves, (won|lost); lowest win rate ([0-9.]+)%, (\d+) moves below 10%$",
                     p.stdout, re.M)
    assert line, p.stdout
    result, moves, outcome = line.group(1), int(line.group(2)), line.group(3)
    assert moves > 30 and (outcome == "won") == result.startswith("B+")
    assert 0 <= float(line.group(4)) <= 100
    game = read_sgf((out / "game-0001" / "game-0001.sgf").read_bytes())
    assert game.moves[:30] == read_sgf(open_loss_sgf).moves[:30] and len(game.moves) == moves
    assert "game 2" not in p.stdout      # won by goengine: nothing to play on
    assert re.search(r"^played on 1 resigned games: goengine won [01]", p.stdout, re.M)


def test_a_record_without_resignations_is_a_usage_error(tmp_path, open_loss_sgf):
    d = _record(tmp_path, open_loss_sgf)
    p = subprocess.run([sys.executable, str(SCRIPT), str(d), "--engine", "true",
                        "--opponent", "true", "--out", str(tmp_path / "on"), "--game", "2"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "no game of" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--engine", "true",
                        "--opponent", "true", "--out", str(tmp_path / "on")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "not an engine-match record" in p.stderr
    record = json.loads((d / "match.json").read_text())
    record["options"]["main_time"] = 60.0
    (d / "match.json").write_text(json.dumps(record))
    p = subprocess.run([sys.executable, str(SCRIPT), str(d), "--engine", "true",
                        "--opponent", "true", "--out", str(tmp_path / "on")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "played on a real clock" in p.stderr
    record["options"]["main_time"] = None
    (d / "match.json").write_text(json.dumps(record))
    p = subprocess.run([sys.executable, str(SCRIPT), str(d), "--engine", "no-such-engine-xyz",
                        "--opponent", "true", "--out", str(tmp_path / "on")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "executable 'no-such-engine-xyz' not found" in p.stderr
