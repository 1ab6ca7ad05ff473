"""The one dead-stone judgement (engine.deadstones, docs/algorithms.md §5.3) on real counted games,
a seki, and the agreement of the count with the engine's own search."""
from __future__ import annotations

from pathlib import Path

import pytest

from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import PASS, parse_gtp
from goengine.engine.deadstones import judge
from goengine.engine.evaluator import UniformEvaluator
from goengine.engine.game import Game
from goengine.engine.player import Player, PlayerConfig
from goengine.engine.replay import replay
from goengine.engine.rules import Rules, named_rules
from goengine.engine.search.mcts import MctsSearch
from goengine.engine.search.policy import PolicyPlayer
from goengine.sgf_tools import read_sgf_file

GAMES = Path(__file__).parents[1] / "data" / "games" / "tygem9d-2015-06"

# Final positions of counted Tygem 9-dan games (Korean rules, komi 6.5) where the old judgement
# (mean ownership of a 4,000-simulation heuristic MCTS, dead at -0.5) named the wrong winner:
# it counted B+5.5 as W+10.5, W+5.5 as B+68.5 and W+8.5 as B+28.5. GNU Go 3.8 names all three
# winners (tests/data/games/SOURCES.md).
COUNTED = sorted(GAMES.glob("*.sgf"))


def _final(path: Path) -> tuple[Game, str]:
    rec = read_sgf_file(path)
    return replay(rec, named_rules("korean", rec.komi)), rec.result


def _player() -> Player:
    return Player(PolicyPlayer(UniformEvaluator(), seed=1), PlayerConfig(allow_resign=False))


@pytest.mark.parametrize("path", COUNTED, ids=lambda p: p.stem)
def test_final_score_names_the_recorded_winner(path):
    game, result = _final(path)
    score = _player().final_score(game)
    assert (score > 0) == (result[0] == "B"), (result, score)


def test_the_fixtures_are_there():
    assert len(COUNTED) == 3


def _seki() -> Game:
    """9x9: black B9 B8 B7 C7 and white D9 D8 D7 share the liberties C9 and C8 and have no eye:
    a seki, inside white's living wall (A, B6, C6..C1) and black's (E9..E6, D6..D1)."""
    g = Game(9, Rules(komi=7.0))
    black = "B9 B8 B7 C7 E9 E8 E7 E6 D6 D5 D4 D3 D2 D1"
    white = "D9 D8 D7 A9 A8 A7 A6 B6 C6 C5 C4 C3 C2 C1"
    for b, w in zip(black.split(), white.split()):
        g.play(BLACK, parse_gtp(b, 9))
        g.play(WHITE, parse_gtp(w, 9))
    return g


def test_seki_strings_are_neither_dead_nor_counted_away():
    g = _seki()
    status = _player().final_status(g)
    seki = {parse_gtp(v, 9) for v in "B9 B8 B7 C7 D9 D8 D7".split()}
    assert set(status["seki"]) == seki
    assert status["dead"] == []
    # area: black 45 (E..J) + 6 (D1..D6) + 4 in seki; white 21 + 3 in seki; C9, C8 neutral
    assert _player().final_score(g) == 55 - 24 - 7.0


def test_judgement_is_the_same_whoever_is_to_move():
    """Both sides move first in turn in the playouts: a pass does not change the judgement."""
    game, _ = _final(COUNTED[0])
    before = judge(game, playouts=400)
    game.play(game.to_play, PASS)
    after = judge(game, playouts=400)
    assert before.dead == after.dead and before.seki == after.seki


@pytest.mark.parametrize("path", COUNTED, ids=lambda p: p.stem)
def test_final_score_agrees_in_sign_with_the_last_search(path):
    """A finished game: the opponent passes, the engine searches (and passes: the game ends),
    then counts; its score estimate and its final_score name the same winner."""
    game, _ = _final(path)
    game.play(game.to_play, PASS)
    player = Player(MctsSearch(seed=1), PlayerConfig(playouts=1500, allow_resign=False))
    player.genmove(game, game.to_play)
    lead = player.last_result.score_lead_black
    score = player.final_score(game)
    assert lead is not None and (lead > 0) == (score > 0), (lead, score)
