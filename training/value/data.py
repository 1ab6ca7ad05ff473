"""Value-network positions from SL + RL self-play on the workers (`engine-train value-data`).

    engine-train value-data --out runs/vdata9 --size 9 --games 20000 --rl-policy runs/rl9/policy.onnx
    engine-train value-data ... --workers 2                # a local Ray with 2 workers
    engine-train value-data ... --ray-address auto         # the Ray cluster this node belongs to

The games are `training.value.games` (docs/algorithms.md §4.3): SL policy to move U-1, move U at
random, the RL policy to the end; each position carries the outcome z, the final score and the
final ownership for its side to move. They are written as the shards of `training.data.dataset` with
the `own` and `score` arrays, and a held-out split by game, so `engine-train value --data-dir`
trains on them unchanged (and the auxiliary heads with --heads). Runs add up in one directory:
each takes the next seed, and `dataset.json` sums their counts.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from goengine.engine.features import FEATURE_SETS
from goengine.training.data.dataset import ShardWriter, komi_key
from goengine.training.value.games import ValueGamesJob, default_max_u
from goengine.training.value.selfplay import merge_runs
from goengine.training.workers.pool import WorkerPool
from goengine.training.workers.selfplay import KOMI, VALUE_FEATURES


@dataclass(frozen=True)
class ValueDataConfig:
    games: int = 10_000
    size: int = 19
    komi: float = KOMI
    games_per_job: int = 32          # games one worker plays in lockstep (one batch per move)
    max_u: int = 0                   # U ~ uniform 1..max_u; 0 = default_max_u(size)
    positions_per_game: int = 1      # AlphaGo: 1 (s_{U+1}); more are drawn from the same game
    temperature: float = 1.0         # sampling temperature of both policies
    move_cap: int = 0                # 0 = 2 N^2 moves
    heldout_fraction: float = 0.05   # games whose positions go to the held-out split
    shard_size: int = 20_000
    seed: int = 0


def jobs_for(cfg: ValueDataConfig) -> list[ValueGamesJob]:
    """The games split into jobs of at most `games_per_job`, each with its own seed."""
    k = -(-cfg.games // cfg.games_per_job)
    parts = np.array_split(np.arange(cfg.games), k)
    seeds = np.random.SeedSequence([cfg.seed, 0x5A1E]).generate_state(k)
    return [ValueGamesJob(games=len(p), size=cfg.size, komi=cfg.komi, seed=int(s),
                          max_u=cfg.max_u, positions_per_game=cfg.positions_per_game,
                          temperature=cfg.temperature, move_cap=cfg.move_cap)
            for p, s in zip(parts, seeds)]


def generate(pool: WorkerPool, cfg: ValueDataConfig, out_dir, sources: dict,
             progress=None) -> dict:
    """Play `cfg.games` value games on `pool` (networks SL and RL published) and write their
    positions to `out_dir`; returns the dataset's merged metadata."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    n = cfg.size
    planes = FEATURE_SETS[VALUE_FEATURES].num_planes
    packed_len = (planes * n * n + 7) // 8
    writers = {split: ShardWriter(out, f"{split}-{n}", cfg.shard_size, packed_len, points=n * n)
               for split in ("train", "heldout")}
    counts = {"train": 0, "heldout": 0}
    games = {"train": 0, "heldout": 0}
    played = {"games": 0, "ended_by_passes": 0, "moves": 0, "black_wins": 0, "abs_score": 0.0}
    jobs = jobs_for(cfg)
    t0 = time.monotonic()
    for k, results in pool.run(jobs):
        split_rng = np.random.default_rng([cfg.seed, k, 0x4E1D])     # the split, by game
        for g in results:
            split = "heldout" if split_rng.random() < cfg.heldout_fraction else "train"
            for p in g.positions:
                writers[split].add(p.x, 0, p.z, n, p.own, p.score)
                counts[split] += 1
            games[split] += 1
            played["games"] += 1
            played["ended_by_passes"] += int(g.two_passes)
            played["moves"] += len(g.moves)
            played["black_wins"] += int(g.score > 0)
            played["abs_score"] += abs(g.score)
        if progress is not None:
            progress(len(results), counts)
    for w in writers.values():
        w.flush()
    elapsed = time.monotonic() - t0
    played["abs_score"] = round(played["abs_score"], 1)
    run = {**asdict(cfg), "max_u": cfg.max_u or default_max_u(n), **sources,
           "workers": pool.size}
    meta = {"feature_set": VALUE_FEATURES, "feature_version": FEATURE_SETS[VALUE_FEATURES].version,
            "planes": planes, "sources": [f"selfplay:{cfg.seed}"], "selfplay": run,
            "heldout_fraction": cfg.heldout_fraction, "targets": ["z", "own", "score"],
            "positions_per_game": cfg.positions_per_game, "sizes": [n],
            "stats": {"positions": counts, "games": dict(games), "played": played,
                      "elapsed_s": round(elapsed, 1), "komi": {komi_key(cfg.komi): sum(games.values())}}}
    meta = merge_runs(out / "dataset.json", meta)
    tmp = out / "dataset.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2))
    tmp.replace(out / "dataset.json")
    return meta
