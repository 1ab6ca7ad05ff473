"""`engine-train rl` and `engine-train selfplay`: the RL policy by REINFORCE self-play
(training.rl.loop), and policy self-play games on the workers (training.rl.selfplay).

    engine-train rl --size 9 --out runs/rl9 --iterations 50 --games 32
    engine-train selfplay --policy models/bundled/policy.onnx --size 9 --games 1000 --out runs/games9
    engine-train selfplay ... --workers 2                  # a local Ray with 2 workers
    engine-train selfplay ... --ray-address auto           # the Ray cluster this node belongs to
"""
from __future__ import annotations

import time
from pathlib import Path

import click
from tqdm import tqdm

from goengine.models.onnx_evaluator import SYMMETRY_MODES
from goengine.models.store import bundled, default_path
from goengine.training.data.game_shards import GameShards
from goengine.training.nets.optimizers import OPTIMIZERS
from goengine.training.nets.precision import precision_options
from goengine.training.rl.loop import RLConfig, RLRun
from goengine.training.rl.selfplay import NET, play_to_shards
from goengine.training.workers.pool import WorkerPool, worker_options


@click.command("rl")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="run directory")
@click.option("--init", "init", default=None, type=click.Path(dir_okay=False, exists=True),
              help="the SL policy to start from: a training checkpoint (.pt) or a policy ONNX "
                   "[default: the bundled policy.onnx; a clone's checkpoints/sl-gpu2.pt holds the "
                   "same weights with the optimizer state]")
@click.option("--value", default=None, type=click.Path(dir_okay=False, exists=True),
              help="value network ONNX for the baseline b(s) [default: none, b = 0]")
@click.option("--size", default=RLConfig.size, show_default=True, type=click.IntRange(5, 19))
@click.option("--komi", default=RLConfig.komi, show_default=True, type=click.FloatRange(-1000, 1000))
@click.option("--iterations", default=RLConfig.iterations, show_default=True, type=click.IntRange(1))
@click.option("--games", default=RLConfig.games, show_default=True, type=click.IntRange(2),
              help="games per iteration (the minibatch n)")
@click.option("--pool-every", default=RLConfig.pool_every, show_default=True,
              type=click.IntRange(0), help="the current network joins the pool every K iterations")
@click.option("--lr", default=RLConfig.lr, show_default=True, type=click.FloatRange(0, min_open=True))
@click.option("--optimizer", default=RLConfig.optimizer, show_default=True,
              type=click.Choice(OPTIMIZERS), help="sgd: AlphaGo's plain SGD step (with "
              "--momentum 0); adam: steps along running means of the gradient and its square")
@click.option("--momentum", default=RLConfig.momentum, show_default=True,
              type=click.FloatRange(0, 0.999), help="SGD momentum")
@click.option("--kl-weight", default=RLConfig.kl_weight, show_default=True,
              type=click.FloatRange(0), help="beta: each position adds beta * KL(p_SL || p_RL) "
              "to the loss, an anchor to the SL network (--reference, else --init; 0: AlphaGo's "
              "REINFORCE alone)")
@click.option("--entropy-weight", default=RLConfig.entropy_weight, show_default=True,
              type=click.FloatRange(0), help="eta: each position adds -eta * H(p_RL), an entropy "
              "bonus that keeps the moves a sharpening policy stopped sampling (A3C: 0.01; 0: "
              "AlphaGo's REINFORCE alone)")
@click.option("--temperature", default=RLConfig.temperature, show_default=True,
              type=click.FloatRange(0.05, 10),
              help="both sides sample softmax(logits / T) in the training and check games, and "
              "the update follows that distribution's gradient (T < 1: nearer greedy play)")
@click.option("--fork", is_flag=True,
              help="training games greedy after --eval-sampled-moves but for one learner move "
              "per game, sampled; the game forks there and the most probable move's branch is "
              "the baseline (docs/algorithms.md §4.5; --value is not used)")
@click.option("--greedy-opponent", is_flag=True,
              help="in the training games the opponent plays its most probable move after "
              "--eval-sampled-moves while the learner samples every move: the learner is "
              "trained against the greedy play its greedy checks meet")
@click.option("--pfsp", default=RLConfig.pfsp, show_default=True, type=click.FloatRange(0, 10),
              help="p: each iteration's opponent drawn from the pool with weight (1 - x)^p, x "
              "the learner's running win rate against it (AlphaStar's prioritized fictitious "
              "self-play; 0: uniform, AlphaGo)")
@click.option("--symmetry", default=RLConfig.symmetry, show_default=True,
              type=click.Choice(SYMMETRY_MODES),
              help="how the networks of the training and check games see the board: none (as "
              "played), random (a random one of the 8 board symmetries per network call, as "
              "engine-gtp's searches evaluate; recorded in that frame, so the update is exact) "
              "or average (the mean of the 8, deterministic; the learner "
              "samples on a random symmetry, the same distribution at temperature 1): a policy "
              "trained on one orientation learns lines that hold there only")
@click.option("--ema", default=RLConfig.ema, show_default=True, type=click.FloatRange(0, 0.9999),
              help="decay per update of a moving average of the weights: the checks, the pool "
              "and policy.onnx use the average (0: the last weights)")
@click.option("--reference", default=None, type=click.Path(dir_okay=False, exists=True),
              help="the SL policy the pool starts with and the checks play (.pt or ONNX) "
              "[default: --init]; with --init an RL policy, the run goes on measured against SL")
@click.option("--move-cap", default=0, show_default=True, type=click.IntRange(0),
              help="moves before a game is scored as it stands (0: 2 N^2)")
@click.option("--eval-every", default=RLConfig.eval_every, show_default=True,
              type=click.IntRange(0), help="iterations between games against the SL policy")
@click.option("--eval-games", default=RLConfig.eval_games, show_default=True,
              type=click.IntRange(2))
@click.option("--eval-greedy-games", default=RLConfig.eval_greedy_games, show_default=True,
              type=click.IntRange(0), help="more games per check against the SL policy, both "
              "sides greedy after --eval-sampled-moves (the curve's winrate_sl_greedy)")
@click.option("--eval-sampled-moves", default=RLConfig.eval_sampled_moves, show_default=True,
              type=click.IntRange(-1), help="sampled opening moves of the greedy check games, so "
              "that they differ (-1: N^2 // 12, even: 6 on 9x9, 30 on 19x19)")
@click.option("--games-per-job", default=RLConfig.games_per_job, show_default=True,
              type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0))
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1),
              help="torch threads of the learner")
@click.option("--resume", is_flag=True, help="continue the run in --out from its checkpoint")
@precision_options
@worker_options
def rl_command(out, init, value, size, komi, iterations, games, pool_every, lr, optimizer, momentum,
               kl_weight, entropy_weight, temperature, fork, greedy_opponent, pfsp, symmetry, ema,
               reference,
               move_cap, eval_every, eval_games, eval_greedy_games, eval_sampled_moves,
               games_per_job, seed, threads, resume, workers,
               ray_address, precision, channels_last):
    """RL policy by REINFORCE self-play against a pool of earlier networks (docs/algorithms.md
    §4.5)."""
    if fork and greedy_opponent:
        raise click.UsageError("--fork and --greedy-opponent are two kinds of training games: "
                               "choose one")
    if init is None:
        # the installed bundled policy: the weights of its checkpoint (load_initial), wherever
        # the package is installed
        init = default_path("policy")
    cfg = RLConfig(size=size, komi=komi, iterations=iterations, games=games, pool_every=pool_every,
                   lr=lr, optimizer=optimizer, momentum=momentum, kl_weight=kl_weight,
                   entropy_weight=entropy_weight, temperature=temperature, fork=fork,
                   greedy_opponent=greedy_opponent, symmetry=symmetry,
                   pfsp=pfsp, ema=ema, move_cap=move_cap,
                   eval_every=eval_every,
                   eval_games=eval_games, eval_greedy_games=eval_greedy_games,
                   eval_sampled_moves=eval_sampled_moves, games_per_job=games_per_job, seed=seed,
                   threads=threads,
                   precision=precision, channels_last=channels_last)
    pool = WorkerPool(workers, ray_address)
    try:
        RLRun(cfg, out, init, value, pool, resume, log=click.echo, reference=reference).run()
    finally:
        pool.close()
    click.echo(f"RL policy: {Path(out) / 'policy.onnx'}")


@click.command("selfplay")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="dataset directory: games-NNNNN.npz shards + manifest.json")
@click.option("--policy", "policy_path", default=None, type=click.Path(dir_okay=False, exists=True),
              help="policy ONNX [default: the bundled policy.onnx]")
@click.option("--games", default=1000, show_default=True, type=click.IntRange(1),
              help="games the directory should hold when the run ends")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--komi", default=7.5, show_default=True, type=click.FloatRange(-1000, 1000))
@click.option("--move-cap", default=0, show_default=True, type=click.IntRange(0),
              help="moves before a game is scored as it stands (0: 2 N^2)")
@click.option("--temperature", default=1.0, show_default=True, type=click.FloatRange(0.05, 10))
@click.option("--shard-games", default=256, show_default=True, type=click.IntRange(1))
@click.option("--games-per-job", default=32, show_default=True, type=click.IntRange(1),
              help="games one worker plays in lockstep (one network batch per move)")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0))
@worker_options
def selfplay_command(out, policy_path, games, size, komi, move_cap, temperature, shard_games,
                     games_per_job, seed, workers, ray_address):
    """Self-play games of one policy network against itself, as game shards (docs/algorithms.md
    §4.5)."""
    policy = Path(policy_path or bundled("policy"))
    shards = GameShards(out, shard_games, info={"policy": str(policy), "size": size, "komi": komi})
    if shards.games >= games:
        click.echo(f"{out} already holds {shards.games} games")
        return
    pool = WorkerPool(workers, ray_address)
    pool.publish(NET, policy.read_bytes())
    bar = tqdm(total=games, initial=shards.games, unit="game", desc="self-play", dynamic_ncols=True)
    t0 = time.monotonic()
    n_workers = pool.size
    try:
        played = play_to_shards(pool, shards, games, size=size, komi=komi, seed=seed,
                                games_per_job=games_per_job, move_cap=move_cap,
                                temperature=temperature, progress=bar.update)
    finally:
        bar.close()
        pool.close()
    elapsed = time.monotonic() - t0
    click.echo(f"played {played} games in {elapsed:.1f} s ({played / elapsed:.2f} games/s, "
               f"{n_workers} worker(s)); {out} holds {shards.games}")
