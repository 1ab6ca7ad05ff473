"""Scoring (area / Tromp-Taylor and territory) on hand-built final positions; handicap placement."""
from __future__ import annotations

import numpy as np
import pytest
from positions import assert_same, check_board, load_board, pt, snapshot

from goengine.engine.board import BLACK, EMPTY, WHITE
from goengine.engine.coords import PASS, format_gtp, loc, parse_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules

# ---- area scoring ----------------------------------------------------------------------------


def test_empty_board_scores_minus_komi():
    for komi in (7.5, 0.5, 0, -3):
        g = Game(9, Rules(komi=komi))
        assert g.area_score() == -komi
        assert np.all(g.ownership() == EMPTY)  # an empty region touching no stone is no one's


def test_single_stone_owns_the_board():
    g = Game(9, Rules(komi=7.5))
    g.play(BLACK, pt(g, "E5"))
    assert g.area_score() == 81 - 7.5
    assert np.all(g.ownership() == BLACK)
    g.play(WHITE, pt(g, "A1"))
    assert g.area_score() == 1 - 1 - 7.5  # every empty point touches both colours: dame
    assert g.ownership()[4, 4] == BLACK and g.ownership()[8, 0] == WHITE
    assert (g.ownership() == EMPTY).sum() == 79


SPLIT = """
    . . X O .
    . . X O .
    . . X O .
    . . X O .
    . . X O ."""


@pytest.mark.parametrize("komi, expected", [(0.5, 4.5), (7.5, -2.5), (5, 0.0), (0, 5)])
def test_area_score_split_board(komi, expected):
    g = load_board(SPLIT, rules=Rules(komi=komi))
    assert g.area_score() == expected
    assert g.score() == expected
    own = g.ownership()
    assert np.all(own[:, :3] == BLACK) and np.all(own[:, 3:] == WHITE)


# Black (outer wall on the left, territory bottom-left) and White (outer wall, territory on the
# right). Inside, White's A7-B5 string and Black's D7-D5 string share the only two liberties C7 and
# C6 and neither can approach: seki.
SEKI = """
    X O . X O . .
    X O . X O . .
    X O O X O . .
    X X X O O . .
    . . X O . . .
    . . X O . . .
    . . X O . . ."""


def test_seki_points_are_neutral():
    g = load_board(SEKI, rules=Rules(komi=7.5))
    check_board(g)
    c7, c6 = pt(g, "C7"), pt(g, "C6")
    assert g.liberties(pt(g, "B7")) == 2 and g.liberties(pt(g, "D7")) == 2
    # neither side can fill a shared liberty without being captured
    for color in (BLACK, WHITE):
        for lc in (c7, c6):
            h = g.copy()
            h.play(color, lc)
            assert h.liberties(lc) == 1
            other = c6 if lc == c7 else c7
            assert h.play(3 - color, other) >= 4
    own = g.ownership()
    assert own[0, 2] == EMPTY and own[1, 2] == EMPTY
    assert (own == EMPTY).sum() == 2
    assert (own == BLACK).sum() == 18  # 12 stones + 6 territory
    assert (own == WHITE).sum() == 29  # 12 stones + 17 territory
    assert g.area_score() == 18 - 29 - 7.5
    # Japanese count: territory only, seki liberties neutral
    assert g.territory_score() == 6 - 17 - 7.5
    assert g.score() == g.area_score()
    assert load_board(SEKI, rules=Rules(komi=7.5, scoring="territory")).score() == 6 - 17 - 7.5


SEKI_DEAD_WHITE = SEKI.replace(""". . X O . . .
    . . X O . . .
    . . X O . . .""", """. . X O . . .
    O . X O . . .
    . . X O . . .""")
SEKI_BOTH_DEAD = SEKI_DEAD_WHITE.replace("""O . X O . . .
    . . X O . . .""", """O . X O . X .
    . . X O . . .""")


def test_dead_stones():
    g = load_board(SEKI_DEAD_WHITE, rules=Rules(komi=7.5))
    a2 = pt(g, "A2")
    assert g.color_at(a2) == WHITE
    # Tromp-Taylor: the white stone counts and spoils Black's territory (now dame)
    assert g.area_score() == 12 - 30 - 7.5
    assert g.area_score(dead=[]) == g.area_score()
    # with A2 dead: as if it were not there
    assert g.area_score(dead=[a2]) == 18 - 29 - 7.5
    assert g.ownership(dead=[a2])[5, 0] == BLACK
    # naming an empty point or a point twice changes nothing
    assert g.area_score(dead=[a2, a2, pt(g, "A1")]) == 18 - 29 - 7.5
    # territory: the dead stone's point is territory and the stone a prisoner
    assert g.territory_score(dead=[a2]) == (6 + 1) - 17 - 7.5
    assert g.territory_score(dead=[a2, a2]) == (6 + 1) - 17 - 7.5
    # scoring never changes the game
    assert g.color_at(a2) == WHITE
    check_board(g)


def test_dead_stones_both_colours():
    g = load_board(SEKI_BOTH_DEAD, rules=Rules(komi=6.5))
    dead = [pt(g, "A2"), pt(g, "F2")]
    assert g.color_at(dead[1]) == BLACK
    assert g.area_score() == 13 - 13 - 6.5  # both territories are spoilt
    assert g.area_score(dead=dead) == 18 - 29 - 6.5
    assert g.territory_score(dead=dead) == (6 + 1) - (17 + 1) - 6.5


def test_territory_counts_captures():
    # Black's A2 capture and White's G6 capture: one prisoner each
    g = load_board("""
        X O . X O O X
        X O . X O . .
        X O O X O . .
        X X X O O . .
        X . X O . . .
        O X X O . . .
        . . X O . . .""", rules=Rules(komi=7.5, scoring="territory"))
    assert g.play(BLACK, pt(g, "A1")) == 1
    assert g.play(WHITE, pt(g, "G6")) == 1
    assert g.captures == (1, 1)
    check_board(g)
    # area: 15 black stones + 3 points, 14 white stones + 15 points
    assert g.area_score() == 18 - 29 - 7.5
    # territory: empty points surrounded plus prisoners
    assert g.territory_score() == (3 + 1) - (15 + 1) - 7.5
    assert g.score() == g.territory_score()
    # a dead stone named on top of captures
    g.play(BLACK, pt(g, "G4"))  # hopeless invasion
    assert g.territory_score(dead=[pt(g, "G4")]) == (3 + 1) - (15 + 1 + 1) - 7.5
    assert g.area_score(dead=[pt(g, "G4")]) == 18 - 29 - 7.5


# ---- handicap --------------------------------------------------------------------------------
# GTP version 2, section 4.1.1 (fixed handicap placement, with GNU Go as reference
# implementation): corners on the 4th line from 13x13 up and on the 3rd line below, side and
# centre stones only on odd sizes >= 9 (up to 9 stones), at most 4 stones on 7x7 and on even
# sizes, none below 7x7.

FIXED_19 = {
    2: "D4 Q16", 3: "D4 Q16 D16", 4: "D4 Q16 D16 Q4", 5: "D4 Q16 D16 Q4 K10",
    6: "D4 Q16 D16 Q4 D10 Q10", 7: "D4 Q16 D16 Q4 D10 Q10 K10",
    8: "D4 Q16 D16 Q4 D10 Q10 K4 K16", 9: "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10",
}
FIXED_13 = {
    2: "D4 K10", 3: "D4 K10 D10", 4: "D4 K10 D10 K4", 5: "D4 K10 D10 K4 G7",
    6: "D4 K10 D10 K4 D7 K7", 7: "D4 K10 D10 K4 D7 K7 G7",
    8: "D4 K10 D10 K4 D7 K7 G4 G10", 9: "D4 K10 D10 K4 D7 K7 G4 G10 G7",
}
FIXED_9 = {
    2: "C3 G7", 3: "C3 G7 C7", 4: "C3 G7 C7 G3", 5: "C3 G7 C7 G3 E5",
    6: "C3 G7 C7 G3 C5 G5", 7: "C3 G7 C7 G3 C5 G5 E5",
    8: "C3 G7 C7 G3 C5 G5 E3 E7", 9: "C3 G7 C7 G3 C5 G5 E3 E7 E5",
}
FIXED_OTHER = {
    (25, 9): "D4 W22 D22 W4 D13 W13 N4 N22 N13",
    (15, 9): "D4 M12 D12 M4 D8 M8 H4 H12 H8",
    (11, 9): "C3 J9 C9 J3 C6 J6 F3 F9 F6",
    (7, 2): "C3 E5", (7, 3): "C3 E5 C5", (7, 4): "C3 E5 C5 E3",
    (8, 4): "C3 F6 C6 F3", (10, 4): "C3 H8 C8 H3", (14, 4): "D4 L11 D11 L4",
}


def _names(g: Game, locs) -> list[str]:
    return [format_gtp(lc, g.size) for lc in locs]


@pytest.mark.parametrize("n, table", [(19, FIXED_19), (13, FIXED_13), (9, FIXED_9)])
def test_fixed_handicap_standard_sizes(n, table):
    g = Game(n)
    for count, expected in table.items():
        got = _names(g, g.fixed_handicap_locs(count))
        assert len(got) == count == len(set(got))
        assert set(got) == set(expected.split()), (n, count)
    # the first two are always the lower-left and upper-right corners, D4 Q16 on 19x19
    assert _names(Game(19), Game(19).fixed_handicap_locs(9)) == FIXED_19[9].split()


@pytest.mark.parametrize("n, count", sorted(FIXED_OTHER))
def test_fixed_handicap_other_sizes(n, count):
    g = Game(n)
    assert set(_names(g, g.fixed_handicap_locs(count))) == set(FIXED_OTHER[(n, count)].split())


@pytest.mark.parametrize("n, max_stones", [(7, 4), (8, 4), (9, 9), (10, 4), (11, 9), (12, 4),
                                           (13, 9), (18, 4), (19, 9), (24, 4), (25, 9)])
def test_fixed_handicap_limits(n, max_stones):
    g = Game(n)
    for count in range(2, max_stones + 1):
        locs = g.fixed_handicap_locs(count)
        assert len(set(locs)) == count
    for count in (-1, 0, 1, max_stones + 1, 10, 20):
        with pytest.raises(ValueError):
            g.fixed_handicap_locs(count)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_fixed_handicap_refused_below_7x7(n):
    for count in (2, 3, 4):
        with pytest.raises(ValueError):
            Game(n).fixed_handicap_locs(count)


def test_set_handicap():
    g = Game(19)
    locs = g.fixed_handicap_locs(9)
    g.set_handicap(locs)
    assert g.to_play == WHITE and g.history == [] and g.move_number == 0
    assert g.handicap == locs and g.captures == (0, 0) and g.last_move is None
    for lc in locs:
        assert g.color_at(lc) == BLACK and g.liberties(lc) == 4
    assert (g.board_colors() == BLACK).sum() == 9
    check_board(g)
    assert g.area_score() == 361 - 7.5  # Tromp-Taylor: Black's stones reach everything
    g.play(WHITE, pt(g, "Q3"))
    assert g.to_play == BLACK
    g.undo()
    assert g.to_play == WHITE and (g.board_colors() == BLACK).sum() == 9
    with pytest.raises(IndexError):
        g.undo()


def test_set_free_handicap_shapes():
    g = Game(3)
    every = [loc(r, c, 3) for r in range(3) for c in range(3)]
    g.set_handicap(every[:-1])  # the largest free handicap: all points but one
    assert (g.board_colors() == BLACK).sum() == 8
    assert g.liberties(every[0]) == 1
    check_board(g)
    # White's only move takes the whole board
    assert g.legal_moves(WHITE) == [every[-1]]
    assert g.play(WHITE, every[-1]) == 8
    assert g.captures == (0, 8)
    check_board(g)
    g2 = Game(9)
    g2.set_handicap([pt(g2, "A1"), pt(g2, "A2"), pt(g2, "B1")])  # stones may touch
    assert g2.liberties(pt(g2, "A1")) == 3
    check_board(g2)


@pytest.mark.parametrize("bad", [
    [],                                   # fewer than two stones
    ["E5"],
    ["E5", "E5"],                         # repeated vertex
    ["E5", "D4", "E5"],
    ["E5", "pass"],                       # pass is not a vertex
    ["E5", "resign"],
])
def test_set_handicap_rejects_bad_lists(bad):
    g = Game(9)
    before = snapshot(g)
    with pytest.raises(ValueError):
        g.set_handicap([parse_gtp(v, 9) for v in bad])
    assert_same(before, snapshot(g))


def test_set_handicap_rejects_off_board_and_too_many():
    g = Game(9)
    before = snapshot(g)
    for locs in ([pt(g, "E5"), 0], [pt(g, "E5"), loc(0, 9, 9)], [pt(g, "E5"), 10_000],
                 [loc(r, c, 9) for r in range(9) for c in range(9)]):
        with pytest.raises(ValueError):
            g.set_handicap(locs)
        assert_same(before, snapshot(g))


def test_set_handicap_needs_an_empty_board():
    g = Game(9)
    g.play(BLACK, pt(g, "E5"))
    before = snapshot(g)
    with pytest.raises(ValueError):
        g.set_handicap(g.fixed_handicap_locs(2))
    assert_same(before, snapshot(g))
    # a pass alone also makes the game non-empty (there is history)
    g = Game(9)
    g.play(BLACK, PASS)
    with pytest.raises(ValueError):
        g.set_handicap(g.fixed_handicap_locs(2))
    # a second handicap
    g = Game(9)
    g.set_handicap(g.fixed_handicap_locs(2))
    before = snapshot(g)
    with pytest.raises(ValueError):
        g.set_handicap(g.fixed_handicap_locs(4))
    assert_same(before, snapshot(g))
    # stones from a loaded position
    g = load_board("""
        . . .
        . X .
        . . .""")
    with pytest.raises(ValueError):
        g.set_handicap([pt(g, "A1"), pt(g, "C3")])
    # after undoing every move the board is empty again and a handicap is accepted
    g = Game(9)
    g.play(BLACK, pt(g, "E5"))
    g.undo()
    g.set_handicap(g.fixed_handicap_locs(2))
    assert g.to_play == WHITE


@pytest.mark.parametrize("rules", [Rules(), Rules(superko="situational")])
def test_handicap_position_starts_the_history(rules):
    # the empty board before the handicap is forgotten; the handicap position (White to move)
    # is the first position seen
    g = Game(9, rules)
    g.set_handicap([pt(g, "E5"), pt(g, "E3")])
    assert g._seen == [g._key()] and g._seen_set == {g._key()}
    assert len(g.board_history) == 1
    g.play(WHITE, pt(g, "E4"))
    assert g.liberties(pt(g, "E4")) == 2
    check_board(g)
    assert np.array_equal(g.board_colors()[4:7, 4], np.array([BLACK, WHITE, BLACK]))
