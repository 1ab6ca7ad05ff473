"""What the command line decides (`EngineConfig`), and what each search needs to be built.

Pure Python and cheap to import: `gtp.main` checks the command line with it before anything is
loaded. `check_search(config)` only looks modules up (no import), so that `engine-gtp --search
zero` fails at once with a clear message when that search or its model is missing.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, replace

from goengine.engine.cores import cores_up_to
from goengine.models.names import BOOK_FILES, BUNDLED_DIR, MODEL_FILES, SIZED_MODEL_FILES, int8_variant


@dataclass(frozen=True)
class EngineConfig:
    """Everything the command line decides; built once by gtp.main."""
    size: int = 19                    # initial board size
    komi: float = 7.5                 # initial komi
    rules: str = "chinese"            # a name of engine.rules.NAMED_RULES
    search: str = "heuristic"         # heuristic | alphago | zero | policy
    model_dir: str | None = None      # where the ONNX files are (None: the bundled ones)
    policy_file: str | None = None    # one network file of a kind, in place of <model_dir>/<kind>
    value_file: str | None = None
    zero_file: str | None = None
    model_precision: str = "auto"     # auto | int8 | fp32: which file of a model directory
    playouts: int | None = None       # new simulations per move (None: the player's default)
    visits: int | None = None         # root visits per move, reused tree included
    time_per_move: float | None = None  # seconds per move when no clock is set
    threads: int | None = None        # search threads
    resign_threshold: float | None = None  # resign below this winrate (0 disables)
    seed: int | None = None
    name: str = "goengine"
    rollout: str = "auto"             # auto | policy | heuristic (playouts of the MCTS)
    rollout_self_atari: float | None = None  # PlayoutRules.self_atari (None: its default)
    rollout_capture: float | None = None     # PlayoutRules.capture (None: its default)
    rollout_big_self_atari: float | None = None  # PlayoutRules.big_self_atari (None: default)
    lam: float | None = None          # AlphaGo lambda (None: NetSearchConfig's default)
    lam_by_size: tuple[tuple[int, float], ...] = ()  # --search auto without --lambda: the
                                      # measured lambda of each size (AUTO_LAMBDA)
    c_puct: float | None = None
    n_thr: int | None = None
    batch_size: int | None = None
    policy_temperature: float | None = None
    rollout_threads: int | None = None  # NetSearchConfig.rollout_threads (0: by the cores
                                        # where lambda is 1)
    value_komi: float | None = None   # NetSearchConfig.value_komi / komi_scale
    komi_scale: float | None = None
    score_utility: float | None = None   # NetSearchConfig.score_utility and the dynamic
    dynamic_score_utility: float | None = None  # score utility's weight and scale
    dynamic_score_scale: float | None = None
    criticality: float | None = None  # NetSearchConfig.criticality
    gumbel: bool = False              # NetSearchConfig.gumbel: the Zero search's Gumbel root
    gumbel_k: int | None = None       # NetSearchConfig.gumbel_k
    lag_margin: float | None = None   # TimeConfig.lag_margin
    lag_unreported: float | None = None   # TimeConfig.lag_unreported
    time_manager: str = "dynamic"     # TimeConfig.time_manager: dynamic | simple
    ponder: bool = False              # search on the opponent's time (keeps the tree)
    auto_search: bool = False         # --search auto chose the search: other sizes fall back to
                                      # the heuristic MCTS instead of being refused
    zero_sizes: tuple[int, ...] = ()  # --search auto: the sizes the Zero search plays, each with
                                      # the Zero network made for it (e.g. zero-9x9.onnx)
    book_files: tuple[str, ...] = ()  # opening books (--book; --search auto: the bundled ones)
    no_book: bool = False             # --no-book: none, not even the bundled ones


# --search NAME -> the modules it needs (all must exist).
SEARCH_MODULES = {
    "heuristic": ("goengine.engine.search.mcts",),
    "alphago": ("goengine.engine.search.alphago", "goengine.models.onnx_evaluator"),
    "zero": ("goengine.engine.search.zero", "goengine.models.onnx_evaluator"),
    "policy": ("goengine.engine.search.policy", "goengine.models.onnx_evaluator"),
}
# --search NAME -> the model kinds it loads: (kind, required)
SEARCH_MODELS = {
    "heuristic": (),
    # the value network is optional: without it the leaf value is the rollouts' (lambda = 1)
    "alphago": (("policy", True), ("value", False)),
    "zero": (("zero", True),),
    "policy": (("policy", True),),
}


# --search auto: lambda of the AlphaGo search on the sizes where head-to-head matches at ~1 s a
# move chose one other than the paper's 0.5 (docs/results/strength.md): rollouts alone (lambda 1)
# against 0.5 with the bundled value net won 16 of 19 on 13x13 and 23 of 31 on 19x19, each
# SPRT(0, 100) H1
AUTO_LAMBDA: dict[int, float] = {13: 1.0, 19: 1.0}

MAX_DEFAULT_THREADS = 4    # a batch of 8 positions is small to split further (measured to 2)


def network_threads(config: EngineConfig, search: str | None = None) -> int:
    """onnxruntime's threads for each network call of `search` (None: the configured one; "zero"
    for --search auto's Zero search on its sizes): --threads when given; else, for the searches
    that call the network on their own thread (Zero, the policy alone), the machine's cores (at
    most MAX_DEFAULT_THREADS): on 9x9 the Zero search runs 45-50% more simulations a second with
    2 threads than with 1 on this project's 2-core machine (benchmarks/bench_search_nn.py
    --threads); for the AlphaGo search 1, as its network call already overlaps the rollouts,
    which take the other core."""
    if config.threads is not None:
        return config.threads
    if (search or config.search) in ("zero", "policy"):
        return cores_up_to(MAX_DEFAULT_THREADS)
    return 1


def resolve_auto_search(config: EngineConfig) -> EngineConfig:
    """--search auto: the Zero search when only a Zero network is named (--zero FILE), else the
    AlphaGo search when its models are there, else the heuristic MCTS; and on each size that has
    a Zero network made for it in the model directory (zero-9x9.onnx), the Zero search with that
    network, measured the stronger there (docs/results/strength.md, docs/gtp.md §3). Without
    --lambda, the AlphaGo search's lambda on each size is the one measured there (AUTO_LAMBDA)."""
    if config.zero_file and not config.policy_file:
        return replace(config, search="zero", auto_search=True)
    have = all(os.path.isfile(model_path(config, kind))
               for kind, required in SEARCH_MODELS["alphago"] if required)
    sized = sized_load_files(config, "zero", on_cpu=True)
    return replace(config, search="alphago" if have else "heuristic", auto_search=True,
                   zero_sizes=tuple(sorted(n for n, f in sized.items() if os.path.isfile(f))),
                   book_files=config.book_files or bundled_books(config),
                   lam_by_size=(() if config.lam is not None
                                else tuple(sorted(AUTO_LAMBDA.items()))))


def bundled_books(config: EngineConfig) -> tuple[str, ...]:
    """The opening books of the model directory (BOOK_FILES) that are there; none with
    --no-book. Only --search auto plays them unasked: they were searched with its networks."""
    if config.no_book:
        return ()
    directory = config.model_dir or BUNDLED_DIR
    paths = (os.path.join(directory, name) for name in BOOK_FILES.values())
    return tuple(p for p in paths if os.path.isfile(p))


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
        if config.model_precision != "int8" or named_file(config, kind):
            continue
        for float_file in [path] + list(sized_load_files(replace(config, model_precision="fp32"),
                                                         kind, on_cpu=True).values()):
            if os.path.isfile(float_file) and not int8_variant(float_file).is_file():
                return (f"--model-precision int8: no {int8_variant(float_file)} beside "
                        f"{float_file} (make it with engine-train quantize)")
    return None


def check_gumbel(config: EngineConfig) -> str | None:
    """None when --gumbel has a Zero search to change (--search zero, or auto on a size with a
    Zero network), else why not."""
    if config.gumbel and config.search != "zero" and not config.zero_sizes:
        return (f"--gumbel changes the Zero search's root; --search {config.search} plays "
                "without it (use --search zero, or auto with a Zero network for the size)")
    return None


def named_file(config: EngineConfig, kind: str) -> str | None:
    """The file named for the kind on the command line (--policy, --value, --zero), if any."""
    return {"policy": config.policy_file, "value": config.value_file,
            "zero": config.zero_file}.get(kind)


def model_path(config: EngineConfig, kind: str) -> str:
    """The file named for the kind (--policy, --value, --zero), else <model-dir>/<kind>.onnx, else
    the bundled model of that kind (the float file; `load_file` may take its int8 twin)."""
    return named_file(config, kind) or os.path.join(config.model_dir or BUNDLED_DIR,
                                                    MODEL_FILES[kind])


def load_file(config: EngineConfig, kind: str, on_cpu: bool) -> str:
    """The file the engine loads for `kind`: a file named on the command line as it is; from a
    model directory, the int8 twin beside the float file (training.export.quantize) with
    --model-precision int8, or with auto when onnxruntime runs on the CPU (int8 is the CPU's fast
    path; on a GPU the float file is), else the float file."""
    path = model_path(config, kind)
    if named_file(config, kind) or kind == "rollout":
        return path
    return _with_precision(config, path, on_cpu)


def sized_load_files(config: EngineConfig, kind: str, on_cpu: bool) -> dict[int, str]:
    """{board size: file} of the kind's networks made for one size (SIZED_MODEL_FILES, e.g. the
    Zero loop's zero-9x9.onnx) in the model directory, those there, each at the precision
    `load_file` would choose; none when a file is named for the kind (it plays every size)."""
    if named_file(config, kind):
        return {}
    directory = config.model_dir or BUNDLED_DIR
    out = {}
    for size, name in SIZED_MODEL_FILES.get(kind, {}).items():
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            out[size] = _with_precision(config, path, on_cpu)
    return out


def _with_precision(config: EngineConfig, path: str, on_cpu: bool) -> str:
    """`path` or its int8 twin, as --model-precision and the device decide (see load_file); a
    size's network without a twin loads as it is under auto."""
    if config.model_precision == "fp32":
        return path
    q = int8_variant(path)
    if config.model_precision == "int8" or (on_cpu and q.is_file()):
        return str(q)
    return path
