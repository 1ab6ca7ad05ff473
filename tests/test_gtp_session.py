"""gtp.session in-process, on the real loader and real searches: what the session picks by the
capabilities a Search declares (dead stones, pondering), never by the search's class."""
from __future__ import annotations

from goengine.engine.evaluator import UniformEvaluator
from goengine.engine.player import Player
from goengine.engine.search.mcts import MctsSearch
from goengine.engine.search.policy import PolicyPlayer
from goengine.gtp import loader
from goengine.gtp.config import EngineConfig
from goengine.gtp.session import Session


def _session(search) -> Session:
    s = Session(EngineConfig(size=5, search="heuristic", seed=1), lambda: loader)
    s.loader = loader
    s.game = loader.new_game(5, s.rules)
    s.player = Player(search)
    return s


def test_a_search_with_ownership_judges_its_own_dead_stones():
    s = _session(MctsSearch(seed=1))
    assert s.status_player() is s.player


def test_a_search_without_ownership_gets_a_heuristic_judge_made_once():
    s = _session(PolicyPlayer(UniformEvaluator(), seed=1))
    judge = s.status_player()
    assert judge is not s.player and judge.search.ownership and judge.search.tree is not None
    assert s.status_player() is judge
    assert judge.ownership(s.game, playouts=20).shape == (5, 5)


def test_the_session_ponders_only_searches_with_a_tree():
    s = _session(MctsSearch(seed=1))
    s._ready["player"].set()
    assert s.ponder_job() is None                 # nothing pending
    s.params["ponder"] = True
    s.ponder_pending = True
    player, game = s.ponder_job()
    assert player is s.player and game is not s.game and game.size == 5
    assert not s.ponder_pending

    s = _session(PolicyPlayer(UniformEvaluator(), seed=1))
    s._ready["player"].set()
    s.params["ponder"] = True
    s.ponder_pending = True
    assert s.ponder_job() is None                 # no tree: nothing to keep for the next move
