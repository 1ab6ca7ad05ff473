"""Self-play workers: one `training.workers.selfplay.SelfPlayWorker` per worker, each with its own
onnxruntime sessions, each playing whole batches of games: policy games (`GamesJob`) or Zero
search games (`training.zero.selfplay.ZeroGamesJob`), on the same workers.

    pool = WorkerPool(workers=2)                     # a local Ray with 2 worker processes
    pool = WorkerPool(address="ray://head:10001")     # or the cluster at that address
    pool = WorkerPool(workers=0)                     # or one worker in this process (no Ray)
    pool = WorkerPool(workers=2, backend="processes") # or 2 local processes without Ray
    pool.publish("sl", Path("policy.onnx").read_bytes())
    pool.publish("best", Path("zero.onnx").read_bytes(), kind="zero")
    for k, results in pool.run(jobs): ...            # jobs[k]'s GameResults, as jobs finish

Three backends answer the same five calls (`size`, `publish`, `run`, `cpu_seconds`, `close`):
`InProcessWorker` (workers=0), `training.workers.processes.ProcessWorkers` (local processes) and
`training.workers.ray_actors.RayWorkers` (Ray actors, local or by address). Only training imports this
module: the engine's runtime never needs Ray. Where Ray is not installed, local workers are plain
processes and only a cluster address needs Ray.
"""
from __future__ import annotations

import os

import click
import numpy as np

from goengine.training.workers.processes import ProcessWorkers
from goengine.training.workers.selfplay import GamesJob, SelfPlayWorker

try:
    from goengine.training.workers.ray_actors import RayWorkers
except ImportError:          # an install without the train extra's Ray: local processes instead
    RayWorkers = None

BACKENDS = ("ray", "processes")


def worker_options(f):
    """--workers / --ray-address, the same on every command that plays self-play games."""
    f = click.option("--ray-address", default=None,
                     help="join the Ray cluster at this address (e.g. ray://head:10001 or "
                          "auto) instead of starting a local Ray")(f)
    return click.option("--workers", default=None, type=click.IntRange(0),
                        help="self-play worker processes [default: the machine's cores, or the "
                             "cluster's CPUs]; 0 plays in this process; Ray runs them where it "
                             "is installed, plain local processes where not")(f)


class InProcessWorker:
    """One worker in this process: the jobs play one after another, in order."""

    def __init__(self, threads: int = 1):
        self.worker = SelfPlayWorker(threads)

    size = 1

    def publish(self, name: str, onnx_bytes: bytes, kind: str = "policy") -> None:
        self.worker.load(name, onnx_bytes, kind)

    def run(self, jobs: list):
        for k, job in enumerate(jobs):
            yield k, self.worker.play(job)

    def cpu_seconds(self) -> float:
        return self.worker.cpu_seconds()

    def close(self) -> None:
        pass


def _backend(workers: int | None, address: str | None, threads: int, backend: str | None):
    """The workers the arguments ask for (see WorkerPool)."""
    backend = backend or ("ray" if RayWorkers is not None else "processes")
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: one of {BACKENDS}")
    if workers == 0 and address is None:
        return InProcessWorker(threads)
    if backend == "processes" or RayWorkers is None:
        if address is not None:
            raise click.UsageError("--ray-address needs Ray: pip install 'goengine[train]'")
        return ProcessWorkers(workers or os.cpu_count() or 1, threads)
    return RayWorkers(workers, address, threads)


class WorkerPool:
    def __init__(self, workers: int | None = None, address: str | None = None, threads: int = 1,
                 backend: str | None = None):
        """`workers` = 0 plays in this process; otherwise `backend` ("ray" or "processes", local
        only) runs that many workers (None: one per core, or per CPU of the cluster at
        `address`); by default Ray where it is installed."""
        self.workers = _backend(workers, address, threads, backend)

    @property
    def size(self) -> int:
        """Workers playing at once."""
        return self.workers.size

    def publish(self, name: str, onnx_bytes: bytes, kind: str = "policy") -> None:
        """Send a network to every worker under `name` (again: replace it)."""
        self.workers.publish(name, onnx_bytes, kind)

    def run(self, jobs: list):
        """Yield (index of the job, its results) as each job finishes (jobs are dealt
        round-robin). A job is a GamesJob or any object with `networks()` (the names it needs)
        and `play(nets)`, e.g. training.value.games.ValueGamesJob."""
        return self.workers.run(jobs)

    def cpu_seconds(self) -> float:
        """CPU seconds the workers' processes have used so far (this process's with workers=0)."""
        return self.workers.cpu_seconds()

    def close(self) -> None:
        self.workers.close()


def make_jobs(pairs: list, jobs: int, seed_seq: np.random.SeedSequence, job_type=GamesJob,
              **job_args) -> list:
    """`pairs` (one per game) split into `jobs` jobs of `job_type` (GamesJob or ZeroGamesJob) of
    near-equal size, each with a seed of its own from `seed_seq`."""
    jobs = max(1, min(jobs, len(pairs)))
    parts = np.array_split(np.arange(len(pairs)), jobs)
    seeds = seed_seq.generate_state(jobs)
    return [job_type(pairs=[pairs[i] for i in part], seed=int(s), **job_args)
            for part, s in zip(parts, seeds)]
