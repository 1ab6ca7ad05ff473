"""Self-play throughput: games/s in this process, and on 1 and 2 (or more) Ray workers; policy
games, or with `--zero` the Zero loop's search games (docs/algorithms.md §4.6).

    python benchmarks/bench_selfplay.py [--policy models/bundled/policy.onnx] [--size 9]
        [--games 128] [--games-per-job 16] [--workers 1,2]
    python benchmarks/bench_selfplay.py --zero [--policy models/bundled/zero.onnx] --visits 100
        --games 8 --games-per-job 2

The same games (the same jobs, the same seeds) are played by one `training.workers.selfplay.SelfPlayWorker`
in this process and by `training.workers.pool.WorkerPool` on a local Ray with each worker count. Each
setting is warmed up first (Ray start, the actors, onnxruntime sessions, numba's cache), so the
figures are steady-state games/s. Printed: games/s and moves/s per setting (with `--zero`, also
the network evaluations/s of each worker against raw onnxruntime's at the search's batch of 8,
measured in the same run, before and after the games: `bench_search_nn.raw_rates`; per wall second
and per CPU second of the workers, which other jobs on a shared machine do not move), the speed-up of N
workers over 1, and the per-game cost of Ray: 1 Ray worker's time per game against this process's
in wall time, and in the CPU time the games took inside the workers (on a shared machine other
jobs, and Ray's own processes, take cores: wall time shows that, CPU time does not).
"""
from __future__ import annotations

import time
from pathlib import Path

import click
import numpy as np

from goengine.models.store import bundled
from goengine.training.rl.cli import NET
from goengine.training.workers.selfplay import GamesJob
from goengine.training.workers.pool import WorkerPool, make_jobs
from goengine.training.zero.selfplay import ZeroGamesJob

from bench_search_nn import raw_rates  # noqa: E402  (a sibling script: benchmarks/ is on sys.path)


def timed(pool: WorkerPool, onnx: bytes, args: dict, games: int, per_job: int,
          kind: str = "policy", job_type=GamesJob):
    """(seconds, moves, CPU seconds of the workers, network evaluations) for `games` games on
    `pool`, after one warm-up job per worker."""
    pool.publish(NET, onnx, kind=kind)
    warm = make_jobs([(NET, NET)] * pool.size, pool.size, np.random.SeedSequence(99),
                     job_type=job_type, **args)
    list(pool.run(warm))
    jobs = make_jobs([(NET, NET)] * games, -(-games // per_job), np.random.SeedSequence(1),
                     job_type=job_type, **args)
    cpu0 = pool.cpu_seconds()
    t0 = time.perf_counter()
    results = [r for _, rs in pool.run(jobs) for r in rs]
    moves = sum(len(r.moves) for r in results)
    # a Zero game counts its searches' evaluations; a policy game's one batch a move is not counted
    evaluations = sum(r.evaluations for r in results) if kind == "zero" else 0
    return time.perf_counter() - t0, moves, pool.cpu_seconds() - cpu0, evaluations


@click.command()
@click.option("--policy", default=None, type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=9, show_default=True, type=int)
@click.option("--games", default=128, show_default=True, type=int)
@click.option("--games-per-job", default=16, show_default=True, type=int)
@click.option("--workers", default="1,2", show_default=True, help="Ray worker counts to measure")
@click.option("--zero", is_flag=True, help="Zero search games (self-play settings of "
                                           "engine-train zero) with a zero network")
@click.option("--visits", default=100, show_default=True, type=int, help="with --zero")
def main(policy, size, games, games_per_job, workers, zero, visits):
    kind = "zero" if zero else "policy"
    onnx = Path(policy or bundled(kind)).read_bytes()
    args = dict(size=size, visits=visits) if zero else dict(size=size)
    how = dict(kind=kind, job_type=ZeroGamesJob if zero else GamesJob)
    rows = {}
    # raw onnxruntime before and after the games: on a shared machine the load moves, and the
    # ratio should not hang on one moment of it
    raws = [raw_rates(policy or bundled(kind), size, 8, 5.0, 1)] if zero else []
    local = WorkerPool(workers=0)
    rows["in process"] = timed(local, onnx, args, games, games_per_job, **how)
    for w in (int(x) for x in workers.split(",")):
        pool = WorkerPool(workers=w)
        try:
            rows[f"ray x{w}"] = timed(pool, onnx, args, games, games_per_job, **how)
        finally:
            pool.close()
    what = f"Zero search, {visits} visits per move" if zero else "one network batch per move"
    print(f"{games} games {size}x{size}, {games_per_job} per job ({what})")
    for name, (sec, moves, cpu, evals) in rows.items():
        print(f"  {name:>10}: {games / sec:7.2f} games/s  {moves / sec:8.0f} moves/s  ({sec:.1f} s; "
              f"{1000 * cpu / games:.1f} CPU ms per game in the workers)")
    if zero:
        raws.append(raw_rates(policy or bundled(kind), size, 8, 5.0, 1))
        raw = (raws[0][0] + raws[1][0]) / 2
        raw_cpu = (raws[0][1] + raws[1][1]) / 2
        print(f"  raw onnxruntime at batch 8, 1 thread: {raws[0][0]:.0f}/s before the games, "
              f"{raws[1][0]:.0f}/s after ({raws[0][1]:.0f} and {raws[1][1]:.0f} per CPU second)")
        for name, (sec, _, cpu, evals) in rows.items():
            per_worker = evals / sec / max(1, int(name[5:]) if name.startswith("ray x") else 1)
            print(f"  {name:>10}: {per_worker:7.0f} evaluations/s per worker, "
                  f"{per_worker / raw:.2f} of raw onnxruntime ({raw:.0f}/s at batch 8, 1 thread); "
                  f"{evals / cpu:.0f} per CPU second of the workers, {evals / cpu / raw_cpu:.2f} "
                  f"of raw onnxruntime's ({raw_cpu:.0f})")
    if "ray x1" in rows:
        base = rows["ray x1"][0]
        for name, (sec, *_) in rows.items():
            if name.startswith("ray x") and name != "ray x1":
                print(f"  speed-up {name} over ray x1: {base / sec:.2f}")
        print(f"  per-game cost of Ray (ray x1 against in process): wall "
              f"{100 * (base / rows['in process'][0] - 1):+.1f}%, worker CPU "
              f"{100 * (rows['ray x1'][2] / rows['in process'][2] - 1):+.1f}%")


if __name__ == "__main__":
    main()
