"""`engine-train sl`: the SL policy (or the 17-plane Zero net) trained on human games.

    engine-train sl --sgf kgs/ --out runs/sl                  # KGS archives, both players >= 6d
    engine-train sl --sgf tygem/ --out runs/sl --steps 200000 --resume
    engine-train sl --net zero --sgf tygem/ --out runs/zero-human
"""
from __future__ import annotations

import click

from goengine.training.data.prepare import make_filters
from goengine.training.nets.supervised import common_options, run_supervised


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
    run_supervised(net_kind, sgf, out, data_dir, preset, steps, batch_size, optimizer, lr, lr_halve_every,
         eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction,
         positions_per_game or None, max_games, train_limit, filters, init_from, device,
         loader_workers, precision=precision, channels_last=channels_last,
         build_workers=build_workers, net_filters=net_filters, net_layers=net_layers)
