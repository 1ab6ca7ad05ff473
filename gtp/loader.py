"""The engine behind the server: imported by the session's loading thread (see gtp.main), never
at startup, since it imports numba, the searches and onnxruntime. A `gtp.session.Loader`:

    load_game(session)    make the Game and warm the rules kernels up (stage "game")
    load_player(session)  build the search named by --search and the Player around it
    is_bad_file(exc)      whether a stage failed on a model file (one log line, no traceback)
    new_game, replay, play, status_player, format_result, load_sgf, dump_sgf
                          what the handlers need of the engine afterwards
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from goengine.engine.board import BLACK, WHITE
from goengine.engine.board import play as board_play
from goengine.engine.book import Book, BookError
from goengine.engine.compile_helper import CompileHelper, compile_all, compiled_here
from goengine.engine.coords import PASS
from goengine.engine.game import Game, IllegalMove, format_result
from goengine.engine.player import Player, PlayerConfig
from goengine.engine.rollout.policy import PlayoutRules, RolloutModelError, RolloutPolicy
from goengine.engine.rules import Rules
from goengine.engine.search.mcts import MctsConfig, MctsSearch
from goengine.engine.search.alphago import AlphaGoSearch
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.policy import PolicyPlayer
from goengine.engine.search.zero import ZeroSearch
from goengine.engine.timecontrol import TimeConfig
from goengine.engine.warmup import warm_alphago_networks, warm_up as warm_up_kernels
from goengine.gtp.config import (SEARCH_MODELS, EngineConfig, load_file, model_path,
                                 network_threads, sized_load_files)
from goengine.gtp.protocol import GtpError
from goengine.gtp.session import Session
from goengine.gtp.sgfio import dump as dump_sgf, load as load_sgf
from goengine.models.by_size import BySizeEvaluator
from goengine.models.metadata import ROLE_KINDS, ModelError
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.models.session import CPU, providers
from goengine.models.store import read_checksums, verify

log = logging.getLogger("gtp")

__all__ = ["load_game", "load_player", "load_kernels", "is_bad_file", "new_game", "replay", "play",
           "status_player", "format_result", "load_sgf", "dump_sgf", "compile_all"]


def load_game(s: Session) -> None:
    warm = Game(9, s.rules)                     # compile every kernel the commands use
    warm.play(BLACK, warm.fixed_handicap_locs(2)[0])
    warm.play(WHITE, PASS)
    warm.legal_moves(BLACK)
    warm.area_score()
    warm.territory_score([])
    warm.copy().undo()
    s.game = Game(s.size, s.rules)
    # compiled here, so numba's cache is cold (a fresh install): a helper process compiles the
    # rest meanwhile; a cache that had the rules kernels has the rest too and needs no helper
    if compiled_here(board_play):
        s.compile_helper = _start_helper(s.config)


def load_player(s: Session) -> None:
    """The Players, and the one that plays the board size at hand warmed up for its first move;
    the others are warmed up by stage "kernels" (load_kernels)."""
    cfg = s.config
    loaded: dict[str, OnnxEvaluator] = {}   # one evaluator for a file that fills two roles
    books = _books(cfg)
    player = _player(cfg, _build_search(s, loaded), books)
    paths = {n: path
             for n, path in sized_load_files(cfg, "zero", on_cpu=providers() == [CPU]).items()
             if n in cfg.zero_sizes}
    sized = {n: _player(cfg, _sized_zero_search(cfg, n, path, loaded), books)
             for n, path in paths.items()}
    sizes = s.model_sizes
    size = s.size if sizes is None or s.size in sizes else min(sizes)
    if s.size in sized:
        _warm_up(sized[s.size], s.size)
    else:
        if _splits_alphago(cfg):        # features and tree here, while the helper compiles the
            warm_alphago_networks(size)     # rollouts (engine.compile_helper)
            _wait_helper(s, "rollouts")
        _warm_up(player, size)
    # twins of the other Players (the same networks, a search of their own), since a command may
    # use the Players themselves while stage "kernels" runs
    s.warm_later = [(n, lambda n=n, path=path: _player(cfg, _sized_zero_search(cfg, n, path,
                                                                               loaded), books))
                    for n, path in paths.items() if n != s.size]
    if s.size in sized:
        s.warm_later.append((size, lambda: _player(cfg, _build_search(s, loaded), books)))
    s.sized_players = sized
    s.player = player


def is_bad_file(exc: BaseException) -> bool:
    """True when loading failed on a model file (unreadable, the wrong kind or size): the log
    says so in a line instead of a traceback."""
    return isinstance(exc, (ModelError, RolloutModelError))


def load_kernels(s: Session) -> None:
    """Every other kernel a command can reach (the other Players, the dead-stone judge, cleanup,
    other sizes), so that nothing compiles once the engine is ready. The compile helper has put
    most of them in numba's cache meanwhile: here they load from it. One board size serves every
    size: numba compiles by argument types, and the sizes differ only in array lengths."""
    _wait_helper(s, "all")
    for size, make in s.warm_later:
        _warm_up(make(), size)
    warm_up_kernels([min(set(s.model_sizes or ()) | set(s.sized_players) | {s.config.size})],
                    lambda line: log.info("%s", line))
    if s.compile_helper is not None:
        s.compile_helper.close()
    s.compile_helper, s.warm_later = None, []


def _start_helper(cfg: EngineConfig) -> CompileHelper | None:
    """The compile helper for this configuration; None where no process can be started (then
    this process compiles everything, as with a helper that died)."""
    try:
        return CompileHelper(_helper_groups(cfg), _helper_sizes(cfg))
    except OSError as exc:
        log.warning("no compile helper (%s): compiling in one process", exc)
        return None


def _wait_helper(s: Session, group: str) -> None:
    if s.compile_helper is not None:
        s.compile_helper.wait(group)


def _splits_alphago(cfg: EngineConfig) -> bool:
    """Whether the first Player is the AlphaGo search with rollouts, whose kernels this process
    and the compile helper share out (the features and the tree here, the rollouts there)."""
    return cfg.search == "alphago" and cfg.size not in cfg.zero_sizes


def _helper_groups(cfg: EngineConfig) -> list[str]:
    """The helper's order: what the engine's first Player needs from it, then what the engine does
    not compile meanwhile, then the rest (which by then it mostly loads from the cache)."""
    return ["rollouts", "heuristic", "all"] if _splits_alphago(cfg) else ["heuristic", "all"]


def _helper_sizes(cfg: EngineConfig) -> tuple[int, ...]:
    """The sizes the helper warms up: the engine's and its Zero networks' (numba compiles by
    argument types, not sizes: a size the engine warms up later costs it cache loads only)."""
    return tuple(sorted({cfg.size, *cfg.zero_sizes}))


def _books(cfg: EngineConfig) -> tuple[Book, ...]:
    """The opening books to play from; a book that cannot be read is left out with a warning
    (the engine plays on without it)."""
    books = []
    for path in cfg.book_files:
        try:
            book = Book.load(path)
        except BookError as exc:
            log.warning("no opening book: %s", exc)
            continue
        log.info("opening book %s: %d positions, %dx%d, komi %g", path, len(book), book.size,
                 book.size, book.komi)
        books.append(book)
    return tuple(books)


def _player(cfg: EngineConfig, search, books: tuple[Book, ...] = ()) -> Player:
    """The Player around a search, with the command line's move and time settings."""
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
    if cfg.lag_unreported is not None:
        tcfg["lag_unreported"] = cfg.lag_unreported
    tcfg["time_manager"] = cfg.time_manager
    # every search judges dead stones with the one judgement (engine.deadstones)
    return Player(search, PlayerConfig(**pcfg), TimeConfig(**tcfg), books)


def _sized_zero_search(cfg: EngineConfig, size: int, path: str, loaded: dict) -> ZeroSearch:
    """--search auto on a size with a Zero network made for it: the Zero search on that network
    alone, with the Zero search's network threads (gtp.config.network_threads)."""
    ev = _onnx(cfg, "zero", path, loaded, threads=network_threads(cfg, "zero"))
    log.info("%dx%d: the Zero search with %s (--search auto)", size, size, path)
    return ZeroSearch(_net_config(cfg, "zero"), net=ev, seed=cfg.seed)


def _build_search(s: Session, loaded: dict):
    cfg = s.config
    if cfg.search == "heuristic":
        if cfg.threads not in (None, 1):
            log.warning("--threads %s: the heuristic search runs on one thread", cfg.threads)
        return MctsSearch(seed=cfg.seed, rollout=_rollout_policy(cfg, default="heuristic"))
    models = {kind: _evaluator(cfg, kind, loaded) for kind, required in SEARCH_MODELS[cfg.search]
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
        return ZeroSearch(_net_config(cfg, "zero"), net=models["zero"], seed=cfg.seed)
    policy, value = models["policy"], models.get("value")
    if value is None:
        log.info("no value network: leaf values come from the rollouts alone (lambda = 1)")
    return AlphaGoSearch(_net_config(cfg, "alphago"), policy=policy, value=value,
                         policy_features=policy.meta.feature_set,
                         value_features=value.meta.feature_set if value else "alphago49",
                         seed=cfg.seed,
                         rollout=_rollout_policy(cfg, default="policy"))


def _net_config(cfg: EngineConfig, mode: str):
    """NetSearchConfig: the defaults (docs/algorithms.md §2) and the command line's overrides."""
    overrides = {k: v for k, v in (("lam", cfg.lam), ("c_puct", cfg.c_puct), ("n_thr", cfg.n_thr),
                                   ("batch_size", cfg.batch_size),
                                   ("policy_temperature", cfg.policy_temperature),
                                   ("rollout_threads", cfg.rollout_threads),
                                   ("value_komi", cfg.value_komi), ("komi_scale", cfg.komi_scale),
                                   ("score_utility", cfg.score_utility),
                                   ("dynamic_score_utility", cfg.dynamic_score_utility),
                                   ("dynamic_score_scale", cfg.dynamic_score_scale),
                                   ("criticality", cfg.criticality),
                                   ("gumbel_k", cfg.gumbel_k))
                 if v is not None}
    if cfg.gumbel:      # the AlphaGo search (--search auto's other sizes) ignores it
        overrides["gumbel"] = True
    if cfg.lam_by_size:
        overrides["lam_by_size"] = cfg.lam_by_size
    return NetSearchConfig(mode=mode, **overrides)


def _rollout_policy(cfg: EngineConfig, default: str):
    """The fast rollout policy when asked for (or by default for the AlphaGo search); None means
    the heuristic playouts. A missing or broken file falls back to them with a warning."""
    choice = default if cfg.rollout == "auto" else cfg.rollout
    if choice != "policy":
        return None
    path = model_path(cfg, "rollout")
    rules = {k: v for k, v in (("self_atari", cfg.rollout_self_atari),
                               ("capture", cfg.rollout_capture),
                               ("big_self_atari", cfg.rollout_big_self_atari)) if v is not None}
    try:
        pol = RolloutPolicy.load(path, PlayoutRules(**rules))
    except RolloutModelError as exc:
        log.warning("no rollout policy (%s); using the heuristic playouts", exc)
        return None
    log.info("rollout policy %s (%d features; rules: self-atari redrawn with chance %g, a string "
             "left in atari taken with chance %g, a self-atari of 7+ stones redrawn with chance "
             "%g)", path, len(pol), pol.rules.self_atari, pol.rules.capture,
             pol.rules.big_self_atari)
    return pol


def _evaluator(cfg: EngineConfig, kind: str, loaded: dict):
    """The network filling the kind's role; with the networks made for one size beside it
    (models.names' SIZED_MODEL_FILES, e.g. zero-9x9.onnx), one evaluator that answers each size
    with its own. A file already in `loaded` (another role's, e.g. one Zero network as both the
    AlphaGo search's policy and value) is that same evaluator, so the search can tell."""
    on_cpu = providers() == [CPU]
    default = _onnx(cfg, kind, load_file(cfg, kind, on_cpu=on_cpu), loaded)
    sized = {size: _onnx(cfg, kind, path, loaded)
             for size, path in sized_load_files(cfg, kind, on_cpu=on_cpu).items()}
    return BySizeEvaluator(default, sized) if sized else default


def _onnx(cfg: EngineConfig, kind: str, path: str, loaded: dict,
          threads: int | None = None) -> OnnxEvaluator:
    path = Path(path)
    key = str(path.resolve())
    if key in loaded:
        log.info("%s model %s: the one loaded already", kind, path)
        return loaded[key]
    if read_checksums(path.parent):
        verify(path)            # a directory with SHA256SUMS: the file must match its line
    log.info("loading %s model %s", kind, path)
    loaded[key] = OnnxEvaluator(path, threads=threads or network_threads(cfg),
                                kind=ROLE_KINDS[kind], seed=cfg.seed)
    return loaded[key]


def _warm_up(player, size: int) -> None:
    """Two tiny searches so that numba compiles (and onnxruntime runs once), and the search's
    tree-reuse arrays exist, before the first genmove is timed."""
    g = Game(size)
    player.analyze(g, g.to_play, report=None, stop=None, playouts=16)
    g.play(g.to_play, g.legal_moves()[0])
    player.analyze(g, g.to_play, report=None, stop=None, playouts=16)  # tree reuse: compaction
    player.last_result = None


# ---- what the handlers need of the engine once it is loaded --------------------------------------

def new_game(size: int, rules: Rules) -> Game:
    return Game(size, rules)


def replay(old: Game, rules: Rules) -> Game:
    """The game so far replayed under `rules` (superko history follows the rules)."""
    g = Game(old.size, rules)
    try:
        if old.handicap:
            g.set_handicap(list(old.handicap))
        for colour, lc in old.history:
            g.play(colour, lc)
    except (IllegalMove, ValueError) as exc:
        raise GtpError(f"the game so far is illegal under these rules ({exc})") from None
    g.to_play = old.to_play
    return g


def play(game: Game, colour: int, lc: int) -> None:
    try:
        game.play(colour, lc)
    except IllegalMove as exc:
        raise GtpError(f"illegal move: {exc.reason}") from None


def status_player(s: Session) -> Player:
    """A heuristic MCTS Player for dead stones, with the playing Player's settings."""
    return Player(MctsSearch(MctsConfig(tree_capacity=300_000), seed=s.config.seed),
                  s.player.config, s.player.time.config)
