"""`engine-train value` and `engine-train value-data`: the value network on game outcomes, and its
positions from SL + RL self-play.

    engine-train value --sgf tygem/ --out runs/value --positions-per-game 2   # + the heads' targets
    engine-train value-data --out runs/vdata9 --size 9 --games 20000 --rl-policy runs/rl9/policy.onnx
    engine-train value --data-dir runs/vdata9 --out runs/value9
"""
from __future__ import annotations

import json
from pathlib import Path

import click
from tqdm import tqdm

from goengine.engine.deadstones import PLAYOUTS
from goengine.models.store import bundled
from goengine.training.data.prepare import make_filters
from goengine.training.nets.loop import AUX_HEADS, TrainConfig
from goengine.training.nets.supervised import AUTO_HEADS, common_options, run_supervised
from goengine.training.value.data import ValueDataConfig, generate
from goengine.training.value.games import RL, SL
from goengine.training.workers.pool import WorkerPool, worker_options


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
    run_supervised("value", sgf, out, data_dir, preset, steps, batch_size, optimizer, lr, lr_halve_every,
         eval_every, eval_positions, checkpoint_every, threads, seed, resume, heldout_fraction,
         positions_per_game or None, max_games, train_limit, filters, init_from, device,
         loader_workers, heads, ownership_weight, score_weight, precision, channels_last,
         judge_playouts, build_workers, net_filters, net_layers)


@click.command("value-data")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="dataset directory (shards + dataset.json); runs add up")
@click.option("--policy", "policy_path", default=None, type=click.Path(dir_okay=False, exists=True),
              help="SL policy ONNX, moves 1..U-1 [default: the bundled policy.onnx]")
@click.option("--rl-policy", "rl_path", default=None, type=click.Path(dir_okay=False, exists=True),
              help="RL policy ONNX (engine-train rl), moves U+1.. to the end [default: the SL "
                   "policy]")
@click.option("--games", default=ValueDataConfig.games, show_default=True, type=click.IntRange(1))
@click.option("--size", default=ValueDataConfig.size, show_default=True, type=click.IntRange(5, 25))
@click.option("--komi", default=ValueDataConfig.komi, show_default=True, type=click.FloatRange(-1000, 1000))
@click.option("--batch-games", default=ValueDataConfig.games_per_job, show_default=True,
              type=click.IntRange(1), help="games one worker plays in lockstep")
@click.option("--max-u", default=0, show_default=True, type=click.IntRange(0),
              help="U ~ uniform 1..max-u (0: 250 scaled by the board's area, minus 1)")
@click.option("--positions-per-game", default=1, show_default=True, type=click.IntRange(1),
              help="1 = AlphaGo's s_{U+1} only; more adds positions drawn from the game")
@click.option("--temperature", default=1.0, show_default=True, type=click.FloatRange(0.05, 10))
@click.option("--move-cap", default=0, show_default=True, type=click.IntRange(0),
              help="moves before a game is scored as it stands (0: 2 N^2)")
@click.option("--heldout-fraction", default=ValueDataConfig.heldout_fraction, show_default=True,
              type=click.FloatRange(0, 0.5))
@click.option("--seed", default=None, type=click.IntRange(0),
              help="[default: one past the runs already in --out, so runs never repeat games]")
@worker_options
def value_data_command(out, policy_path, rl_path, games, size, komi, batch_games, max_u,
                       positions_per_game, temperature, move_cap, heldout_fraction, seed, workers,
                       ray_address):
    """Value-net positions from SL + RL self-play with ownership and score targets
    (docs/algorithms.md §4.3)."""
    meta_path = Path(out) / "dataset.json"
    if seed is None:
        seed = len(json.loads(meta_path.read_text()).get("runs", [])) if meta_path.exists() else 0
    sl = Path(policy_path or bundled("policy"))
    rl = Path(rl_path) if rl_path else sl
    cfg = ValueDataConfig(games=games, size=size, komi=komi, games_per_job=batch_games,
                          max_u=max_u, positions_per_game=positions_per_game,
                          temperature=temperature, move_cap=move_cap,
                          heldout_fraction=heldout_fraction, seed=seed)
    pool = WorkerPool(workers, ray_address)
    bar = tqdm(total=games, unit="game", desc="value games", dynamic_ncols=True, smoothing=0.05)

    def progress(done, counts):
        bar.update(done)
        bar.set_postfix(train=counts["train"], heldout=counts["heldout"])

    try:
        pool.publish(SL, sl.read_bytes())
        pool.publish(RL, rl.read_bytes())
        meta = generate(pool, cfg, out, {"sl_policy": str(sl), "rl_policy": str(rl)}, progress)
    except ValueError as e:
        raise click.ClickException(str(e))
    finally:
        bar.close()
        pool.close()
    st = meta["stats"]
    run = meta["runs"][-1]
    click.echo(f"positions train {st['positions']['train']} heldout {st['positions']['heldout']} "
               f"(this run: {games} games, {run['workers']} worker(s))")
