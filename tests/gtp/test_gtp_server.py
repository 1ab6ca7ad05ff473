"""engine-gtp as a subprocess: framing, startup and quit timing, bad input of every kind.

Each bad input must get `? message`, keep the engine alive and leave the position unchanged.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from goengine.gtp.main import _setup_logging


@pytest.fixture(scope="module")
def eng(gtp_engine):
    with gtp_engine("--size", "9") as e:
        e.ok("boardsize 9", timeout=120)      # waits for the engine to load
        e.wait_loaded()
        yield e


def board(eng) -> str:
    return eng.ok("showboard")


# ---- startup and quit ----------------------------------------------------------------------------

def test_startup_answers_within_a_second_while_numba_compiles(tmp_path, gtp_engine):
    # An empty numba cache makes the background load compile every kernel (tens of seconds).
    with gtp_engine(env={"NUMBA_CACHE_DIR": str(tmp_path)}) as e:
        e.send("name\nversion\nprotocol_version\nlist_commands\n")
        answers = [e.response(timeout=5) for _ in range(4)]
        elapsed = time.monotonic() - e.started
        assert elapsed < 1.0, f"startup answers took {elapsed:.2f} s"
        assert answers[0] == ("=", "goengine")
        assert answers[1][0] == "=" and answers[1][1]
        assert answers[2] == ("=", "2")
        assert "genmove" in answers[3][1].split("\n")
        t0 = time.monotonic()
        e.send("quit\n")
        assert e.response(timeout=2) == ("=", "")
        e.proc.wait(timeout=2)
        assert time.monotonic() - t0 < 1.0
        assert e.proc.returncode == 0


def test_quit_is_prompt_during_genmove_and_analysis(gtp_engine):
    # no opening book: its move on the empty board would be answered before the quit
    with gtp_engine("--size", "9", "--time-per-move", "30", "--no-book") as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        e.send("1 genmove b\n")
        time.sleep(0.5)
        t0 = time.monotonic()
        e.send("2 quit\n")
        head, move = e.response(timeout=3)
        assert head == "=1" and move
        assert e.response(timeout=3) == ("=2", "")
        e.proc.wait(timeout=3)
        assert time.monotonic() - t0 < 1.0


def test_stdin_eof_answers_what_was_sent_then_exits(repo_root):
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "-q", "--playouts", "20"],
                          input=b"1 boardsize 9\n2 genmove b\n3 name\n", capture_output=True,
                          cwd=repo_root, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert out.startswith("=1\n\n=2 ") and out.endswith("\n\n=3 goengine\n\n"), out


def test_visits_from_the_command_line_limit_the_move(repo_root):
    """--visits reaches the player: the answer's root visits are what was asked for."""
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "-q", "--search", "heuristic",
                           "--visits", "77"],
                          input=b"1 boardsize 9\n2 kata-get-param visits\n3 genmove b\n"
                                b"4 kata-get-param maxVisits\n", capture_output=True,
                          cwd=repo_root, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert "=2 77\n" in out and "=4 77\n" in out, out
    assert "Visits 77 " in proc.stderr.decode() or "visits 77" in proc.stderr.decode().lower(), \
        proc.stderr.decode()[-500:]


def test_unknown_and_invalid_command_line_arguments_fail_clearly(repo_root):
    for args, words in ((["--bogus"], "no such option"), (["--size", "1"], "--size"),
                        (["--size", "x"], "--size"), (["--search", "magic"], "--search"),
                        (["--playouts", "0"], "--playouts"), (["--visits", "-3"], "--visits"),
                        (["--komi", "nan"], "--komi"),
                        (["--resign-threshold", "1.5"], "--resign-threshold"), (["extra"], "unexpected"),
                        (["--model-dir", "/no/such/dir"], "--model-dir"),
                        (["--time-per-move", "0"], "--time-per-move"),
                        (["--rollout-self-atari", "2"], "--rollout-self-atari"),
                        (["--rollout-capture", "-1"], "--rollout-capture"),
                        (["--rollout-threads", "-1"], "--rollout-threads")):
        proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", *args], capture_output=True,
                              cwd=repo_root, timeout=30, stdin=subprocess.DEVNULL)
        assert proc.returncode == 2, (args, proc.stderr)
        assert words.lower() in proc.stderr.decode().lower(), (args, proc.stderr)
        assert proc.stdout == b""


def test_rollout_rules_reach_the_rollouts(gtp_engine):
    """--rollout-self-atari and --rollout-capture set the AlphaGo search's rollout rules; the
    engine plays with them."""
    with gtp_engine("--search", "alphago", "--size", "9", "--playouts", "40",
                    "--rollout-self-atari", "0.9", "--rollout-capture", "0.8", quiet=False) as eng:
        move = eng.ok("genmove b", timeout=180)
        assert move.strip(), move
    assert any("self-atari redrawn with chance 0.9, a string left in atari taken with chance 0.8"
               in line for line in eng.stderr_lines), eng.stderr_lines[-10:]


def test_console_script_is_installed():
    script = os.path.join(os.path.dirname(sys.executable), "engine-gtp")
    exe = script if os.path.exists(script) else "engine-gtp"
    proc = subprocess.run([exe, "-q"], input=b"name\nquit\n", capture_output=True, timeout=30)
    assert proc.stdout == b"= goengine\n\n=\n\n"


# ---- framing ---------------------------------------------------------------------------------------

def test_transcript_with_ids_crlf_tabs_comments_and_empty_lines(eng):
    eng.send(b"1 name\r\n\r\n# a comment line\n\t2\tprotocol_version\t\r\n   \n"
             b"3 known_command\tplay # trailing comment\n4 known_command foo\n"
             b"5 nosuchcommand\n6\n# interrupt\n7 play b\n")
    got = [eng.response() for _ in range(7)]
    assert got == [("=1", "goengine"), ("=2", "2"), ("=3", "true"), ("=4", "false"),
                   ("?5", "unknown command"), ("?6", "missing command"),
                   ("?7", "wrong number of arguments: usage play COLOR VERTEX")]
    eng.no_output()


def test_exact_bytes_of_responses(eng):
    start = len(eng.raw)
    eng.send(b"10 clear_board\n11 play B D4\n12 nonsense x\n")
    for _ in range(3):
        eng.response()
    assert bytes(eng.raw[start:]) == b"=10\n\n=11\n\n?12 unknown command\n\n"


def test_ids_echoed_on_failure_of_every_kind(eng):
    eng.ok("clear_board")
    for cmd in ("99 boardsize 0", "100 komi x", "101 play b z9", "102 genmove purple", "103 undo"):
        eng.send(cmd + "\n")
        head, body = eng.response()
        assert head == "?" + cmd.split()[0] and body


def test_colours_and_vertices_in_any_case(eng):
    eng.ok("clear_board")
    for cmd in ("play black e5", "play W c3", "play b D7",
                "play white g3", "play B pass", "play w PASS", "play BLACK j9", "play White A1"):
        eng.ok(cmd)
    text = board(eng)
    rows = {line.split()[0]: line for line in text.split("\n")[1:10]}
    assert "X" in rows["5"] and "O" in rows["3"]


def test_showboard_is_inside_the_response(eng):
    eng.ok("clear_board")
    eng.ok("play b e5")
    body = board(eng)
    lines = body.split("\n")
    assert lines[0].split() == list("ABCDEFGHJ")
    assert lines[5].startswith(" 5") and "(X)" in lines[5]
    assert all(line.strip() for line in lines)


# ---- bad input --------------------------------------------------------------------------------------

def _setup_position(eng) -> str:
    eng.ok("boardsize 9")
    eng.ok("clear_board")
    for cmd in ("play w a2", "play w b1",          # A1 is suicide for black
                "play b c5", "play w e6", "play b d6", "play w f5", "play b d4", "play w e4",
                "play w d5", "play b e5"):         # black takes the ko at D5: W may not retake
        eng.ok(cmd)
    return board(eng)


BAD_COMMANDS = [
    ("foo", "unknown command"),
    ("play", "wrong number of arguments"),
    ("play b", "wrong number of arguments"),
    ("play b d4 e5", "wrong number of arguments"),
    ("boardsize", "wrong number of arguments"),
    ("boardsize 0", "unacceptable size"),
    ("boardsize 1", "unacceptable size"),
    ("boardsize 26", "unacceptable size"),
    ("boardsize nine", "unacceptable size"),
    ("boardsize 9.5", "unacceptable size"),
    ("komi abc", "syntax error"),
    ("komi nan", "syntax error"),
    ("komi inf", "syntax error"),
    ("komi", "wrong number of arguments"),
    ("play b d4", "illegal move: occupied"),
    ("play w e5", "illegal move: occupied"),
    ("play b a1", "illegal move: suicide"),
    ("play w d5", "illegal move: ko"),
    ("play b k5", "invalid vertex"),
    ("play b j10", "invalid vertex"),
    ("play b a0", "invalid vertex"),
    ("play b i5", "invalid vertex"),
    ("play b z1", "invalid vertex"),
    ("play b 55", "invalid vertex"),
    ("play b resign", "invalid vertex"),
    ("play b d", "invalid vertex"),
    ("play purple d4", "invalid color"),
    ("play 1 d4", "invalid color"),
    ("genmove purple", "invalid color"),
    ("genmove", "wrong number of arguments"),
    ("reg_genmove x", "invalid color"),
    ("fixed_handicap 3", "board not empty"),
    ("fixed_handicap x", "syntax error"),
    ("place_free_handicap 4", "board not empty"),
    ("set_free_handicap d4 e4", "board not empty"),
    ("set_free_handicap", "wrong number of arguments"),
    ("time_settings a b c", "syntax error"),
    ("time_settings 10 10", "wrong number of arguments"),
    ("time_settings -5 10 1", "syntax error"),
    ("time_left purple 10 0", "invalid color"),
    ("time_left b x 0", "syntax error"),
    ("kgs-time_settings weird 1 2 3", "syntax error"),
    ("kgs-time_settings byoyomi 10", "syntax error"),
    ("kata-time_settings fischer x 1", "syntax error"),
    ("final_status_list bogus", "syntax error"),
    ("kgs-rules klingon", "unknown rules"),
    ("loadsgf", "wrong number of arguments"),
    ("loadsgf /no/such/file.sgf", "cannot read"),
    ("loadsgf /no/such/file.sgf x", "syntax error"),
    ("lz-analyze purple", "syntax error"),
    ("lz-analyze b 50 bogus 1", "syntax error"),
    ("kata-analyze b x", "syntax error"),
    ("known_command", "wrong number of arguments"),
    ("goengine-set_param nosuchparam 1", "unknown parameter"),
    ("goengine-set_param resign_threshold abc", "invalid value"),
    ("goengine-get_param nosuchparam", "unknown parameter"),
]


@pytest.mark.parametrize("command, message", BAD_COMMANDS, ids=[c for c, _ in BAD_COMMANDS])
def test_bad_input_fails_and_changes_nothing(eng, command, message):
    before = _setup_position(eng)
    body = eng.fails(command)
    assert body.startswith(message), body
    assert board(eng) == before
    assert eng.ok("name") == "goengine"


def test_superko(eng):
    eng.ok("boardsize 3")
    eng.ok("kgs-rules chinese")
    for cmd in ("b C2", "w B2", "b B3", "w A1", "b A3", "w C1", "b B1", "w pass", "b C1", "w C3"):
        eng.ok("play " + cmd)
    before = board(eng)
    assert eng.fails("play b C2") == "illegal move: superko"
    assert board(eng) == before
    eng.ok("kgs-rules japanese")          # simple ko only: the same move is legal
    eng.ok("play b C2")
    assert eng.fails("kgs-rules chinese").startswith("the game so far is illegal under these rules")
    eng.ok("boardsize 9")
    eng.ok("kgs-rules chinese")


def test_undo_with_no_history(eng):
    eng.ok("clear_board")
    assert eng.fails("undo") == "cannot undo"
    eng.ok("play b e5")
    eng.ok("undo")
    assert eng.fails("undo") == "cannot undo"
    assert "X" not in board(eng).split("Move")[0]


def test_long_line_binary_bytes_and_control_characters(eng):
    before = _setup_position(eng)
    eng.send(b"1 " + b"x" * 100_000 + b"\n")
    head, body = eng.response()
    assert head == "?1" and body == "unknown command"
    eng.send(b"2 play b " + b"q" * 100_000 + b"\n")
    head, body = eng.response()
    assert head == "?2" and body.startswith("invalid vertex") and len(body) < 200
    eng.send(b"3 \xff\xfe\x80play b c3\n")
    head, body = eng.response()
    assert head == "?3" and body == "unknown command"
    eng.send(b"\x00\x01\x02\n\x1b\x1b\n")       # nothing left: ignored
    eng.send(b"\x1b[A\n")                         # "[A": an unknown command
    assert eng.response() == ("?", "unknown command")
    eng.send(b"4 na\x00me\n")
    assert eng.response() == ("=4", "goengine")
    eng.send(bytes(range(256)) + b"\n")
    head, _ = eng.response()
    assert head.startswith("?")
    assert board(eng) == before


def test_empty_komi_and_boardsize_changes(eng):
    eng.ok("komi 6.5")
    eng.ok("komi -3")
    eng.ok("komi 0")
    assert "komi 0" in board(eng)
    eng.ok("boardsize 19")
    assert board(eng).split("\n")[0].split()[-1] == "T"
    eng.ok("boardsize 25")
    assert board(eng).split("\n")[0].split()[-1] == "Z"
    eng.ok("boardsize 9")
    eng.ok("komi 7.5")


def test_log_file_records_commands_and_responses(tmp_path, gtp_engine):
    log = tmp_path / "gtp.log"
    with gtp_engine("--log-file", str(log)) as e:
        e.ok("name")
        e.fails("bogus")
    text = log.read_text()
    assert "<< name" in text and ">> = goengine" in text and "<< bogus" in text


def test_sigint_interrupts_a_running_genmove(gtp_engine):
    # no opening book: its move on the empty board would be answered before the signal
    with gtp_engine("--size", "9", "--time-per-move", "60", "--no-book") as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        e.send("genmove b\n")
        time.sleep(0.5)
        t0 = time.monotonic()
        e.proc.send_signal(signal.SIGINT)
        head, move = e.response(timeout=3)
        assert head == "=" and move and time.monotonic() - t0 < 1.0
        assert e.ok("name") == "goengine"


def test_log_file_leaves_out_numba_compiler_debug(tmp_path):
    """A fresh install's first game compiles numba, whose DEBUG lines once made a 35 MB log."""
    root = logging.getLogger()
    before = list(root.handlers)
    log = tmp_path / "engine.log"
    try:
        _setup_logging(str(log), logging.WARNING)
        logging.getLogger("numba.core.ssa").debug("numba compiler detail")
        logging.getLogger("gtp").debug("engine detail")
    finally:
        for h in root.handlers[len(before):]:
            h.close()
            root.removeHandler(h)
    text = log.read_text()
    assert "engine detail" in text and "numba compiler detail" not in text
