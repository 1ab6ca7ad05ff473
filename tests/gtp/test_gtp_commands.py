"""engine-gtp as a subprocess: handicap, time, scoring, SGF, KGS, GoGui and parameter commands."""
from __future__ import annotations

import re
import time

import pytest


VERTEX = re.compile(r"[A-HJ-Z](1\d|2[0-5]|[1-9])")


@pytest.fixture(scope="module")
def eng(loaded_engine):
    yield from loaded_engine("--time-per-move", "0.5",
                             settings={"gogui_search_seconds": 0.5, "status_playouts": 600})


def stones(eng) -> dict[str, str]:
    """Vertex -> 'X' / 'O' from showboard."""
    lines = eng.ok("showboard").split("\n")
    cols = lines[0].split()
    out = {}
    for line in lines[1:len(cols) + 1]:
        number, cells = line[:2].strip(), line[3:].replace("(", " ").replace(")", " ")
        for col, cell in zip(cols, cells[::2]):
            if cell in "XO":
                out[f"{col}{number}"] = cell
    return out


# ---- handicap ---------------------------------------------------------------------------------

def test_fixed_handicap(eng):
    eng.ok("boardsize 19")
    assert eng.ok("fixed_handicap 4") == "D4 Q16 D16 Q4"
    assert stones(eng) == {v: "X" for v in ("D4", "Q16", "D16", "Q4")}
    assert "white to play" in eng.ok("showboard")
    assert eng.fails("fixed_handicap 2") == "board not empty"
    eng.ok("clear_board")
    assert eng.fails("fixed_handicap 10") == "invalid number of stones"
    assert eng.fails("fixed_handicap 1") == "invalid number of stones"
    assert len(eng.ok("fixed_handicap 9").split()) == 9
    eng.ok("boardsize 8")
    assert eng.fails("fixed_handicap 5") == "invalid number of stones"
    eng.ok("boardsize 5")
    assert eng.fails("fixed_handicap 2") == "invalid number of stones"
    eng.ok("boardsize 9")


def test_place_and_set_free_handicap(eng):
    eng.ok("clear_board")
    placed = eng.ok("place_free_handicap 3").split()
    assert len(placed) == 3 == len(set(placed)) and all(VERTEX.fullmatch(v) for v in placed)
    assert set(stones(eng)) == set(placed)
    eng.ok("clear_board")
    assert len(set(eng.ok("place_free_handicap 12").split())) == 12
    eng.ok("clear_board")
    assert eng.fails("place_free_handicap 1") == "invalid number of stones"
    assert eng.fails("place_free_handicap 81") == "invalid number of stones"
    assert eng.fails("set_free_handicap d4 d4") == "repeated vertex"
    assert eng.fails("set_free_handicap d4 pass").startswith("invalid vertex")
    assert eng.fails("set_free_handicap d4") == "invalid number of stones"
    assert eng.ok("set_free_handicap c3 g7 C7") == ""
    assert stones(eng) == {"C3": "X", "G7": "X", "C7": "X"}
    assert eng.ok("genmove w", timeout=10)


# ---- time ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("commands", [
    ["time_settings 600 30 5", "time_left black 580 0", "time_left white 240 12"],
    ["time_settings 720 30 1", "time_left b 700 0"],
    ["time_settings 1200 0 0", "time_left black 1100 0"],
    ["time_settings 0 30 1", "time_left black 30 1"],
    ["kgs-time_settings none"],
    ["kgs-time_settings absolute 300"],
    ["kgs-time_settings byoyomi 600 30 5", "time_left black 412 0", "time_left black 27 3"],
    ["kgs-time_settings canadian 600 300 25", "time_left white 240 12"],
    ["kata-time_settings fischer-capped 300 10 600 -1", "time_left black 290 0"],
    ["kata-time_settings fischer 300.5 2.5", "time_left black 12.25 0"],
    ["kata-time_settings byo-yomi 10 5 3"],
    ["time_left black 100 0"],
])
def test_time_commands_accepted(eng, commands):
    for cmd in commands:
        eng.ok(cmd)


def test_kata_list_time_settings(eng):
    kinds = eng.ok("kata-list_time_settings").split()
    for kind in ("none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped"):
        assert kind in kinds


def test_genmove_respects_the_clock(gtp_engine):
    # no --time-per-move: the clock decides; no opening book, whose move needs no clock
    with gtp_engine("--size", "9", "--no-book") as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        e.ok("kgs-time_settings byoyomi 0 3 1")
        e.ok("time_left black 3 1")
        t0 = time.monotonic()
        assert VERTEX.fullmatch(e.ok("genmove b", timeout=10))
        assert time.monotonic() - t0 < 3.0          # inside the 3 s period


# ---- scoring ------------------------------------------------------------------------------------

def _two_walls(eng, extra: tuple[str, ...] = ()) -> None:
    eng.ok("boardsize 5")
    eng.ok("komi 0.5")
    for v in ("c1", "c2", "c3", "c4", "c5"):
        eng.ok(f"play b {v}")
    for v in ("d1", "d2", "d3", "d4", "d5"):
        eng.ok(f"play w {v}")
    for cmd in extra:
        eng.ok(cmd)


def test_final_score_and_status(eng):
    _two_walls(eng)
    assert eng.ok("final_score", timeout=30) == "B+4.5"
    assert eng.ok("final_status_list dead", timeout=30) == ""
    assert eng.ok("final_status_list seki", timeout=30) == ""
    alive = eng.ok("final_status_list alive", timeout=30).split("\n")
    assert sorted(alive) == ["C5 C4 C3 C2 C1", "D5 D4 D3 D2 D1"]


def test_dead_stones_and_territory_rules(eng):
    _two_walls(eng, ("play w a1",))
    assert eng.ok("final_status_list dead", timeout=30) == "A1"
    assert eng.ok("final_score", timeout=30) == "B+4.5"
    eng.ok("kgs-rules japanese")
    assert eng.ok("final_score", timeout=30) == "B+5.5"   # 10 points + 1 prisoner - 5
    move = eng.ok("kgs-genmove_cleanup b", timeout=10)
    assert VERTEX.fullmatch(move) or move == "pass"
    eng.ok("kgs-rules chinese")
    eng.ok("kgs-game_over")
    eng.ok("boardsize 9")
    eng.ok("komi 7.5")


def test_empty_board_score(eng):
    eng.ok("clear_board")
    assert eng.ok("final_score", timeout=30) == "W+7.5"


@pytest.mark.parametrize("rules", ["chinese", "japanese", "aga", "new_zealand", "Japanese"])
def test_kgs_rules(eng, rules):
    eng.ok("clear_board")
    eng.ok(f"kgs-rules {rules}")
    eng.ok("play b e5")
    eng.ok("kgs-rules chinese")


# ---- SGF ------------------------------------------------------------------------------------------

GAME = b"(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese];B[ee];W[cc];B[gc];W[cg];B[gg])\n"


def test_loadsgf(eng, tmp_path):
    path = tmp_path / "game.sgf"
    path.write_bytes(GAME)
    assert eng.ok(f"loadsgf {path}") == "white"
    assert stones(eng) == {"E5": "X", "C7": "O", "G7": "X", "C3": "O", "G3": "X"}
    assert "komi 6.5" in eng.ok("showboard")
    assert eng.ok(f"loadsgf {path} 3") == "black"
    assert stones(eng) == {"E5": "X", "C7": "O"}
    assert eng.ok(f"loadsgf {path} 1") == "black"
    assert stones(eng) == {}
    handicap = tmp_path / "handicap.sgf"
    handicap.write_bytes(b"(;GM[1]SZ[9]HA[2]AB[cc][gg]KM[0.5];W[ee])")
    assert eng.ok(f"loadsgf {handicap}") == "black"
    assert stones(eng) == {"C7": "X", "G3": "X", "E5": "O"}
    setup = tmp_path / "setup.sgf"       # a problem-style setup: both colours, one black stone
    setup.write_bytes(b"(;GM[1]SZ[9]AB[cc]AW[ee][ef];B[gg])")
    assert eng.ok(f"loadsgf {setup}") == "white"
    assert stones(eng) == {"C7": "X", "E5": "O", "E4": "O", "G3": "X"}
    problem = tmp_path / "problem.sgf"   # a position with no moves at all
    problem.write_bytes(b"(;GM[1]SZ[9]AB[cc][dd]AW[ee])")
    assert eng.ok(f"loadsgf {problem}") == "black"
    assert stones(eng) == {"C7": "X", "D6": "X", "E5": "O"}
    eng.ok("komi 7.5")


@pytest.mark.parametrize("name, data, message", [
    ("missing.sgf", None, "cannot read"),
    ("empty.sgf", b"", "cannot load"),
    ("binary.sgf", bytes(range(256)) * 8, "cannot load"),
    ("truncated.sgf", GAME[:30], "cannot load"),
    ("garbage.sgf", b"(;GM[1]SZ[9];B[ee];W[ee])", "cannot load: move 2 is illegal (occupied)"),
    ("offboard.sgf", b"(;GM[1]SZ[9];B[zz])", "cannot load"),
    ("chess.sgf", b"(;GM[3]SZ[8];B[ee])", "cannot load"),
    ("huge.sgf", b"(;GM[1]SZ[52];B[ee])", "cannot load"),
    ("bad_setup.sgf", b"(;GM[1]SZ[9]AB[zz]AW[ee];B[cc])", "cannot load"),
])
def test_loadsgf_bad_files_change_nothing(eng, tmp_path, name, data, message):
    path = tmp_path / name
    if data is not None:
        path.write_bytes(data)
    eng.ok("boardsize 9")
    eng.ok("play b e5")
    eng.ok("play w c3")
    before = eng.ok("showboard")
    assert eng.fails(f"loadsgf {path}").startswith(message)
    assert eng.ok("showboard") == before
    assert eng.fails(f"loadsgf {tmp_path}").startswith("cannot read")      # a directory


def test_printsgf_round_trip(eng, tmp_path):
    eng.ok("boardsize 9")
    eng.ok("komi 5.5")
    eng.ok("fixed_handicap 2")
    for cmd in ("play w e5", "play b d3", "play w pass", "play b g3"):
        eng.ok(cmd)
    text = eng.ok("printsgf")
    assert text.startswith("(;") and "SZ[9]" in text and "KM[5.5]" in text and "HA[2]" in text
    assert ";W[]" in text
    before = eng.ok("showboard")
    path = tmp_path / "out.sgf"
    assert eng.ok(f"printsgf {path}") == ""
    assert path.read_text().strip() == text.strip()
    eng.ok("boardsize 13")
    assert eng.ok(f"loadsgf {path}") == "white"
    assert eng.ok("showboard") == before
    assert eng.fails(f"printsgf {tmp_path}/no/such/dir/x.sgf").startswith("cannot write")
    eng.ok("komi 7.5")


# ---- regression and misc --------------------------------------------------------------------------

def test_reg_genmove_does_not_play(eng):
    eng.ok("clear_board")
    eng.ok("play b e5")
    before = eng.ok("showboard")
    assert VERTEX.fullmatch(eng.ok("reg_genmove w", timeout=10))
    assert eng.ok("showboard") == before


def test_cputime(eng):
    assert float(eng.ok("cputime")) >= 0


def test_genmove_plays_the_move(eng):
    eng.ok("clear_board")
    move = eng.ok("genmove b", timeout=10)
    assert stones(eng) == {move: "X"}
    assert "white to play" in eng.ok("showboard")
    eng.ok("undo")
    assert stones(eng) == {}


def test_genmove_with_no_legal_move_passes(eng):
    eng.ok("boardsize 2")
    eng.ok("play b a1")
    eng.ok("play b b2")             # A2 and B1 are suicide for white
    assert eng.ok("genmove w", timeout=10) == "pass"
    eng.ok("boardsize 9")


# ---- GoGui ----------------------------------------------------------------------------------------

def test_gogui_analyze_commands(eng):
    lines = eng.ok("gogui-analyze_commands").split("\n")
    types = {"gfx", "pspairs", "dboard", "plist", "string", "param"}
    for line in lines:
        kind, label, command = line.split("/")[:3]
        assert kind in types and label
        assert eng.ok(f"known_command {command.split()[0]}") == "true"
    commands = [line.split("/")[2] for line in lines]
    for required in ("gogui-best_moves", "gogui-visit_heatmap", "gogui-ownership", "goengine-set_param"):
        assert required in commands


def test_gogui_board_commands(eng):
    eng.ok("clear_board")
    eng.ok("play b e5")
    gfx = eng.ok("gogui-best_moves", timeout=10).split("\n")
    assert all(line.split()[0] in ("LABEL", "MARK", "TEXT") for line in gfx)
    label = gfx[0].split()[1:]
    assert all(VERTEX.fullmatch(v) for v in label[0::2]) and all(x.endswith("%") for x in label[1::2])
    heat = {line.split()[0]: line.split()[1:] for line in eng.ok("gogui-visit_heatmap", timeout=10).split("\n")}
    pairs = heat["LABEL"]
    assert pairs and all(VERTEX.fullmatch(v) for v in pairs[0::2]) and all(n.isdigit() for n in pairs[1::2])
    assert heat["INFLUENCE"][0::2] == pairs[0::2]
    rows = eng.ok("gogui-ownership", timeout=10).split("\n")
    assert len(rows) == 9
    values = [[float(x) for x in row.split()] for row in rows]
    assert all(len(r) == 9 and all(-1 <= x <= 1 for x in r) for r in values)
    assert values[4][4] > 0.3            # E5 is black's: positive is black in GoGui's dboard


def test_gogui_analysis_stops_on_interrupt(eng):
    eng.ok("goengine-set_param gogui_search_seconds 30")
    eng.send("gogui-best_moves\n")
    time.sleep(0.3)
    t0 = time.monotonic()
    eng.send("# interrupt\n")
    head, _ = eng.response(timeout=3)
    assert head == "=" and time.monotonic() - t0 < 1.0
    eng.ok("goengine-set_param gogui_search_seconds 0.5")


def test_params(eng):
    listing = eng.ok("goengine-set_param").split("\n")
    keys = {}
    for line in listing:
        m = re.fullmatch(r"\[(bool|string)\] (\S+) (.*)", line)
        assert m, line
        keys[m.group(2)] = (m.group(1), m.group(3))
    assert keys["allow_resign"] == ("bool", "1")
    assert "playouts" in keys and "resign_threshold" in keys and "gogui_search_seconds" in keys
    eng.ok("goengine-set_param resign_threshold 0.05")
    assert eng.ok("goengine-get_param resign_threshold") == "0.05"
    eng.ok("goengine-set_param allow_resign 0")
    assert eng.ok("goengine-get_param allow_resign") == "0"
    eng.ok("goengine-set_param allow_resign true")
    assert eng.ok("goengine-get_param allow_resign") == "1"
    eng.ok("goengine-set_param chat false")
    assert eng.fails("goengine-set_param chat maybe").startswith("invalid value")
    eng.ok("goengine-set_param chat true")
    assert keys["time_manager"] == ("string", "dynamic")
    eng.ok("goengine-set_param time_manager simple")
    assert eng.ok("goengine-get_param time_manager") == "simple"
    assert eng.fails("goengine-set_param time_manager fast").startswith("invalid value")
    eng.ok("goengine-set_param time_manager dynamic")


def test_kata_param_commands(eng):
    """KataGo's names for the same parameters: what one sets, the other reads."""
    names = eng.ok("kata-list-params").split()
    assert "lam" in names and "resign_threshold" in names and names == sorted(names)
    eng.ok("kata-set-param lam 0.25")
    assert eng.ok("goengine-get_param lam") == "0.25"
    assert eng.ok("kata-get-param lam") == "0.25"
    assert eng.fails("kata-set-param lam abc").startswith("invalid value")
    assert eng.fails("kata-get-param nosuch").startswith("unknown parameter")
    assert eng.fails("kata-set-param lam").startswith("wrong number of arguments")
    eng.ok("kata-set-param lam 0.5")


def test_kata_names_of_our_parameters(eng):
    """KataGo's maxVisits / maxTime / cpuctExploration / score utility factors and the CLI's
    `lambda` reach the same values."""
    for alias, ours, value in (("maxVisits", "visits", "123"), ("maxPlayouts", "playouts", "45"),
                               ("maxTime", "fixed_time_per_move", "2.5"),
                               ("cpuctExploration", "c_puct", "3.5"), ("lambda", "lam", "0.75"),
                               ("staticScoreUtilityFactor", "score_utility", "0.1"),
                               ("dynamicScoreUtilityFactor", "dynamic_score_utility", "0.3"),
                               ("dynamicScoreCenterScale", "dynamic_score_scale", "0.5"),
                               ("dynamicScoreCenterZeroWeight", "dynamic_score_zero_weight",
                                "0.25")):
        eng.ok(f"kata-set-param {alias} {value}")
        assert eng.ok(f"goengine-get_param {ours}") == value, alias
        assert eng.ok(f"kata-get-param {alias}") == eng.ok(f"kata-get-param {ours}"), alias
    for name, value in (("playouts", "none"), ("visits", "none"), ("fixed_time_per_move", "none"), ("c_puct", "5"),
                        ("lam", "0.5"), ("score_utility", "0.0"), ("dynamic_score_utility", "0.0"),
                        ("dynamic_score_scale", "0.75"), ("dynamic_score_zero_weight", "0.2")):
        eng.ok(f"kata-set-param {name} {value}")
