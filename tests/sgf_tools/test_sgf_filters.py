"""sgf_tools.filters: every filter, composition, counting, dedupe."""

from __future__ import annotations

import itertools

import pytest

from goengine.sgf_tools.archives import iter_games
from goengine.sgf_tools.filters import (KGS_MIN_RANK, Deduplicator, FilterConfig, FilterStats, apply_filters,
                               build_filters, handicap_filter, komi_filter, length_filter,
                               on_board_filter, rank_filter, result_filter, size_filter, winner_filter)
from goengine.sgf_tools.record import GameRecord
from sample_games import AI, GAMES, TYGEM, present


def game(**kw) -> GameRecord:
    base = dict(size=19, komi=7.5, moves=[("b", (3, 3)), ("w", (15, 15))] * 20, result="B+R",
                black_rank="7d", white_rank="8d")
    base.update(kw)
    return GameRecord(**base)


def kept(records, config, stats=None, **kw):
    return list(apply_filters(records, config, stats, **kw))


def test_size():
    f = size_filter([9, 19])
    assert f(game()) is None and f(game(size=9)) is None and f(game(size=13)) == "board size"
    assert kept([game(size=13)], FilterConfig()) == []                     # default: 19x19 only
    assert len(kept([game(size=13)], FilterConfig(sizes=None))) == 1


def test_handicap():
    assert handicap_filter(max_handicap=0)(game(handicap=2)) == "handicap"
    assert handicap_filter(max_handicap=2)(game(handicap=2)) is None
    assert handicap_filter(exact=2)(game(handicap=3)) == "handicap"
    assert handicap_filter(exact=0)(game()) is None
    recs = [game(handicap=h) for h in range(5)]
    assert [r.handicap for r in kept(recs, FilterConfig(max_handicap=1))] == [0, 1]
    assert [r.handicap for r in kept(recs, FilterConfig(handicap=3))] == [3]


def test_rank_both_players():
    f = rank_filter("6d")
    assert f(game()) is None
    assert f(game(black_rank="5d")) == "rank"
    assert f(game(white_rank="2k")) == "rank"
    assert f(game(white_rank=None)) == "rank"          # unknown rank fails
    assert f(game(black_rank="?")) == "rank"
    assert f(game(black_rank="1p", white_rank="9段")) is None
    assert rank_filter(6)(game(black_rank="6d", white_rank="6d")) is None
    assert FilterConfig.kgs().min_rank == KGS_MIN_RANK == "6d"
    with pytest.raises(ValueError):
        build_filters(FilterConfig(min_rank="strong"))


def test_result_winner_komi_length():
    assert result_filter()(game(result=None)) == "no result"
    assert result_filter()(game(result="0")) is None
    assert winner_filter()(game(result="0")) == "no winner"
    assert winner_filter()(game(result="W+0.5")) is None
    k = komi_filter(5.5, 7.5)
    assert k(game(komi=6.5)) is None and k(game(komi=7.5)) is None
    assert k(game(komi=0.0)) == "komi" and k(game(komi=None)) == "komi"
    assert length_filter(40)(game()) is None and length_filter(41)(game()) == "too short"


@pytest.mark.parametrize("result, off_board", [
    ("B+T", True), ("W+Time", True), ("w+t", True), ("B+F", True), ("W+Forfeit", True),
    ("B+R", False), ("W+Resign", False), ("B+3.5", False), ("0", False), (None, False),
    ("B+", False), ("W+Tx", False)])
def test_on_board_filter_drops_games_won_on_time_or_by_forfeit(result, off_board):
    assert (on_board_filter()(game(result=result)) == "time or forfeit") == off_board
    stats = FilterStats()
    assert len(kept([game(result=result)], FilterConfig(decided_on_board=True), stats)) == (not off_board)
    assert len(kept([game(result=result)], FilterConfig())) == 1          # off by default
    assert stats.rejected == ({"time or forfeit": 1} if off_board else {})


def test_dedupe_stateful_and_shared():
    a = game(black_player="x")
    a_copy = game(black_player="y", komi=6.5, result="W+R")        # same moves: duplicate
    b = game(moves=[("b", (4, 4))] * 40)
    d = Deduplicator()
    assert d(a) is None and d(a_copy) == "duplicate" and d(b) is None and len(d) == 2
    stats = FilterStats()
    assert kept([a, a_copy, b, a], FilterConfig(dedupe=True), stats) == [a, b]
    assert stats.rejected == {"duplicate": 2}
    # a shared deduplicator dedupes across calls
    shared = Deduplicator()
    assert kept([a], FilterConfig(), dedupe=shared) == [a]
    assert kept([a_copy, b], FilterConfig(dedupe=True), dedupe=shared) == [b]
    # fresh state per call without a shared one
    assert kept([a], FilterConfig(dedupe=True)) == [a]
    assert kept([a], FilterConfig(dedupe=True)) == [a]


def test_rejections_counted_by_first_reason():
    recs = [game(), game(size=9), game(handicap=3), game(black_rank="1k"), game(result=None),
            game(komi=None), game(moves=[("b", None)]), game(), game(size=9, result=None)]
    config = FilterConfig(sizes=(19,), max_handicap=0, min_rank="6d", require_result=True,
                          komi_range=(5.5, 7.5), min_moves=30, dedupe=True)
    stats = FilterStats()
    out = kept(recs, config, stats)
    assert out == [recs[0]]
    assert stats.seen == 9 and stats.kept == 1 and stats.rejected_total == 8
    assert stats.rejected == {"board size": 2, "handicap": 1, "rank": 1, "no result": 1,
                              "komi": 1, "too short": 1, "duplicate": 1}
    assert "kept 1 of 9" in str(stats) and stats.as_dict()["kept"] == 1


def test_explicit_filter_list_composes():
    only_black_wins = lambda r: None if r.winner == "b" else "white won"
    recs = [game(), game(result="W+R"), game(size=9)]
    stats = FilterStats()
    out = kept(recs, [size_filter([19]), only_black_wins], stats)
    assert out == [recs[0]] and stats.rejected == {"white won": 1, "board size": 1}


def test_default_config_keeps_everything_on_19():
    recs = [game(result=None, komi=None, black_rank=None, white_rank=None, handicap=9,
                 moves=[("b", None)])]
    assert kept(recs, FilterConfig()) == recs


@pytest.mark.parametrize("paths,copies", [((GAMES,), 3), ((TYGEM, AI), 50)],
                         ids=["fixtures", "shared"])
def test_on_real_games(paths, copies):
    """KGS and Tygem fixtures, or 300 Tygem and 300 AI games of ../shared/data, some twice."""
    recs = [r for p in paths for r in itertools.islice(iter_games(present(p)), 300)]
    tygem = [r for r in recs if "tygem" in r.source]
    stats = FilterStats()
    out = kept(recs + tygem[:copies], FilterConfig.kgs(komi_range=(5.5, 7.5)), stats)
    assert stats.seen == len(recs) + copies and stats.rejected["duplicate"] == copies
    assert all(r.black_rank_value >= 6 and r.white_rank_value >= 6 for r in out)
    assert all(5.5 <= r.komi <= 7.5 and len(r.moves) >= 30 and r.result for r in out)
    assert stats.kept == len(out) == stats.seen - stats.rejected_total
    assert len(tygem) >= 5 and {id(r) for r in tygem} <= {id(r) for r in out}  # all pass
