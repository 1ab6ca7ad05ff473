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
    "alphago": ("engine.search.network", "models.onnx_evaluator"),
    "zero": ("engine.search.network", "models.onnx_evaluator"),
    "policy": ("engine.search.network", "models.onnx_evaluator"),
}
# --search NAME -> the model kinds it loads: (kind, required)
SEARCH_MODELS = {
    "heuristic": (),
    # the value network is optional: without it the leaf value is the rollouts' (lambda = 1)
    "alphago": (("policy", True), ("value", False)),
    "zero": (("zero", True),),
    "policy": (("policy", True),),
}


def resolve_auto_search(config: EngineConfig) -> EngineConfig:
    """--search auto: the AlphaGo search when its models are there, else the heuristic MCTS."""
    import dataclasses
    have = all(os.path.isfile(model_path(config, kind))
               for kind, required in SEARCH_MODELS["alphago"] if required)
    return dataclasses.replace(config, search="alphago" if have else "heuristic", auto_search=True)


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
    for kind, required in SEARCH_MODELS[config.search]:
        path = model_path(config, kind)
        if required and not os.path.isfile(path):
            where = f"--model-dir {config.model_dir}" if config.model_dir else "the bundled models"
            return f"--search {config.search} needs a {kind} model: no {path} in {where}"
    return None


# models.store.DEFAULT_FILES, repeated: importing `models` pulls in numba (models.metadata reads
# engine.features), which must not delay the first answers. tests/test_gtp_units.py compares them.
MODEL_FILES = {"policy": "policy.onnx", "value": "value.onnx", "zero": "zero.onnx",
               "rollout": "rollout.npz"}


def bundled_dir() -> str:
    """models/bundled, found without importing the package."""
    spec = importlib.util.find_spec("models")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(locations[0] if locations else "models", "bundled")


def model_path(config: EngineConfig, kind: str) -> str:
    """<model-dir>/<kind>.onnx, or the bundled model of that kind."""
    return os.path.join(config.model_dir or bundled_dir(), MODEL_FILES[kind])


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
    from engine.search.mcts import MctsSearch
    from engine.timecontrol import TimeConfig
    cfg = s.config
    search = _build_search(s)
    pcfg = {}
    if cfg.playouts is not None:
        pcfg["playouts"] = cfg.playouts
    if cfg.visits is not None:
        pcfg["visits"] = cfg.visits
    if cfg.resign_threshold is not None:
        pcfg["resign_threshold"] = cfg.resign_threshold
        pcfg["allow_resign"] = cfg.resign_threshold > 0
    tcfg = {}
    if cfg.time_per_move is not None:
        tcfg["fixed_time_per_move"] = cfg.time_per_move
    if cfg.lag_margin is not None:
        tcfg["lag_margin"] = cfg.lag_margin
    judge = None  # the heuristic MCTS's own search judges dead stones before a pass
    if not isinstance(search, MctsSearch):
        # the network searches judge them with the heuristic MCTS, as final_status_list does
        # (a separate Player with its own lock)
        from gtp.moves import status_player
        judge = lambda game, n: status_player(s).ownership(game, playouts=n)  # noqa: E731
    player = Player(search, PlayerConfig(**pcfg), TimeConfig(**tcfg), ownership_judge=judge)
    sizes = s.model_sizes
    _warm_up(player, s.size if sizes is None or s.size in sizes else min(sizes))
    s.player = player


def _build_search(s: Session):
    cfg = s.config
    if cfg.search == "heuristic":
        from engine.search.mcts import MctsSearch
        if cfg.threads not in (None, 1):
            log.warning("--threads %s: the heuristic search runs on one thread", cfg.threads)
        return MctsSearch(seed=cfg.seed, rollout=_rollout_policy(cfg, default="heuristic"))
    from engine.search.network import NetSearchConfig, NetworkSearch, PolicyPlayer
    models = {kind: _evaluator(cfg, kind) for kind, required in SEARCH_MODELS[cfg.search]
              if required or os.path.isfile(model_path(cfg, kind))}
    sizes = None
    for ev in models.values():
        ok = set(ev.meta.board_sizes)
        sizes = ok if sizes is None else sizes & ok
    s.model_sizes = sizes
    if sizes is not None and s.size not in sizes:
        log.warning("the models are made for sizes %s, not %dx%d", sorted(sizes), s.size, s.size)
    if cfg.search == "policy":
        ev = models["policy"]
        return PolicyPlayer(ev, features=ev.meta.feature_set, seed=cfg.seed)
    if cfg.search == "zero":
        return NetworkSearch(_net_config(cfg, "zero"), policy=models["zero"], seed=cfg.seed)
    policy, value = models["policy"], models.get("value")
    if value is None:
        log.info("no value network: leaf values come from the rollouts alone (lambda = 1)")
    return NetworkSearch(_net_config(cfg, "alphago"), policy=policy, value=value,
                         policy_features=policy.meta.feature_set,
                         value_features=value.meta.feature_set if value else "alphago49",
                         seed=cfg.seed,
                         rollout=_rollout_policy(cfg, default="policy"))


def _net_config(cfg: EngineConfig, mode: str):
    """NetSearchConfig: the defaults (docs/algorithms.md §2) and the command line's overrides."""
    from engine.search.network import NetSearchConfig
    overrides = {k: v for k, v in (("lam", cfg.lam), ("c_puct", cfg.c_puct), ("n_thr", cfg.n_thr),
                                   ("batch_size", cfg.batch_size),
                                   ("policy_temperature", cfg.policy_temperature),
                                   ("rollout_threads", cfg.rollout_threads)) if v is not None}
    return NetSearchConfig(mode=mode, **overrides)


def _rollout_policy(cfg: EngineConfig, default: str):
    """The fast rollout policy when asked for (or by default for the AlphaGo search); None means
    the heuristic playouts. A missing or broken file falls back to them with a warning."""
    choice = default if cfg.rollout == "auto" else cfg.rollout
    if choice != "policy":
        return None
    from engine.rollout.policy import RolloutModelError, RolloutPolicy
    path = os.path.join(cfg.model_dir or bundled_dir(), "rollout.npz")
    try:
        pol = RolloutPolicy.load(path)
    except RolloutModelError as exc:
        log.warning("no rollout policy (%s); using the heuristic playouts", exc)
        return None
    log.info("rollout policy %s (%d features)", path, len(pol))
    return pol


def _evaluator(cfg: EngineConfig, kind: str):
    from pathlib import Path
    from models.onnx_evaluator import OnnxEvaluator
    from models.store import read_checksums, verify
    path = Path(model_path(cfg, kind))
    if read_checksums(path.parent):
        verify(path)            # a directory with SHA256SUMS: the file must match its line
    log.info("loading %s model %s", kind, path)
    return OnnxEvaluator(path, threads=cfg.threads or 1, kind=kind, seed=cfg.seed)


def _warm_up(player, size: int) -> None:
    """Two tiny searches so that numba compiles (and onnxruntime runs once), and the search's
    tree-reuse arrays exist, before the first genmove is timed."""
    from engine.game import Game
    g = Game(size)
    player.search.search(g, g.to_play, playouts=16)
    g.play(g.to_play, g.legal_moves()[0])
    player.search.search(g, g.to_play, playouts=16)     # tree reuse: compaction and its spare arrays
    player.last_result = None
