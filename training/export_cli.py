"""`engine-train export`: a training checkpoint to ONNX with metadata, checked against torch."""
from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("export")
@click.option("--checkpoint", required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--out", required=True, type=click.Path(dir_okay=False))
@click.option("--heldout-top1", default=None, type=float, help="recorded in the metadata")
@click.option("--training-data", default="", help="free text / JSON summary recorded in the metadata")
@click.option("--komi", default=None, type=click.FloatRange(-1000, 1000),
              help="a value or Zero net: the komi of the games whose outcomes it learned (the "
                   "engine moves its value to the game's komi); default: the file says none, "
                   "and the engine reads 7.5")
def export_command(checkpoint, out, heldout_top1, training_data, komi):
    """Export CHECKPOINT as ONNX (dynamic batch and board size) and verify it within 1e-4."""
    from goengine.engine.features import FEATURE_SETS
    from goengine.training import nets
    from goengine.training.export import ExportError, export_onnx
    try:
        net, ckpt = nets.load_checkpoint(checkpoint)
    except Exception as e:
        raise click.ClickException(f"{checkpoint}: not a goengine checkpoint ({e})")
    kind = net.config["kind"]
    fs = {"policy": "alphago48", "value": "alphago49", "zero": "zero17"}[kind]
    md = {"feature_set": fs, "feature_version": FEATURE_SETS[fs].version, "board_sizes": "9,13,19"}
    if training_data:
        md["training_data"] = training_data
    elif "best" in ckpt:
        md["training_data"] = json.dumps({"checkpoint": Path(checkpoint).name, "best": ckpt["best"]})
    if heldout_top1 is not None:
        md["heldout_top1"] = f"{heldout_top1:.4f}"
    if komi is not None:
        if kind == "policy":
            raise click.BadParameter("a policy net has no value to move", param_hint="--komi")
        md["komi"] = komi
    try:
        export_onnx(net, kind, out, md)
    except ExportError as e:
        raise click.ClickException(str(e))
    click.echo(f"wrote {out}")


@click.command("flush-denormals")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
def flush_denormals_command(files):
    """Rewrite ONNX FILES with their subnormal float weights set to zero (what every export does
    now): files exported before, such as a long Zero run's registry, evaluate up to 20 times
    faster on a CPU and compute the same (docs/algorithms.md §3.2)."""
    from goengine.training.export import flush_denormals_file
    for path in files:
        try:
            n = flush_denormals_file(path)
        except Exception as e:          # not ONNX, unreadable: say which, go on with the rest
            raise click.ClickException(f"{path}: not a readable ONNX model ({e})")
        click.echo(f"{path}: {n} subnormal weights set to zero" if n else f"{path}: none")
