"""The win rate and the resignation follow the komi actually set (engine.search.komi): the
bundled value networks learned at komi 7.5, and a komi 40 points away must show in their value,
in the search's win rate and in the decision to resign, on 9x9 and on 19x19."""
from __future__ import annotations

import numpy as np
import pytest

from goengine.engine.colors import BLACK, WHITE
from goengine.engine.coords import RESIGN, parse_gtp
from goengine.engine.game import Game
from goengine.engine.player import Player, PlayerConfig
from goengine.engine.rules import Rules
from goengine.engine.search.komi import DEFAULT_VALUE_KOMI, komi_shift, learned_komi, value_at_komi
from goengine.engine.search.alphago import AlphaGoSearch
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.zero import ZeroSearch
from goengine.models.names import BUNDLED_DIR, MODEL_FILES
from goengine.models.onnx_evaluator import OnnxEvaluator

pytestmark = pytest.mark.skipif(not (BUNDLED_DIR / MODEL_FILES["value"]).is_file(),
                                reason="no bundled models")


@pytest.mark.parametrize("size", [9, 19])
def test_the_value_moves_with_the_komi(size):
    cfg = NetSearchConfig()
    value_komi = learned_komi(_evaluator("value"), cfg.value_komi)
    assert value_komi == DEFAULT_VALUE_KOMI == 7.5          # the bundled files say nothing
    assert komi_shift(7.5, value_komi, size, cfg.komi_scale) == 0.0
    v = np.array([-0.5, 0.0, 0.5])
    assert np.array_equal(value_at_komi(v, 0.0), v)
    against_white = value_at_komi(v, komi_shift(-40, value_komi, size, cfg.komi_scale))
    against_black = value_at_komi(v, komi_shift(47.5, value_komi, size, cfg.komi_scale))
    assert np.all(against_white > 0.9) and np.all(against_black < -0.9)    # Black's view
    smaller = value_at_komi(v, komi_shift(6.5, value_komi, size, cfg.komi_scale))
    assert np.all(smaller > v) and np.all(smaller - v < 0.15)              # a point is a little


def _evaluator(kind):
    return OnnxEvaluator(BUNDLED_DIR / MODEL_FILES[kind], kind=kind, seed=1)


def _opening(size: int, komi: float) -> Game:
    g = Game(size, Rules(komi=komi))
    for v in ("C3", "G7", "C7", "G3") if size == 9 else ("D4", "Q16", "D16", "Q4"):
        g.play(g.to_play, parse_gtp(v, size))
    return g


def _searches():
    """The value network alone (lambda 0: the AlphaGo search without the komi-aware rollouts)
    and the Zero search, whose only value is its network's."""
    return {
        "alphago-lambda0": lambda: AlphaGoSearch(NetSearchConfig(mode="alphago", lam=0.0),
                                                 policy=_evaluator("policy"),
                                                 value=_evaluator("value"), seed=1),
        "zero": lambda: ZeroSearch(NetSearchConfig(mode="zero"), net=_evaluator("zero"),
                                   seed=1),
    }


@pytest.mark.parametrize("size", [9, 19])
@pytest.mark.parametrize("name", ["alphago-lambda0", "zero"])
def test_the_search_win_rate_follows_the_komi(size, name):
    search = _searches()[name]()
    rates = {}
    for komi in (-40.0, 7.5, 47.5):
        g = _opening(size, komi)
        res = search.search(g, BLACK, playouts=64)
        rates[komi] = res.winrate
    assert rates[-40.0] > 0.9 and rates[47.5] < 0.1, rates
    assert 0.15 < rates[7.5] < 0.85, rates


@pytest.mark.parametrize("size", [9, 19])
def test_a_komi_far_against_it_makes_the_player_resign(size):
    """White gives 40 points of komi: lost from the start. The player resigns once the rules for
    resigning allow (after resign_min_move of the board, on resign_consecutive moves in a row);
    with komi 7.5 it plays on."""
    search = _searches()["alphago-lambda0"]()
    player = Player(search, PlayerConfig(playouts=96, min_playouts=16, resign_min_move=0.0))
    for komi, resigns in ((-40.0, True), (7.5, False)):
        player.new_game()
        g = _opening(size, komi)
        moves = [player.genmove(g, WHITE) for _ in range(player.config.resign_consecutive)]
        assert (moves[-1] == RESIGN) == resigns, (komi, moves)
