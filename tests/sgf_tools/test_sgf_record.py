"""sgf_tools.record: ranks, results, move_key and the held-out split."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import itertools
import pathlib
import random
import sys

import pytest

import goengine.sgf_tools as sgf_tools
from goengine.sgf_tools.archives import iter_games
from goengine.sgf_tools.record import (GameRecord, is_draw_result, parse_margin, parse_rank,
                                        parse_winner)
from sample_games import TYGEM, present

PKG = pathlib.Path(__file__).resolve().parents[2] / "sgf_tools"


@pytest.mark.parametrize("rank,value", [
    ("6d", 6), ("9d", 9), ("1d", 1), ("3k", -3), ("30k", -30), ("1k", -1),
    ("1p", 10), ("9p", 18), ("9P", 18), ("9段", 9), ("8段", 8), ("九段", 9),
    ("P9", 18), ("P8段", 17), ("P9p", 18), ("P", 10), ("9 Dan", 9), ("5 kyu", -5),
    ("2k?", -2), ("4d*", 4), (" 7d ", 7), ("2級", -2), ("3급", -3), ("5단", 5),
    ("职业九段", 18),
    ("?", None), ("", None), (None, None), ("-", None), ("9", None), ("dan", None),
    ("0d", None), ("9娈礭\nWR\\[9", None), ("Insei", None),
])
def test_parse_rank(rank, value):
    assert parse_rank(rank) == value


def test_rank_order():
    order = ["20k", "1k", "1d", "6d", "9d", "1p", "9p"]
    values = [parse_rank(r) for r in order]
    assert values == sorted(values) and len(set(values)) == len(values)


@pytest.mark.parametrize("result,winner,draw", [
    ("B+R", "b", False), ("W+Resign", "w", False), ("B+1.5", "b", False), ("w+t", "w", False),
    ("B+", "b", False), ("W+F", "w", False), ("0", None, True), ("Draw", None, True),
    ("Jigo", None, True), ("Void", None, False), ("?", None, False), ("", None, False),
    (None, None, False), ("黑中盘胜", "b", False), ("白胜2目半", "w", False),
])
def test_results(result, winner, draw):
    assert parse_winner(result) == winner
    assert is_draw_result(result) == draw
    r = GameRecord(result=result, moves=[("b", None)])
    assert r.winner == winner and r.is_draw == draw


def test_record_defaults_and_equality():
    r = GameRecord(moves=[("b", (3, 3))], source="a.sgf", comments={0: "hi"})
    assert r.size == 19 and r.komi is None and r.handicap == 0 and r.first_player == "b"
    assert r == dataclasses.replace(r, source="b.sgf", comments={})   # game fields only
    assert r != dataclasses.replace(r, komi=6.5)
    assert GameRecord().first_player is None


def test_move_key_is_pinned():
    """The key defines the held-out split: its format must never change."""
    r = GameRecord(size=19, setup_black=[(3, 3), (15, 15)],
                   moves=[("w", (2, 13)), ("b", None), ("w", (16, 2))])
    assert r.move_key() == "bc9ba1104252809292fcea6d2c83bfca401da831"
    expected = hashlib.sha1(b"SZ19|ABdd,pp|AW|wnc;b;wcq").hexdigest()
    assert r.move_key() == expected
    assert GameRecord(size=9, moves=[("b", (4, 4))]).move_key() == \
        "fe44c1051a1e6072bb406bc24de495ae6783f670"


def test_move_key_depends_on_the_game_only():
    base = GameRecord(size=19, komi=6.5, setup_black=[(3, 3), (15, 15)],
                      moves=[("w", (2, 13)), ("b", (3, 15))], result="B+R",
                      black_player="x", white_player="y", date="2020-01-01", source="a")
    k = base.move_key()
    same = dataclasses.replace(base, komi=0.5, result="W+3.5", black_player="z", white_player=None,
                               date=None, source="b", rules="Chinese", handicap=2,
                               setup_black=[(15, 15), (3, 3)])          # setup order ignored
    assert same.move_key() == k
    for other in (dataclasses.replace(base, size=13),
                  dataclasses.replace(base, setup_black=[(3, 3)]),
                  dataclasses.replace(base, setup_white=[(3, 3)]),
                  dataclasses.replace(base, moves=base.moves[:1]),
                  dataclasses.replace(base, moves=[("w", (2, 13)), ("b", None)]),
                  dataclasses.replace(base, moves=[("b", (2, 13)), ("b", (3, 15))])):
        assert other.move_key() != k


def test_heldout_edges():
    r = GameRecord(moves=[("b", (3, 3))])
    assert r.heldout(0.0) is False and r.heldout(1.0) is True
    assert r.heldout(-1) is False and r.heldout(2) is True


def random_games(n: int) -> list[GameRecord]:
    """n games of 30 random moves on 19x19, the same n games at every call."""
    rng = random.Random(5)
    return [GameRecord(moves=[("bw"[i % 2], (rng.randrange(19), rng.randrange(19)))
                              for i in range(30)]) for _ in range(n)]


@pytest.mark.parametrize("source", ["random", "tygem"])
def test_heldout_split_is_stable_and_proportional(source):
    games = (random_games if source == "random" else
             lambda n: list(itertools.islice(iter_games(present(TYGEM)), n)))
    recs = games(2000)
    split = [r.heldout(0.1) for r in recs]
    again = [r.heldout(0.1) for r in games(2000)]
    assert split == again
    assert 0.07 < sum(split) / len(split) < 0.13
    # monotone in the fraction: held out at 5% implies held out at 10%
    assert all(s for r, s in zip(recs, split) if r.heldout(0.05))
    # a copy of a game (other names, other source) lands on the same side
    assert all(dataclasses.replace(r, black_player="copy", source="elsewhere").heldout(0.1) == s
               for r, s in zip(recs[:200], split))


def test_package_is_a_leaf():
    """sgf_tools imports only the standard library, sgfmill and itself."""
    stdlib = set(sys.stdlib_module_names)
    for path in PKG.glob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    continue
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                assert top in stdlib or top == "sgfmill", "%s imports %s" % (path.name, n)


def test_public_api_reexported():
    for name in sgf_tools.__all__:
        assert getattr(sgf_tools, name) is not None
    for name in ("GameRecord", "parse_rank", "read_sgf", "SgfError", "iter_games", "ReadStats",
                 "FilterConfig", "apply_filters", "write_sgf"):
        assert name in sgf_tools.__all__


@pytest.mark.parametrize("result, margin", [("B+3.5", 3.5), ("W+0.5", 0.5), ("b+12", 12.0),
                                            (" W+13.50 ", 13.5), ("B+R", None), ("W+T", None),
                                            ("W+Resign", None), ("B+F", None), ("0", None),
                                            ("", None), (None, None), ("B+", None)])
def test_parse_margin_only_for_counted_games(result, margin):
    assert parse_margin(result) == margin
    assert GameRecord(result=result).margin == margin
