"""A supervised run from SGF collections or a built dataset, shared by `engine-train sl` and
`engine-train value`: their common options, the dataset (training.data.prepare), the training loop
(training.nets.loop) and the ONNX export with metadata at the end.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import click

from goengine.engine.deadstones import PLAYOUTS
from goengine.engine.features import FEATURE_SETS
from goengine.training.data.dataset import dataset_komi
from goengine.training.data.prepare import filter_options, prepare_dataset
from goengine.training.nets import networks as nets
from goengine.training.nets.export import export_onnx
from goengine.training.nets.loop import AUX_HEADS, DEVICE, TrainConfig, train
from goengine.training.nets.precision import precision_options

AUTO_HEADS = "auto"     # --heads: both heads where the dataset holds their targets


def export_run(run_dir: Path, kind: str, feature_set: str, data_meta: dict, metrics: dict) -> Path:
    net, _ = nets.load_checkpoint(run_dir / "checkpoint.pt")
    out = run_dir / f"{kind}.onnx"
    summary = {"sources": data_meta.get("sources"), "positions": data_meta["stats"]["positions"],
               "games": data_meta["stats"]["games"], "steps": metrics.get("step"),
               "positions_seen": metrics.get("positions")}
    md = {"feature_set": feature_set, "feature_version": FEATURE_SETS[feature_set].version,
          "board_sizes": "9,13,19", "training_data": json.dumps(summary)}
    if kind in ("policy", "zero") and "top1" in metrics:
        md["heldout_top1"] = f"{metrics['top1']:.4f}"
    komi = dataset_komi(data_meta["stats"])
    if kind == "value" and komi is not None:   # the outcomes' komi: the engine moves the value
        md["komi"] = komi                      # to the game's (engine.search.komi)
    export_onnx(net, kind, out, md)
    (run_dir / f"{kind}.metrics.json").write_text(json.dumps({**metrics, "data": summary}, indent=2))
    return out


def run_supervised(kind, sgf, out, data_dir, preset, steps, batch_size, optimizer, lr, lr_halve_every,
         eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction, positions_per_game,
         max_games, train_limit, filters, init_from=None, device="cpu", loader_workers=0,
         heads=(), ownership_weight=TrainConfig.ownership_weight,
         score_weight=TrainConfig.score_weight, precision="auto", channels_last=True,
         judge_playouts=PLAYOUTS, build_workers=1, net_filters=None, net_layers=None):
    """Build (or reuse) the dataset of `sgf`, train a `kind` net on it and export it to ONNX."""
    if not sgf and not (data_dir and (Path(data_dir) / "dataset.json").exists()):
        raise click.UsageError("give at least one --sgf file, directory or archive, or a --data-dir "
                               "that holds a built dataset (engine-train value-data)")
    feature_set = {"policy": "alphago48", "value": "alphago49", "zero": "zero17"}[kind]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data_dir = Path(data_dir) if data_dir else out / "data"
    # the value net's shards carry the heads' targets of the counted human games
    data_meta = prepare_dataset(sgf, data_dir, feature_set, filters, heldout_fraction,
                                positions_per_game, max_games, seed, aux_targets=kind == "value",
                                judge_playouts=judge_playouts, build_workers=build_workers)
    if heads == AUTO_HEADS:
        # both heads lowered the held-out value MSE on 9x9 self-play (docs/algorithms.md §4.3);
        # on human games they learn from the counted games (aux_mask)
        heads = AUX_HEADS if {"own", "score"} <= set(data_meta.get("targets", ())) else ()
    cfg = TrainConfig(kind=kind, preset=preset, net_filters=net_filters, net_layers=net_layers,
                      steps=steps, batch_size=batch_size,
                      optimizer=optimizer, lr=lr, lr_halve_every=lr_halve_every,
                      eval_every=eval_every, eval_positions=eval_positions,
                      checkpoint_every=checkpoint_every, threads=threads,
                      seed=seed, train_limit=train_limit, init_from=init_from, device=device,
                      loader_workers=loader_workers, heads=tuple(heads),
                      ownership_weight=ownership_weight, score_weight=score_weight,
                      precision=precision, channels_last=channels_last)
    click.echo(f"config {asdict(cfg)}", err=True)
    try:
        metrics = train(cfg, data_dir, out, resume=resume, log=lambda m: click.echo(m, err=True))
    except ValueError as e:
        raise click.ClickException(str(e))
    path = export_run(out, kind, feature_set, data_meta, metrics)
    click.echo(f"exported {path}", err=True)
    if kind in ("policy", "zero"):
        click.echo(f"top1 {metrics.get('top1', 0):.4f} top5 {metrics.get('top5', 0):.4f} "
                   f"positions {metrics.get('positions', 0)}")
    else:
        aux = "".join(f" {k} {metrics[k]:.4f}" for k in ("own_mse", "score_mae") if k in metrics)
        click.echo(f"mse {metrics.get('mse', 0):.4f}{aux} positions {metrics.get('positions', 0)}")


def common_options(default_ppg, default_batch, default_steps):
    def deco(f):
        opts = [
            click.option("--sgf", multiple=True, type=click.Path(exists=True),
                         help="SGF file, directory or archive (repeatable); optional when --data-dir "
                              "holds a built dataset"),
            click.option("--out", required=True, type=click.Path(file_okay=False),
                         help="run directory (checkpoints, curves, ONNX)"),
            click.option("--data-dir", default=None, type=click.Path(file_okay=False),
                         help="dataset shards (default OUT/data)"),
            click.option("--preset", default="cpu", show_default=True, type=click.Choice(["cpu", "paper"])),
            click.option("--net-filters", default=None, type=click.IntRange(1),
                         help="filters of each convolution [default: the preset's]"),
            click.option("--net-layers", default=None, type=click.IntRange(2),
                         help="convolution layers (policy, value; AlphaGo's L) or residual "
                              "blocks (zero) [default: the preset's]"),
            click.option("--steps", default=default_steps, show_default=True, type=click.IntRange(1)),
            click.option("--batch-size", default=default_batch, show_default=True, type=click.IntRange(1)),
            click.option("--optimizer", default="adam", show_default=True, type=click.Choice(["adam", "sgd"]),
                         help="sgd = the paper's schedule (use --lr 0.003 --lr-halve-every N)"),
            click.option("--lr", default=1e-3, show_default=True,
                         type=click.FloatRange(0, min_open=True)),
            click.option("--lr-halve-every", default=0, show_default=True, type=click.IntRange(0)),
            click.option("--eval-every", default=1000, show_default=True, type=click.IntRange(1)),
            click.option("--eval-positions", default=20000, show_default=True, type=click.IntRange(1)),
            click.option("--checkpoint-every", default=500, show_default=True, type=click.IntRange(1)),
            click.option("--threads", default=2, show_default=True, type=click.IntRange(1)),
            click.option("--seed", default=1, show_default=True, type=click.IntRange(0)),
            click.option("--resume", is_flag=True, help="continue from OUT/checkpoint.pt"),
            click.option("--heldout-fraction", default=0.02, show_default=True, type=click.FloatRange(0, 0.5)),
            click.option("--positions-per-game", default=default_ppg, type=click.IntRange(0),
                         show_default=True, help="positions sampled per game (0 = all)"),
            click.option("--max-games", default=None, type=click.IntRange(1)),
            click.option("--train-limit", default=None, type=click.IntRange(1),
                         help="load at most N training positions"),
            click.option("--init-from", default=None, type=click.Path(dir_okay=False, exists=True),
                         help="start from this checkpoint: all of a net of the same kind and depth "
                              "(widened to --net-filters when narrower), else its trunk (e.g. the "
                              "SL policy's for a value net), scaled to unit size for the new head"),
            click.option("--device", default="cpu", show_default=True, type=DEVICE,
                         help="cpu, cuda (bfloat16 autocast) or auto (cuda when torch sees a GPU)"),
            click.option("--loader-workers", default=0, show_default=True, type=click.IntRange(0),
                         help="processes that build minibatches (0: in the training process, "
                              "reproducible; a GPU needs several to be kept busy)"),
            click.option("--build-workers", default=os.cpu_count() or 1, type=click.IntRange(1),
                         help="processes that replay the games into the dataset (--sgf) "
                              "[default: the machine's cores]; the positions do not depend on it"),
        ]
        for o in reversed(opts):
            f = o(f)
        return precision_options(filter_options(f))
    return deco
