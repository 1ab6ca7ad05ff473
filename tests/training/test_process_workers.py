"""Self-play workers as plain local processes (training.workers.processes), the backend of
`--workers N` where Ray is not installed: the same games as in one process, errors surfaced."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402
from goengine.training.workers.selfplay import GamesJob, SelfPlayWorker  # noqa: E402
from goengine.training.workers.pool import WorkerPool, make_jobs  # noqa: E402


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny") / "tiny.onnx"
    export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", path,
                {"training_data": "random weights"})
    return path.read_bytes()


def jobs_for(seed: int):
    return make_jobs([("a", "b"), ("b", "a")] * 3, 3, np.random.SeedSequence(seed), size=5,
                     learner="a")


def test_two_processes_play_the_games_one_process_plays(tiny_onnx):
    """Jobs carry their seeds, so the processes must return exactly the in-process games,
    each under its own job's index, with the networks published before the jobs."""
    local = SelfPlayWorker()
    local.load("a", tiny_onnx)
    local.load("b", tiny_onnx)
    want = [local.play(job) for job in jobs_for(5)]
    pool = WorkerPool(workers=2, backend="processes")
    try:
        assert pool.size == 2
        pool.publish("a", tiny_onnx)
        pool.publish("b", tiny_onnx)
        got = dict(pool.run(jobs_for(5)))
        again = dict(pool.run(jobs_for(6)))               # a second run on the same processes
        assert pool.cpu_seconds() > 0
    finally:
        pool.close()
    assert sorted(got) == [0, 1, 2]
    for k, results in enumerate(want):
        assert [r.moves.tolist() for r in got[k]] == [r.moves.tolist() for r in results]
        assert [r.score for r in got[k]] == [r.score for r in results]
    assert sum(len(v) for v in again.values()) == 6
    assert any(a.moves.tolist() != b.moves.tolist()
               for k in got for a, b in zip(got[k], again[k]))


def test_a_failed_job_raises_in_the_parent_with_its_index(tiny_onnx):
    pool = WorkerPool(workers=2, backend="processes")
    try:
        pool.publish("a", tiny_onnx)                       # "b" never published
        jobs = [GamesJob(pairs=[("a", "a")], size=5, seed=1),
                GamesJob(pairs=[("a", "b")], size=5, seed=2)]
        with pytest.raises(RuntimeError, match="job 1 failed"):
            dict(pool.run(jobs))
    finally:
        pool.close()


def test_a_cluster_address_needs_ray():
    with pytest.raises(Exception, match="needs Ray"):
        WorkerPool(workers=2, address="ray://head:10001", backend="processes")
