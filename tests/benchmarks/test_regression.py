"""The regression set of swung positions (benchmarks/regression/positions.json) and its two
scripts, run as a user runs them: the runner plays a few positions with a real engine-gtp at a
tiny budget and reports each one (no strength asserted), and the swing finder, rerun with GNU Go
on the match record one position came from, finds that position again."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goengine.engine.coords import parse_gtp
from goengine.sgf_tools import read_sgf, read_sgf_file

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
SET = BENCH / "regression" / "positions.json"
GNUGO = "/usr/games/gnugo"
needs_gnugo = pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go not installed")


def _positions() -> list[dict]:
    return json.loads(SET.read_text(encoding="utf-8"))["positions"]


def _run(script: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout)


def test_the_set_replays_to_its_positions():
    """Every position is the start of its match record, with goengine's move next."""
    positions = _positions()
    assert 0 < len(positions) <= 60
    for p in positions:
        rec = read_sgf(p["sgf"])
        game = read_sgf_file(ROOT / p["source"])
        assert rec.moves == game.moves[:p["move_number"]], p["id"]
        colour, point = game.moves[p["move_number"]]
        assert colour == p["to_play"]
        name = game.black_player if colour == "b" else game.white_player
        assert "goengine" in name
        assert parse_gtp(p["played"], p["size"]) >= 0 and p["played"] not in p["acceptable"]
        assert p["gnugo_move"] in p["acceptable"]
        assert p["score_after_best"] > p["score_after_played"]


def test_runner_plays_each_position(tmp_path):
    """A tiny budget, the set's judgement only: a line and a CSV row for each position."""
    out = tmp_path / "r.csv"
    res = _run("bench_regression.py", "--limit", "2", "--playouts", "4", "--no-gnugo",
               "--csv", str(out))
    assert res.returncode == 0, res.stderr
    positions = _positions()[:2]
    for p in positions:
        assert p["id"] in res.stdout
    assert "right: " in res.stdout and " of 2 " in res.stdout
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["id"] for r in rows] == [p["id"] for p in positions]
    for r, p in zip(rows, positions):
        parse_gtp(r["engine_move"], p["size"])      # a vertex or pass (never resign: it is off)
        expected = "right" if r["engine_move"] in p["acceptable"] else (
            "wrong" if r["engine_move"] == p["played"] else "not in set")
        assert r["verdict"] == expected


@pytest.mark.slow
@pytest.mark.gnugo
@needs_gnugo
def test_runner_judges_by_gnugo(tmp_path):
    """With GNU Go, a move outside the acceptable set gets GNU Go's estimate after it."""
    out = tmp_path / "r.csv"
    res = _run("bench_regression.py", "--limit", "1", "--playouts", "4", "--engine-arg=--seed=3",
               "--csv", str(out))
    assert res.returncode == 0, res.stderr
    (row,) = csv.DictReader(out.open(encoding="utf-8"))
    p = _positions()[0]
    if row["engine_move"] in p["acceptable"]:
        assert row["verdict"] == "right" and row["score_after"] == ""
    else:
        assert row["verdict"] == ("right" if float(row["score_after"]) >= float(row["threshold"])
                                  else "wrong")


@pytest.mark.slow
@pytest.mark.gnugo
@needs_gnugo
def test_swing_finder_finds_a_set_position_again(tmp_path):
    """Scanning the record around one of the set's positions, one estimate per goengine move,
    pins the swing on the same move and keeps it with GNU Go's answer."""
    p = _positions()[0]
    m = p["move_number"]
    out = tmp_path / "found.json"
    res = _run("find_swings.py", p["source"], "--wins", "1", "--start", str(m), "--end",
               str(m + 2), "--every", "2", "--min-swing", str(p["drop"] - 1), "--min-gain", "0",
               "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert f"worst at move {m + 1}" in res.stdout
    (found,) = json.loads(out.read_text(encoding="utf-8"))["positions"]
    assert (found["id"], found["move_number"], found["played"], found["sgf"]) == \
        (p["id"], m, p["played"], p["sgf"])
    assert found["gnugo_move"] in found["acceptable"] and found["played"] not in found["acceptable"]
    assert found["score_after_best"] >= found["score_after_played"]
