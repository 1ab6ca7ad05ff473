"""`engine-train rollout`: train the fast rollout policy (`training.rollout.train`) on SGF games.

    engine-train rollout --sgf ../shared/data/tygem9d --out models/bundled/rollout.npz \\
        --positions 4000000
"""
from __future__ import annotations

import click

from goengine.training.rollout.train import DEFAULT_MIN_COUNT, train_rollout


@click.command("rollout")
@click.option("--sgf", "sgf", multiple=True, required=True, type=click.Path(exists=True),
              help="SGF files, directories or archives (repeatable)")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="the .npz to write (a .json of metrics and a .curve.csv go beside it)")
@click.option("--positions", default=1_000_000, show_default=True,
              help="training positions (one pass, sampled uniformly over the games)")
@click.option("--heldout", default=None, type=click.Path(exists=True),
              help="held-out games (default: the last archive among --sgf, by name)")
@click.option("--heldout-positions", default=50_000, show_default=True)
@click.option("--dict-positions", default=None, type=int,
              help="positions whose candidates' patterns are counted for the dictionary "
                   "[default: positions / 2, within 300k..2M]")
@click.option("--min-count", "min_count_", default="3x3=10,diamond=10,nakade=5",
              show_default=True, help="minimum count per pattern family")
@click.option("--lr", default=0.01, show_default=True)
@click.option("--lr-final", default=0.001, show_default=True)
@click.option("--batch", default=64, show_default=True)
@click.option("--l2", default=1e-6, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--curve", default=None, type=click.Path(dir_okay=False),
              help="learning curve CSV (default <out>.curve.csv)")
@click.option("--eval-every", default=200_000, show_default=True)
@click.option("--bench-seconds", default=3.0, show_default=True,
              help="seconds of playouts to measure us/move for the metrics (0 = skip)")
@click.option("--max-games", default=None, type=int, help="read at most this many games per set")
@click.option("--progress/--no-progress", default=True)
def rollout_command(sgf, out, positions, heldout, heldout_positions, dict_positions, min_count_,
                    lr, lr_final, batch, l2, seed, curve, eval_every, bench_seconds, max_games,
                    progress):
    """Train the fast rollout policy (linear softmax over patterns) on SGF games."""
    mc = {}
    for part in min_count_.split(","):
        if part.strip():
            name, _, val = part.partition("=")
            if name.strip() not in DEFAULT_MIN_COUNT:
                raise click.BadParameter(f"unknown family {name!r}", param_hint="--min-count")
            mc[name.strip()] = int(val)
    train_rollout(list(sgf), out, positions=positions, heldout=heldout,
                  heldout_positions=heldout_positions, dict_positions=dict_positions,
                  min_count=mc, lr=lr, lr_final=lr_final, batch=batch, l2=l2, seed=seed,
                  curve=curve, eval_every=eval_every, bench_seconds=bench_seconds,
                  max_games=max_games, progress=progress,
                  log=lambda s: click.echo(s, err=True))
