"""Self-play workers as Ray actors, local or on a cluster: one `training.workers.selfplay.SelfPlayWorker`
per actor, with the interface of `training.workers.processes.ProcessWorkers`.

    actors = RayWorkers(2)                            # a local Ray with 2 worker processes
    actors = RayWorkers(None, "ray://head:10001")      # or the cluster's CPUs at that address

A network goes to the object store once per `publish` and to each actor before the first job that
names it; publishing a name again (the RL learner's current weights) replaces it on every actor.
Only training imports this module, and only where Ray is installed.
"""
from __future__ import annotations

import logging
import os
import socket

import click
import ray
from ray.exceptions import AuthenticationError

from goengine.training.workers.selfplay import SelfPlayWorker

_RemoteWorker = ray.remote(num_cpus=1)(SelfPlayWorker)
OBJECT_STORE_BYTES = 256 * 2**20      # a local Ray's object store: the networks and the results


def _join(address: str) -> None:
    """Connect this process to the cluster at `address`, or say plainly why it cannot."""
    _check_answers(address)
    try:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, AuthenticationError) as e:
        lines = []
        while e is not None:                  # Ray wraps the reason: its text or a cause deeper
            lines += str(e).splitlines()
            e = e.__cause__
        auth = [ln for ln in lines if "AuthenticationError" in ln or "InvalidAuthToken" in ln]
        if auth:
            hint = ("the cluster uses token authentication: give this machine the cluster's "
                    "token (~/.ray/auth_token, RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH)")
        else:
            hint = "is a cluster running there (`ray start --head` on its head node)?"
        reason = (auth or lines or ["no reason given"])[0].strip()
        raise click.ClickException(f"cannot join the Ray cluster at {address}: {hint} "
                                   f"({reason[:300]})") from None


def _check_answers(address: str, timeout: float = 10.0) -> None:
    """Fail at once where nothing listens at a HOST:PORT address: Ray itself retries for
    minutes. "auto" and addresses without a port are left to Ray."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise click.ClickException(f"cannot join the Ray cluster at {address}: nothing answers "
                                   f"at {host}:{port} ({e.strerror or e}); is `ray start --head` "
                                   f"running there?") from None


class RayWorkers:
    def __init__(self, workers: int | None, address: str | None = None, threads: int = 1):
        """`workers` actors (None: one per CPU of the local machine or the cluster)."""
        self._started_ray = False
        if not ray.is_initialized():
            if address is not None:
                _join(address)
            else:
                # "local": a Ray of its own even where `ray start` left a cluster on this
                # machine, which a bare ray.init() would join (and refuse num_cpus for)
                ray.init(address="local", num_cpus=workers or os.cpu_count(),
                         include_dashboard=False,
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
