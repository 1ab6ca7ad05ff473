"""Builds the engine behind the server: run by gtp.session in its background thread.

    load_game(session)    import engine.game (numba kernels), make the Game, warm the kernels up
    load_player(session)  build the search named by --search and the Player around it

`check_search(config)` runs in the foreground at launch and only looks modules up (no import), so
that `engine-gtp --search zero` fails at once with a clear message when that search is missing.
"""
from __future__ import annotations

import importlib.util
import logging
import os

from gtp.session import EngineConfig, Session

log = logging.getLogger("gtp")

# --search NAME -> the modules it needs (all must exist).
SEARCH_MODULES = {
    "heuristic": ("engine.search.mcts",),
    "alphago": ("engine.search.apv", "models.onnx_evaluator"),
    "zero": ("engine.search.puct", "models.onnx_evaluator"),
    "policy": ("models.onnx_evaluator",),
}


def check_search(config: EngineConfig) -> str | None:
    """None when the search can be built, else why not."""
    missing = []
    for name in SEARCH_MODULES[config.search]:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except ModuleNotFoundError:
            missing.append(name)
    if missing:
        return (f"--search {config.search} is not available in this installation "
                f"(missing {', '.join(missing)})")
    if config.search != "heuristic" and config.model_dir and not os.path.isdir(config.model_dir):
        return f"--model-dir {config.model_dir!r} is not a directory"
    return None


def load_game(s: Session) -> None:
    from engine.coords import PASS
    from engine.game import Game
    from engine.board import BLACK, WHITE
    warm = Game(9, s.rules)                     # compile every kernel the commands use
    warm.play(BLACK, warm.fixed_handicap_locs(2)[0])
    warm.play(WHITE, PASS)
    warm.legal_moves(BLACK)
    warm.area_score()
    warm.territory_score([])
    warm.copy().undo()
    s.game = Game(s.size, s.rules)


def load_player(s: Session) -> None:
    from engine.player import Player, PlayerConfig
    from engine.timecontrol import TimeConfig
    cfg = s.config
    search = _build_search(cfg)
    pcfg = {}
    if cfg.playouts is not None:
        pcfg["playouts"] = cfg.playouts
    if cfg.resign_threshold is not None:
        pcfg["resign_threshold"] = cfg.resign_threshold
        pcfg["allow_resign"] = cfg.resign_threshold > 0
    tcfg = {}
    if cfg.time_per_move is not None:
        tcfg["fixed_time_per_move"] = cfg.time_per_move
    player = Player(search, PlayerConfig(**pcfg), TimeConfig(**tcfg))
    _warm_up(player)
    s.player = player


def _build_search(cfg: EngineConfig):
    if cfg.search == "heuristic":
        from engine.search.mcts import MctsSearch
        if cfg.threads not in (None, 1):
            log.warning("--threads %s: the heuristic search runs on one thread", cfg.threads)
        return MctsSearch(seed=cfg.seed)
    reason = check_search(cfg)
    raise RuntimeError(reason or f"--search {cfg.search} is not wired into engine-gtp yet")


def _warm_up(player) -> None:
    """One tiny search so that numba compiles before the first genmove is timed."""
    import threading
    from engine.game import Game
    g = Game(5)
    player.search.search(g, g.to_play, playouts=2, stop=threading.Event())
