"""Streaming analysis and interruptible searches, as Sabaki, Lizzie, GoGui and gtp2ogs use them.

Lines are read with Sabaki's own parsing rules (tests/sabaki_analysis.py).
"""
from __future__ import annotations

import re
import time

import pytest


GTP2OGS_KATAGO = re.compile(r"(?:CHAT|MALKOVICH):Visits (\d*) Winrate (\d+\.\d\d)% ScoreLead (-?\d+\.\d) "
                            r"ScoreStdev (-?\d+\.\d) (\(PDA (-?\d+.\d\d)\) )?PV (.*)")


@pytest.fixture(scope="module")
def eng(gtp_engine):
    # without the opening book: its moves are answered without a search to stream
    with gtp_engine("--size", "9", "--time-per-move", "1", "--no-book") as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        yield e


def analysis_lines(eng, sabaki_parse, count: int, kata: bool) -> list[list[dict]]:
    """Read `count` info lines; check each is one line of blocks that Sabaki reads completely."""
    out = []
    for _ in range(count):
        line = eng.line(timeout=10).rstrip("\n")
        assert line.startswith("info move "), line
        blocks = re.split(r"\s*info\s+", line.split(" ownership ")[0])[1:]
        parsed = sabaki_parse(line.split(" ownership ")[0], kata)
        assert len(parsed) == len(blocks) > 0, line
        for p in parsed:
            assert p["pv"] and p["pv"][0] == p["vertex"]
            assert 0 <= p["winrate"] <= 100
            assert p["visits"] > 0
            if not kata:
                assert re.fullmatch(r"\d+", p["fields"]["winrate"])
            else:
                assert "." in p["fields"]["winrate"]
        out.append(parsed)
    return out


def finish_stream(eng, timeout: float = 2.0) -> int:
    """Skip info lines up to the blank line that ends the response; how many were skipped."""
    n = 0
    while True:
        line = eng.line(timeout=timeout)
        if line == "\n":
            return n
        assert line.startswith("info "), line
        n += 1


def test_lz_analyze_stopped_by_protocol_version_like_sabaki(eng, sabaki_parse):
    eng.ok("clear_board")
    eng.ok("play b e5")
    eng.send("lz-analyze W 20\n")
    assert eng.line() == "=\n"
    lines = analysis_lines(eng, sabaki_parse, 3, kata=False)
    assert lines[-1][0]["visits"] >= lines[0][0]["visits"]
    t0 = time.monotonic()
    eng.send("protocol_version\n")
    finish_stream(eng)
    assert eng.response(timeout=2) == ("=", "2")
    assert time.monotonic() - t0 < 1.0
    eng.no_output()


def test_lz_analyze_without_colour_stopped_by_a_raw_newline(eng, sabaki_parse):
    eng.ok("clear_board")
    eng.send("7 lz-analyze 20\n")
    assert eng.line() == "=7\n"
    analysis_lines(eng, sabaki_parse, 2, kata=False)
    eng.send("\n")
    finish_stream(eng)
    eng.no_output(0.3)            # the newline itself gets no response
    assert eng.ask("name") == ("=", "goengine")


def test_analysis_stops_at_once_when_the_abort_is_already_written(eng):
    eng.ok("clear_board")
    t0 = time.monotonic()
    eng.send("lz-analyze B 50\nprotocol_version\n")
    assert eng.line() == "=\n"
    finish_stream(eng)
    assert eng.response() == ("=", "2")
    assert time.monotonic() - t0 < 1.0


def test_analysis_without_interval_prints_nothing_until_stopped(eng):
    eng.ok("clear_board")
    eng.send("kata-analyze b\n")
    assert eng.line() == "=\n"
    eng.no_output(0.6)
    eng.send("# interrupt\n")
    assert eng.line(timeout=2) == "\n"


def test_kata_analyze_with_ownership_from_the_side_to_move(eng, sabaki_parse):
    eng.ok("boardsize 5")
    for v in ("a3", "b3", "c3", "d3", "e3", "a4", "c4", "e4", "b5", "d5"):
        eng.ok(f"play b {v}")
    for colour, sign in (("B", 1), ("W", -1)):
        eng.send(f"kata-analyze {colour} 30 ownership true\n")
        assert eng.line() == "=\n"
        line = eng.line(timeout=10).rstrip("\n")
        eng.send("\n")
        finish_stream(eng)
        head, own = line.split(" ownership ")
        assert sabaki_parse(head, kata=True)
        values = [float(v) for v in own.split()]
        assert len(values) == 25 and all(-1 <= v <= 1 for v in values)
        # row-major from A5: index 10 is A3, a black stone of the wall
        assert sign * values[10] > 0.5, values
    eng.ok("boardsize 9")


def test_genmove_analyze_ends_with_play_and_plays_it(eng, sabaki_parse):
    for command, kata in (("kata-genmove_analyze B 20", True), ("lz-genmove_analyze W 20", False)):
        eng.ok("clear_board")
        eng.send(f"3 {command}\n")
        assert eng.line() == "=3\n"
        infos = []
        while True:
            line = eng.line(timeout=10).rstrip("\n")
            if line.startswith("play "):
                break
            infos.append(line)
        assert infos, "no analysis line during a 1 s search"
        for info in infos:
            assert sabaki_parse(info, kata)
        move = line.split()[1]
        assert re.fullmatch(r"[A-HJ][1-9]|pass|resign", move)
        assert eng.line() == "\n"
        if move not in ("pass", "resign"):
            assert eng.fails(f"play b {move}") == "illegal move: occupied"


def test_gogui_interrupt_stops_genmove(gtp_engine):
    # no opening book: its move on the empty board would be answered before the interrupt
    with gtp_engine("--size", "9", "--time-per-move", "60", "--no-book") as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        assert e.ok("known_command gogui-interrupt") == "true"
        e.ok("gogui-interrupt")
        e.send("5 genmove b\n")
        time.sleep(0.5)
        t0 = time.monotonic()
        e.send("# interrupt\n")
        head, move = e.response(timeout=3)
        assert head == "=5" and re.fullmatch(r"[A-HJ][1-9]", move)
        assert time.monotonic() - t0 < 1.0
        e.no_output(0.3)          # the interrupt line is a comment: no response of its own
        assert e.ask("name") == ("=", "goengine")
        assert e.fails(f"play w {move}") == "illegal move: occupied"


def test_pipelined_commands_do_not_cut_genmove_short(eng):
    eng.ok("clear_board")
    t0 = time.monotonic()
    eng.send("genmove b\nname\n")
    head, move = eng.response(timeout=10)
    took = time.monotonic() - t0
    assert head == "=" and move
    assert eng.response() == ("=", "goengine")
    assert took > 0.8, f"genmove took only {took:.2f} s of its 1 s"


def test_chat_line_on_stderr_after_genmove(eng):
    eng.ok("clear_board")
    eng.ok("genmove b", timeout=10)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        chats = [line for line in eng.stderr_lines if line.startswith("MALKOVICH:")]
        if chats:
            break
        time.sleep(0.05)
    m = GTP2OGS_KATAGO.search(chats[-1])
    assert m, chats[-1]
    assert int(m.group(1)) > 0 and re.fullmatch(r"(([A-HJ][1-9]|pass) ?)+", m.group(7))


def test_analysis_after_genmove_and_undo(eng, sabaki_parse):
    eng.ok("clear_board")
    eng.ok("genmove b", timeout=10)
    eng.send("lz-analyze w 20\n")
    assert eng.line() == "=\n"
    analysis_lines(eng, sabaki_parse, 2, kata=False)
    eng.send("undo\n")
    finish_stream(eng)
    assert eng.response() == ("=", "")
    eng.send("lz-analyze b 20\n")        # after the undo, black is to play again
    assert eng.line() == "=\n"
    analysis_lines(eng, sabaki_parse, 1, kata=False)
    eng.send("\n")
    finish_stream(eng)


@pytest.mark.parametrize("size, ownership", [(9, False), (9, True), (19, False), (19, True)])
def test_kata_analyze_gives_sabaki_a_score_lead(eng, size, ownership, sabaki_parse):
    """The default search (--search auto) on both sizes: every move has a scoreLead, as Sabaki
    reads it (info move X visits N winrate W ... scoreLead S prior P ... order K pv ...)."""
    eng.ok(f"boardsize {size}")
    eng.ok("clear_board")
    eng.ok("play b d4")
    eng.send(f"kata-analyze w 30{' ownership true' if ownership else ''}\n")
    assert eng.line() == "=\n"
    parsed = analysis_lines(eng, sabaki_parse, 2, kata=True)
    eng.send("\n")
    finish_stream(eng)
    eng.ok("boardsize 9")
    for line in parsed:
        for p in line:
            assert p["scoreLead"] is not None, p["fields"]
            assert abs(p["scoreLead"]) <= size * size + 7.5
            assert list(p["fields"])[:3] == ["move", "visits", "winrate"]
            assert "prior" in p["fields"] and "order" in p["fields"]


LOST_9X9_SGF = ("(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese];B[ee];W[dc];B[cd];W[cc];B[dd];W[ec];B[gf]"
                ";W[gd];B[df];W[hf];B[he];W[ge];B[hg];W[ff];B[gg];W[hd];B[fe];W[ie];B[bc]"
                ";W[bb];B[bd];W[ab];B[ig];W[if];B[fd];W[fc];B[ac];W[ca];B[ed];W[gb];B[])")


def test_chat_line_shows_the_search_result_of_the_move_answered(tmp_path, gtp_engine):
    """A real 9x9 game lost by white on the count after black's pass (test_player_pass): the
    CHAT line must show the move answered and the search's view of it, not `Winrate 100% ...
    PV pass` above another move."""
    path = tmp_path / "lost.sgf"
    path.write_text(LOST_9X9_SGF)
    with gtp_engine("--size", "9", "--search", "heuristic", "--playouts", "3000",
                    "--seed", "3") as e:
        e.ok(f"loadsgf {path}", timeout=120)
        move = e.ok("genmove w", timeout=60)
        deadline = time.monotonic() + 2
        chats = []
        while not chats and time.monotonic() < deadline:
            chats = [line for line in e.stderr_lines if line.startswith("MALKOVICH:")]
            time.sleep(0.05)
    m = GTP2OGS_KATAGO.search(chats[-1])
    assert m, chats[-1]
    if move != "resign":
        assert m.group(7).split()[0].lower() == move.lower(), (move, chats[-1])
    assert float(m.group(2)) < 90.0, chats[-1]     # lost on the count: no sure win
