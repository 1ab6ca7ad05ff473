"""The rules core on hand-built positions: captures, ko, superko, suicide, illegal moves, undo, copy
and the Zobrist hash. Boards are ASCII (tests/positions.py), row 0 at the top, GTP names below."""
from __future__ import annotations

import random

import numpy as np
import pytest
from positions import (
    assert_same, board_text, check_board, load_board, pt, rows_array, snapshot,
    zobrist_from_scratch)

from engine import board as B
from engine.board import BLACK, EMPTY, WHITE
from engine.coords import PASS, RESIGN, area, loc
from engine.game import Game, IllegalMove, format_result, opponent, parse_color
from engine.rules import Rules, named_rules

NO_SUPERKO = Rules(superko="none")
SITUATIONAL = Rules(superko="situational")
SUICIDE = Rules(suicide=True)                     # positional superko + suicide (Tromp-Taylor)
SUICIDE_NO_SUPERKO = Rules(suicide=True, superko="none")
SUICIDE_SITUATIONAL = Rules(suicide=True, superko="situational")  # New Zealand
ALL_RULES = [Rules(), NO_SUPERKO, SITUATIONAL, SUICIDE, SUICIDE_NO_SUPERKO, SUICIDE_SITUATIONAL]


def play(g: Game, *moves: str) -> list[int]:
    """Play GTP vertices alternately starting with g.to_play; returns the capture counts."""
    out = []
    for m in moves:
        out.append(g.play(g.to_play, PASS if m == "pass" else pt(g, m)))
        check_board(g)
    return out


def assert_illegal_unchanged(g: Game, color: int, lc: int, reason: str) -> None:
    before = snapshot(g)
    assert g.illegal_reason(color, lc) == reason
    assert not g.is_legal(color, lc)
    with pytest.raises(IllegalMove) as e:
        g.play(color, lc)
    assert e.value.reason == reason
    assert str(e.value) == reason
    assert_same(before, snapshot(g))
    check_board(g)


# ---- basics ----------------------------------------------------------------------------------

def test_new_game():
    for n in (2, 5, 9, 19, 25):
        g = Game(n)
        assert g.size == n and g.to_play == BLACK and g.move_number == 0
        assert g.komi == 7.5 and g.rules == Rules()
        assert g.history == [] and g.last_move is None and g.captures == (0, 0)
        assert g.hash == 0 and g.passes_in_a_row == 0 and not g.is_over()
        assert g.ko_point == -1
        assert np.all(g.board_colors() == EMPTY) and g.board_colors().shape == (n, n)
        assert g.board_colors().dtype == np.int8
        assert len(g.legal_moves(BLACK)) == n * n
        check_board(g)
    for bad in (0, 1, 26, 100):
        with pytest.raises(ValueError):
            Game(bad)


def test_rules_record():
    r = Rules()
    assert (r.komi, r.superko, r.suicide, r.scoring) == (7.5, "positional", False, "area")
    with pytest.raises(ValueError):
        Rules(superko="simple")
    with pytest.raises(ValueError):
        Rules(scoring="stones")
    with pytest.raises(Exception):
        r.komi = 6.5  # frozen
    assert r.with_komi(0.5) == Rules(komi=0.5)
    assert Rules(superko="none", suicide=True).with_komi(3) == Rules(3, "none", True, "area")
    assert named_rules("Tromp-Taylor", 7.5) == Rules(7.5, "positional", True, "area")
    assert named_rules("japanese", 6.5) == Rules(6.5, "none", False, "territory")
    assert named_rules("NZ", 7) == Rules(7, "situational", True, "area")
    with pytest.raises(ValueError):
        named_rules("ing", 8)


def test_small_helpers():
    assert opponent(BLACK) == WHITE and opponent(WHITE) == BLACK
    assert parse_color("b") == parse_color("Black") == BLACK
    assert parse_color(" W ") == parse_color("white") == WHITE
    with pytest.raises(ValueError):
        parse_color("red")
    assert format_result(3.5) == "B+3.5" and format_result(-0.5) == "W+0.5"
    assert format_result(0) == "0" and format_result(12.0) == "B+12"


def test_play_records_and_alternates():
    g = Game(9)
    assert g.play(BLACK, pt(g, "E5")) == 0
    assert g.to_play == WHITE and g.move_number == 1 and g.last_move == pt(g, "E5")
    assert g.color_at(pt(g, "E5")) == BLACK and g.liberties(pt(g, "E5")) == 4
    g.play(WHITE, PASS)
    assert g.passes_in_a_row == 1 and g.last_move == PASS and g.to_play == BLACK
    g.play(BLACK, PASS)
    assert g.passes_in_a_row == 2 and g.is_over()
    g.play(WHITE, pt(g, "D5"))
    assert g.passes_in_a_row == 0
    assert g.history == [(BLACK, pt(g, "E5")), (WHITE, PASS), (BLACK, PASS), (WHITE, pt(g, "D5"))]
    # GTP may play either colour: the side to move follows the last move
    g.play(WHITE, pt(g, "C5"))
    assert g.to_play == BLACK
    assert g.liberties(pt(g, "D5")) == 5 and g.liberties(pt(g, "E5")) == 3
    with pytest.raises(ValueError):
        g.play(EMPTY, pt(g, "A1"))
    with pytest.raises(ValueError):
        g.play(3, pt(g, "A1"))
    check_board(g)


# ---- captures --------------------------------------------------------------------------------

def test_capture_corner():
    g = load_board("""
        O X . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . .""")
    assert g.liberties(pt(g, "A5")) == 1
    assert g.play(BLACK, pt(g, "A4")) == 1
    assert g.color_at(pt(g, "A5")) == EMPTY and g.captures == (1, 0)
    assert g.liberties(pt(g, "A4")) == 3 and g.liberties(pt(g, "B5")) == 3
    assert g.ko_point == -1
    check_board(g)


def test_capture_edge():
    g = load_board("""
        . X O X .
        . . . . .
        . . . . .
        . . . . .
        . . . . .""", to_play=BLACK)
    assert play(g, "C4") == [1]
    assert np.array_equal(g.board_colors(), rows_array("""
        . X . X .
        . . X . .
        . . . . .
        . . . . .
        . . . . ."""))
    assert g.captures == (1, 0)


def test_capture_centre_string_by_white():
    g = load_board("""
        . . . . . .
        . O O O . .
        O X X X O .
        . O X O . .
        . . . . . .
        . . . . . .""", to_play=WHITE)
    assert g.liberties(pt(g, "B4")) == 1
    assert play(g, "C2") == [4]
    assert np.array_equal(g.board_colors(), rows_array("""
        . . . . . .
        . O O O . .
        O . . . O .
        . O . O . .
        . . O . . .
        . . . . . ."""))
    assert g.captures == (0, 4)
    assert g.liberties(pt(g, "C2")) == 4  # C3 is a liberty again


def test_capture_four_strings_at_once():
    text = """
        . X O X .
        . X O X X
        X O . O O
        . X O X X
        . . X . ."""
    g = load_board(text)
    e = pt(g, "C3")
    for s in ("C5", "B3", "D3", "C2"):
        assert g.liberties(pt(g, s)) == 1
    # looks like suicide (no empty neighbour) but captures: legal
    assert g.illegal_reason(BLACK, e) is None
    assert g.play(BLACK, e) == 6
    assert g.captures == (6, 0)
    assert g.liberties(e) == 4
    assert np.array_equal(g.board_colors(), rows_array("""
        . X . X .
        . X . X X
        X . X . .
        . X . X X
        . . X . ."""))
    check_board(g)
    # for White the same point is a 7-stone suicide
    g2 = load_board(text, to_play=WHITE)
    assert_illegal_unchanged(g2, WHITE, e, "suicide")
    g3 = load_board(text, rules=SUICIDE, to_play=WHITE)
    assert g3.play(WHITE, e) == 0
    assert g3.captures == (7, 0)  # credited to Black
    assert np.array_equal(g3.board_colors(), rows_array("""
        . X . X .
        . X . X X
        X . . . .
        . X . X X
        . . X . ."""))
    check_board(g3)


def test_capture_corner_and_edge_strings_with_one_move():
    g = load_board("""
        O . O X .
        X . X . .
        . . . . .
        . . . . .
        . . . . .""")
    assert g.play(BLACK, pt(g, "B5")) == 2
    assert g.captures == (2, 0)
    assert g.ko_point == -1  # two stones captured: not a ko
    assert g.liberties(pt(g, "B5")) == 3
    assert np.array_equal(g.board_colors(), rows_array("""
        . X . X .
        X . X . .
        . . . . .
        . . . . .
        . . . . ."""))
    check_board(g)


def test_snapback():
    g = load_board("""
        . . X . . .
        O O X . . .
        X X X . . .
        . . . . . .
        . . . . . .
        . . . . . .""")
    # Black throws in at A6: the stone has one liberty, and so has White's string
    assert play(g, "A6") == [0]
    assert g.liberties(pt(g, "A6")) == 1 and g.liberties(pt(g, "A5")) == 1
    # White captures the throw-in: one stone, but by a 3-stone string, so no ko
    assert play(g, "B6") == [1]
    assert g.ko_point == -1
    assert g.liberties(pt(g, "B6")) == 1
    # ... and Black takes back three at once
    assert g.illegal_reason(BLACK, pt(g, "A6")) is None
    assert play(g, "A6") == [3]
    assert g.captures == (3, 1)
    assert np.array_equal(g.board_colors(), rows_array("""
        X . X . . .
        . . X . . .
        X X X . . .
        . . . . . .
        . . . . . .
        . . . . . ."""))


# ---- ko --------------------------------------------------------------------------------------

KO = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X O . . . .
    . . X O . O . . .
    . . . X O . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . ."""


@pytest.mark.parametrize("rules", ALL_RULES)
def test_simple_ko(rules):
    g = load_board(KO, rules=rules)
    assert g.play(BLACK, pt(g, "E5")) == 1
    assert g.ko_point == pt(g, "D5")
    assert g.liberties(pt(g, "E5")) == 1
    # immediate retake: 'ko' under every rule set (simple ko is checked before superko)
    assert_illegal_unchanged(g, WHITE, pt(g, "D5"), "ko")
    assert pt(g, "D5") not in g.legal_moves(WHITE)
    # the ko point is only forbidden to White
    assert g.illegal_reason(BLACK, pt(g, "D5")) is None
    # ko threat and answer, then the retake is legal
    play(g, "A1", "J9")
    assert g.ko_point == -1
    assert g.illegal_reason(WHITE, pt(g, "D5")) is None
    assert play(g, "D5") == [1]
    assert g.captures == (1, 1)
    assert_illegal_unchanged(g, BLACK, pt(g, "E5"), "ko")
    # Black fills elsewhere, White connects the ko
    play(g, "B1", "E5")
    assert g.color_at(pt(g, "E5")) == WHITE and g.ko_point == -1


def test_ko_retake_after_passes_depends_on_superko():
    # after B takes the ko and both pass, White's retake would recreate the starting position
    for rules, reason in [(NO_SUPERKO, None), (Rules(), "superko"), (SITUATIONAL, "superko")]:
        g = load_board(KO, rules=rules)
        play(g, "E5", "pass", "pass")
        assert g.ko_point == -1
        assert g.illegal_reason(WHITE, pt(g, "D5")) == reason
        if reason is None:
            play(g, "D5")
        else:
            assert_illegal_unchanged(g, WHITE, pt(g, "D5"), reason)


def test_ko_is_not_set_by_capture_with_liberties():
    g = load_board("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .""")
    # C4 captures B4 and is left with B4 as its only liberty: a ko
    play(g, "C4")
    assert g.ko_point == pt(g, "B4")
    g2 = load_board("""
        . X . . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .""")
    # the capturing stone at C4 keeps a second liberty (C5): no ko
    play(g2, "C4")
    assert g2.captures == (1, 0)
    assert g2.ko_point == -1
    play(g2, "pass")
    assert g2.illegal_reason(WHITE, pt(g2, "B4")) == "suicide"


# ---- superko ---------------------------------------------------------------------------------

# Three kos between a black and a white wall on the top edge of a 10x10 board (columns A..K, no I).
# Black can take at C10 (capturing B10) and at J10 (capturing H10); White can take at F10
# (capturing E10).
TRIPLE_KO = """
    X O . O X . X O . O
    X X O O O X X X O O
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . .
    . . . . . . . . . ."""
TRIPLE_KO_CYCLE = ["C10", "F10", "J10", "B10", "E10", "H10"]


@pytest.mark.parametrize("rules", [Rules(), SITUATIONAL, SUICIDE])
def test_triple_ko_cycle_is_superko(rules):
    g = load_board(TRIPLE_KO, rules=rules)
    start = g.board_colors().copy()
    start_hash = g.hash
    for m in TRIPLE_KO_CYCLE[:5]:
        assert play(g, m) == [1]
        assert g.ko_point != -1  # every move takes a ko
    last = pt(g, TRIPLE_KO_CYCLE[5])
    assert g.to_play == WHITE
    # the sixth capture would recreate the starting position (same side to move: both kinds)
    assert_illegal_unchanged(g, WHITE, last, "superko")
    assert last not in g.legal_moves(WHITE)
    # only superko forbids it: simple ko does not apply
    assert g.ko_point == pt(g, "F10")
    # and the position it would make is indeed the start
    h = g.copy()
    h.rules = NO_SUPERKO
    h.play(WHITE, last)
    assert np.array_equal(h.board_colors(), start) and h.hash == start_hash


def test_triple_ko_cycle_allowed_without_superko():
    g = load_board(TRIPLE_KO, rules=NO_SUPERKO)
    start = g.board_colors().copy()
    start_hash = g.hash
    for _ in range(3):  # go round the cycle three times
        for m in TRIPLE_KO_CYCLE:
            assert g.illegal_reason(g.to_play, pt(g, m)) is None
            assert play(g, m) == [1]
        assert np.array_equal(g.board_colors(), start) and g.hash == start_hash
    assert g.captures == (9, 9)
    assert g.move_number == 18


def test_positional_and_situational_superko_differ():
    # B takes ko 1, W takes ko 2, B passes, W retakes ko 1: Black retaking ko 2 now recreates the
    # starting stones, but with White to move, whereas Black was to move at the start.
    seq = ["C10", "F10", "pass", "B10"]
    results = {}
    for rules in (Rules(), SITUATIONAL, NO_SUPERKO):
        g = load_board(TRIPLE_KO, rules=rules)
        start = g.board_colors().copy()
        play(g, *seq)
        assert g.to_play == BLACK
        results[rules.superko] = g.illegal_reason(BLACK, pt(g, "E10"))
        if results[rules.superko] is None:
            play(g, "E10")
            assert np.array_equal(g.board_colors(), start) and g.to_play == WHITE
    assert results == {"positional": "superko", "situational": None, "none": None}
    g = load_board(TRIPLE_KO, rules=Rules())
    play(g, *seq)
    assert_illegal_unchanged(g, BLACK, pt(g, "E10"), "superko")
