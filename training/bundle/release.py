"""Training runs exported as the engine's default models (`engine-train bundle`).

    engine-train bundle --policy runs/sl --value runs/value --zero runs/zero \\
        --heldout ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2

Each run's checkpoint is exported to `models/bundled/<kind>.onnx` (checked against torch within
1e-4), evaluated on the held-out collection with `engine-train eval`'s code, and listed with its
figures in `models/bundled/MODELS.json` and its sha256 in `SHA256SUMS`.

    engine-train bundle --int8 ../shared/data/tygem9d/tygem9d-2015-05.tar.bz2 \
        --heldout ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2 --positions 10000

    engine-train bundle --zero-size runs/zero9h [--zero-generation 40]

`--zero-size RUN` bundles a Zero loop run's network (its best generation by default) as the
network of the run's board size (`models/bundled/zero-9x9.onnx`, models.names'
SIZED_MODEL_FILES), with its int8 twin calibrated on the run's newest self-play games, and lists
it with the run's registry row and its reference matches (against GNU Go) in MODELS.json.

    engine-train bundle --rl-policy runs/rl19b --heldout ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2

`--rl-policy RUN` bundles an `engine-train rl` run's exported policy as `rl-policy.onnx`, with
the run's config, its checks against the SL policy (curve.csv) and its held-out figures; the engine
plays it alone with `--search policy --policy models/bundled/rl-policy.onnx`.

`--int8 GAMES` also writes the int8 twin (`<kind>.int8.onnx`, training.export.quantize, calibrated on
GAMES) of each network the call bundles, or of every bundled network when it names none, with its
held-out figures under the kind's `int8` entry; the engine loads the twin on a CPU (engine-gtp
--model-precision).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from goengine.engine.features import FEATURE_SETS
from goengine.models.metadata import ModelError
from goengine.models.names import MODEL_FILES, RL_POLICY_FILE, SIZED_MODEL_FILES, int8_variant
from goengine.models.session import load_session
from goengine.models.store import forget, record
from goengine.training.data.atomic import write_atomic
from goengine.training.export.evaluate import evaluate_collection
from goengine.training.export.quantize import calibration_planes, quantize_model
from goengine.training.nets import networks as nets
from goengine.training.nets.curves import read_rows
from goengine.training.nets.export import export_onnx
from goengine.training.zero.int8 import int8_twin
from goengine.training.zero.reference import reference_table
from goengine.training.zero.registry import Registry


def bundle_run(kind: str, run_dir: Path, out_dir: Path, heldout, positions: int) -> dict:
    net, ckpt = nets.load_checkpoint(run_dir / "checkpoint.pt")
    fs = {"policy": "alphago48", "value": "alphago49", "zero": "zero17"}[kind]
    data = {}
    meta_path = run_dir / "data" / "dataset.json"
    if not meta_path.exists():
        cfg = json.loads((run_dir / "train_config.json").read_text()) if (run_dir / "train_config.json").exists() else {}
        meta_path = Path(cfg.get("data_dir", "")) / "dataset.json"
    if meta_path.exists():
        m = json.loads(meta_path.read_text())
        data = {"sources": [Path(s).name for s in m.get("sources", [])],
                "positions": m["stats"]["positions"], "games": m["stats"]["games"]}
    training = {"step": int(ckpt.get("step", 0)), "positions_seen": int(ckpt.get("positions", 0)),
                "preset": net.config.get("preset"), "data": data,
                "internal_heldout": json.loads(ckpt.get("best", "{}"))}
    out = out_dir / f"{kind}.onnx"
    forget(int8_variant(out))     # the twin of the weights this replaces; --int8 writes the new one
    md = {"feature_set": fs, "feature_version": FEATURE_SETS[fs].version, "board_sizes": "9,13,19",
          "training_data": json.dumps(training)}
    export_onnx(net, kind, out, md)
    figures = {}
    if heldout:
        figures = evaluate_collection(out, [heldout], max_positions=positions)
    if kind in ("policy", "zero") and "top1" in figures:
        export_onnx(net, kind, out, {**md, "heldout_top1": f"{figures['top1']:.4f}"})
    sha = record(out)
    return {"file": out.name, "sha256": sha, "training": training,
            "heldout": {"collection": Path(heldout).name if heldout else None, **figures}}


def bundle_int8(kind: str, out_dir: Path, calibration: str, heldout, positions: int) -> dict | None:
    """The int8 twin of the bundled float `kind` model, calibrated on `calibration`'s games; None
    (no twin: the engine loads the float file) when no int8 version follows the float outputs."""
    src = out_dir / MODEL_FILES[kind]
    planes = calibration_planes([calibration], load_session(src).meta.feature_set)
    described = (f"int8 static QDQ (weights per channel, uint8 activations), {len(planes)} "
                 f"19x19 calibration positions of {Path(calibration).name}")
    forget(int8_variant(src))
    try:
        out = quantize_model(src, int8_variant(src), planes, described)
    except ModelError as e:
        click.echo(f"{kind}: no int8 twin: {e}", err=True)
        return None
    figures = evaluate_collection(out, [heldout], max_positions=positions) if heldout else {}
    return {"file": out.name, "sha256": record(out),
            "quantization": load_session(out).meta.quantization,
            "heldout": {"collection": Path(heldout).name if heldout else None, **figures}}


def bundle_zero_size(run_dir: Path, generation: int | None, out_dir: Path) -> tuple[str, dict]:
    """(MODELS.json key, entry): generation `generation` (None: the best) of the Zero loop run
    in `run_dir` as the bundled network of the run's board size, with its int8 twin."""
    config = json.loads((run_dir / "zero_config.json").read_text())
    size = int(config["size"])
    name = SIZED_MODEL_FILES["zero"].get(size)
    if name is None:
        raise click.UsageError(f"{run_dir} is a {size}x{size} run; the engine takes networks of "
                               f"one size for {sorted(SIZED_MODEL_FILES['zero'])} only")
    state = json.loads((run_dir / "state.json").read_text())
    if generation is None:
        generation = int(state["best"])
    registry = Registry(run_dir / "registry")
    row = next((r for r in registry.rows if r["generation"] == generation), None)
    if row is None or not registry.path(generation).is_file():
        raise click.UsageError(f"{run_dir}: generation {generation} is not in the registry")
    out = out_dir / name
    write_atomic(out, lambda tmp: shutil.copyfile(registry.path(generation), tmp))
    forget(int8_variant(out))
    # the same twin as the generation's reference match played (training.zero.reference)
    twin = int8_twin(out, int8_variant(out), run_dir / "games", size, [0, generation],
                     through=generation)
    entry = {"file": name, "sha256": record(out), "board_size": size,
             "run": {"generation": generation, "registry": row,
                     # the file the run started from (a human-data net) or "scratch"
                     "init": Path(state.get("init", "scratch")).name,
                     "config": {k: config[k] for k in ("komi", "visits", "games", "gating",
                                                       "heads", "score_utility", "preset",
                                                       "optimizer", "lr", "window", "steps")
                                if k in config}},
             "reference": [r for r in reference_table(run_dir / "registry").rows
                           if r["generation"] == generation]}
    if twin is not None:
        entry["int8"] = {"file": twin.name, "sha256": record(twin),
                         "quantization": load_session(twin).meta.quantization}
    return name.removesuffix(".onnx"), entry


def bundle_rl_policy(run_dir: Path, out_dir: Path, heldout, positions: int) -> dict:
    """The MODELS.json entry of an `engine-train rl` run's policy.onnx, bundled as rl-policy.onnx."""
    src, config_path, curve = (run_dir / name for name in ("policy.onnx", "rl_config.json",
                                                           "curve.csv"))
    if not all(path.is_file() for path in (src, config_path, curve)):
        raise click.UsageError(f"{run_dir}: not a finished engine-train rl run (policy.onnx, "
                               f"rl_config.json and curve.csv)")
    rows = read_rows(curve)
    out = out_dir / RL_POLICY_FILE
    write_atomic(out, lambda tmp: shutil.copyfile(src, tmp))
    figures = evaluate_collection(out, [heldout], max_positions=positions) if heldout else {}
    return {"file": out.name, "sha256": record(out),
            "run": {"config": json.loads(config_path.read_text()),
                    "updates": max(int(r["updates"]) for r in rows),
                    "games": max(int(r["games"]) for r in rows),
                    # the run's own games against the SL policy, moves sampled
                    "against_sl": [{"updates": int(r["updates"]), "games": int(r["sl_games"]),
                                    "winrate": float(r["winrate_sl"])}
                                   for r in rows if r.get("winrate_sl")],
                    # and greedy after the opening, where the run played such checks
                    "against_sl_greedy": [{"updates": int(r["updates"]),
                                           "games": int(r["greedy_games"]),
                                           "winrate": float(r["winrate_sl_greedy"])}
                                          for r in rows if r.get("winrate_sl_greedy")]},
            "heldout": {"collection": Path(heldout).name if heldout else None, **figures}}
