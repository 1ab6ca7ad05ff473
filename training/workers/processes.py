"""Self-play workers as local processes, for a machine without Ray (an install without the
`train` extra's Ray, or a GPU box that cannot fetch it): one `training.workers.selfplay.SelfPlayWorker`
per process, with the interface of `training.workers.pool.WorkerPool`'s Ray actors.

    procs = ProcessWorkers(4)
    procs.publish("best", Path("zero.onnx").read_bytes(), kind="zero")
    for k, results in procs.run(jobs): ...           # jobs[k]'s GameResults, as jobs finish
    procs.close()

Each process reads its own inbox in order, as a Ray actor runs its calls in order: a network
published before a job is loaded before that job plays. Queues (not pipes) carry the messages, so
the parent never blocks on a busy worker. The processes are spawned, not forked: the parent may
hold torch's and onnxruntime's threads, which a fork would copy half-started.
"""
from __future__ import annotations

import itertools
import multiprocessing as mp
import queue
import traceback

from goengine.training.workers.selfplay import SelfPlayWorker

POLL_S = 5.0       # how often a wait for results looks for a worker that died


def _serve(threads: int, inbox, outbox) -> None:
    """A worker process: ("load", name, bytes, kind), ("play", run, k, job), ("cpu", run) or
    None to stop; each play and cpu message is answered on `outbox` with (run, k, value, error)."""
    worker = SelfPlayWorker(threads)
    for msg in iter(inbox.get, None):
        if msg[0] == "load":
            worker.load(*msg[1:])
        elif msg[0] == "play":
            _, run, k, job = msg
            try:
                outbox.put((run, k, worker.play(job), None))
            except Exception:                         # the parent raises it with the job's index
                outbox.put((run, k, None, traceback.format_exc()))
        elif msg[0] == "cpu":
            outbox.put((msg[1], 0, worker.cpu_seconds(), None))


class ProcessWorkers:
    def __init__(self, workers: int, threads: int = 1):
        ctx = mp.get_context("spawn")
        self.outbox = ctx.Queue()
        self.inboxes = [ctx.Queue() for _ in range(workers)]
        self.procs = [ctx.Process(target=_serve, args=(threads, q, self.outbox), daemon=True)
                      for q in self.inboxes]
        for p in self.procs:
            p.start()
        self._runs = itertools.count()

    @property
    def size(self) -> int:
        return len(self.procs)

    def publish(self, name: str, onnx_bytes: bytes, kind: str = "policy") -> None:
        for q in self.inboxes:
            q.put(("load", name, onnx_bytes, kind))

    def run(self, jobs: list):
        """Yield (index of the job, its results) as each job finishes (jobs dealt round-robin)."""
        run = next(self._runs)
        for k, job in enumerate(jobs):
            self.inboxes[k % len(self.inboxes)].put(("play", run, k, job))
        for _ in jobs:
            k, results, error = self._answer(run)
            if error is not None:
                raise RuntimeError(f"self-play job {k} failed in its worker process:\n{error}")
            yield k, results

    def cpu_seconds(self) -> float:
        run = next(self._runs)
        for q in self.inboxes:
            q.put(("cpu", run))
        return sum(self._answer(run)[1] for _ in self.inboxes)

    def _answer(self, run: int):
        """The next (k, value, error) of `run`; answers of an abandoned earlier run are dropped."""
        while True:
            try:
                got, k, value, error = self.outbox.get(timeout=POLL_S)
            except queue.Empty:
                dead = [p.pid for p in self.procs if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"self-play worker process(es) {dead} died") from None
                continue
            if got == run:
                return k, value, error

    def close(self) -> None:
        for q in self.inboxes:
            q.put(None)
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
        self.procs = []
