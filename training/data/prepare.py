"""A dataset of positions from SGF collections, built once per run directory: the game filters
(`--min-rank`, `--sizes`, ...), the build, and the checks that it left games to train on and to
hold out.

Reads directories and archives through sgf_tools, replays with engine.replay and computes planes
with engine.features (the same code the engine plays with), stores them bit-packed
(training.data.dataset).
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import click
from tqdm import tqdm

from goengine.engine.deadstones import PLAYOUTS
from goengine.sgf_tools import FilterConfig
from goengine.training.data.params import BOARD_SIZES, KOMI_RANGE, RANK
from goengine.training.data.shard_build import PART_PREFIX, build_shards


def filter_options(f):
    opts = [
        click.option("--min-rank", default="6d", show_default=True, type=RANK,
                     help="both players at least this rank ('' = no rank filter)"),
        click.option("--sizes", default="19", show_default=True, type=BOARD_SIZES,
                     help="board sizes to keep"),
        click.option("--max-handicap", type=click.IntRange(0), default=None,
                     help="drop games with more handicap"),
        click.option("--min-moves", type=click.IntRange(0), default=30, show_default=True),
        click.option("--komi-range", default=None, type=KOMI_RANGE, help="LOW,HIGH inclusive"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def make_filters(min_rank: str, sizes: tuple, max_handicap, min_moves, komi_range,
                 require_winner=False, decided_on_board=False) -> FilterConfig:
    """The filters of the options as `filter_options` parsed them."""
    return FilterConfig(sizes=tuple(sizes), min_rank=min_rank or None, max_handicap=max_handicap,
                        min_moves=min_moves, komi_range=komi_range, require_result=True,
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
