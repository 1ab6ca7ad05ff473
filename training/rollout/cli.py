"""`engine-train rollout`: train the fast rollout policy (`training.rollout.train`) on SGF games.

    engine-train rollout --sgf ../shared/data/tygem9d --out models/bundled/rollout.npz \\
        --positions 4000000
"""
from __future__ import annotations

import click

from goengine.training.rollout.data import split_heldout
from goengine.training.rollout.train import DEFAULT_MIN_COUNT, train_rollout


class MinCount(click.ParamType):
    """FAMILY=N,...: the least count of a pattern of each named family (3x3, diamond, nakade)."""

    name = "family=count,..."

    def convert(self, value, param, ctx):
        if isinstance(value, dict):
            return value
        counts = {}
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            name, _, count = (s.strip() for s in part.partition("="))
            if name not in DEFAULT_MIN_COUNT:
                self.fail(f"unknown family {name!r}; expected some of "
                          f"{', '.join(DEFAULT_MIN_COUNT)}", param, ctx)
            if not count.isdigit():
                self.fail(f"{part!r}: the count must be a whole number >= 0", param, ctx)
            counts[name] = int(count)
        return counts


@click.command("rollout")
@click.option("--sgf", "sgf", multiple=True, required=True, type=click.Path(exists=True),
              help="SGF files, directories or archives (repeatable)")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="the .npz to write (a .json of metrics and a .curve.csv go beside it)")
@click.option("--positions", default=1_000_000, show_default=True, type=click.IntRange(1),
              help="training positions (one pass, sampled uniformly over the games)")
@click.option("--heldout", default=None, type=click.Path(exists=True),
              help="held-out games (default: the last archive among --sgf, by name)")
@click.option("--heldout-positions", default=50_000, show_default=True, type=click.IntRange(1))
@click.option("--dict-positions", default=None, type=click.IntRange(1),
              help="positions whose candidates' patterns are counted for the dictionary "
                   "[default: positions / 2, within 300k..2M]")
@click.option("--min-count", "min_count", default="3x3=10,diamond=10,nakade=5",
              show_default=True, type=MinCount(), help="minimum count per pattern family")
@click.option("--lr", default=0.01, show_default=True, type=click.FloatRange(0, min_open=True))
@click.option("--lr-final", default=0.001, show_default=True,
              type=click.FloatRange(0, min_open=True))
@click.option("--batch", default=64, show_default=True, type=click.IntRange(1))
@click.option("--l2", default=1e-6, show_default=True, type=click.FloatRange(0))
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0))
@click.option("--curve", default=None, type=click.Path(dir_okay=False),
              help="learning curve CSV (default <out>.curve.csv)")
@click.option("--eval-every", default=200_000, show_default=True, type=click.IntRange(1))
@click.option("--bench-seconds", default=3.0, show_default=True, type=click.FloatRange(0),
              help="seconds of playouts to measure us/move for the metrics (0 = skip)")
@click.option("--max-games", default=None, type=click.IntRange(1),
              help="read at most this many games per set")
@click.option("--progress/--no-progress", default=True)
def rollout_command(sgf, out, positions, heldout, heldout_positions, dict_positions, min_count,
                    lr, lr_final, batch, l2, seed, curve, eval_every, bench_seconds, max_games,
                    progress):
    """Train the fast rollout policy (linear softmax over patterns) on SGF games."""
    try:
        split_heldout(sgf, heldout)          # which games are held out: a usage error up front
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    train_rollout(list(sgf), out, positions=positions, heldout=heldout,
                  heldout_positions=heldout_positions, dict_positions=dict_positions,
                  min_count=min_count, lr=lr, lr_final=lr_final, batch=batch, l2=l2, seed=seed,
                  curve=curve, eval_every=eval_every, bench_seconds=bench_seconds,
                  max_games=max_games, progress=progress,
                  log=lambda s: click.echo(s, err=True))
