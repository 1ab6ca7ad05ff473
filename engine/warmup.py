"""Compile, or load from numba's cache, every kernel the engine's commands reach, before play.

    warm_up(sizes=(9, 19), progress=print)      # engine-gtp --warmup; the GTP engine's loader

numba compiles a function on its first call (about 40 s for the whole engine with an empty cache),
so a first genmove, dead-stone judgement or cleanup in the middle of a game would wait for it and
could lose on time. Each step below runs the real code path once on a small position (tiny
searches with uniform networks: numba compiles by argument types, not by the network behind
them), so afterwards no command compiles anything: tests/gtp/test_warmup.py plays a game through
every GTP command family and checks that no numba dispatcher gained a signature.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from goengine.engine.board import WHITE
from goengine.engine.coords import PASS
from goengine.engine.evaluator import UniformEvaluator
from goengine.engine.features import extract
from goengine.engine.features.registry import FEATURE_SETS
from goengine.engine.game import Game
from goengine.engine.player import Player, PlayerConfig
from goengine.engine.rollout.policy import RolloutPolicy
from goengine.engine.rules import Rules
from goengine.engine.search.mcts import MctsConfig, MctsSearch
from goengine.engine.search.alphago import AlphaGoSearch, rollouts
from goengine.engine.search.network import NetSearchConfig, Position, position_keys
from goengine.engine.search.policy import PolicyPlayer
from goengine.engine.search.zero import ZeroSearch

PLAYOUTS = 24  # simulations of each tiny search: enough to expand, reuse and end in two passes


def _endgame(size: int, rules: Rules | None = None) -> Game:
    """A game with handicap stones, a capture, and the opponent's pass: every rules kernel, and
    the pass judgement and two-pass endings of a search from it."""
    g = Game(size, rules or Rules())
    if size >= 7:            # GTP places fixed handicap on 7x7 and larger only
        g.set_handicap(g.fixed_handicap_locs(2))
    for lc in g.legal_moves(WHITE)[:3]:
        if g.is_legal(g.to_play, lc):
            g.play(g.to_play, lc)
    g.play(g.to_play, PASS)
    g.copy().undo()
    g.illegal_reason(g.to_play, g.legal_moves()[0])
    for dead in (None, [g.legal_moves()[0]]):
        g.area_score(dead), g.territory_score(dead), g.ownership(dead)
    return g


def _player_game(player: Player, size: int) -> None:
    """genmove after a pass (judging dead stones), cleanup, analysis, and the count (the same
    judgement, engine.deadstones); two moves, so that the second search reuses the tree."""
    for rules in (Rules(), Rules(scoring="territory", superko="situational")):
        g = _endgame(size, rules)
        colour = g.to_play
        player.genmove(g, colour, cleanup=rules.scoring == "territory")
        g.play(colour, g.legal_moves(colour)[0])
        player.genmove(g, g.to_play)
        player.analyze(g, g.to_play, report=None, stop=None, playouts=PLAYOUTS)
        player.final_status(g)
        player.final_score(g)
    player.new_game()


def _small(config: PlayerConfig) -> PlayerConfig:
    return PlayerConfig(playouts=PLAYOUTS, status_playouts=PLAYOUTS,
                        min_playouts=1, allow_resign=config.allow_resign)


def _heuristic(size: int) -> None:
    for rollout in (None, RolloutPolicy.uniform()):
        search = MctsSearch(MctsConfig(tree_capacity=20_000), seed=1, rollout=rollout)
        _player_game(Player(search, _small(PlayerConfig())), size)


def _network(size: int) -> None:
    uniform = UniformEvaluator()
    searches = [
        AlphaGoSearch(NetSearchConfig(mode="alphago", tree_capacity=20_000, lam=0.5), policy=uniform,
                      value=uniform, seed=1, rollout=RolloutPolicy.uniform()),
        AlphaGoSearch(NetSearchConfig(mode="alphago", tree_capacity=20_000, lam=1.0,
                                      rollout_threads=2), policy=uniform, seed=1),
        ZeroSearch(NetSearchConfig(mode="zero", tree_capacity=20_000), net=uniform, seed=1),
        PolicyPlayer(uniform, seed=1),
    ]
    for search in searches:
        _player_game(Player(search, _small(PlayerConfig())), size)
        search.close()
    position_keys(Game(size).meta[None], size)    # the cache keys of networks that keep a cache


def _features(size: int) -> None:
    g = _endgame(size)
    pos = Position(g.st.copy(), g.meta.copy(), list(g.board_history), size)
    for name in FEATURE_SETS:
        extract(pos, name)


def warm_alphago_networks(size: int) -> None:
    """The AlphaGo search's features and tree with uniform networks at lambda 0, so without its
    rollouts: the half of that search's kernels the engine compiles while a compile helper
    compiles the other (warm_rollouts, engine.compile_helper)."""
    uniform = UniformEvaluator()
    search = AlphaGoSearch(NetSearchConfig(mode="alphago", tree_capacity=20_000, lam=0.0),
                           policy=uniform, value=uniform, seed=1)
    _two_searches(search, size)


def warm_rollouts(size: int) -> None:
    """The AlphaGo search's rollouts (fast rollout policy and heuristic playouts), called as the
    search calls them, without a search."""
    g = _endgame(size)
    sts, metas = np.stack([g.st, g.st]), np.stack([g.meta, g.meta])
    own = np.zeros(g.st.shape[1], dtype=np.float64)
    tables = RolloutPolicy.uniform().new_tables()
    for use_policy in (True, False):
        rollouts(sts.copy(), metas.copy(), 2, g.komi, 3 * size * size, own, own.copy(), tables,
                 use_policy)


def _two_searches(search, size: int) -> None:
    """A search, a move, and a second search that reuses the tree."""
    g = Game(size)
    search.search(g, g.to_play, playouts=PLAYOUTS)
    g.play(g.to_play, g.legal_moves()[0])
    search.search(g, g.to_play, playouts=PLAYOUTS)


STEPS: tuple[tuple[str, Callable[[int], None]], ...] = (
    ("rules", _endgame),
    ("features", _features),
    ("heuristic search, dead stones, cleanup", _heuristic),
    ("network searches", _network),
)


def warm_up(sizes=(9, 19), progress: Callable[[str], None] | None = None) -> float:
    """Run every step on every board size; `progress` gets a line per step. Seconds taken."""
    start = time.monotonic()
    for size in sorted(set(sizes)):
        for label, step in STEPS:
            t0 = time.monotonic()
            step(size)
            if progress is not None:
                progress(f"warm-up {size}x{size}: {label} ({time.monotonic() - t0:.1f} s)")
    return time.monotonic() - start


def _each_size(step: Callable[[int], None], sizes) -> None:
    for size in sorted(set(sizes)):
        step(size)


# What a compile helper process can be asked to compile (engine.compile_helper), by board sizes.
# "heuristic" reads no features, so it shares few kernels with the Player the engine warms up.
GROUPS: dict[str, Callable[[tuple[int, ...]], None]] = {
    "rollouts": lambda sizes: _each_size(warm_rollouts, sizes),
    "heuristic": lambda sizes: _each_size(_heuristic, sizes),
    "network": lambda sizes: (_each_size(_features, sizes), _each_size(_network, sizes)),
    "all": warm_up,
}
