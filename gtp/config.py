"""What the command line decides (`EngineConfig`), and what each search needs to be built.

Pure Python and cheap to import: `gtp.main` checks the command line with it before anything is
loaded. `check_search(config)` only looks modules up (no import), so that `engine-gtp --search
zero` fails at once with a clear message when that search or its model is missing.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, replace

from goengine.models.names import BUNDLED_DIR, MODEL_FILES


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
    playouts: int | None = None       # new simulations per move (None: the player's default)
    visits: int | None = None         # root visits per move, reused tree included
    time_per_move: float | None = None  # seconds per move when no clock is set
    threads: int | None = None        # search threads
    resign_threshold: float | None = None  # resign below this winrate (0 disables)
    seed: int | None = None
    name: str = "goengine"
    rollout: str = "auto"             # auto | policy | heuristic (playouts of the MCTS)
    lam: float | None = None          # AlphaGo lambda (None: NetSearchConfig's default)
    c_puct: float | None = None
    n_thr: int | None = None
    batch_size: int | None = None
    policy_temperature: float | None = None
    rollout_threads: int | None = None
    value_komi: float | None = None   # NetSearchConfig.value_komi / komi_scale
    komi_scale: float | None = None
    score_utility: float | None = None   # NetSearchConfig.score_utility (Zero, score head)
    lag_margin: float | None = None   # TimeConfig.lag_margin
    ponder: bool = False              # search on the opponent's time (keeps the tree)
    auto_search: bool = False         # --search auto chose the search: other sizes fall back to
                                      # the heuristic MCTS instead of being refused


# --search NAME -> the modules it needs (all must exist).
SEARCH_MODULES = {
    "heuristic": ("goengine.engine.search.mcts",),
    "alphago": ("goengine.engine.search.network", "goengine.models.onnx_evaluator"),
    "zero": ("goengine.engine.search.network", "goengine.models.onnx_evaluator"),
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


def resolve_auto_search(config: EngineConfig) -> EngineConfig:
    """--search auto: the Zero search when only a Zero network is named (--zero FILE), else the
    AlphaGo search when its models are there, else the heuristic MCTS."""
    if config.zero_file and not config.policy_file:
        return replace(config, search="zero", auto_search=True)
    have = all(os.path.isfile(model_path(config, kind))
               for kind, required in SEARCH_MODELS["alphago"] if required)
    return replace(config, search="alphago" if have else "heuristic", auto_search=True)


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


def model_path(config: EngineConfig, kind: str) -> str:
    """The file named for the kind (--policy, --value, --zero), else <model-dir>/<kind>.onnx, else
    the bundled model of that kind."""
    named = getattr(config, f"{kind}_file", None)
    if named:
        return named
    return os.path.join(config.model_dir or BUNDLED_DIR, MODEL_FILES[kind])
