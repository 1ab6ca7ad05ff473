"""`engine-train selfplay`: policy self-play games on Ray workers, written as game shards.

    engine-train selfplay --policy models/bundled/policy.onnx --size 9 --games 1000 --out runs/games9
    engine-train selfplay ... --workers 2                  # a local Ray with 2 workers
    engine-train selfplay ... --ray-address auto           # the Ray cluster this node belongs to

Runs add up and resume: the command plays until `--out` holds `--games` games (a killed run loses
at most the shard in progress). Each shard's games get their own seeds, so resumed games differ.
"""
from __future__ import annotations

import time
from pathlib import Path

import click
import numpy as np
from tqdm import tqdm

from goengine.models.store import bundled
from goengine.training.game_shards import GameShards
from goengine.training.workers import WorkerPool, make_jobs, worker_options

NET = "policy"


def play_to_shards(pool: WorkerPool, shards: GameShards, games: int, *, size: int, komi: float,
                   seed: int, games_per_job: int, move_cap: int = 0, temperature: float = 1.0,
                   progress=None) -> int:
    """Play self-play games of network NET (published on `pool`) until `shards` holds `games`,
    one shard per round; returns the games played."""
    played = 0
    while shards.games < games:
        index = len(shards.manifest["shards"])
        todo = min(shards.shard_games, games - shards.games)
        jobs = make_jobs([(NET, NET)] * todo, -(-todo // games_per_job),
                         np.random.SeedSequence([seed, index]), size=size, komi=komi,
                         move_cap=move_cap, temperature=temperature)
        for _, results in pool.run(jobs):
            for r in results:
                shards.buffer.append(r)
            played += len(results)
            if progress is not None:
                progress(len(results))
        shards.flush()
    return played


@click.command("selfplay")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="dataset directory: games-NNNNN.npz shards + manifest.json")
@click.option("--policy", "policy_path", default=None, type=click.Path(dir_okay=False),
              help="policy ONNX [default: the bundled policy.onnx]")
@click.option("--games", default=1000, show_default=True, type=click.IntRange(1),
              help="games the directory should hold when the run ends")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--komi", default=7.5, show_default=True, type=float)
@click.option("--move-cap", default=0, show_default=True, type=click.IntRange(0),
              help="moves before a game is scored as it stands (0: 2 N^2)")
@click.option("--temperature", default=1.0, show_default=True, type=click.FloatRange(0.05, 10))
@click.option("--shard-games", default=256, show_default=True, type=click.IntRange(1))
@click.option("--games-per-job", default=32, show_default=True, type=click.IntRange(1),
              help="games one worker plays in lockstep (one network batch per move)")
@click.option("--seed", default=0, show_default=True, type=int)
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
