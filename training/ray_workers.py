"""Self-play workers as Ray actors, local or on a cluster: one `training.selfplay.SelfPlayWorker`
per actor, with the interface of `training.process_workers.ProcessWorkers`.

    actors = RayWorkers(2)                            # a local Ray with 2 worker processes
    actors = RayWorkers(None, "ray://head:10001")      # or the cluster's CPUs at that address

A network goes to the object store once per `publish` and to each actor before the first job that
names it; publishing a name again (the RL learner's current weights) replaces it on every actor.
Only training imports this module, and only where Ray is installed.
"""
from __future__ import annotations

import logging
import os

import ray

from goengine.training.selfplay import SelfPlayWorker

_RemoteWorker = ray.remote(num_cpus=1)(SelfPlayWorker)
OBJECT_STORE_BYTES = 256 * 2**20      # a local Ray's object store: the networks and the results


class RayWorkers:
    def __init__(self, workers: int | None, address: str | None = None, threads: int = 1):
        """`workers` actors (None: one per CPU of the local machine or the cluster)."""
        self._started_ray = False
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
        return len(self.actors)

    def publish(self, name: str, onnx_bytes: bytes, kind: str = "policy") -> None:
        self._nets[name] = (ray.put(onnx_bytes), kind)
        for loaded in self._loaded:
            loaded.discard(name)

    def run(self, jobs: list):
        """Yield (index of the job, its results) as each job finishes (jobs dealt round-robin)."""
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
        return sum(ray.get([a.cpu_seconds.remote() for a in self.actors]))

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self._started_ray:
            ray.shutdown()
