"""`engine-train bundle`: the runs of the stages exported as the engine's default models, with
their checksums and held-out figures in MODELS.json (training.bundle.release)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from goengine.models.names import MODEL_FILES, RL_POLICY_FILE
from goengine.models.store import BUNDLED_DIR, record
from goengine.training.data.params import TRAINED_RUN, ZERO_RUN
from goengine.training.bundle.release import (bundle_int8, bundle_rl_policy, bundle_run,
                                              bundle_zero_size)


@click.command("bundle")
@click.option("--policy", "policy_run", type=TRAINED_RUN, default=None)
@click.option("--value", "value_run", type=TRAINED_RUN, default=None)
@click.option("--zero", "zero_run", type=TRAINED_RUN, default=None)
@click.option("--heldout", type=click.Path(exists=True), default=None,
              help="SGF collection never trained on, for the figures")
@click.option("--positions", default=20000, show_default=True, type=click.IntRange(1))
@click.option("--int8", "calibration", type=click.Path(exists=True), default=None,
              help="also write the int8 twin of each network this call bundles (of every "
                   "bundled one when it names none), calibrated on these games (not the "
                   "held-out ones)")
@click.option("--zero-size", "zero_size_run", type=ZERO_RUN,
              default=None, help="a Zero loop run (engine-train zero --out) whose network "
                                 "becomes the bundled one of its board size (zero-9x9.onnx)")
@click.option("--zero-generation", type=click.IntRange(0), default=None,
              help="with --zero-size: the registry generation [default: the run's best]")
@click.option("--rl-policy", "rl_run", type=click.Path(file_okay=False, exists=True), default=None,
              help="an engine-train rl run whose policy.onnx is bundled as rl-policy.onnx")
@click.option("--out-dir", type=click.Path(file_okay=False), default=str(BUNDLED_DIR), show_default=True)
def bundle_command(policy_run, value_run, zero_run, heldout, positions, calibration, zero_size_run,
                   zero_generation, rl_run, out_dir):
    """Export runs as the default models with checksums and held-out figures."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    index_path = out / "MODELS.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    runs = {"policy": policy_run, "value": value_run, "zero": zero_run}
    for kind, run in runs.items():
        if run is None:
            continue
        entry = bundle_run(kind, Path(run), out, heldout, positions)
        index[kind] = entry
        click.echo(f"{kind}: {entry['file']} step {entry['training']['step']} "
                   f"held-out {entry['heldout']}")
    # The twins of the networks this call bundles; of every bundled one when it bundles none,
    # so that bundling one network leaves the others' files and figures as they were.
    twins = [k for k, run in runs.items() if run is not None] or list(runs)
    for kind in twins:
        if calibration and kind in index and (out / MODEL_FILES[kind]).exists():
            twin = bundle_int8(kind, out, calibration, heldout, positions)
            index[kind].pop("int8", None)
            if twin is not None:
                index[kind]["int8"] = twin
                click.echo(f"{kind}: {twin['file']} held-out {twin['heldout']}")
    if zero_size_run is not None:
        key, entry = bundle_zero_size(Path(zero_size_run), zero_generation, out)
        index[key] = entry
        click.echo(f"{key}: {entry['file']} generation {entry['run']['generation']} of "
                   f"{zero_size_run}")
    if rl_run is not None:
        index["rl-policy"] = bundle_rl_policy(Path(rl_run), out, heldout, positions)
        click.echo(f"rl-policy: {RL_POLICY_FILE} after {index['rl-policy']['run']['updates']} "
                   f"updates, held-out {index['rl-policy']['heldout']}")
    rollout = out / "rollout.npz"
    if rollout.exists():
        index["rollout"] = {"file": rollout.name, "sha256": record(rollout)}
        meta = out / "rollout.json"
        if meta.exists():
            index["rollout"]["metrics"] = json.loads(meta.read_text())
    index_path.write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    click.echo(f"wrote {index_path}")
