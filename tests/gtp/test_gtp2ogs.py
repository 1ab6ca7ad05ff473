"""engine-gtp under the real gtp2ogs 9.x, against a local stand-in for the OGS server
(tests/gtp/ogs_standin, docs/gtp.md §2.3): complete 9x9 games on 127.0.0.1, GNU Go as the opponent.

Runs where node, GNU Go and a built gtp2ogs are there: GTP2OGS_DIR names gtp2ogs's folder
(with dist/gtp2ogs.js, built as gtp2ogs's own README says; not part of this repository);
skipped elsewhere.
"""
from __future__ import annotations

import dataclasses
import os
import re

import pytest

from ogs_standin import runner
from ogs_standin.server import GNUGO

SCRIPT = runner.gtp2ogs_script(os.environ.get("GTP2OGS_DIR"))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    SCRIPT is None or not os.access(GNUGO, os.X_OK),
    reason="set GTP2OGS_DIR to a built gtp2ogs 9.x (dist/gtp2ogs.js; needs node and GNU Go) "
           "to play through it")]

# gtp2ogs src/PvOutputParser.ts, the KataGo pattern
KATAGO = re.compile(r"(CHAT|MALKOVICH):Visits (\d*) Winrate (\d+\.\d\d)% ScoreLead (-?\d+\.\d) "
                    r"ScoreStdev (-?\d+\.\d) (\(PDA (-?\d+.\d\d)\) )?PV (.*)")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    short = dataclasses.replace(runner.GAMES["9x9-opponent-passes"], opponent_passes_after=10)
    games = [short, runner.GAMES["9x9-resign"]]
    return runner.play(SCRIPT, games, tmp_path_factory.mktemp("gtp2ogs"),
                       ["--time-per-move", "1"], timeout=900)


def test_games_end_on_the_server(run):
    assert run.finished, run.gtp2ogs_log[-3000:]
    passes, resign = run.records
    assert not passes.errors and not resign.errors
    assert passes.moves[-2:][0][1] == "pass" == passes.moves[-1][1]     # ended by two passes
    assert passes.outcome.endswith(" points")
    # the engine (white) resigns its lost fork; the resignation reaches the server
    assert resign.outcome == "Resignation" and not resign.bot_won, resign.result
    for r in run.records:
        assert all(took <= had for took, had in r.bot_move_seconds), r.bot_move_seconds


def test_every_command_answered(run):
    assert run.exchanges
    commands = {c.split()[0] for c, _ in run.exchanges}
    assert {"list_commands", "boardsize", "komi", "play", "genmove", "time_left"} <= commands
    assert "kgs-time_settings" in commands and "kata-time_settings" in commands
    bad = [(c, a) for c, a in run.exchanges if not a.startswith("=")]
    assert not bad, bad


def test_analysis_reaches_the_game(run):
    """Each engine move's analysis line reaches the stand-in: as gtp2ogs's analysis variation
    (once it has taken the engine for KataGo), else as plain malkovich chat."""
    for r in run.records:
        genmoves = sum(1 for colour, _, _ in r.moves if colour == r.spec.bot_colour)
        analyses = [c for c in r.chats if isinstance(c["body"], dict)
                    and c["body"].get("type") == "analysis"]
        plain = [c for c in r.chats if isinstance(c["body"], str) and c["type"] == "malkovich"
                 and KATAGO.search("MALKOVICH:" + c["body"])]
        assert len(analyses) + len(plain) >= genmoves - (r.outcome == "Resignation"), r.chats
        assert analyses, r.chats
        for c in analyses:
            body = c["body"]
            assert c["type"] == "malkovich" and body["name"].startswith("Win rate: ")
            assert 0 <= body["engine_analysis"]["win_rate"] <= 100
            assert re.fullmatch(r"([a-i]{2}|\.\.)+", body["moves"]), body


def test_resignation_is_explained_in_the_main_chat(run):
    resign = run.records[1]
    said = [c["body"] for c in resign.chats if c["type"] == "main" and isinstance(c["body"], str)]
    assert any(s.startswith("I resign: my win rate is ") for s in said), resign.chats
