"""`engine-train sl` and `engine-train value`: supervised training from SGF collections.

    engine-train sl --sgf kgs/ --out runs/sl                  # KGS archives, both players >= 6d
    engine-train sl --sgf tygem/ --out runs/sl --steps 200000 --resume
    engine-train value --sgf tygem/ --out runs/value --positions-per-game 2   # + the heads' targets

Reads directories and archives through sgf_tools, replays with engine.replay and computes planes
with engine.features (the same code the engine plays with), stores them bit-packed
(training.dataset), trains with training.loop, and exports ONNX with metadata at the end.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import click
from tqdm import tqdm

from goengine.engine.features import FEATURE_SETS
from goengine.engine.deadstones import PLAYOUTS
from goengine.sgf_tools import FilterConfig
from goengine.training.dataset import dataset_komi
from goengine.training.shard_build import PART_PREFIX, build_shards
from goengine.training.loop import AUX_HEADS, TrainConfig, train
from goengine.training.precision import precision_options


def filter_options(f):
    opts = [
        click.option("--min-rank", default="6d", show_default=True,
                     help="both players at least this rank ('' = no rank filter)"),
        click.option("--sizes", default="19", show_default=True, help="board sizes to keep"),
        click.option("--max-handicap", type=int, default=None, help="drop games with more handicap"),
        click.option("--min-moves", type=int, default=30, show_default=True),
        click.option("--komi-range", default=None, help="LOW,HIGH inclusive"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def make_filters(min_rank, sizes, max_handicap, min_moves, komi_range, require_winner=False,
                 decided_on_board=False):
    try:
        kr = tuple(float(x) for x in komi_range.split(",")) if komi_range else None
        size_list = tuple(int(s) for s in sizes.split(","))
    except ValueError as e:
        raise click.BadParameter(f"bad --sizes or --komi-range: {e}")
    return FilterConfig(sizes=size_list, min_rank=min_rank or None, max_handicap=max_handicap,
                        min_moves=min_moves, komi_range=kr, require_result=True,
                        require_winner=require_winner, decided_on_board=decided_on_board,
                        dedupe=True)


# The option that lets through the games a filter drops (sgf_tools.filters' reasons); games with
# no result (or, where the outcome is a target, no winner) are never used.
LOOSENED_BY = {"board size": "--sizes, e.g. --sizes 9,13,19",
               "rank": "--min-rank, e.g. --min-rank 1d, or --min-rank '' for no rank filter",
               "handicap": "--max-handicap", "komi": "--komi-range", "too short": "--min-moves",
               "time or forfeit": "--off-board-results keep",
               "no result": "never used", "no winner": "never used"}


def check_splits(stats: dict, heldout_fraction: float) -> None:
    """Raise a `click.ClickException` that says what was dropped and which option loosens it
    when the dataset `stats` (`BuildStats.as_dict()`) has no training or no held-out game."""
    games = stats["games"]
    if games["train"] and games["heldout"]:
        return
    filtered = stats["filtered"]
    if filtered["kept"] == 0:
        dropped = ", ".join(f"{reason} {n}" + (f" ({LOOSENED_BY[reason]})" if reason in LOOSENED_BY
                                               else "")
                            for reason, n in sorted(filtered["rejected"].items()))
        unreadable = stats["read"].get("skipped", 0) if isinstance(stats["read"], dict) else 0
        raise click.ClickException(
            f"no game left to train on: {filtered['seen']} games read, none kept"
            + (f"; dropped by the filters: {dropped} (each game counted under the first filter "
               f"it fails)" if dropped else "")
            + (f"; {unreadable} unreadable" if unreadable else ""))
    kept = games["train"] + games["heldout"]
    errors = stats.get("replay_errors") or {}
    if kept == 0:
        raise click.ClickException(f"no game left to train on: all {filtered['kept']} kept games "
                                   f"stopped on an illegal move {errors}")
    if games["heldout"] == 0:
        raise click.ClickException(f"none of the {kept} games went to the held-out set: raise "
                                   f"--heldout-fraction (now {heldout_fraction}) or add games")
    raise click.ClickException(f"all {kept} games went to the held-out set: lower "
                               f"--heldout-fraction (now {heldout_fraction}) or add games")


def discard_dataset(data_dir: Path) -> None:
    """Remove a dataset's index and shards, so that the next run builds it again."""
    for f in [data_dir / "dataset.json", *data_dir.glob("train-*.npz"),
              *data_dir.glob("heldout-*.npz")]:
        f.unlink(missing_ok=True)
    for part in data_dir.glob(PART_PREFIX + "*"):
        shutil.rmtree(part)


def _as_json(value):
    """`value` as dataset.json stores it (tuples as lists), to compare a stored setting."""
    return json.loads(json.dumps(value, default=str))


def prepare_dataset(sgf, data_dir: Path, feature_set, filters, heldout_fraction, positions_per_game,
                    max_games, seed, aux_targets: bool = False, judge_playouts: int = PLAYOUTS,
                    build_workers: int = 1) -> dict:
    """Build the bit-packed shards once; reuse them when the same sources were already built.
    aux_targets: with the ownership and score targets of the counted games (the dead stones of
    each final position judged with `judge_playouts` playouts: about 0.2 s a 19x19 game)."""
    meta_path = data_dir / "dataset.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if not sgf:
            if meta.get("feature_set") != feature_set:
                raise click.UsageError(f"{data_dir} holds {meta.get('feature_set')} planes; this "
                                       f"network needs {feature_set}")
            click.echo(f"dataset {data_dir}: {meta['stats']['positions']}", err=True)
            check_splits(meta["stats"], meta["heldout_fraction"])
            return meta
        if meta.get("sources") == [str(s) for s in sgf] and meta.get("feature_set") == feature_set:
            built = _as_json({**asdict(FilterConfig()), **meta.get("filters", {})})
            wanted = _as_json(asdict(filters))
            if built != wanted:
                other = ", ".join(f"{k} {built[k]} (now {wanted[k]})" for k in wanted
                                  if built.get(k) != wanted[k])
                raise click.UsageError(f"{data_dir} was built from these sources with other "
                                       f"filters: {other}; pick another --data-dir")
            click.echo(f"reusing dataset {data_dir}: {meta['stats']['positions']}", err=True)
            check_splits(meta["stats"], meta["heldout_fraction"])
            return meta
        raise click.UsageError(f"{data_dir} holds a dataset of other sources; pick another --data-dir")
    discard_dataset(data_dir)        # shards without dataset.json: a build that was killed
    bar = tqdm(unit="game", desc="replaying games", dynamic_ncols=True, total=max_games)

    def progress(done, stats):
        bar.set_postfix(train=stats.positions["train"], heldout=stats.positions["heldout"],
                        **({"targets": stats.targets["targets"],
                            "disagreed": stats.targets["disagreed"]} if aux_targets else {}),
                        refresh=False)
        bar.update(done - bar.n)

    stats = build_shards(list(sgf), data_dir, feature_set, filters, heldout_fraction,
                         positions_per_game, max_games, seed=seed, progress=progress,
                         aux_targets=aux_targets, judge_playouts=judge_playouts,
                         workers=build_workers)
    bar.close()
    click.echo(stats.summary(), err=True)
    try:
        check_splits(stats.as_dict(), heldout_fraction)
    except click.ClickException:
        discard_dataset(data_dir)
        raise
    return json.loads(meta_path.read_text())


def export_run(run_dir: Path, kind: str, feature_set: str, data_meta: dict, metrics: dict) -> Path:
    from goengine.training import nets
    from goengine.training.export import export_onnx
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


def _run(kind, sgf, out, data_dir, preset, steps, batch_size, optimizer, lr, lr_halve_every,
         eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction, positions_per_game,
         max_games, train_limit, filters, init_from=None, device="cpu", loader_workers=0,
         heads=(), ownership_weight=TrainConfig.ownership_weight,
         score_weight=TrainConfig.score_weight, precision="auto", channels_last=True,
         judge_playouts=PLAYOUTS, build_workers=1, net_filters=None, net_layers=None):
    if not sgf and not (data_dir and (Path(data_dir) / "dataset.json").exists()):
        raise click.UsageError("give at least one --sgf file, directory or archive, or a --data-dir "
                               "that holds a built dataset (engine-train value-data)")
    for s in sgf:
        if not Path(s).exists():
            raise click.BadParameter(f"{s} does not exist", param_hint="--sgf")
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
            click.option("--sgf", multiple=True,
                         help="SGF file, directory or archive (repeatable); optional when --data-dir "
                              "holds a built dataset"),
            click.option("--out", required=True, help="run directory (checkpoints, curves, ONNX)"),
            click.option("--data-dir", default=None, help="dataset shards (default OUT/data)"),
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
            click.option("--lr", default=1e-3, show_default=True, type=float),
            click.option("--lr-halve-every", default=0, show_default=True, type=int),
            click.option("--eval-every", default=1000, show_default=True, type=click.IntRange(1)),
            click.option("--eval-positions", default=20000, show_default=True, type=click.IntRange(1)),
            click.option("--checkpoint-every", default=500, show_default=True, type=click.IntRange(1)),
            click.option("--threads", default=2, show_default=True, type=click.IntRange(1)),
            click.option("--seed", default=1, show_default=True, type=int),
            click.option("--resume", is_flag=True, help="continue from OUT/checkpoint.pt"),
            click.option("--heldout-fraction", default=0.02, show_default=True, type=click.FloatRange(0, 0.5)),
            click.option("--positions-per-game", default=default_ppg, type=int, show_default=True,
                         help="positions sampled per game (0 = all)"),
            click.option("--max-games", default=None, type=int),
            click.option("--train-limit", default=None, type=int, help="load at most N training positions"),
            click.option("--init-from", default=None, type=click.Path(dir_okay=False, exists=True),
                         help="start from this checkpoint: all of a net of the same kind and depth "
                              "(widened to --net-filters when narrower), else its trunk (e.g. the "
                              "SL policy's for a value net), scaled to unit size for the new head"),
            click.option("--device", default="cpu", show_default=True,
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


@click.command("sl")
@common_options(default_ppg=0, default_batch=64, default_steps=100_000)
@click.option("--net", "net_kind", default="policy", show_default=True,
              type=click.Choice(["policy", "zero"]),
              help="policy: AlphaGo's SL policy (48 planes); zero: the 17-plane dual-head net "
                   "trained on the human moves and outcomes")
def sl_command(net_kind, sgf, out, data_dir, preset, net_filters, net_layers, steps, batch_size, optimizer, lr, lr_halve_every,
               eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction,
               positions_per_game, max_games, train_limit, init_from, device, loader_workers,
               build_workers, min_rank, sizes, max_handicap, min_moves, komi_range, precision,
               channels_last):
    """Train the SL policy network (AlphaGo's 48 planes) on human games."""
    filters = make_filters(min_rank, sizes, max_handicap, min_moves, komi_range,
                           require_winner=net_kind == "zero")
    _run(net_kind, sgf, out, data_dir, preset, steps, batch_size, optimizer, lr, lr_halve_every,
         eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction,
         positions_per_game or None, max_games, train_limit, filters, init_from, device,
         loader_workers, precision=precision, channels_last=channels_last,
         build_workers=build_workers, net_filters=net_filters, net_layers=net_layers)


AUTO_HEADS = "auto"


def parse_heads(ctx, param, value: str):
    """A tuple of heads, or AUTO_HEADS: both heads when the dataset holds their targets."""
    if value == AUTO_HEADS:
        return value
    heads = tuple(h for h in (value or "").replace(" ", "").split(",") if h and h != "none")
    bad = sorted(set(heads) - set(AUX_HEADS))
    if bad:
        raise click.BadParameter(f"unknown heads {bad}; expected some of {list(AUX_HEADS)}")
    return heads


@click.command("value")
@common_options(default_ppg=2, default_batch=32, default_steps=50_000)
@click.option("--heads", default=AUTO_HEADS, show_default=True, callback=parse_heads,
              help="auxiliary heads: ownership, score, ownership,score or none (their targets: "
                   "engine-train value-data, or the counted games of --sgf); auto: both where the "
                   "dataset has their targets")
@click.option("--ownership-weight", default=TrainConfig.ownership_weight, show_default=True,
              type=click.FloatRange(0), help="weight of the ownership MSE (mean over the points)")
@click.option("--score-weight", default=TrainConfig.score_weight, show_default=True,
              type=click.FloatRange(0), help="weight of the MSE of score / N^2")
@click.option("--off-board-results", type=click.Choice(["drop", "keep"]), default="drop",
              show_default=True,
              help="--sgf games won on time or by forfeit (B+T, W+F): drop them, since their "
                   "outcome is no value of the positions (docs/algorithms.md §4.3)")
@click.option("--judge-playouts", default=PLAYOUTS, show_default=True, type=click.IntRange(1),
              help="playouts of the dead-stone judgement of each counted game's final position "
                   "(--sgf: the heads' targets)")
def value_command(sgf, out, data_dir, preset, net_filters, net_layers, steps, batch_size, optimizer, lr, lr_halve_every,
                  eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction,
                  positions_per_game, max_games, train_limit, init_from, device, loader_workers,
                  build_workers, min_rank, sizes, max_handicap, min_moves, komi_range, heads, ownership_weight,
                  score_weight, precision, channels_last, off_board_results, judge_playouts):
    """Train a value network on game outcomes, few positions a game (docs/algorithms.md §4.3),
    with the auxiliary ownership and score heads on self-play data and counted human games."""
    filters = make_filters(min_rank, sizes, max_handicap, min_moves, komi_range, require_winner=True,
                           decided_on_board=off_board_results == "drop")
    _run("value", sgf, out, data_dir, preset, steps, batch_size, optimizer, lr, lr_halve_every,
         eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction,
         positions_per_game or None, max_games, train_limit, filters, init_from, device,
         loader_workers, heads, ownership_weight, score_weight, precision, channels_last,
         judge_playouts, build_workers, net_filters, net_layers)
