"""Policy self-play games written as game shards: one network against itself on the workers,
a shard per round, until the directory holds the games asked for (`engine-train selfplay`).

Runs add up and resume: a killed run loses at most the shard in progress. Each shard's games get
their own seeds, so resumed games differ.
"""
from __future__ import annotations

import numpy as np

from goengine.training.data.game_shards import GameShards
from goengine.training.workers.pool import WorkerPool, make_jobs

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
