"""Golden tests of the input features, plane group by plane group, on hand-built positions.

Every expected value below was worked out by hand from the definitions in
engine/features/registry.py (buckets), engine/features/alphago.py (eyes, candidates) and
engine/features/ladder.py (ladder reading). Grids: row 0 is the top of the board; '.' = no plane
of the group is set at that point; a number = the bucket value (1..8 for liberties, turns since,
self-atari and liberties after; 0..7 for capture size).
"""
from __future__ import annotations

import numpy as np
import pytest

from goengine.engine import board as B
from goengine.engine import features
from goengine.engine.coords import loc_to_pos, parse_gtp
from goengine.engine.features import FEATURE_SETS, FEATURE_VERSIONS, FeatureSet, extract, extract_into
from goengine.engine.game import Game
from features_positions import decode, grid, load, points

AG = features.get("alphago48")


def group(x: np.ndarray, name: str, fs: FeatureSet = AG) -> np.ndarray:
    return x[fs.slice(name)]


def values(x: np.ndarray, name: str) -> np.ndarray:
    first = 0 if name in ("capture_size", "stone_colour") else 1
    return decode(group(x, name), first)


def plane(x: np.ndarray, name: str) -> np.ndarray:
    return group(x, name)[0]


# ---- registry ----------------------------------------------------------------------------------

def test_alphago48_layout_follows_the_paper():
    assert AG.num_planes == 48
    assert [(g, w) for g, w in AG.planes] == [
        ("stone_colour", 3), ("ones", 1), ("turns_since", 8), ("liberties", 8),
        ("capture_size", 8), ("self_atari_size", 8), ("liberties_after_move", 8),
        ("ladder_capture", 1), ("ladder_escape", 1), ("sensibleness", 1), ("zeros", 1)]
    assert AG.offsets == {"stone_colour": 0, "ones": 3, "turns_since": 4, "liberties": 12,
                          "capture_size": 20, "self_atari_size": 28, "liberties_after_move": 36,
                          "ladder_capture": 44, "ladder_escape": 45, "sensibleness": 46, "zeros": 47}
    assert len(AG.plane_names()) == 48


def test_other_sets_and_versions():
    ag49 = FEATURE_SETS["alphago49"]
    assert ag49.num_planes == 49 and ag49.offsets["player_colour"] == 48
    assert ag49.planes[:-1] == AG.planes
    z = FEATURE_SETS["zero17"]
    assert z.num_planes == 17 and z.offsets == {"own_history": 0, "opponent_history": 8,
                                                "black_to_move": 16}
    assert FEATURE_VERSIONS == {"alphago48": 1, "alphago49": 1, "zero17": 1}


def test_feature_set_rejects_bad_declarations():
    with pytest.raises(ValueError):
        FeatureSet("x", 1, (("liberties", 7),))
    with pytest.raises(ValueError):
        FeatureSet("x", 1, (("ones", 1), ("ones", 1)))
    with pytest.raises(ValueError):
        FeatureSet("x", 1, (("colour", 3),))
    with pytest.raises(ValueError):
        features.get("alphago47")


def test_custom_feature_set_uses_the_same_kernel():
    fs = FeatureSet("libs_only", 1, (("zeros", 1), ("liberties", 8)))
    g = load(ALL_GROUPS, moves=["W B3", "B D2"])
    x = extract(g, fs)
    assert x.shape == (9, 5, 5)
    np.testing.assert_array_equal(x[1:], group(extract(g, "alphago48"), "liberties"))
    assert not x[0].any()


# ---- every group on one small position ---------------------------------------------------------

ALL_GROUPS = """
    . X O . .
    X X O . .
    O . . . .
    . . . . .
    . . . X .
"""  # then W B3 (r2 c1), B D2 (r3 c3): white to move; every other stone is a setup stone


def test_every_group_on_a_small_position():
    g = load(ALL_GROUPS, moves=["W B3", "B D2"])
    assert g.to_play == B.WHITE
    x = extract(g, "alphago48")
    assert x.dtype == np.float32 and x.shape == (48, 5, 5)
    assert set(np.unique(x)) <= {0.0, 1.0}
    # stone colour: 0 = player (white), 1 = opponent, 2 = empty
    np.testing.assert_array_equal(values(x, "stone_colour"), grid("""
        2 1 0 2 2
        1 1 0 2 2
        0 0 2 2 2
        2 2 2 1 2
        2 2 2 1 2"""))
    assert plane(x, "ones").all() and not plane(x, "zeros").any()
    # B3 was played 2 moves ago, D2 1 move ago, setup stones count as 8+
    np.testing.assert_array_equal(values(x, "turns_since"), grid("""
        . 8 8 . .
        8 8 8 . .
        8 2 . . .
        . . . 1 .
        . . . 8 ."""))
    # black A4-B4-B5 has 1 liberty (A5); white C5-C4 and A3-B3 3; black D2-D1 5
    np.testing.assert_array_equal(values(x, "liberties"), grid("""
        . 1 3 . .
        1 1 3 . .
        3 3 . . .
        . . . 5 .
        . . . 5 ."""))
    # every empty point is legal for white; A5 captures the three black stones
    np.testing.assert_array_equal(values(x, "capture_size"), grid("""
        3 . . 0 0
        . . . 0 0
        . . 0 0 0
        0 0 0 . 0
        0 0 0 . 0"""))
    # A5: the lone stone gets B5 and A4 back from the capture. C3 joins both white strings:
    # D5 D4 A2 B2 plus its own C2 D3. E1 is a self-atari of one stone.
    np.testing.assert_array_equal(values(x, "liberties_after_move"), grid("""
        2 . . 3 2
        . . . 4 3
        . . 6 3 3
        3 4 3 . 2
        2 3 2 . 1"""))
    np.testing.assert_array_equal(values(x, "self_atari_size"), grid("""
        . . . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . 1"""))
    assert not plane(x, "ladder_capture").any() and not plane(x, "ladder_escape").any()
    np.testing.assert_array_equal(plane(x, "sensibleness"), grid("""
        1 0 0 1 1
        0 0 0 1 1
        0 0 1 1 1
        1 1 1 0 1
        1 1 1 0 1"""))


def test_perspective_follows_the_colour_argument():
    g = load(ALL_GROUPS, moves=["W B3", "B D2"])
    xb = extract(g, "alphago48", color=B.BLACK)
    xw = extract(g, "alphago48")
    np.testing.assert_array_equal(group(xb, "stone_colour")[0], group(xw, "stone_colour")[1])
    np.testing.assert_array_equal(group(xb, "liberties"), group(xw, "liberties"))
    # for black, A5 is a suicide: no candidate planes there
    assert values(xb, "capture_size")[0, 0] == -1 and plane(xb, "sensibleness")[0, 0] == 0


def test_player_colour_plane():
    g = Game(5)
    x = extract(g, "alphago49")
    assert x.shape == (49, 5, 5) and x[FEATURE_SETS["alphago49"].offsets["player_colour"]].all()
    g.play(B.BLACK, parse_gtp("C3", 5))
    assert not extract(g, "alphago49")[48].any()
    assert extract(g, "alphago49", color=B.BLACK)[48].all()
    np.testing.assert_array_equal(extract(g, "alphago49")[:48], extract(g, "alphago48"))


def test_extract_into_writes_uint8_and_overwrites():
    g = load(ALL_GROUPS, moves=["W B3", "B D2"])
    buf = np.full((2, 48, 5, 5), 7, dtype=np.uint8)
    extract_into(g, "alphago48", buf[1])
    assert (buf[0] == 7).all()
    np.testing.assert_array_equal(buf[1], extract(g, "alphago48").astype(np.uint8))
    packed = np.packbits(buf[1], axis=None)
    np.testing.assert_array_equal(np.unpackbits(packed)[:48 * 25].reshape(48, 5, 5), buf[1])
    with pytest.raises(ValueError):
        extract_into(g, "alphago48", np.zeros((48, 5, 5), dtype=np.float32))
    with pytest.raises(ValueError):
        extract_into(g, "alphago48", np.zeros((49, 5, 5), dtype=np.uint8))


def test_mark_stamps_keep_working_past_32_bits():
    g = load(ALL_GROUPS, moves=["W B3", "B D2"])
    before = extract(g, "alphago48")
    mk, ctr = features._scratch(5)[:2]
    ctr[0] = 2**31 - 3                                    # the stamp grows across calls
    for _ in range(3):
        np.testing.assert_array_equal(extract(g, "alphago48"), before)
    assert ctr[0] >= 2**31


def test_extract_does_not_modify_the_game():
    g = load(LADDER, moves=["B E6"])
    st, meta = g.st.copy(), g.meta.copy()
    extract(g, "alphago48")
    np.testing.assert_array_equal(g.st, st)
    np.testing.assert_array_equal(g.meta, meta)


# ---- turns since -------------------------------------------------------------------------------

def test_turns_since_with_ages_of_eight_and_more_and_a_pass():
    g = Game(9)
    seq = ["A1", "B1", "C1", "D1", "E1", "pass", "F1", "G1", "H1", "J1", "A9"]
    colour = B.BLACK
    for v in seq:
        g.play(colour, parse_gtp(v, 9))
        colour = 3 - colour
    x = extract(g, "alphago48")
    ts = values(x, "turns_since")
    # A9 was the last move (1); J1 2, H1 3, G1 4, F1 5, (pass 6), E1 7, D1 and older 8+
    expect = {"A9": 1, "J1": 2, "H1": 3, "G1": 4, "F1": 5, "E1": 7, "D1": 8, "C1": 8, "B1": 8,
              "A1": 8}
    for v, k in expect.items():
        r, c = divmod(features_pos(v, 9), 9)
        assert ts[r, c] == k, v
    assert (ts >= 0).sum() == len(expect)


def test_handicap_stones_count_as_eight_or_more():
    g = Game(9)
    g.set_handicap(g.fixed_handicap_locs(2))
    g.play(B.WHITE, parse_gtp("E5", 9))
    ts = values(extract(g, "alphago48"), "turns_since")
    assert ts[4, 4] == 1
    assert sorted(ts[ts >= 0].tolist()) == [1, 8, 8]


def features_pos(vertex: str, n: int) -> int:
    return loc_to_pos(parse_gtp(vertex, n), n)


# ---- buckets at their top ----------------------------------------------------------------------

def test_capture_size_and_liberties_top_buckets():
    g = load("""
        O O O O O O O O .
        X X X X X X X X .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, to_play="B")
    x = extract(g, "alphago48")
    assert values(x, "capture_size")[0, 8] == 7           # 8 stones: the 7-or-more plane
    assert values(x, "liberties")[1, 0] == 8              # 9 liberties: the 8-or-more plane
    assert values(x, "liberties")[0, 0] == 1
    assert values(x, "liberties_after_move")[0, 8] == 2   # J8 and the captured H9
    assert values(x, "liberties_after_move")[1, 8] == 8   # joins the 9-liberty string: 8 + J9 - J8


def test_self_atari_top_bucket_and_liberties_after_eight():
    g = load("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . O O O O O O O O
        X X X X X X X X .
    """, to_play="B")
    x = extract(g, "alphago48")
    assert values(x, "self_atari_size")[8, 8] == 8        # 9 stones left with 1 liberty
    assert values(x, "liberties_after_move")[8, 8] == 1
    assert values(x, "self_atari_size")[7, 0] == -1       # A2 gives A3 and J1
    assert values(x, "liberties_after_move")[7, 0] == 2
    xw = extract(g, "alphago48", color=B.WHITE)
    assert values(xw, "liberties_after_move")[8, 8] == 8  # 9 - J1: still the 8-or-more plane


# ---- capture, self-atari and snapback ----------------------------------------------------------

SNAPBACK = """
    . . O X .
    O O O X .
    X X X X .
    . . . . .
    . . . . .
"""


def test_snapback_capture_and_self_atari_sizes():
    g = load(SNAPBACK, to_play="B")
    x = extract(g, "alphago48")
    # the throw-in B5 and A5 are self-ataris of one stone that capture nothing
    assert values(x, "self_atari_size")[0, 1] == 1 and values(x, "self_atari_size")[0, 0] == 1
    assert values(x, "capture_size")[0, 1] == 0 and values(x, "liberties_after_move")[0, 1] == 1
    g.play(B.BLACK, parse_gtp("B5", 5))
    x = extract(g, "alphago48")
    # white takes one stone at A5, and its five stones are left with the single liberty B5
    assert values(x, "capture_size")[0, 0] == 1
    assert values(x, "liberties_after_move")[0, 0] == 1
    assert values(x, "self_atari_size")[0, 0] == 5
    assert plane(x, "ladder_escape")[0, 0] == 0           # still in atari after the capture
    g.play(B.WHITE, parse_gtp("A5", 5))
    x = extract(g, "alphago48")
    # the snapback: B5 takes five, and the lone stone gets A5, C5 and B4 as liberties
    assert values(x, "capture_size")[0, 1] == 5
    assert values(x, "liberties_after_move")[0, 1] == 3
    assert values(x, "self_atari_size")[0, 1] == -1


def test_ko_point_is_not_a_candidate():
    g = load("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """, moves=["B C4"])
    assert g.ko_point == parse_gtp("B4", 5)
    x = extract(g, "alphago48")                           # white to move, B4 is the ko point
    for name in ("capture_size", "liberties_after_move"):
        assert values(x, name)[1, 1] == -1
    assert plane(x, "sensibleness")[1, 1] == 0
    assert values(x, "capture_size")[4, 4] == 0           # other points are candidates
    xb = extract(g, "alphago48", color=B.BLACK)           # the ban is white's only
    assert values(xb, "capture_size")[1, 1] == 0
    assert plane(xb, "sensibleness")[1, 1] == 1           # false eye: two white diagonals


# ---- sensibleness and the eye rule -------------------------------------------------------------

EYES = """
    . . . . . . . X .
    . O X . . O X . X
    . X . X . X . X .
    . . X . . . X O .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . X . . . X O X
    . X . X . X . X .
"""


def test_sensibleness_true_and_false_eyes():
    # centre C7: one white diagonal (B8) -> true eye.  centre G7: two (F8, H6) -> false.
    # edge C1: no white diagonal -> true.  edge G1: one (H2) -> false.
    # corner J9: diagonal H8 empty -> true.  corner J1: diagonal H2 white -> false.
    g = load(EYES, to_play="B")
    x = extract(g, "alphago48")
    sens = plane(x, "sensibleness")
    expect = {"C7": 0, "G7": 1, "C1": 0, "G1": 1, "J9": 0, "J1": 1, "A9": 1, "E5": 1}
    for v, s in expect.items():
        r, c = divmod(features_pos(v, 9), 9)
        assert sens[r, c] == s, v
    # every true eye is still a legal move (liberties after > 0) though not sensible
    assert values(x, "liberties_after_move")[2, 2] >= 1
    # for white, filling black's eyes is suicide: not legal, hence not sensible either
    xw = extract(g, "alphago48", color=B.WHITE)
    for v in ("C7", "C1", "J9"):
        r, c = divmod(features_pos(v, 9), 9)
        assert plane(xw, "sensibleness")[r, c] == 0 and values(xw, "capture_size")[r, c] == -1


# ---- ladders -----------------------------------------------------------------------------------

# White E5 has two liberties (E6, F5); black D5, E4 and the diagonal F6 make the ladder shape.
# Black E6 sends the runner down-right along F5 F4 G4 G3 H3 H2 J2 to the right edge; black F5 sends
# it up-left along E6 D6 D7 C7 C8 B8 B9 to the top edge. {b} is H2, on the down-right path.
LADDER_TEMPLATE = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . X . . .
    . . . X O . . . .
    . . . . X . . . .
    . . . . . . . . .
    . . . . . . . {b} .
    . . . . . . . . .
"""
LADDER = LADDER_TEMPLATE.replace("{b}", ".")


def ladder_points(g, color=None):
    x = extract(g, "alphago48", color)
    return points(g, plane(x, "ladder_capture")), points(g, plane(x, "ladder_escape"))


def test_ladder_works_to_the_edge_in_both_directions():
    assert ladder_points(load(LADDER, to_play="B")) == ({"E6", "F5"}, set())


def test_ladder_breaker_of_the_runner_colour():
    g = load(LADDER_TEMPLATE.replace("{b}", "O"), to_play="B")
    assert ladder_points(g) == ({"F5"}, set())            # E6 runs into the white H2


def test_ladder_breaker_of_the_chaser_colour_does_not_break():
    g = load(LADDER_TEMPLATE.replace("{b}", "X"), to_play="B")
    assert ladder_points(g) == ({"E6", "F5"}, set())


def test_ladder_escape_only_with_a_breaker():
    # after black E6 white is in atari and F5 is its only liberty
    g = load(LADDER, moves=["B E6"])
    assert ladder_points(g) == (set(), set())
    g = load(LADDER_TEMPLATE.replace("{b}", "O"), moves=["B E6"])
    assert ladder_points(g) == (set(), {"F5"})
    g = load(LADDER_TEMPLATE.replace("{b}", "X"), moves=["B E6"])
    assert ladder_points(g) == (set(), set())


def test_ladder_escape_by_capturing_a_chasing_stone():
    # White E5 is in atari (F5). Extending at F5 leaves one liberty (F6); capturing the black E6,
    # itself in atari, at F6 gives E6 and F5, and black's only atari F5 lets white connect at E6.
    g = load("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . O . . . .
        . . . O X . . . .
        . . . X O . X . .
        . . . . X X . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """, to_play="W")
    assert ladder_points(g) == (set(), {"F6"})
    x = extract(g, "alphago48")
    assert values(x, "capture_size")[3, 5] == 1
    assert values(x, "self_atari_size")[4, 5] == 2


EDGE = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X {a} . . . .
    . . X O . {a} . . .
    . . X . . . . . .
"""


def test_ladder_capture_on_the_edge():
    # white D2 (E2, D1): black E2 leaves D1, where white has one liberty (E1) next to black C1.
    # Black D1 instead lets white out at E2 with three liberties.
    assert ladder_points(load(EDGE.replace("{a}", "."), to_play="B")) == ({"E2"}, set())


def test_ladder_fails_when_the_chasers_atari_is_a_self_atari_the_runner_captures():
    # With white E3 and F2 black's E2 has one liberty (E1): white takes it and gets out.
    assert ladder_points(load(EDGE.replace("{a}", "O"), to_play="B")) == (set(), set())


def test_ladder_escape_plane_is_for_the_player_only():
    # the same atari position seen from black (not to move): black has no string in atari
    g = load(LADDER, moves=["B E6"])
    assert ladder_points(g, color=B.BLACK) == (set(), set())


def test_long_ladder_across_the_board_to_the_corner():
    # 19x19: white D4 with black D3 below, E4 right and C5 up-left. Black C4 sends the runner
    # up-right along D5 E5 E6 F6 ... over the whole board to the top or right edge (about 60
    # plies); black D5 sends it down-left to the nearby edge.
    rows = [["."] * 19 for _ in range(19)]
    rows[15][3] = "O"           # D4
    rows[16][3] = "X"           # D3
    rows[15][4] = "X"           # E4
    rows[14][2] = "X"           # C5
    g = load("\n".join(" ".join(r) for r in rows), to_play="B")
    assert ladder_points(g) == ({"C4", "D5"}, set())
    rows[2][16] = "O"           # a white breaker on the diagonal near the top-right corner (R17)
    g = load("\n".join(" ".join(r) for r in rows), to_play="B")
    assert ladder_points(g) == ({"D5"}, set())
    rows[2][16] = "X"           # a black stone there changes nothing
    g = load("\n".join(" ".join(r) for r in rows), to_play="B")
    assert ladder_points(g) == ({"C4", "D5"}, set())


# ---- zero17 ------------------------------------------------------------------------------------

def test_zero17_history_order_after_moves_and_a_capture():
    g = Game(5)
    moves = ["B C3", "W C2", "B B2", "W D4", "B D2", "W A5", "B C1"]  # B C1 captures C2
    boards = [g.board_colors().copy()]
    for mv in moves:
        colour, v = mv.split()
        g.play(B.BLACK if colour == "B" else B.WHITE, parse_gtp(v, 5))
        boards.append(g.board_colors().copy())
    assert g.board_colors()[3, 2] == B.EMPTY              # captured
    x = extract(g, "zero17")
    assert x.shape == (17, 5, 5)
    me, opp = B.WHITE, B.BLACK                            # white to move
    for i in range(8):
        past = boards[-1 - i]
        np.testing.assert_array_equal(x[i], past == me, err_msg=f"own {i}")
        np.testing.assert_array_equal(x[8 + i], past == opp, err_msg=f"opp {i}")
    assert x[0, 3, 2] == 0 and x[1, 3, 2] == 1            # the captured stone one position ago
    assert not x[16].any()
    xb = extract(g, "zero17", color=B.BLACK)
    np.testing.assert_array_equal(xb[:8], x[8:16])
    assert xb[16].all()


def test_zero17_positions_before_the_start_are_zero():
    g = Game(9)
    g.set_handicap(g.fixed_handicap_locs(2))
    g.play(B.WHITE, parse_gtp("E5", 9))
    g.play(B.BLACK, parse_gtp("D4", 9))
    x = extract(g, "zero17")                              # white to move
    assert x[0].sum() == 1 and x[1].sum() == 1 and x[2].sum() == 0
    assert x[8].sum() == 3 and x[9].sum() == 2 and x[10].sum() == 2
    assert not x[3:8].any() and not x[11:16].any()


def test_zero17_after_undo_matches_a_replay():
    g = Game(5)
    for i, v in enumerate(["C3", "C2", "B2", "D4", "D2", "A5", "C1", "E5"]):
        g.play(B.BLACK if i % 2 == 0 else B.WHITE, parse_gtp(v, 5))
    g.undo()
    h = Game(5)
    for colour, lc in g.history:
        h.play(colour, lc)
    np.testing.assert_array_equal(extract(g, "zero17"), extract(h, "zero17"))
