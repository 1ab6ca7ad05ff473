"""engine.coords: every conversion, at every point of several board sizes."""
from __future__ import annotations

import pytest

from goengine.engine.coords import (
    GTP_COLUMNS, MAX_SIZE, MIN_SIZE, PASS, RESIGN, CoordError, all_locs, area, format_gtp,
    format_sgf, loc, loc_to_pos, loc_to_rc, on_board, parse_gtp, parse_sgf, pos_to_loc, stride)

SIZES = [2, 9, 13, 19, 25]


def test_constants():
    assert PASS == -1 and RESIGN == -2
    assert MIN_SIZE == 2 and MAX_SIZE == 25
    assert GTP_COLUMNS == "ABCDEFGHJKLMNOPQRSTUVWXYZ"
    assert "I" not in GTP_COLUMNS and len(GTP_COLUMNS) == MAX_SIZE


@pytest.mark.parametrize("n", SIZES)
def test_loc_layout(n):
    w = stride(n)
    assert w == n + 2 and area(n) == w * w
    locs = all_locs(n)
    assert len(locs) == len(set(locs)) == n * n
    assert locs == sorted(locs)  # row-major, like Pos
    for r in range(n):
        for c in range(n):
            lc = loc(r, c, n)
            assert lc == (r + 1) * w + c + 1
            assert loc_to_rc(lc, n) == (r, c)
            assert on_board(lc, n)
    # the border ring is off the board, and so are PASS and RESIGN
    onb = set(locs)
    for lc in range(area(n)):
        assert on_board(lc, n) == (lc in onb)
    for lc in (PASS, RESIGN, area(n), area(n) + 5, -7):
        assert not on_board(lc, n)


@pytest.mark.parametrize("n", SIZES)
def test_pos_round_trip(n):
    for r in range(n):
        for c in range(n):
            lc = loc(r, c, n)
            pos = loc_to_pos(lc, n)
            assert pos == r * n + c
            assert pos_to_loc(pos, n) == lc
    assert loc_to_pos(PASS, n) == n * n
    assert pos_to_loc(n * n, n) == PASS
    assert [loc_to_pos(lc, n) for lc in all_locs(n)] == list(range(n * n))


@pytest.mark.parametrize("n", SIZES)
def test_gtp_round_trip_every_point(n):
    seen = set()
    for r in range(n):
        for c in range(n):
            lc = loc(r, c, n)
            text = format_gtp(lc, n)
            assert text == f"{GTP_COLUMNS[c]}{n - r}"
            assert "I" not in text
            assert parse_gtp(text, n) == lc
            assert parse_gtp(text.lower(), n) == lc
            assert parse_gtp(f"  {text}\t", n) == lc
            seen.add(text)
    assert len(seen) == n * n


def test_gtp_orientation():
    # row 0 is the TOP: A19 is (0, 0) on 19x19, A1 is the bottom-left, T19 the top-right
    assert parse_gtp("A19", 19) == loc(0, 0, 19)
    assert parse_gtp("A1", 19) == loc(18, 0, 19)
    assert parse_gtp("T19", 19) == loc(0, 18, 19)
    assert parse_gtp("T1", 19) == loc(18, 18, 19)
    assert parse_gtp("J10", 19) == loc(9, 8, 19)   # J is the 9th column (no I)
    assert parse_gtp("H10", 19) == loc(9, 7, 19)
    assert parse_gtp("K10", 19) == loc(9, 9, 19)
    assert parse_gtp("Z25", 25) == loc(0, 24, 25)
    assert parse_gtp("A1", 2) == loc(1, 0, 2)
    assert parse_gtp("B2", 2) == loc(0, 1, 2)


def test_gtp_pass_and_resign():
    for text in ("pass", "PASS", "Pass", " pass "):
        assert parse_gtp(text, 19) == PASS
    for text in ("resign", "RESIGN", "Resign"):
        assert parse_gtp(text, 19) == RESIGN
    assert format_gtp(PASS, 19) == "pass"
    assert format_gtp(RESIGN, 19) == "resign"


@pytest.mark.parametrize("text, n", [
    ("I5", 19), ("i5", 19), ("I1", 25),         # there is no I column
    ("Z99", 25), ("Z26", 25), ("Z1", 19),         # off the board
    ("A0", 19), ("A00", 19), ("A20", 19), ("T20", 19), ("K1", 9), ("J10", 9),
    ("C1", 2), ("A3", 2),
    ("", 19), ("  ", 19), ("A", 19), ("5", 19), ("55", 19), ("5A", 19), ("AA1", 19),
    ("A-1", 19), ("A+1", 19), ("A 1", 19), ("A1.5", 19), ("A1x", 19), ("@1", 19),
    ("passs", 19), ("tt", 19),
])
def test_gtp_rejects(text, n):
    with pytest.raises(CoordError):
        parse_gtp(text, n)


def test_coord_error_is_value_error():
    assert issubclass(CoordError, ValueError)


@pytest.mark.parametrize("text", ["A\u00b2", "A\u0661"])
def test_gtp_rejects_non_ascii_digits(text):
    with pytest.raises(CoordError):
        parse_gtp(text, 19)


@pytest.mark.parametrize("n", SIZES)
def test_sgf_round_trip_every_point(n):
    for r in range(n):
        for c in range(n):
            lc = loc(r, c, n)
            text = format_sgf(lc, n)
            assert text == chr(ord("a") + c) + chr(ord("a") + r)  # column first, 'a' = top
            assert parse_sgf(text, n) == lc


def test_sgf_orientation():
    assert parse_sgf("aa", 19) == parse_gtp("A19", 19)
    assert parse_sgf("sa", 19) == parse_gtp("T19", 19)
    assert parse_sgf("as", 19) == parse_gtp("A1", 19)
    assert parse_sgf("dp", 19) == parse_gtp("D4", 19)
    assert parse_sgf("pd", 19) == parse_gtp("Q16", 19)
    assert parse_sgf("ie", 9) == parse_gtp("J5", 9)


@pytest.mark.parametrize("n", [2, 9, 13, 19])
def test_sgf_pass_forms_small_boards(n):
    assert parse_sgf("", n) == PASS
    assert parse_sgf("tt", n) == PASS
    assert format_sgf(PASS, n) == ""


@pytest.mark.parametrize("n", [20, 21, 25])
def test_sgf_tt_is_a_point_above_19(n):
    assert parse_sgf("tt", n) == loc(19, 19, n)
    assert format_sgf(loc(19, 19, n), n) == "tt"
    assert parse_sgf("", n) == PASS


@pytest.mark.parametrize("text, n", [
    ("a", 19), ("abc", 19), ("ja", 9), ("aj", 9), ("ss", 9), ("ta", 19), ("zz", 25),
    ("A1", 19), ("AA", 19), ("a1", 19), ("cc", 2),
])
def test_sgf_rejects(text, n):
    with pytest.raises(CoordError):
        parse_sgf(text, n)


@pytest.mark.parametrize("n", SIZES)
def test_gtp_sgf_pos_agree(n):
    for lc in all_locs(n):
        assert parse_sgf(format_sgf(lc, n), n) == parse_gtp(format_gtp(lc, n), n) == lc
        assert pos_to_loc(loc_to_pos(lc, n), n) == lc
