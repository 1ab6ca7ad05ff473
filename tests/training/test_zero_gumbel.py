"""Gumbel self-play in the Zero loop (`engine-train zero --gumbel`): the games play the Gumbel
search's survivor and record its improved policy as the target, through the whole loop (self-play,
shards, training, gating, registry) and with playout cap randomisation; on 5x5 with a one-block,
8-filter network played by onnxruntime."""
import json

import numpy as np
from click.testing import CliRunner
import pytest

torch = pytest.importorskip("torch")

from goengine.engine.coords import loc_to_pos  # noqa: E402
from goengine.engine.evaluator import UniformEvaluator  # noqa: E402
from goengine.engine.search.lockstep import Lockstep  # noqa: E402
from goengine.training.workers.pool import WorkerPool  # noqa: E402
from goengine.training.workers.selfplay import SelfPlayWorker  # noqa: E402
from goengine.training.zero.cli import zero_command  # noqa: E402
from goengine.training.zero.loop import ZeroConfig, ZeroRun  # noqa: E402
from goengine.training.zero.registry import Registry  # noqa: E402
from goengine.training.zero.selfplay import (ZeroGamesJob, make_search,  # noqa: E402
                                             play_zero_games, visit_distribution)

from zero_nets import TINY, export_tiny_zero  # noqa: E402


class SearchSpy:
    """Every search the games run, in lockstep: `runs` holds one dict per Lockstep (one per
    job's games, in the order the jobs play), game key -> [(visits asked, config, result)]."""

    def __init__(self, monkeypatch):
        self.runs = []
        real_init, real_start, real_result = Lockstep.__init__, Lockstep.start, Lockstep._result
        spy = self

        def init(lock):
            real_init(lock)
            lock.spied, lock.asked = {}, {}
            spy.runs.append(lock.spied)

        def start(lock, key, search, game, color, visits):
            lock.asked[key] = visits
            return real_start(lock, key, search, game, color, visits)

        def result(lock, key):
            config = lock.active[key].search.config
            r = real_result(lock, key)
            lock.spied.setdefault(key, []).append((lock.asked[key], config, r))
            return r

        monkeypatch.setattr(Lockstep, "__init__", init)
        monkeypatch.setattr(Lockstep, "start", start)
        monkeypatch.setattr(Lockstep, "_result", result)

    def gumbel_jobs(self) -> list[dict]:
        return [run for run in self.runs
                if any(c.gumbel for searches in run.values() for _, c, _ in searches)]


def test_gumbel_loop_records_the_improved_policies_and_plays_the_survivors(tmp_path,
                                                                          monkeypatch):
    """engine-train zero --gumbel end to end in this process: each self-play move is a Gumbel
    search without root noise, the move played is its survivor, the shards' targets are its
    improved policies (not the visits), and the generation trains, gates (PUCT searches) and
    enters the registry."""
    spy = SearchSpy(monkeypatch)
    out = tmp_path / "run"
    result = CliRunner().invoke(zero_command, [
        "--out", str(out), "--size", "5", "--komi", "0.5", "--games", "4", "--games-per-job", "2",
        "--gumbel", "--simulations", "8", "--gumbel-k", "4", "--steps", "4", "--batch-size", "16",
        "--gate-visits", "4", "--gate-min", "2", "--gate-max", "2", "--gate-step", "2",
        "--blocks", "1", "--filters", "8", "--resign-threshold", "0",
        "--selfplay-precision", "fp32", "--generations", "1", "--workers", "0"])
    assert result.exit_code == 0, result.output
    jobs = spy.gumbel_jobs()
    assert len(jobs) == 2                                   # 4 games, 2 a job: 2 shards
    manifest = json.loads((out / "games" / "manifest.json").read_text())
    assert manifest["games"] == 4 and len(manifest["shards"]) == 2
    differs = []
    for job, shard in zip(jobs, manifest["shards"]):
        a = np.load(out / "games" / shard["file"])
        assert sorted(job) == list(range(len(a["winner"])))
        for g, searches in sorted(job.items()):
            assert all(visits == 8 and c.gumbel and c.gumbel_k == 4 and c.dirichlet_alpha == 0
                       and c.forced_k == 0 for visits, c, _ in searches)
            improved = np.stack([r.improved_policy for _, _, r in searches])
            pi = a["pi"][a["poffsets"][g]:a["poffsets"][g + 1]]
            assert (pi == improved.astype(np.float16)).all()         # every move recorded
            assert np.allclose(improved.sum(axis=1), 1, atol=1e-5)
            moves = a["moves"][a["offsets"][g]:a["offsets"][g + 1]]
            assert moves.tolist() == [loc_to_pos(r.moves[0].move, 5) for _, _, r in searches]
            differs += [not np.allclose(r.improved_policy, visit_distribution(r, 5), atol=0.02)
                        for _, _, r in searches]
    assert any(differs)            # the targets are the improved policies, not the visits
    gating = [c for run in spy.runs if all(run is not j for j in jobs)
              for searches in run.values()
              for _, c, _ in searches]
    assert gating and not any(c.gumbel for c in gating)      # gating plays PUCT
    rows = Registry(out / "registry").rows
    assert [r["generation"] for r in rows] == [0, 1] and rows[1]["gate_games"] == 2
    assert json.loads((out / "state.json").read_text())["generation"] == 2
    assert torch.load(out / "checkpoint.pt", weights_only=True)["steps"] == 4


def test_gumbel_playout_cap_randomisation_records_only_the_full_searches(tmp_path, monkeypatch):
    """With --fast-visits every move is a Gumbel search, of the job's simulations with
    probability full_fraction, else of fast_visits; only the full ones are recorded, their
    improved policies the targets, and every move is its search's survivor."""
    spy = SearchSpy(monkeypatch)
    path = export_tiny_zero(tmp_path, "tiny.onnx")[1]
    worker = SelfPlayWorker()
    worker.load("best", path.read_bytes(), kind="zero")
    job = ZeroGamesJob(pairs=[("best", "best")] * 6, size=5, komi=0.5, visits=12, seed=5,
                       resign_threshold=0.0, fast_visits=3, full_fraction=0.3, gumbel=True,
                       gumbel_k=8)
    results = worker.play(job)
    (searched,) = spy.runs
    asked = [v for searches in searched.values() for v, _, _ in searches]
    assert set(asked) == {12, 3} and 0.15 < asked.count(12) / len(asked) < 0.45
    for i, r in enumerate(results):
        searches = searched[i]
        assert all(c.gumbel and c.dirichlet_alpha == 0 for _, c, _ in searches)
        full = [t for t, (v, _, _) in enumerate(searches) if v == 12]
        assert r.ply.tolist() == full and len(r.moves) == len(searches)
        assert np.array_equal(r.pi, np.stack([searches[t][2].improved_policy for t in full]))
        assert r.moves.tolist() == [loc_to_pos(s.moves[0].move, 5) for _, _, s in searches]


def test_gating_jobs_stay_puct_and_self_play_has_no_dirichlet_noise(tmp_path):
    run = ZeroRun(ZeroConfig(size=5, gumbel=True, gumbel_k=5, **TINY), tmp_path, None,
                  WorkerPool(workers=0), resume=False, log=lambda s: None)
    selfplay = make_search(UniformEvaluator(),
                           ZeroGamesJob(pairs=[("best", "best")], **run._job_args(False)), 0)
    gating = make_search(UniformEvaluator(),
                         ZeroGamesJob(pairs=[("best", "best")], **run._job_args(True)), 0)
    assert selfplay.config.gumbel and selfplay.config.gumbel_k == 5
    assert selfplay.config.dirichlet_alpha == 0
    assert not gating.config.gumbel


@pytest.mark.parametrize("option, value", [("--forced-playouts", "2"),
                                           ("--dirichlet-alpha", "0.1"),
                                           ("--dirichlet-eps", "0.5"),
                                           ("--sampled-moves", "4")])
def test_puct_exploration_options_with_gumbel_are_a_usage_error(tmp_path, option, value):
    """They would have no effect on the Gumbel searches: the command says so instead."""
    result = CliRunner().invoke(zero_command, ["--out", str(tmp_path / "run"), "--size", "5",
                                               "--gumbel", option, value])
    assert result.exit_code == 2 and option in result.output and "--gumbel" in result.output
    assert not (tmp_path / "run").exists()


def test_a_side_whose_settings_alone_turn_gumbel_on_plays_its_survivors(monkeypatch):
    """experiments/zero_match.py's `--first-setting gumbel=1`: the job is not a Gumbel job, yet
    that side's moves are its searches' survivors, not its most visited moves (at m = n every
    considered move has one visit, and the most visited is just the first of them)."""
    spy = SearchSpy(monkeypatch)
    job = ZeroGamesJob(pairs=[("a", "b"), ("b", "a")], size=5, komi=0.5, visits=8, noise=False,
                       sampled_moves=0, resign_threshold=0.0, move_cap=12,
                       settings={"a": {"gumbel": True, "gumbel_k": 8}})
    games = play_zero_games({"a": UniformEvaluator(), "b": UniformEvaluator()}, job)
    (run,) = spy.runs
    for key, (black, _) in enumerate(job.pairs):
        searches = run[key]
        for ply, (_, config, result) in enumerate(searches):
            if config.gumbel:
                assert games[key].moves[ply] == loc_to_pos(result.moves[0].move, 5)
        assert any(config.gumbel for _, config, _ in searches)
        assert any(not config.gumbel for _, config, _ in searches)
