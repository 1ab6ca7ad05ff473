"""sgf_tools.reader: real KGS / Tygem / AI files, tolerance, broken inputs, fast path. The real
files are fixtures in tests/data; the whole archives of ../shared/data add coverage when present."""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sgfmill import sgf

from goengine.sgf_tools.archives import iter_sgf_bytes
from goengine.sgf_tools.reader import REASONS, SgfError, parse_komi, read_sgf, read_sgf_collection, read_sgf_file
from sample_games import AI, GAMES, KGS_SAMPLES, TYGEM, TYGEM_GAMES, kgs_files, kgs_game, present


def kgs(name: str, **kw):
    return read_sgf_file(str(kgs_game(name)), **kw)


def first_bytes(path: str, n: int) -> list[tuple[str, bytes]]:
    return list(itertools.islice(iter_sgf_bytes(path), n))


def reason(data, **kw) -> str:
    with pytest.raises(SgfError) as ei:
        read_sgf(data, **kw)
    assert ei.value.reason in REASONS
    return ei.value.reason


def sgfmill_main_line(data: bytes):
    """Independent reading with sgfmill's high-level API, converted to our conventions
    (row 0 = top).  Returns (size, setup_black set, setup_white set, moves)."""
    game = sgf.Sgf_game.from_bytes(data)
    size = game.get_size()
    flip = lambda p: None if p is None else (size - 1 - p[0], p[1])
    black, white = set(), set()
    moves = []
    for node in game.get_main_sequence():
        b, w, e = node.get_setup_stones()
        black |= {flip(p) for p in b}
        white |= {flip(p) for p in w}
        colour, move = node.get_move()
        if colour is not None:
            moves.append((colour, flip(move)))
    return size, black, white, moves


# --------------------------------------------------------------------------- KGS files

def test_all_kgs_samples_parse():
    sizes = []
    for path in kgs_files():
        r = read_sgf_file(str(path))
        assert r.source == str(path)
        assert r.moves
        sizes.append(r.size)
    assert {9, 13, 19} <= set(sizes)
    if KGS_SAMPLES.is_dir():
        assert sorted(sizes) == [9] * 4 + [13] + [19] * 14


@pytest.mark.parametrize("path", kgs_files(), ids=lambda p: p.name)
def test_kgs_samples_agree_with_sgfmill(path):
    data = path.read_bytes()
    r = read_sgf(data)
    size, black, white, moves = sgfmill_main_line(data)
    assert r.size == size
    assert set(r.setup_white) == white
    # free-placement handicap stones are moves for sgfmill, setup for us
    n_free = len(r.setup_black) - len(black)
    assert n_free in (0, r.handicap)
    assert set(r.setup_black) == black | {p for _, p in moves[:n_free]}
    assert r.moves == moves[n_free:]
    assert read_sgf(data, fast=False) == r


def test_kgs_fixed_handicap_ab():
    r = kgs("2023-05-18-pachipachi-Landais.sgf")       # HA[5] AB[dd][pd][jj][dp][pp]
    assert r.handicap == 5
    assert r.setup_black == [(3, 3), (3, 15), (9, 9), (15, 3), (15, 15)]
    assert r.setup_white == []
    assert r.moves[0] == ("w", (2, 13))                 # ;W[nc]
    assert len(r.moves) == 186
    assert r.komi == 0.5 and r.result == "B+Resign" and r.winner == "b"
    assert (r.black_rank, r.white_rank) == ("3k", "3d")
    assert (r.black_rank_value, r.white_rank_value) == (-3, 3)


@pytest.mark.parametrize("name,n,stones,first,n_moves", [
    ("2012-08-14-Blubbel-AyaBot4.sgf", 5, ["dd", "pd", "jj", "dp", "pp"], "qn", 399),
    ("2016-09-24-pachipachi-iwonder.sgf", 7, ["pd", "dp", "pp", "dd", "dj", "pj", "jj"], "nc", 216),
    ("2017-10-23-pachipachi-applefishB.sgf", 4, ["qd", "nc", "dc", "cf"], "qo", 295),
])
def test_kgs_free_placement_handicap(name, n, stones, first, n_moves):
    """HA[n] without AB: the first n ';B[..]' moves are the handicap stones."""
    r = kgs(name)
    rc = lambda s: (ord(s[1]) - 97, ord(s[0]) - 97)
    assert r.handicap == n
    assert r.setup_black == [rc(s) for s in stones]
    assert r.moves[0] == ("w", rc(first))
    assert len(r.moves) == n_moves
    assert r.komi == 0.5
    # the game alternates from there on
    assert all(c == ("w" if i % 2 == 0 else "b") for i, (c, _) in enumerate(r.moves))


def test_kgs_draw_and_missing_result():
    draw = kgs("2014-10-12-Fuego9-Orego12.sgf")
    assert draw.size == 9 and draw.komi == 7.0 and draw.result == "0"
    assert draw.winner is None and draw.is_draw
    assert len(draw.moves) == 105
    assert draw.moves[-1] == ("b", None) and draw.moves[-2] == ("w", None)   # ends pass, pass
    assert draw.black_rank == "6k" and draw.white_rank is None
    noresult = kgs("2012-08-14-Blubbel-AyaBot4.sgf")
    assert noresult.result is None and noresult.winner is None and not noresult.is_draw


def test_kgs_header_fields():
    r = kgs("2012-04-24-Charles60-FuegoBot.sgf")
    assert (r.size, r.komi, r.handicap) == (9, 6.5, 0)
    assert (r.black_player, r.white_player) == ("FuegoBot", "Charles60")
    assert (r.rules, r.date, r.result, r.winner) == ("Japanese", "2012-04-24", "W+0.50", "w")
    assert r.moves[:2] == [("b", (4, 4)), ("w", (6, 6))]   # ;B[ee] ;W[gg]
    r13 = kgs("2012-03-05-Fuego13-Zen19S.sgf")
    assert r13.size == 13 and r13.komi == 7.5 and len(r13.moves) == 127
    assert r13.moves[0] == ("b", (3, 8))                   # ;B[id]
    assert r13.black_rank == "5d"


def test_kgs_variations_main_line_only():
    # the score dispute left a second branch; the main line is the first one
    r = kgs("2008-09-16-Fuego-masaician.sgf")
    assert len(r.moves) == 296
    assert r.moves[281:284] == [("w", (7, 4)), ("b", (16, 5)), ("w", (15, 5))]  # ;W[eh] (;B[fq] ;W[fp]
    assert r.moves[-2:] == [("b", None), ("w", None)]
    assert r.result == "B+13.50" and r.winner == "b"


def test_kgs_comments():
    r = kgs("2016-11-29-Zen19L-GodMoves.sgf", comments=True)
    assert r.comments[-1].startswith("Zen19L [9d]: GTP Engine for Zen19L")  # \] unescaped
    assert r.comments[0].startswith("Thundergod [6d]: ah,way too slow")
    assert len(r.comments) > 100
    assert kgs("2016-11-29-Zen19L-GodMoves.sgf").comments == {}


# --------------------------------------------------------------------------- Tygem / AI

@pytest.mark.parametrize("path,n", [(TYGEM_GAMES, 5), (TYGEM, 300)], ids=["fixtures", "shared"])
def test_tygem_games(path, n):
    items = first_bytes(present(path), n)
    recs = [read_sgf(d, name) for name, d in items]
    assert len(recs) == n
    for r in recs:
        assert r.size == 19 and r.komi == 6.5 and r.handicap == 0
        assert r.setup_black == [] and r.setup_white == []
        assert r.rules == "Korean" and r.winner in ("b", "w")
        assert r.black_rank_value == r.white_rank_value == 9
        assert r.moves[0][0] == "b"
    first = recs[0]
    assert first.source.endswith("tygem9d-2015-05/2015-05-01-790141642.sgf")
    assert (first.black_player, first.white_player, first.result) == ("chaos(P)", "tmch", "B+1.5")
    assert first.moves[:3] == [("b", (3, 15)), ("w", (15, 15)), ("b", (3, 2))]


@pytest.mark.parametrize("path,n", [(GAMES, 100), (TYGEM, 1500), (AI, 1500)],
                         ids=["fixtures", "tygem", "ai"])
def test_fast_path_identical_to_sgfmill(path, n):
    items = first_bytes(present(path), n)
    for name, data in items:
        fast = read_sgf(data, name)
        slow = read_sgf(data, name, fast=False)
        assert fast == slow, name
        assert fast.source == slow.source


@pytest.mark.parametrize("path", [GAMES, AI], ids=["fixtures", "ai"])
def test_archive_games_agree_with_sgfmill(path):
    for name, data in first_bytes(present(path), 300):
        r = read_sgf(data, name)
        size, black, white, moves = sgfmill_main_line(data)
        assert (r.size, set(r.setup_black), set(r.setup_white), r.moves) == (size, black, white, moves)


# --------------------------------------------------------------------------- tolerance

def test_komi_forms():
    km = lambda v: read_sgf(b"(;KM[%s];B[pd])" % v).komi
    assert km(b"6.5") == 6.5
    assert km(b"6.50") == 6.5
    assert km(b"750") == 7.5          # Fox: komi x 100
    assert km(b"650") == 6.5
    assert km(b"375") == 7.5          # Fox: 3.75 stones, Chinese counting
    assert km(b"0") == 0.0
    assert km(b"-5.5") == -5.5
    assert km(b"7,5") == 7.5
    assert km(b"") is None
    assert km(b" ") is None
    assert km(b"?") is None
    assert km(b"six") is None
    assert read_sgf(b"(;B[pd])").komi is None
    assert parse_komi(None) is None and parse_komi("0.50") == 0.5


def test_passes():
    r = read_sgf(b"(;SZ[19];B[];W[tt];B[pd])")
    assert r.moves == [("b", None), ("w", None), ("b", (3, 15))]
    r9 = read_sgf(b"(;SZ[9];B[tt];W[])")
    assert r9.moves == [("b", None), ("w", None)]
    # on boards above 19x19 'tt' is a point
    r21 = read_sgf(b"(;SZ[21];B[tt];W[])")
    assert r21.moves == [("b", (19, 19)), ("w", None)]
    assert reason(b"(;SZ[19];B[ut])") == "move off board"


def test_coordinates_row_zero_is_top():
    r = read_sgf(b"(;SZ[19];B[aa];W[sa];B[as];W[ss];B[pd])")
    assert [p for _, p in r.moves] == [(0, 0), (0, 18), (18, 0), (18, 18), (3, 15)]


def test_missing_size_is_19_and_rectangular_forms():
    assert read_sgf(b"(;B[ss])").size == 19
    assert read_sgf(b"(;SZ[19:19];B[ss])").size == 19
    assert read_sgf(b"(;SZ[ 13 ];B[mm])").size == 13


def test_setup_in_root_or_next_node():
    r = read_sgf(b"(;SZ[9]HA[2]AB[cc][gg];W[ee])")
    assert r.setup_black == [(2, 2), (6, 6)] and r.handicap == 2
    r2 = read_sgf(b"(;SZ[9]HA[2];AB[cc][gg];W[ee];B[ff])")      # Fox: AB after the root
    assert r2 == dataclasses.replace(r, moves=r.moves + [("b", (5, 5))])
    r3 = read_sgf(b"(;SZ[9];AB[cc]AW[gg];C[hi];B[ee])")
    assert r3.setup_black == [(2, 2)] and r3.setup_white == [(6, 6)] and r3.handicap == 0
    r4 = read_sgf(b"(;SZ[9]AB[aa:bc];AE[ab];W[ee])")        # compressed list, AE
    assert r4.setup_black == [(0, 0), (0, 1), (1, 1), (2, 0), (2, 1)]


def test_free_placement_needs_exactly_consecutive_black_stones():
    r = read_sgf(b"(;SZ[9]HA[2];B[cc];B[gg];B[ee];W[ff])")     # a third B stays a move
    assert r.setup_black == [(2, 2), (6, 6)]
    assert r.moves == [("b", (4, 4)), ("w", (5, 5))]
    r2 = read_sgf(b"(;SZ[9]HA[3];B[cc];B[gg];W[ee])")           # not n black moves: as is
    assert r2.setup_black == [] and r2.handicap == 3 and len(r2.moves) == 3
    r3 = read_sgf(b"(;SZ[9]HA[2];B[cc];B[];W[ee])")             # a pass is not a stone
    assert r3.setup_black == [] and len(r3.moves) == 3
    r4 = read_sgf(b"(;SZ[9]HA[2]AB[cc][gg];B[ee];W[ff])")       # AB present: moves untouched
    assert r4.moves == [("b", (4, 4)), ("w", (5, 5))]
    assert reason(b"(;SZ[9]HA[2];B[cc];B[gg])") == "no moves"


def test_variations_and_junk():
    r = read_sgf(b"garbage before\n(;SZ[9];B[cc](;W[ee];B[ff])(;W[gg]))trailing junk(;")
    assert r.moves == [("b", (2, 2)), ("w", (4, 4)), ("b", (5, 5))]
    r2 = read_sgf(b"(;SZ[9](;B[cc];W[dd])(;B[ee]))")
    assert r2.moves == [("b", (2, 2)), ("w", (3, 3))]


def test_lowercase_identifiers_and_whitespace():
    r = read_sgf(b"(;GaMe[1]SiZe[9]KoMi[5.5]AddBlack[cc]\n ; W [ee]\r\n;B\t[ff])")
    assert (r.size, r.komi, r.setup_black) == (9, 5.5, [(2, 2)])
    assert r.moves == [("w", (4, 4)), ("b", (5, 5))]


def test_charsets_never_crash():
    gb = "(;CA[gb2312]PB[柯洁]PW[古力]RE[B+R];B[pd])".encode("gb2312")
    r = read_sgf(gb)
    assert (r.black_player, r.white_player) == ("柯洁", "古力")
    kr = read_sgf("(;CA[EUC-KR]PB[이세돌];B[pd])".encode("euc-kr"))
    assert kr.black_player == "이세돌"
    broken = read_sgf(b"(;CA[UTF-8]PB[\xe6\x9f\xaf\xe6]PW[ok];B[pd])")   # truncated UTF-8
    assert broken.black_player.startswith("柯") and broken.white_player == "ok"
    latin = read_sgf(b"(;PB[Jos\xe9];B[pd])")                       # no CA, not UTF-8
    assert latin.black_player == "José"
    unknown = read_sgf(b"(;CA[klingon]PB[Jos\xe9]PW[\xc3\xa9];B[pd])")
    assert unknown.black_player == "José" and unknown.white_player == "é"
    utf8_undeclared = read_sgf("(;PB[柯洁];B[pd])".encode("utf-8"))
    assert utf8_undeclared.black_player == "柯洁"
    mislabelled = read_sgf("(;CA[ISO-8859-1]PB[柯洁];B[pd])".encode("utf-8"))
    assert isinstance(mislabelled.black_player, str)


def test_text_fields():
    r = read_sgf(b"(;PB[ a\\]b ]PW[x\ny]BR[]RE[W+R]DT[2020-01-02]RU[AGA];B[pd])")
    assert r.black_player == "a]b"          # escapes, stripped
    assert r.white_player == "x y"          # SimpleText: newline -> space
    assert r.black_rank is None             # empty -> None
    assert (r.result, r.winner, r.date, r.rules) == ("W+R", "w", "2020-01-02", "AGA")


@pytest.mark.parametrize("data,why", [
    (b"", "empty"),
    (b"  \n\t ", "empty"),
    (bytes(random.Random(7).randrange(256) for _ in range(3000)).replace(b"(", b"."), "not sgf"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not sgf"),
    (b"(;GM[1]SZ[19];B[pd];W[pp];B[", "parse error"),
    (b"(;GM[1]SZ[19];B[pd];W[pp]", "parse error"),
    (b"(;GM[1]SZ[19]PB[unterminated;B[pd]", "parse error"),
    (b"(;GM[1]SZ[19]PB[x]];B[pd])", "parse error"),
    (b"(;SZ[abc];B[aa])", "bad size"),
    (b"(;SZ[0];B[aa])", "bad size"),
    (b"(;SZ[1];B[aa])", "bad size"),
    (b"(;SZ[19:13];B[aa])", "bad size"),
    (b"(;SZ[52];B[aa])", "bad size"),
    (b"(;SZ[9];B[jj])", "move off board"),
    (b"(;SZ[19];B[pd];W[zz])", "move off board"),
    (b"(;SZ[19];B[PD])", "move off board"),
    (b"(;B[a])", "bad move"),
    (b"(;B[abc])", "bad move"),
    (b"(;B[q4])", "bad move"),
    (b"(;B[aa]W[bb])", "bad move"),
    (b"(;B[aa][bb])", "bad move"),
    (b"(;SZ[9]AB[jj];B[aa])", "bad setup"),
    (b"(;SZ[9]AB[a];B[aa])", "bad setup"),
    (b"(;B[aa];AB[bb];W[cc])", "setup in mid-game"),
    (b"(;B[aa];W[bb];AE[aa];B[cc])", "setup in mid-game"),
    (b"(;SZ[19]KM[6.5]PB[x])", "no moves"),
    (b"(;SZ[19];C[nothing])", "no moves"),
    (b"(;GM[2];B[aa])", "not go"),
])
def test_broken_inputs(data, why):
    assert reason(data) == why
    assert reason(data, fast=False) == why


def test_error_carries_source():
    with pytest.raises(SgfError) as ei:
        read_sgf(b"(;SZ[9];B[zz])", "x/y.sgf")
    assert ei.value.source == "x/y.sgf" and "x/y.sgf" in str(ei.value)
    assert isinstance(ei.value, ValueError)


def test_collection():
    items = read_sgf_collection(b"(;B[aa])\n(;SZ[9];B[zz])\n(;B[cc])\n(;B[dd]", "f.sgf")
    assert [type(i).__name__ for i in items] == ["GameRecord", "SgfError", "GameRecord", "SgfError"]
    assert items[0].source == "f.sgf" and items[2].source == "f.sgf#2"
    assert items[1].reason == "move off board" and items[3].reason == "parse error"
    assert [i.reason for i in read_sgf_collection(b"")] == ["empty"]


def test_str_input():
    assert read_sgf("(;PB[柯洁];B[pd])").black_player == "柯洁"


# --------------------------------------------------------------------------- fuzzing

_SEED_GAMES = [
    b"(;GM[1]FF[4]CA[UTF-8]SZ[19]KM[6.5]PB[a]PW[b]BR[9d]RE[B+R]\n;B[pd];W[pp];B[dd];W[]\n;B[tt];W[dp])",
    b"(;SZ[9]HA[2];B[cc];B[gg];W[ee];B[ff];W[fe])",
    b"(;SZ[9]AB[cc]AW[gg](;B[ee]C[x\\]y];W[ff])(;B[aa]))",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_SEED_GAMES), st.lists(st.tuples(st.integers(0, 200), st.integers(0, 3),
                                                       st.sampled_from(list(b"();[]\\ \nBWaztAB:19\xff"))),
                                              max_size=6))
def test_fuzz_only_sgf_errors_and_paths_agree(seed, edits):
    """Mutated games: only SgfError is ever raised, and the fast path agrees with sgfmill."""
    data = bytearray(seed)
    for pos, op, byte in edits:
        pos = pos % (len(data) + 1)
        if op == 0:
            del data[pos:pos + 1]
        elif op == 1:
            data[pos:pos] = bytes([byte])
        else:
            data[pos:pos + 1] = bytes([byte])
    data = bytes(data)
    results = []
    for fast in (True, False):
        try:
            results.append(read_sgf(data, fast=fast))
        except SgfError as e:
            assert e.reason in REASONS
            results.append(e.reason)
    assert results[0] == results[1]


_move_token = st.tuples(
    st.sampled_from([b"B", b"W"]),
    st.sampled_from([b"", b" ", b"\n", b"\r\n\t"]),
    st.sampled_from([b"pd", b"aa", b"ss", b"tt", b"", b"jj", b"zz", b"a", b"st"]),
    st.sampled_from([b"", b" ", b"\n"]))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([b"9", b"19", b"21"]), st.sampled_from([b"", b"HA[2]", b"AB[aa][bb]", b"B[cc]"]),
       st.lists(_move_token, max_size=12))
def test_simple_games_fast_equals_sgfmill(size, extra, moves):
    body = b"".join(b";%s%s%s[%s]" % (sp, c, ws, v) for c, ws, v, sp in moves)
    data = b"(;SZ[%s]%s%s)" % (size, extra, body)
    out = []
    for fast in (True, False):
        try:
            out.append(read_sgf(data, fast=fast))
        except SgfError as e:
            out.append(e.reason)
    assert out[0] == out[1]
