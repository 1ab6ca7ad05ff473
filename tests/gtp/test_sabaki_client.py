"""engine-gtp driven by Sabaki's own GTP library, @sabaki/gtp (its Controller and
ControllerStateTracker, with which Sabaki starts engines, syncs its board to them and streams their
analysis), through tests/gtp/sabaki/drive.js under node.

Runs where node and @sabaki/gtp are there: SABAKI_GTP_DIR names a folder whose node_modules holds
it (`npm install --prefix DIR @sabaki/gtp@3.0.0`; .ci/run does so); skipped elsewhere.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


HERE = Path(__file__).parent
NODE_MODULES = Path(os.environ.get("SABAKI_GTP_DIR", "/nonexistent")) / "node_modules"

pytestmark = pytest.mark.skipif(
    not ((NODE_MODULES / "@sabaki" / "gtp" / "package.json").is_file() and shutil.which("node")),
    reason="set SABAKI_GTP_DIR to a folder with node_modules/@sabaki/gtp (npm install --prefix "
           "DIR @sabaki/gtp@3.0.0) and have node, to drive the engine with Sabaki's library")

BLACK = {"C3", "G7", "C7"}          # the handicap stones and black's move of drive.js's game
WHITE = {"E5", "G3"}


def _stones(showboard: str) -> dict[str, str]:
    """Vertex -> 'X' or 'O' from the engine's showboard (columns A..J without I)."""
    lines = showboard.split("\n")
    columns = lines[0].split()
    stones = {}
    for line in lines[1:]:
        m = re.fullmatch(r"\s*(\d+) ([.XO() ]+)", line)      # a board row; "(O)" marks the last move
        if not m:
            continue
        cells = m.group(2).replace("(", " ").replace(")", " ")[:2 * len(columns)]
        for k, c in enumerate(cells[0::2]):
            if c in "XO":
                stones[f"{columns[k]}{m.group(1)}"] = c
    return stones


@pytest.fixture(scope="module")
def session():
    engine = [sys.executable, "-m", "goengine.gtp.main", "--time-per-move", "1", "--quiet"]
    p = subprocess.run(["node", str(HERE / "sabaki" / "drive.js"), json.dumps(engine)],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "NODE_PATH": str(NODE_MODULES)})
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def test_sabaki_syncs_a_handicap_game_and_steps_back_with_undo(session):
    assert session["name"] == {"error": False, "content": "goengine"}
    assert session["knowsAnalyze"] is True
    assert session["syncSent"][-5:] == ["clear_board", "set_free_handicap", "play", "play", "play"]
    full = _stones(session["full"]["content"])
    assert full == {**{v: "X" for v in BLACK}, **{v: "O" for v in WHITE}}
    assert session["backSent"] == ["undo"]          # one move back: undo, not a replay
    back = _stones(session["back"]["content"])
    assert back == {**{v: "X" for v in BLACK}, "E5": "O"}


@pytest.mark.parametrize("command,kata", [("lz", False), ("kata", True)])
def test_analysis_streams_until_sabakis_next_command(session, command, kata, sabaki_parse):
    """Info lines that Sabaki's parser reads, moves on empty points only, win rates in range;
    the next command ends the stream and gets its own answer."""
    run = session[command]
    assert not run["error"] and len(run["lines"]) == (3 if command == "lz" else 2)
    assert run["next"] == "goengine"
    occupied = BLACK | {"E5"}
    for line in run["lines"]:
        moves = sabaki_parse(line, kata=kata)
        assert moves, line[:200]
        for m in moves:
            assert m["vertex"] not in occupied
            assert 0 <= m["winrate"] <= 100
            assert m["pv"][0] == m["vertex"]
        if kata:
            owner = line.split(" ownership ")[1].split()
            assert len(owner) == 81 and all(-1 <= float(x) <= 1 for x in owner)
    visits = [sum(m["visits"] for m in sabaki_parse(ln, kata=kata)) for ln in run["lines"]]
    assert visits == sorted(visits) and visits[-1] > visits[0]      # the search goes on


def test_genmove_after_the_sync_is_tracked_as_sabaki_tracks_it(session):
    move = session["genmove"]
    assert not move["error"]
    assert move["content"] == "pass" or (re.fullmatch(r"[A-HJ][1-9]", move["content"])
                                         and move["content"] not in BLACK | {"E5"})
    history = session["state"]["history"]
    assert history[-1] == {"name": "play", "args": ["W", move["content"]]}
    assert len(history) == 4 and session["state"]["komi"] == 0.5
