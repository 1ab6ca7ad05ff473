"""GtpClient against real subprocesses: GNU Go and the scripted engine."""
from __future__ import annotations

import os
import sys
import time

import pytest

from goengine.gtp.client import GtpClient, GtpCrash, GtpError, GtpTimeout

GNUGO = "/usr/games/gnugo"
needs_gnugo = pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go not installed")


@needs_gnugo
@pytest.mark.gnugo
def test_gnugo_known_answers():
    with GtpClient([GNUGO, "--mode", "gtp", "--level", "1"], name="gnugo") as g:
        assert g.engine_name() == "GNU Go"
        assert g.engine_version().startswith("3.")
        assert g.command("protocol_version") == "2"
        assert g.known_command("genmove") is True
        assert g.known_command("no_such_command") is False
        assert "final_status_list" in g.list_commands()        # a multi-line answer
        g.boardsize(9)
        g.clear_board()
        g.komi(7)
        g.play("b", "E5")
        with pytest.raises(GtpError) as ei:
            g.play("w", "E5")                                   # occupied
        assert ei.value.message == "illegal move"
        assert ei.value.command == "play w E5"
        assert g.is_alive()                                     # a `?` does not hurt the engine
        move = g.genmove("w")
        assert move == "PASS".lower() or (move[0] in "ABCDEFGHJ" and 1 <= int(move[1:]) <= 9)
        assert move != "E5"
        assert g.last_elapsed >= 0
        with pytest.raises(GtpError):
            g.command("boardsize 99")
        assert g.final_status_list("dead") == []
    assert g.proc.returncode == 0


def test_script_engine_round_trip(script):
    with GtpClient(script + ["normal"], name="s") as c:
        assert c.engine_name() == "Script-normal"
        c.boardsize(9)
        assert c.genmove("b") == "A9"
        c.play("w", "b9")
        assert c.genmove("b") == "C9"
        with pytest.raises(GtpError) as ei:
            c.command("final_status_list dead")
        assert "unknown command" in ei.value.message
    assert c.quit() == 0          # idempotent


def test_timeout_detected_and_stale_answer_discarded(script):
    c = GtpClient(script + ["sleep", "1.5"], name="sleeper")
    try:
        c.boardsize(9)
        t0 = time.monotonic()
        with pytest.raises(GtpTimeout) as ei:
            c.genmove("b", timeout=0.3)
        assert 0.25 < time.monotonic() - t0 < 1.2
        assert ei.value.timeout == pytest.approx(0.3)
        assert "genmove b" in str(ei.value)
        # the engine answers the timed-out genmove late; that answer must not be taken as the
        # answer to the next command
        assert c.command("name", timeout=5) == "Script-sleep"
        assert c.is_alive()
    finally:
        c.quit()


def test_crash_detected_with_exit_code_and_stderr(script):
    c = GtpClient(script + ["crash"], name="crasher")
    try:
        c.boardsize(9)
        with pytest.raises(GtpCrash) as ei:
            c.genmove("b", timeout=10)
        assert ei.value.returncode == 3
        assert "simulated crash" in ei.value.stderr_tail
        assert not c.is_alive()
        with pytest.raises(GtpCrash):             # and every later command
            c.command("name")
    finally:
        c.quit()


def test_stderr_written_to_file(script, tmp_path):
    path = tmp_path / "err.log"
    c = GtpClient(script + ["crash"], name="crasher", stderr_path=path)
    with pytest.raises(GtpCrash):
        c.genmove("b")
    c.quit()
    assert "simulated crash" in path.read_text()


def test_missing_executable_is_a_crash(tmp_path):
    with pytest.raises(GtpCrash) as ei:
        GtpClient([str(tmp_path / "no-such-engine")], name="ghost")
    assert "cannot start" in str(ei.value)


def test_engine_exiting_at_start(tmp_path):
    c = GtpClient([sys.executable, "-c", "import sys; sys.exit(5)"], name="quitter")
    with pytest.raises(GtpCrash) as ei:
        c.command("name", timeout=10)
    assert ei.value.returncode == 5
    c.quit()


def test_quit_kills_an_engine_that_ignores_quit(script):
    c = GtpClient(script + ["deafquit"], name="deaf")
    assert c.engine_name() == "Script-deafquit"
    t0 = time.monotonic()
    rc = c.quit(grace=0.5)
    assert time.monotonic() - t0 < 5
    assert rc is not None and rc != 0          # terminated by a signal
    assert not c.is_alive()


def test_argv_must_be_a_list():
    with pytest.raises(TypeError):
        GtpClient("gnugo --mode gtp")
