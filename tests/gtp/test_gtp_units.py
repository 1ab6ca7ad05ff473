"""gtp.protocol and gtp.analysis in-process: parsing, framing, analysis formats (no engine)."""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

import goengine.gtp.commands  # noqa: F401  (registers every command's handler)
from goengine.gtp import analysis
from goengine.gtp.protocol import INTERRUPT, Command, GtpError, format_failure, format_success, parse_line
from goengine.gtp.server import REGISTRY


# ---- parse_line ---------------------------------------------------------------------------------

@pytest.mark.parametrize("line, expected", [
    ("name\n", Command(None, "name", [])),
    ("12 play b q16\r\n", Command(12, "play", ["b", "q16"])),
    ("\tplay\tW\tD4\t\n", Command(None, "play", ["W", "D4"])),
    ("7 komi 6.5 # a comment\n", Command(7, "komi", ["6.5"])),
    ("PLAY B Q16\n", Command(None, "play", ["B", "Q16"])),
    ("pl\x01ay b\x7f d4\n", Command(None, "play", ["b", "d4"])),
    ("0 name", Command(0, "name", [])),
    ("12\n", Command(12, "", [])),
    ("-1 name\n", Command(None, "-1", ["name"])),
    ("\u00b2 name\n", Command(None, "\u00b2", ["name"])),
])
def test_parse_line(line, expected):
    assert parse_line(line) == expected


@pytest.mark.parametrize("line", ["\n", "\r\n", "   \t \n", "# comment\n", "  # play b d4\n", "\x00\x01\n"])
def test_parse_line_ignores(line):
    assert parse_line(line) is None


@pytest.mark.parametrize("line", ["# interrupt\n", "#interrupt\r\n", "  # INTERRUPT  \n"])
def test_parse_line_reports_gogui_interrupt(line):
    assert parse_line(line) is INTERRUPT


def test_format_never_has_an_empty_line_inside():
    assert format_success(3, "D4") == "=3 D4\n\n"
    assert format_success(None) == "=\n\n"
    assert format_failure(None, "unknown command") == "? unknown command\n\n"
    assert format_success(5, "a\n\nb\r\n\n") == "=5 a\nb\n\n"
    assert format_success(None, "\n   A B\n 2 . .\n") == "= \n   A B\n 2 . .\n\n"
    assert format_failure(8, "") == "?8 error\n\n"


# ---- analysis arguments --------------------------------------------------------------------------

@pytest.mark.parametrize("args, colour, interval", [
    ([], None, 0), (["50"], None, 50), (["B", "50"], 1, 50), (["w"], 2, 0),
    (["white", "interval", "25"], 2, 25), (["interval", "10"], None, 10),
])
def test_analyze_args(args, colour, interval):
    a = analysis.parse_analyze_args(args, kata=False)
    assert (a.colour, a.interval) == (colour, interval)


def test_analyze_args_keys():
    a = analysis.parse_analyze_args(["b", "30", "minmoves", "3", "maxmoves", "5", "ownership", "true"],
                                    kata=True)
    assert (a.minmoves, a.maxmoves, a.ownership) == (3, 5, True)
    a = analysis.parse_analyze_args(["b", "30", "avoid", "b", "d4,q16", "1"], kata=False)
    assert a.interval == 30


@pytest.mark.parametrize("args", [["purple", "50"], ["b", "x"], ["b", "50", "interval"],
                                  ["b", "50", "bogus", "1"], ["b", "-5"], ["b", "50", "ownership", "true"],
                                  ["b", "50", "interval", "nan"]])
def test_analyze_args_errors(args):
    with pytest.raises(GtpError):
        analysis.parse_analyze_args(args, kata=False)


# ---- formats -------------------------------------------------------------------------------------

N = 9
COLS = "ABCDEFGHJ"


def fmt(lc: int) -> str:
    return "pass" if lc < 0 else f"{COLS[lc % N]}{N - lc // N}"


@dataclass
class Info:
    move: int
    visits: int
    winrate: float
    prior: float
    lcb: float
    order: int
    pv: list = field(default_factory=list)
    score_lead: float | None = None
    value_winrate: float | None = None
    rollout_winrate: float | None = None


@dataclass
class Snap:
    moves: list
    root_visits: int = 0
    ownership: list | None = None
    score_lead: float | None = None


def snap() -> Snap:
    return Snap(moves=[
        Info(40, 120, 0.5612, 0.2, 0.5201, 0, [40, 30, 50]),
        Info(-1, 60, 0.6, 0.1, 0.5, 1, [-1]),                 # pass: Sabaki drops it
        Info(30, 30, 0.4501, 0.15, -0.02, 2, [30], score_lead=-1.5),
        Info(20, 0, 0.0, 0.05, 0.0, 3, []),                   # unvisited: left out
    ], root_visits=211, ownership=[0.5] * (N * N))


def test_lz_format_as_sabaki_reads_it(sabaki_parse):
    line = analysis.format_lz(snap(), fmt)
    assert "\n" not in line and line.startswith("info move ")
    assert "pass" not in line.split(" pv ")[0]
    got = sabaki_parse(line, kata=False)
    assert [g["vertex"] for g in got] == ["E5", "D6"]
    assert [g["visits"] for g in got] == [120, 30]
    assert got[0]["winrate"] == pytest.approx(56.12)
    assert got[0]["pv"] == ["E5", "D6", "F4"] and got[1]["pv"] == ["D6"]
    for block in re.split(r"\s*info\s+", line)[1:]:
        keys = block.split()[0::2]
        assert keys[:6] == ["move", "visits", "winrate", "prior", "lcb", "order"]
        fields = dict(zip(block.split()[0:12:2], block.split()[1:12:2]))
        for key in ("visits", "winrate", "prior", "lcb", "order"):
            assert re.fullmatch(r"\d+", fields[key]), (key, fields[key])
        assert 0 <= int(fields["lcb"]) <= 10000
    assert [g["fields"]["order"] for g in got] == ["0", "1"]


def test_kata_format_as_sabaki_reads_it(sabaki_parse):
    line = analysis.format_kata(snap(), fmt)
    got = sabaki_parse(line, kata=True)
    assert [g["vertex"] for g in got] == ["E5", "D6"]
    assert got[0]["winrate"] == pytest.approx(56.12)
    assert got[0]["scoreLead"] is None and got[1]["scoreLead"] == -1.5
    assert "e-" not in line and "e+" not in line


def test_kata_ownership_follows_the_moves(sabaki_parse):
    line = analysis.format_kata(snap(), fmt, ownership=True)
    head, own = line.split(" ownership ")
    values = own.split()
    assert len(values) == N * N and all(float(v) == 0.5 for v in values)
    assert len(sabaki_parse(head, kata=True)) == 2


def test_minmoves_and_maxmoves(sabaki_parse):
    assert len(sabaki_parse(analysis.format_lz(snap(), fmt, maxmoves=1), kata=False)) == 1
    got = sabaki_parse(analysis.format_lz(snap(), fmt, minmoves=3), kata=False)
    assert [g["vertex"] for g in got] == ["E5", "D6", "C7"]


def test_nothing_to_show_gives_an_empty_line_that_is_not_written():
    assert analysis.format_lz(Snap(moves=[]), fmt) == ""


def test_chat_line_matches_gtp2ogs():
    # online-go/gtp2ogs src/PvOutputParser.ts, KATAGO
    stop = re.compile(r"(?:CHAT|MALKOVICH):Visits (\d*) Winrate (\d+\.\d\d)% ScoreLead (-?\d+\.\d) "
                      r"ScoreStdev (-?\d+\.\d) (\(PDA (-?\d+.\d\d)\) )?PV (.*)")
    line = analysis.chat_line(snap(), fmt)
    m = stop.search(line)
    assert m and m.group(1) == "211" and m.group(2) == "56.12" and m.group(7) == "E5 D6 F4"


def test_chat_lines_are_what_gtp2ogs_relays():
    # online-go/gtp2ogs src/Bot.ts (plain chat) and src/PvOutputParser.ts (engine detection)
    relayed = re.compile(r"(DISCUSSION|MALKOVICH|MAIN):(.*)")
    assert "KataGo" in analysis.CHAT_FORMAT_LINE and not relayed.search(analysis.CHAT_FORMAT_LINE)
    assert analysis.chat_line(snap(), fmt).startswith("MALKOVICH:Visits 211 ")
    line = analysis.resign_line(snap())
    m = relayed.search(line)
    assert m and m.group(1) == "DISCUSSION" and "win rate is 56.1%" in line
    assert analysis.resign_line(Snap(moves=[])).startswith("DISCUSSION:I resign")


def test_chat_line_shows_the_move_answered_not_the_favourite():
    # the player's pass rules may answer another move than the most visited (here D6, not E5)
    line = analysis.chat_line(snap(), fmt, 30)
    assert "Winrate 45.01% ScoreLead -1.5" in line and line.endswith("PV D6")
    assert analysis.chat_line(snap(), fmt, 40) == analysis.chat_line(snap(), fmt)
    assert analysis.chat_line(snap(), fmt, 12) is None      # a move the search never saw


def test_every_listed_command_has_a_handler():
    names = REGISTRY.names()
    assert len(names) == len(set(names))
    for required in ("protocol_version", "name", "version", "known_command", "list_commands", "quit",
                     "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
                     "lz-analyze", "kata-analyze", "gogui-analyze_commands", "gogui-interrupt"):
        assert required in names


def test_the_server_modules_import_nothing_heavy():
    """gtp.main, its commands, the colours and the model names load neither numba nor onnxruntime:
    the server answers `name` and finds the models before the engine is loaded."""
    code = ("import sys, goengine.gtp.main, goengine.gtp.commands, goengine.gtp.config, "
            "goengine.engine.colors, goengine.models.names; "
            "heavy = [m for m in ('numba', 'numpy', 'onnxruntime', 'torch', 'sgfmill') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
