"""`engine-gtp`: the GTP engine for Sabaki, GoGui, Lizzie, gtp2ogs, kgsGtp, gogui-twogtp.

    engine-gtp                                      # heuristic MCTS, 19x19, komi 7.5
    engine-gtp --size 9 --komi 7 --playouts 2000
    engine-gtp --search zero --model-dir models/ --time-per-move 5 --log-file gtp.log
    engine-gtp --warmup                             # compile everything once after installing

The command line is checked before anything else; an unknown or invalid option exits with status 2
and a message. Then the server answers at once (name, version, protocol_version, list_commands)
while the engine loads in a background thread. Only GTP responses go to stdout: the real stdout is
kept for them and file descriptor 1 is pointed at stderr, so that nothing else printed by any
library can corrupt the protocol.
"""
from __future__ import annotations

import importlib
import logging
import math
import os
import signal
import sys

import click

import goengine.gtp.commands  # noqa: F401  (registers the handlers)
from goengine.engine.rules import NAMED_RULES
from goengine.gtp.config import (SEARCH_MODULES, EngineConfig, check_gumbel, check_search,
                                 resolve_auto_search)
from goengine.gtp.server import REGISTRY, Server
from goengine.gtp.session import Loader, Session

# The engine behind the handlers (numba kernels, the searches, onnxruntime). The session imports it
# in its loading thread, so that `name` and the other startup commands answer at once
# (tests/gtp/test_gtp_server.py); nothing else in gtp/ defers an import.
LOADER_MODULE = "goengine.gtp.loader"

WARMUP_SIZES = (9, 19)   # the sizes the bundled models are made for, plus --size


def _finite(ctx, param, value):
    if value is not None and not math.isfinite(value):
        raise click.BadParameter("must be a finite number")
    return value


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--size", type=click.IntRange(2, 25), default=19, show_default=True,
              help="Initial board size (GTP boardsize changes it).")
@click.option("--komi", type=click.FloatRange(-1000, 1000), default=7.5, show_default=True,
              callback=_finite, help="Initial komi (GTP komi changes it).")
@click.option("--rules", type=click.Choice(sorted(NAMED_RULES), case_sensitive=False),
              default="chinese", show_default=True, help="Rule set (kgs-rules changes it).")
@click.option("--search", type=click.Choice(["auto"] + sorted(SEARCH_MODULES), case_sensitive=False),
              default="auto", show_default=True,
              help="Which search plays; auto = on each size with a Zero network made for it "
                   "(zero-9x9.onnx) the Zero search with it, elsewhere alphago when the policy "
                   "model is there (the value model is optional), else heuristic.")
@click.option("--rollout", type=click.Choice(["auto", "policy", "heuristic"], case_sensitive=False),
              default="auto", show_default=True,
              help="Playouts of the MCTS: AlphaGo's fast rollout policy (models/bundled/"
                   "rollout.npz) or the heuristic one; auto = policy for alphago, heuristic for "
                   "the networkless search.")
@click.option("--rollout-self-atari", type=click.FloatRange(0, 1), default=None,
              help="Rollout policy: chance that a drawn move putting two or more of its own "
                   "stones in atari (capturing nothing) is drawn again (default 0: the learned "
                   "softmax alone, as AlphaGo's).")
@click.option("--rollout-capture", type=click.FloatRange(0, 1), default=None,
              help="Rollout policy: chance that a string of two or more of the opponent's stones "
                   "that a recent move left in atari is captured instead of drawing a move "
                   "(default 0: the learned softmax alone, as AlphaGo's).")
@click.option("--rollout-big-self-atari", type=click.FloatRange(0, 1), default=None,
              help="Rollout policy: chance that a drawn move putting seven or more of its own "
                   "stones in atari (capturing nothing; never a nakade) is drawn again, so that "
                   "a rollout keeps a seki between big groups (default 1; 0: the softmax alone).")
@click.option("--lambda", "lam", type=click.FloatRange(0, 1), default=None,
              help="AlphaGo search: weight of rollouts in the leaf value (default 0.5).")
@click.option("--c-puct", type=click.FloatRange(min=0, min_open=True), default=None,
              help="PUCT exploration constant (alphago: 5, zero: 1.5).")
@click.option("--n-thr", type=click.IntRange(min=1), default=None,
              help="AlphaGo search: expansion threshold in visits.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Network searches: leaves evaluated per network call.")
@click.option("--policy-temperature", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Softmax temperature of the SL policy priors (AlphaGo: 0.67).")
@click.option("--rollout-threads", type=click.IntRange(min=0), default=None,
              help="AlphaGo search: threads sharing each batch's rollouts (default 1); 0: the "
                   "machine's cores (at most 4) where the search runs without its value network "
                   "(lambda 1: --search auto on 13x13 and 19x19), else 1.")
@click.option("--value-komi", type=click.FloatRange(-1000, 1000), default=None, callback=_finite,
              help="Network searches: the komi the value networks learned at (default: what "
                   "the network's file says, 7.5 where it says nothing); "
                   "their win rate is moved to the game's komi by a score model.")
@click.option("--komi-scale", type=click.FloatRange(min=0), default=None, callback=_finite,
              help="Network searches: logistic scale of the final score in points per board "
                   "line, for that move (default 0.45; 0 leaves the win rate at the learned komi).")
@click.option("--score-utility", type=click.FloatRange(min=0), default=None, callback=_finite,
              help="Network searches: weight F of KataGo's static score utility, (v + F (2/pi) "
                   "atan(score / N)) / (1 + F), with the rollouts' final margins (AlphaGo) and "
                   "the score head's leads where the net has one (default 0: the win rate "
                   "alone; KataGo 0.1).")
@click.option("--dynamic-score-utility", type=click.FloatRange(min=0), default=None,
              callback=_finite,
              help="Network searches: weight of KataGo's dynamic score utility, the same term "
                   "centred on the score the root expects, so that far ahead a safer win still "
                   "counts for more (default 0: off; KataGo 0.3).")
@click.option("--criticality", type=click.FloatRange(min=0, max=1), default=None,
              callback=_finite,
              help="Network searches: weight W of Coulom's criticality in the root's priors, "
                   "(1 - W) P + W C: C the points whose owner goes with the result over the "
                   "search's leaves (rollouts; the Zero network's ownership and value heads) "
                   "(default 0: off).")
@click.option("--dynamic-score-scale", type=click.FloatRange(min=0, min_open=True), default=None,
              callback=_finite,
              help="The dynamic score utility's scale in board sides (default 0.75, KataGo's).")
@click.option("--gumbel", is_flag=True, default=False,
              help="Zero search (also --search auto on the sizes it plays): Gumbel AlphaZero's "
                   "root, sequential halving over the --gumbel-k moves of highest Gumbel noise + "
                   "log prior, the move and policy from the completed Q (default: PUCT's root).")
@click.option("--gumbel-k", type=click.IntRange(min=1), default=None,
              help="With --gumbel: the most root moves sequential halving considers (default 16).")
@click.option("--ponder/--no-ponder", default=False, show_default=True,
              help="Think on the opponent's time (stops at once on any input; keeps the tree).")
@click.option("--lag-margin", type=click.FloatRange(min=0), default=None,
              help="Seconds kept back on every move for network and GUI lag [default: measured "
                   "from the controller's time_left reports; 1 s until 5 moves are measured].")
@click.option("--lag-unreported", type=click.FloatRange(min=0), default=0.25, show_default=True,
              help="The lag margin, plus our measured overrun, with a controller that has sent no "
                   "time_left by our first move (GoGui, gogui-twogtp: a local clock).")
@click.option("--time-manager", type=click.Choice(["dynamic", "simple"], case_sensitive=False),
              default="dynamic", show_default=True,
              help="Time within a move under a clock: dynamic searches past the budget (up to "
                   "twice) while the two best moves are close, and stops early once the best "
                   "cannot be overtaken where the time saved is usable later; simple searches "
                   "the budget.")
@click.option("--model-dir", type=click.Path(exists=True, file_okay=False, dir_okay=True),
              default=None, help="Directory of the ONNX models (alphago, zero, policy).")
@click.option("--model-precision", type=click.Choice(["auto", "int8", "fp32"], case_sensitive=False),
              default="auto", show_default=True,
              help="Which file of the model directory: int8 loads <kind>.int8.onnx (made by "
                   "engine-train quantize; about 3x faster on a CPU), fp32 the float "
                   "<kind>.onnx; auto: int8 where it is there and onnxruntime runs on the CPU. "
                   "Files named by --policy/--value/--zero load as they are.")
@click.option("--policy", "policy_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Policy network ONNX to play with (e.g. an engine-train rl export), in place of "
                   "the model directory's; with --search policy it plays alone.")
@click.option("--value", "value_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Value network ONNX for the AlphaGo search.")
@click.option("--zero", "zero_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Zero (policy + value) network ONNX; alone it selects --search zero.")
@click.option("--book", "book_files", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="An opening book (engine-train book) to play from, on the board size, komi and "
                   "scoring it was made for; repeatable. --search auto plays the bundled "
                   "9x9 book unless told otherwise.")
@click.option("--no-book", is_flag=True, default=False,
              help="Play no opening book, not even the bundled one.")
@click.option("--playouts", type=click.IntRange(min=1), default=None,
              help="New simulations per move (Leela Zero's -p; default: by time).")
@click.option("--visits", type=click.IntRange(min=1), default=None,
              help="Root visits per move, counting those kept from the previous move's tree "
                   "(Leela Zero's -v, KataGo's maxVisits; default: by time).")
@click.option("--time-per-move", type=click.FloatRange(min=0, min_open=True), default=None,
              callback=_finite,
              help="Seconds per move, within what the clock allows (default: 5 s a move without "
                   "a clock; with one, the clock's time shared out over the expected game).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="onnxruntime threads for each network call (default: the machine's cores, at "
                   "most 4, for the Zero search and the policy alone; 1 for the AlphaGo search, "
                   "whose network call overlaps its rollouts).")
@click.option("--resign-threshold", type=click.FloatRange(0, 1, max_open=True), default=None,
              help="Resign when the win rate of the move is below this (default 0.10) on 3 of "
                   "the engine's moves in a row, not before move 0.25 * N*N (0.5 * N*N in "
                   "handicap games); 0 never resigns. goengine-set_param changes "
                   "resign_threshold, resign_consecutive, resign_min_move and allow_resign.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Random seed.")
@click.option("--name", default="goengine", show_default=True, help="What GTP `name` answers.")
@click.option("--log-file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Also write a debug log (every command and response) here.")
@click.option("-v", "--verbose", is_flag=True, help="Log every command and response on stderr.")
@click.option("-q", "--quiet", is_flag=True, help="Log only warnings and errors on stderr.")
@click.option("--warmup", is_flag=True,
              help="Compile (or load from numba's cache) every kernel the engine uses, with "
                   "progress on stderr, then exit. Run it once after installing: the first "
                   "start otherwise compiles for about 40 s. The engine also does this in the "
                   "background at every start: the search for the board at hand before its "
                   "first move, the rest after it, with a second process where the cache is "
                   "empty.")
def cli(size, komi, rules, search, rollout, rollout_self_atari, rollout_capture,
        rollout_big_self_atari, lam, c_puct,
        n_thr, batch_size, policy_temperature, rollout_threads, value_komi, komi_scale,
        score_utility, dynamic_score_utility, criticality, dynamic_score_scale, gumbel,
        gumbel_k, ponder,
        lag_margin, lag_unreported,
        time_manager, model_dir, model_precision, policy_file, value_file, zero_file,
        book_files, no_book, playouts,
        visits, time_per_move, threads,
        resign_threshold, seed, name, log_file, verbose, quiet, warmup):
    """Play Go over GTP on stdin/stdout."""
    if warmup:
        warm_up(size)
        return
    if verbose and quiet:
        raise click.UsageError("--verbose and --quiet exclude each other")
    if not name.strip() or any(ch in name for ch in "\r\n#"):
        raise click.BadParameter("must be one line of text without '#'", param_hint="--name")
    config = EngineConfig(size=size, komi=komi, rules=rules.lower(), search=search.lower(),
                          model_dir=model_dir, model_precision=model_precision.lower(),
                          policy_file=policy_file, value_file=value_file,
                          zero_file=zero_file, playouts=playouts, visits=visits,
                          time_per_move=time_per_move,
                          threads=threads, resign_threshold=resign_threshold, seed=seed,
                          name=name.strip(), rollout=rollout.lower(),
                          rollout_self_atari=rollout_self_atari,
                          rollout_capture=rollout_capture,
                          rollout_big_self_atari=rollout_big_self_atari, lam=lam, c_puct=c_puct,
                          n_thr=n_thr, batch_size=batch_size,
                          policy_temperature=policy_temperature,
                          rollout_threads=rollout_threads, value_komi=value_komi,
                          komi_scale=komi_scale, score_utility=score_utility,
                          dynamic_score_utility=dynamic_score_utility,
                          criticality=criticality, dynamic_score_scale=dynamic_score_scale,
                          gumbel=gumbel, gumbel_k=gumbel_k,
                          lag_margin=lag_margin, lag_unreported=lag_unreported,
                          time_manager=time_manager.lower(), ponder=ponder,
                          book_files=tuple(book_files), no_book=no_book)
    if book_files and no_book:
        raise click.UsageError("--book and --no-book exclude each other")
    if config.search == "auto":
        config = resolve_auto_search(config)
    problem = check_search(config) or check_gumbel(config)
    if problem:
        raise click.UsageError(problem)
    _setup_logging(log_file, logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    serve(config)


def warm_up(size: int) -> None:
    """engine-gtp --warmup. The kernels come with the loader, which is imported by name, not at
    the top: importing it compiles or loads the numba kernels, which would delay every start's
    first answer."""
    print("engine-gtp: compiling the engine (or loading it from numba's cache)", file=sys.stderr)
    seconds = _import_loader().compile_all(WARMUP_SIZES + (size,),
                                           lambda line: print(line, file=sys.stderr))
    print(f"engine-gtp: ready in {seconds:.1f} s", file=sys.stderr)


def _setup_logging(log_file: str | None, level: int) -> None:
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    # the log file keeps the engine's own DEBUG lines; numba's compiler logs megabytes of them
    for noisy in ("numba", "llvmlite"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    err = logging.StreamHandler(sys.stderr)
    err.setLevel(level)
    err.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    root.addHandler(err)
    if log_file:
        try:
            fh = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            raise click.BadParameter(f"cannot open: {exc.strerror}", param_hint="--log-file")
        fh.setLevel(logging.DEBUG)
        fh.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(levelname)s %(message)s"))
        root.addHandler(fh)


def _protocol_stdout():
    """A private handle on the real stdout; fd 1 and sys.stdout then go to stderr."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _import_loader() -> Loader:
    return importlib.import_module(LOADER_MODULE)


def serve(config: EngineConfig) -> None:
    log = logging.getLogger("gtp")
    out = _protocol_stdout()
    session = Session(config, _import_loader)
    server = Server(session, REGISTRY, stdin=sys.stdin.buffer, stdout=out)

    def on_sigint(signum, frame):
        if not server.interrupt():
            _exit(130)

    signal.signal(signal.SIGINT, on_sigint)
    session.start_loading()
    log.info("%s ready for GTP (search %s); loading the engine", config.name, config.search)
    code = 0
    try:
        server.serve()
    except BrokenPipeError:
        code = 0        # the controller went away
    except Exception:   # noqa: BLE001 - last resort: log, then exit instead of hanging
        log.exception("server loop failed")
        code = 1
    _exit(code)


def _exit(code: int) -> None:
    """Exit now: do not wait for the loader or a search (background threads may hold numba)."""
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001
            pass
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    os._exit(code)


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name="engine-gtp")


if __name__ == "__main__":
    main()
