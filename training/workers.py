"""Self-play workers on Ray: one `training.selfplay.SelfPlayWorker` per actor, each with its own
onnxruntime sessions, each playing whole batches of games: policy games (`GamesJob`) or Zero
search games (`training.zero_selfplay.ZeroGamesJob`), on the same actors.

    pool = WorkerPool(workers=2)                     # a local Ray with 2 worker processes
    pool = WorkerPool(address="ray://head:10001")     # or the cluster at that address
    pool = WorkerPool(workers=0)                     # or one worker in this process (no Ray)
    pool = WorkerPool(workers=2, backend="processes") # or 2 local processes without Ray
    pool.publish("sl", Path("policy.onnx").read_bytes())
    pool.publish("best", Path("zero.onnx").read_bytes(), kind="zero")
    for k, results in pool.run(jobs): ...            # jobs[k]'s GameResults, as jobs finish

A network goes to the object store once per `publish` and to each actor before the first job that
names it; publishing a name again (the RL learner's current weights) replaces it on every actor.
Only training imports this module: the engine's runtime never needs Ray. Where Ray is not
installed, local workers are plain processes (`training.process_workers`) and only a cluster
address needs Ray.
"""
from __future__ import annotations

import logging
import os

import click
import numpy as np

from goengine.training.process_workers import ProcessWorkers
from goengine.training.selfplay import GamesJob, SelfPlayWorker

try:
    import ray
except ImportError:          # an install without the train extra's Ray: local processes instead
    ray = None

BACKENDS = ("ray", "processes")
_RemoteWorker = ray.remote(num_cpus=1)(SelfPlayWorker) if ray is not None else None
OBJECT_STORE_BYTES = 256 * 2**20      # a local Ray's object store: the networks and the results


def worker_options(f):
    """--workers / --ray-address, the same on every command that plays self-play games."""
    f = click.option("--ray-address", default=None,
                     help="join the Ray cluster at this address (e.g. ray://head:10001 or "
                          "auto) instead of starting a local Ray")(f)
    return click.option("--workers", default=None, type=click.IntRange(0),
                        help="self-play worker processes [default: the machine's cores, or the "
                             "cluster's CPUs]; 0 plays in this process; Ray runs them where it "
                             "is installed, plain local processes where not")(f)


class WorkerPool:
    def __init__(self, workers: int | None = None, address: str | None = None, threads: int = 1,
                 backend: str | None = None):
        """`backend`: "ray" or "processes" (local only); by default Ray where it is installed."""
        self.local = self.procs = None
        self.actors = []
        self._started_ray = False
        backend = backend or ("ray" if ray is not None else "processes")
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r}: one of {BACKENDS}")
        if workers == 0 and address is None:
            self.local = SelfPlayWorker(threads)
            return
        if backend == "processes" or ray is None:
            if address is not None:
                raise click.UsageError("--ray-address needs Ray: pip install 'goengine[train]'")
            self.procs = ProcessWorkers(workers or os.cpu_count() or 1, threads)
            return
        if not ray.is_initialized():
            if address is not None:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            else:
                ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False,
                         object_store_memory=OBJECT_STORE_BYTES, logging_level=logging.WARNING,
                         log_to_driver=False)
                self._started_ray = True
        n = workers or int(ray.cluster_resources().get("CPU", 1))
        self.actors = [_RemoteWorker.remote(threads) for _ in range(n)]
        self._nets: dict[str, tuple] = {}                   # name -> (object ref, kind)
        self._loaded: list[set[str]] = [set() for _ in self.actors]

    @property
    def size(self) -> int:
        """Workers playing at once."""
        if self.procs is not None:
            return self.procs.size
        return len(self.actors) or 1

    def publish(self, name: str, onnx_bytes: bytes, kind: str = "policy") -> None:
        if self.local is not None:
            self.local.load(name, onnx_bytes, kind)
            return
        if self.procs is not None:
            self.procs.publish(name, onnx_bytes, kind)
            return
        self._nets[name] = (ray.put(onnx_bytes), kind)
        for loaded in self._loaded:
            loaded.discard(name)

    def run(self, jobs: list):
        """Yield (index of the job, its results) as each job finishes (jobs are dealt
        round-robin). A job is a GamesJob or any object with `networks()` (the names it needs)
        and `play(nets)`, e.g. training.value_games.ValueGamesJob."""
        if self.local is not None:
            for k, job in enumerate(jobs):
                yield k, self.local.play(job)
            return
        if self.procs is not None:
            yield from self.procs.run(jobs)
            return
        pending = []
        for k, job in enumerate(jobs):
            a = k % len(self.actors)
            for name in sorted(job.networks() - self._loaded[a]):
                ref, kind = self._nets[name]
                self.actors[a].load.remote(name, ref, kind)     # actor calls run in order
                self._loaded[a].add(name)
            pending.append(self.actors[a].play.remote(job))
        index = {ref: k for k, ref in enumerate(pending)}
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield index[done[0]], ray.get(done[0])

    def cpu_seconds(self) -> float:
        """CPU seconds the workers' processes have used so far (this process's with workers=0)."""
        if self.local is not None:
            return self.local.cpu_seconds()
        if self.procs is not None:
            return self.procs.cpu_seconds()
        return sum(ray.get([a.cpu_seconds.remote() for a in self.actors]))

    def close(self) -> None:
        if self.procs is not None:
            self.procs.close()
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self._started_ray:
            ray.shutdown()


def make_jobs(pairs: list, jobs: int, seed_seq: np.random.SeedSequence, job_type=GamesJob,
              **job_args) -> list:
    """`pairs` (one per game) split into `jobs` jobs of `job_type` (GamesJob or ZeroGamesJob) of
    near-equal size, each with a seed of its own from `seed_seq`."""
    jobs = max(1, min(jobs, len(pairs)))
    parts = np.array_split(np.arange(len(pairs)), jobs)
    seeds = seed_seq.generate_state(jobs)
    return [job_type(pairs=[pairs[i] for i in part], seed=int(s), **job_args)
            for part, s in zip(parts, seeds)]
