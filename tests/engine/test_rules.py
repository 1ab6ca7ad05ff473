"""The rules core on hand-built positions: captures, ko, superko, suicide, illegal moves, undo, copy
and the Zobrist hash. Boards are ASCII (tests/positions.py), row 0 at the top, GTP names below."""
from __future__ import annotations

import random

import numpy as np
import pytest
from positions import (
    assert_same, board_text, check_board, load_board, pt, rows_array, snapshot,
    zobrist_from_scratch)

from goengine.engine import board as B
from goengine.engine.board import BLACK, EMPTY, WHITE
from goengine.engine.coords import PASS, RESIGN, area, loc
from goengine.engine.game import Game, IllegalMove, format_result, opponent, parse_color
from goengine.engine.rules import Rules, named_rules

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


def test_liberties_are_exact_when_strings_merge():
    g = load_board("""
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .""")
    for v in ("C4", "B3", "D3", "C2"):
        assert g.liberties(pt(g, v)) == 4
    play(g, "C3")  # joins four strings that share liberties
    assert g.liberties(pt(g, "C3")) == 8
    assert all(g.liberties(pt(g, v)) == 8 for v in ("C4", "B3", "D3", "C2"))


def test_liberty_taken_once_from_a_string_touched_on_three_sides():
    g = load_board("""
        . O O O .
        . O . O .
        . . . . .
        . . . . .
        . . . . .""")
    assert g.liberties(pt(g, "B5")) == 7
    play(g, "C4")
    assert g.liberties(pt(g, "B5")) == 6 and g.liberties(pt(g, "C4")) == 1
    assert play(g, "C3") == [1]  # White takes the stone's last liberty
    assert g.color_at(pt(g, "C4")) == EMPTY and g.captures == (0, 1)
    assert g.liberties(pt(g, "B5")) == 7  # C4 is given back once
    assert g.liberties(pt(g, "C3")) == 4 and g.ko_point == -1


def test_board_history_keeps_the_last_eight_positions():
    g = Game(5)
    boards = [g.st[B.F_COLOR].copy()]
    for v in ("C3", "C4", "pass", "D4", "B4", "D3", "B3", "E4", "A4", "pass", "C5"):
        play(g, v)
        boards.append(g.st[B.F_COLOR].copy())
        want = boards[-8:]
        assert len(g.board_history) == len(want)
        assert all(np.array_equal(a, b) for a, b in zip(g.board_history, want))
    for _ in range(6):
        g.undo()
        boards.pop()
        want = boards[-8:]
        assert len(g.board_history) == len(want)
        assert all(np.array_equal(a, b) for a, b in zip(g.board_history, want))


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


# ---- suicide ---------------------------------------------------------------------------------

CORNER_EYE = """
    . X . . .
    X . . . .
    . . . . .
    . . . . .
    . . . . ."""


def test_single_stone_suicide():
    a5 = loc(0, 0, 5)
    for rules, reason in [(Rules(), "suicide"), (NO_SUPERKO, "suicide"), (SITUATIONAL, "suicide"),
                          # with suicide allowed, a lone stone's suicide changes nothing:
                          (SUICIDE, "superko"),              # it repeats the position
                          (SUICIDE_NO_SUPERKO, "suicide")]:  # explicitly refused
        g = load_board(CORNER_EYE, rules=rules, to_play=WHITE)
        assert_illegal_unchanged(g, WHITE, a5, reason)
        assert a5 not in g.legal_moves(WHITE)
        assert g.illegal_reason(BLACK, a5) is None


def test_single_stone_suicide_under_situational_superko_acts_as_a_pass():
    # New Zealand rules: a play is illegal only if it repeats the position after one of the same
    # player's previous moves. White's lone suicide leaves the stones as they are with Black to
    # move, which never occurred: legal. Black doing the same then repeats the start: superko.
    g = load_board(CORNER_EYE, rules=SUICIDE_SITUATIONAL, to_play=WHITE)
    a5 = loc(0, 0, 5)
    h = g.hash
    assert g.illegal_reason(WHITE, a5) is None
    assert g.play(WHITE, a5) == 0
    assert g.hash == h and g.color_at(a5) == EMPTY and g.captures == (1, 0)
    assert g.to_play == BLACK and g.passes_in_a_row == 0
    check_board(g)
    # After Black passes it is White to move with the same stones; a second White suicide would
    # again make "these stones, Black to move", the position White's first suicide made: superko.
    play(g, "pass")
    assert_illegal_unchanged(g, WHITE, a5, "superko")


MULTI_SUICIDE = """
    O O X . .
    . X . . .
    X . . . .
    . . . . .
    . . . . ."""


def test_multi_stone_suicide_illegal_by_default():
    for rules in (Rules(), NO_SUPERKO, SITUATIONAL):
        g = load_board(MULTI_SUICIDE, rules=rules, to_play=WHITE)
        assert_illegal_unchanged(g, WHITE, pt(g, "A4"), "suicide")


@pytest.mark.parametrize("rules", [SUICIDE, SUICIDE_NO_SUPERKO, SUICIDE_SITUATIONAL])
def test_multi_stone_suicide_allowed(rules):
    g = load_board(MULTI_SUICIDE, rules=rules, to_play=WHITE)
    a4 = pt(g, "A4")
    assert g.illegal_reason(WHITE, a4) is None
    assert a4 in g.legal_moves(WHITE)
    assert g.play(WHITE, a4) == 0  # returns stones captured from the opponent
    assert g.captures == (3, 0)    # the three suicided stones are Black's prisoners
    assert g.history == [(WHITE, a4)] and g.to_play == BLACK and g.last_move == a4
    assert g.ko_point == -1
    assert np.array_equal(g.board_colors(), rows_array("""
        . . X . .
        . X . . .
        X . . . .
        . . . . .
        . . . . ."""))
    assert g.liberties(pt(g, "B4")) == 4 and g.liberties(pt(g, "A3")) == 3
    check_board(g)
    # undo brings the three stones back
    g.undo()
    assert np.array_equal(g.board_colors(), rows_array(MULTI_SUICIDE)) and g.captures == (0, 0)
    check_board(g)


def test_suicide_that_captures_is_not_suicide():
    # every neighbour of A4 is Black, but A5 is in atari there: White A4 captures it (a ko)
    g = load_board("""
        X O . . .
        . X . . .
        X . . . .
        . . . . .
        . . . . .""", to_play=WHITE)
    a4 = pt(g, "A4")
    assert g.illegal_reason(WHITE, a4) is None
    assert g.play(WHITE, a4) == 1
    assert g.color_at(pt(g, "A5")) == EMPTY and g.liberties(a4) == 1
    assert g.ko_point == pt(g, "A5") and g.captures == (0, 1)
    check_board(g)


# ---- illegal moves change nothing ------------------------------------------------------------

def test_illegal_moves_leave_the_game_unchanged_midgame():
    g = load_board(KO)
    play(g, "A9", "J1", "E5")  # Black takes the ko
    n = g.size
    assert_illegal_unchanged(g, WHITE, pt(g, "D5"), "ko")
    assert_illegal_unchanged(g, WHITE, pt(g, "E5"), "occupied")
    assert_illegal_unchanged(g, BLACK, pt(g, "A9"), "occupied")
    for off in (0, 1, loc(0, n, n), loc(n, 0, n), loc(-1, 3, n), area(n) - 1, area(n), 10_000, -3):
        assert_illegal_unchanged(g, WHITE, off, "off board")
    before = snapshot(g)
    with pytest.raises(IllegalMove):
        g.play(WHITE, RESIGN)
    assert_same(before, snapshot(g))
    # a suicide and a superko in the same game
    g = load_board(TRIPLE_KO)
    play(g, *TRIPLE_KO_CYCLE[:5])
    assert_illegal_unchanged(g, WHITE, pt(g, "H10"), "superko")
    g = load_board(MULTI_SUICIDE, to_play=WHITE)
    play(g, "pass", "E1")
    assert_illegal_unchanged(g, WHITE, pt(g, "A4"), "suicide")
    # and the game goes on normally afterwards
    play(g, "E2", "D1")
    assert g.move_number == 4


def test_pass_is_always_legal():
    g = load_board(KO)
    assert g.illegal_reason(BLACK, PASS) is None and g.illegal_reason(WHITE, PASS) is None
    play(g, "E5")
    assert g.is_legal(WHITE, PASS)
    assert PASS not in g.legal_moves(WHITE)


# ---- undo and copy ---------------------------------------------------------------------------

def random_game(g: Game, rng: random.Random, n_moves: int, pass_prob: float = 0.05,
                check: bool = False):
    """Play n_moves random legal moves (some passes); yields a snapshot before each move."""
    for _ in range(n_moves):
        c = g.to_play
        move = PASS
        if rng.random() >= pass_prob:
            empties = [int(x) for x in g.st[B.F_ELIST, :g.meta[B.M_NEMPTY]]]
            rng.shuffle(empties)
            for lc in empties:
                if g.is_legal(c, lc):
                    move = lc
                    break
        yield snapshot(g)
        g.play(c, move)
        if check:
            check_board(g)


def test_undo_restores_exactly():
    rng = random.Random(7)
    for n in (5, 9):
        g = Game(n)
        snaps = list(random_game(g, rng, 3 * n * n, check=True))
        assert sum(g.captures) > 10  # the game did capture
        while snaps:
            g.undo()
            assert_same(snaps.pop(), snapshot(g))
            check_board(g)
        with pytest.raises(IndexError):
            g.undo()
        assert g.hash == 0 and np.all(g.board_colors() == EMPTY)


def test_undo_then_replay_is_identical():
    g = load_board(KO)
    play(g, "E5", "A1", "J9", "D5")
    after = snapshot(g)
    g.undo()
    assert g.color_at(pt(g, "E5")) == BLACK and g.captures == (1, 0)
    play(g, "D5")
    assert_same(after, snapshot(g))


def test_undo_keeps_repeated_positions_for_superko():
    # a pass repeats the position's key; undoing the pass must not forget the position
    g = load_board(KO)
    play(g, "E5", "pass", "pass")
    g.undo()
    g.undo()
    assert g.hash in g._seen_set
    assert_illegal_unchanged(g, WHITE, pt(g, "D5"), "ko")
    g.undo()
    assert g.history == [] and len(g._seen) == 1 and g._seen_set == {g.hash}


def test_undo_after_superko_cycle_allows_the_line_again():
    g = load_board(TRIPLE_KO)
    play(g, *TRIPLE_KO_CYCLE[:5])
    for _ in range(5):
        g.undo()
    assert np.array_equal(g.board_colors(), rows_array(TRIPLE_KO)) and g.history == []
    play(g, *TRIPLE_KO_CYCLE[:5])
    assert g.illegal_reason(WHITE, pt(g, "H10")) == "superko"


def test_undo_errors():
    with pytest.raises(IndexError):
        Game(9).undo()
    g = Game(9)
    g.set_handicap(g.fixed_handicap_locs(4))
    with pytest.raises(IndexError):
        g.undo()  # handicap stones are not moves


def test_copy_is_independent():
    rng = random.Random(11)
    g = Game(9)
    snaps = list(random_game(g, rng, 120))
    snaps.append(snapshot(g))
    c = g.copy()
    assert c is not g and c.st is not g.st and c.meta is not g.meta
    assert_same(snaps[-1], snapshot(c))
    # undo in the original, then play elsewhere: the copy does not move
    for _ in range(40):
        g.undo()
    list(random_game(g, rng, 30))
    assert_same(snaps[-1], snapshot(c))
    # the copy undoes through its own history exactly
    for i in range(len(snaps) - 2, len(snaps) - 60, -1):
        c.undo()
        assert_same(snaps[i], snapshot(c))
        check_board(c)
    # and playing in the copy does not disturb the original
    g_before = snapshot(g)
    list(random_game(c, rng, 30))
    assert_same(g_before, snapshot(g))
    # both can undo all the way
    while g.history:
        g.undo()
    while c.history:
        c.undo()
    assert_same(snaps[0], snapshot(c))
    assert_same(snaps[0], snapshot(g))


# ---- Zobrist hash ----------------------------------------------------------------------------

def test_zobrist_matches_scratch_in_random_games():
    rng = random.Random(3)
    for n in (2, 3, 4, 7, 13, 19):
        g = Game(n, rules=SUICIDE if n % 2 else Rules())
        for _ in random_game(g, rng, 2 * n * n):
            assert g.hash == zobrist_from_scratch(g.st, n)
        assert g.hash == zobrist_from_scratch(g.st, n)
        for _ in range(min(20, len(g.history))):
            g.undo()
            assert g.hash == zobrist_from_scratch(g.st, n)


def test_zobrist_depends_only_on_the_stones():
    g1 = Game(9)
    for m in ("C3", "G7", "E5", "pass"):
        g1.play(g1.to_play, PASS if m == "pass" else pt(g1, m))
    g2 = Game(9)
    for m in ("E5", "G7", "C3"):
        g2.play(g2.to_play, pt(g2, m))
    assert g1.hash == g2.hash != 0
    assert g1.to_play != g2.to_play
    # a capture gives the hash of the position built directly
    g = load_board(KO)
    play(g, "E5")
    assert g.hash == load_board(board_text(g)).hash
    # colour matters
    b, w = Game(9), Game(9)
    b.play(BLACK, pt(b, "E5"))
    w.play(WHITE, pt(w, "E5"))
    assert b.hash != w.hash
