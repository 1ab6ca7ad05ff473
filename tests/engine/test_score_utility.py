"""The score utility (KataGo's static and dynamic score utilities, engine.search.leaves) in the
AlphaGo search: its values on finished games scored by the rules, a rollouts-only search that
prefers the larger of two sure wins while reporting win rates and per-move score leads, the
dynamic term's centre on the root's expected score, and kata-analyze's scoreLead over a real
engine process."""
from __future__ import annotations

import re

import pytest

from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import PASS, format_gtp
from goengine.engine.evaluator import UniformEvaluator
from goengine.engine.rules import Rules
from goengine.engine.search.alphago import AlphaGoSearch
from goengine.engine.search.leaves import U_CENTRE, score_utility
from goengine.engine.search.network import NetSearchConfig, utility_row
from positions import load_board

KOMI = 0.0     # the colours swapped, White wins by as much
# finished 5x5 games (every empty point an eye): Black's area less White's, less komi
BLACK_BY_25 = """
X X X X .
X . X X X
X X X X X
X X . X X
X X X X X
"""
BLACK_BY_5 = """
X X X O .
X . X O O
X X X O .
X . X O O
X X X O O
"""


def margin(text: str, black: bool = True) -> float:
    """Black's final margin of the finished game `text` (colours swapped unless `black`)."""
    if not black:
        text = text.replace("X", "x").replace("O", "X").replace("x", "O")
    return load_board(text, Rules(komi=KOMI)).area_score()


def utility(z: float, lead: float, static=0.0, dynamic=0.0, centre=0.0, n=5) -> float:
    return score_utility(z, lead, utility_row(static, float(n), dynamic, centre, 0.75 * n))


def test_finished_games_rank_by_margin_for_either_colour():
    big, small = margin(BLACK_BY_25), margin(BLACK_BY_5)
    assert (big, small) == (25.0, 5.0)
    for weights in ({"static": 0.1}, {"dynamic": 0.3}, {"static": 0.1, "dynamic": 0.3},
                    {"static": 1.0}):
        u_big, u_small = utility(1.0, big, **weights), utility(1.0, small, **weights)
        assert 1.0 >= u_big > u_small > 0.0, weights
        # White's wins, the same boards with the colours swapped: the same utilities for White
        w_big, w_small = margin(BLACK_BY_25, black=False), margin(BLACK_BY_5, black=False)
        assert (w_big, w_small) == (-25.0, -5.0)
        assert utility(-1.0, w_big, **weights) == pytest.approx(-u_big)
        assert utility(-1.0, w_small, **weights) == pytest.approx(-u_small)
        assert -1.0 <= utility(-1.0, w_big, **weights) < utility(-1.0, w_small, **weights) < 0


def test_weight_zero_is_the_result_itself():
    for z in (1.0, 0.0, -1.0):
        for lead in (25.0, -5.0, 0.0):
            assert utility(z, lead) == z
            assert utility(z, lead, centre=20.0) == z


def test_the_dynamic_centre_separates_two_large_wins():
    big, small = margin(BLACK_BY_25), margin(BLACK_BY_5) + 15.0     # 25 and 20
    at_zero = utility(1.0, big, dynamic=0.3) - utility(1.0, small, dynamic=0.3)
    centred = utility(1.0, big, dynamic=0.3, centre=22.0) - utility(1.0, small, dynamic=0.3,
                                                                     centre=22.0)
    assert centred > 3 * at_zero > 0
    # on the centre the dynamic term is 0: the win alone, divided by 1 + weight
    assert utility(1.0, 20.0, dynamic=0.3, centre=20.0) == pytest.approx(1.0 / 1.3)
    # the centre is read from Black's view: White's sure win at White's expected lead
    assert utility(-1.0, -20.0, dynamic=0.3, centre=-20.0) == pytest.approx(-1.0 / 1.3)


# Black wins whatever it plays (komi 7.5, every empty point an eye but A5, A2, and A1 once A2
# takes the white stone there). A5 ataris the two white stones A3-A4, which then cannot escape:
# Black takes them and wins by 25.5. A2 takes A1 but lets White connect A3-A4 to its living
# group at A5: 19.5. The rollouts play either line out the same way every time.
TWO_WINS = """
. O . O X . X
O O O O X X X
. X X X X . X
O X . X X X X
O X X X . X X
. X . X X X .
O X X X X X X
"""


def two_wins_search(static: float, dynamic: float):
    """Two searches of TWO_WINS by the rollouts-only AlphaGo search (uniform priors, so that A5
    and A2 start even; the heuristic playouts), the second on the first one's tree, whose
    expected score centres the dynamic term. Returns (search, first result, second result)."""
    g = load_board(TWO_WINS, Rules(komi=7.5))
    search = AlphaGoSearch(NetSearchConfig(mode="alphago", c_puct=1.0, score_utility=static,
                                           dynamic_score_utility=dynamic),
                           policy=UniformEvaluator(), seed=1)
    first = search.search(g, BLACK, playouts=1000)
    return search, first, search.search(g, BLACK, playouts=1000)


def by_move(result) -> dict:
    return {"pass" if s.move == PASS else format_gtp(s.move, 7): s for s in result.moves}


def test_the_search_prefers_the_larger_sure_win():
    _, _, plain = two_wins_search(0.0, 0.0)
    moves = by_move(plain)
    assert set(moves) == {"A5", "A2", "pass"} and plain.winrate == 1.0
    assert abs(moves["A5"].visits - moves["A2"].visits) <= 0.1 * plain.root_visits
    search, first, scored = two_wins_search(0.1, 0.3)      # KataGo's weights
    moves = by_move(scored)
    assert moves["A5"].visits > 2 * moves["A2"].visits, moves
    # the win rates reported stay the rollouts' results, not the utility
    assert scored.winrate == 1.0 and moves["A5"].rollout_winrate == 1.0
    # the score leads per move are the rollouts' mean margins
    assert moves["A5"].score_lead == pytest.approx(25.5, abs=0.5)
    assert moves["A2"].score_lead == pytest.approx(19.5, abs=0.5)
    assert 19.5 <= scored.score_lead_black <= 25.5
    # the second search's dynamic term is centred on what the first expected, moved a fifth
    # of the way to 0 (KataGo's dynamicScoreCenterZeroWeight)
    assert search._util[U_CENTRE] == pytest.approx(0.8 * first.score_lead_black)


def test_white_prefers_the_larger_sure_win_too():
    swapped = TWO_WINS.replace("X", "x").replace("O", "X").replace("x", "O")
    g = load_board(swapped, Rules(komi=-7.5), to_play=WHITE)
    visits = []
    for static, dynamic in ((0.0, 0.0), (0.1, 0.3)):
        search = AlphaGoSearch(NetSearchConfig(mode="alphago", c_puct=1.0, score_utility=static,
                                               dynamic_score_utility=dynamic),
                               policy=UniformEvaluator(), seed=1)
        search.search(g, WHITE, playouts=1000)
        res = by_move(search.search(g, WHITE, playouts=1000))
        assert res["A5"].score_lead == pytest.approx(25.5, abs=0.5)
        visits.append(res["A5"].visits / res["A2"].visits)
    assert visits[1] > 2 * visits[0], visits


def test_kata_analyze_reports_a_score_lead_per_move(gtp_engine, sabaki_parse):
    """A real engine process, the AlphaGo search with the bundled models and the utility on:
    every move kata-analyze shows has its own scoreLead; the weights are GTP parameters."""
    with gtp_engine("--search", "alphago", "--size", "9", "--playouts", "200",
                    "--score-utility", "0.1", "--dynamic-score-utility", "0.3") as e:
        e.ok("play b E5")
        e.send("kata-analyze w 20\n")
        assert e.line(timeout=180) == "=\n"       # the engine loads first
        line = e.line(timeout=60)
        e.send("\n")
        while e.line(timeout=30) != "\n":
            pass
        parsed = sabaki_parse(line, kata=True)
        assert parsed, line
        leads = [p["scoreLead"] for p in parsed]
        assert all(lead is not None and abs(lead) <= 81 + 7.5 for lead in leads), line
        assert len(set(leads)) > 1, line          # each move's own, not the root's
        assert re.search(r" winrate 0\.\d+ ", line)
        e.ok("goengine-set_param dynamic_score_utility 0.5")
        e.ok("goengine-set_param score_utility 0")
        assert "dynamic_score_utility" in e.ok("goengine-set_param")
        e.fails("goengine-set_param dynamic_score_utility lots")
