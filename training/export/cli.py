"""The model-file commands of every stage: `engine-train export` (a training checkpoint to ONNX
with metadata, checked against torch), `flush-denormals`, `quantize` (the int8 twin,
training.export.quantize) and `eval` (held-out figures, training.export.evaluate)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from goengine.engine.features import FEATURE_SETS
from goengine.models.metadata import ModelError
from goengine.models.session import load_session
from goengine.training.export.evaluate import evaluate_collection, evaluate_shards
from goengine.training.export.quantize import calibration_planes, quantize_model
from goengine.training.nets import networks as nets
from goengine.training.nets.export import ExportError, export_onnx, flush_denormals_file


@click.command("export")
@click.option("--checkpoint", required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--out", required=True, type=click.Path(dir_okay=False))
@click.option("--heldout-top1", default=None, type=click.FloatRange(0, 1),
              help="recorded in the metadata")
@click.option("--training-data", default="", help="free text / JSON summary recorded in the metadata")
@click.option("--komi", default=None, type=click.FloatRange(-1000, 1000),
              help="a value or Zero net: the komi of the games whose outcomes it learned (the "
                   "engine moves its value to the game's komi); default: the file says none, "
                   "and the engine reads 7.5")
def export_command(checkpoint, out, heldout_top1, training_data, komi):
    """Export CHECKPOINT as ONNX (dynamic batch and board size) and verify it within 1e-4."""
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
    for path in files:
        try:
            n = flush_denormals_file(path)
        except Exception as e:          # not ONNX, unreadable: say which, go on with the rest
            raise click.ClickException(f"{path}: not a readable ONNX model ({e})")
        click.echo(f"{path}: {n} subnormal weights set to zero" if n else f"{path}: none")


@click.command("quantize")
@click.option("--model", "model_path", required=True,
              type=click.Path(exists=True, dir_okay=False), help="float ONNX model (any kind)")
@click.option("--sgf", multiple=True, required=True, type=click.Path(exists=True),
              help="SGF file, folder or archive of games whose positions calibrate the "
                   "activation ranges (repeatable; not the held-out games)")
@click.option("--out", required=True, type=click.Path(dir_okay=False))
@click.option("--positions", "count", default=512, show_default=True, type=click.IntRange(16),
              help="calibration positions")
@click.option("--every", default=7, show_default=True, type=click.IntRange(1),
              help="take every N-th position of a game")
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25),
              help="board size of the calibration games")
def quantize_command(model_path, sgf, out, count, every, size):
    """int8 static quantization of an ONNX model for the CPU (docs/algorithms.md §3.2)."""
    try:
        meta = load_session(model_path).meta
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    planes = calibration_planes(sgf, meta.feature_set, count, every, sizes=(size,))
    described = (f"int8 static QDQ (weights per channel, uint8 activations), {len(planes)} "
                 f"{size}x{size} calibration positions of {', '.join(Path(s).name for s in sgf)}")
    try:
        written = quantize_model(Path(model_path), Path(out), planes, described)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{out}: {load_session(written).meta.quantization}")   # with any float tail


def parse_move_edges(value: str) -> tuple[int, ...]:
    """'60,120,180' -> (60, 120, 180): ascending positive move numbers."""
    try:
        edges = tuple(int(v) for v in value.replace(" ", "").split(",") if v)
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected move numbers like 60,120,180",
                                 param_hint="--by-move") from None
    if any(e <= 0 for e in edges) or list(edges) != sorted(set(edges)):
        raise click.BadParameter(f"{value!r}: move numbers must be positive and ascending",
                                 param_hint="--by-move")
    return edges


@click.command("eval")
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="ONNX file or training checkpoint (.pt)")
@click.option("--sgf", multiple=True, type=click.Path(exists=True),
              help="SGF file, directory or archive (repeatable)")
@click.option("--data-dir", type=click.Path(exists=True, file_okay=False),
              help="a dataset directory: its held-out shards instead of SGF games")
@click.option("--split", type=click.Choice(["heldout", "train"]), default="heldout", show_default=True,
              help="with --data-dir: which shards; train against heldout tells under- from overfitting")
@click.option("--max-positions", default=20000, show_default=True, type=click.IntRange(1))
@click.option("--every", default=1, show_default=True, type=click.IntRange(1),
              help="use every k-th move of each game")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1))
@click.option("--off-board-results", type=click.Choice(["keep", "drop"]), default="keep",
              show_default=True, help="with --sgf: drop the games won on time or by forfeit (whose "
                                      "outcome is no value of the position), as engine-train value does")
@click.option("--by-move", default="", callback=lambda ctx, param, v: parse_move_edges(v),
              help="with --sgf: move numbers cutting the games into phases (e.g. 60,120,180,240), "
                   "a line of figures for each phase before the last line")
def eval_command(model_path, sgf, data_dir, split, max_positions, every, threads, off_board_results,
                 by_move):
    """Held-out accuracy of a policy (top-1/top-5) or MSE of a value net; a Zero net's both."""
    if bool(sgf) == bool(data_dir):
        raise click.UsageError("give --sgf or --data-dir (one of them)")
    if by_move and data_dir:
        raise click.UsageError("--by-move needs --sgf (the shards keep no move numbers)")
    try:
        r = (evaluate_shards(model_path, data_dir, max_positions, threads, split=split) if data_dir
             else evaluate_collection(model_path, sgf, max_positions, every, threads,
                                      by_move=by_move, decided_on_board=off_board_results == "drop"))
    except ModelError as e:  # a bad model file: say so plainly
        raise click.ClickException(str(e)) from None
    lines = {f"{size}x{size}": m for size, m in r.get("by_size", {}).items()} if len(
        r.get("by_size", {})) > 1 else {}
    lines.update({f"moves {phase}": m for phase, m in r.get("by_move", {}).items()})
    for label, m in lines.items():
        click.echo(f"{label}: " + " ".join(
            f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in m.items()))
    if "mse" in r:
        click.echo(f"mse {r['mse']:.4f} positions {r['positions']}")
    else:
        if "value_mse" in r:    # a Zero net: its value head on the games' outcomes, then its policy
            click.echo(f"value: mse {r['value_mse']:.4f} positions {r['value_positions']}")
        click.echo(f"top1 {r['top1']:.4f} top5 {r['top5']:.4f} positions {r['positions']}")
