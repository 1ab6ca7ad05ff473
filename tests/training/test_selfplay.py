"""Policy self-play (training.workers.selfplay), its game shards, the Ray workers and `engine-train rl`,
on 5x5 and 7x7 with a tiny policy net exported to ONNX and played by onnxruntime."""
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray")

from goengine.engine.colors import BLACK  # noqa: E402
from goengine.engine.coords import PASS, pos_to_loc  # noqa: E402
from goengine.engine.features import extract  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.symmetry import N_SYMMETRIES, apply, apply_policy  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.models.store import verify  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402
from goengine.training.data.game_shards import GameShards, read_games, read_manifest  # noqa: E402
from goengine.training.nets.initial import load_initial  # noqa: E402
from goengine.training.rl.loop import (CURRENT, SL, OpponentPool, RLConfig, RLRun,  # noqa: E402
                                       learner_positions, reinforce_loss, reinforce_step,
                                       update_average)
from goengine.training.workers.selfplay import (KOMI, GameResult, GamesJob,  # noqa: E402
                                                SelfPlayWorker, candidates, move_cap, pos_table,
                                                replay, selfplay_rules)
from goengine.training.workers.pool import WorkerPool, make_jobs  # noqa: E402
from tqdm import tqdm  # noqa: E402
from zero_nets import export_tiny_zero  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(checkpoint path, ONNX path) of a 3-layer, 8-filter policy net with random weights."""
    d = tmp_path_factory.mktemp("tiny")
    torch.manual_seed(0)
    net = nets.build("policy", "cpu", layers=3, filters=8)
    nets.save_checkpoint(net, d / "tiny.pt")
    export_onnx(net, "policy", d / "tiny.onnx", {"training_data": "random weights"})
    return d / "tiny.pt", d / "tiny.onnx"


def worker_with(onnx_path, *names):
    w = SelfPlayWorker()
    for name in names:
        w.load(name, onnx_path.read_bytes())
    return w


def check_record(r: GameResult):
    """The record replays legally, and its score and ending are the rules core's."""
    g = replay(r)
    assert g.area_score() == r.score
    n = r.size
    if r.two_passes:
        assert g.is_over() and list(r.moves[-2:]) == [n * n, n * n]
    else:
        assert len(r.moves) == move_cap(n) and not g.is_over()


# ---- self-play -------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [5, 7])
def test_selfplay_terminals_are_scored_by_the_rules_core(tiny, size):
    w = worker_with(tiny[1], "a", "b")
    job = GamesJob(pairs=[("a", "b"), ("b", "a")] * 3, size=size, seed=size, learner="a")
    results = w.play(job)
    assert len(results) == 6
    for r in results:
        check_record(r)
        # the learner's positions: one per move it chose (its colour's non-pass moves)
        colour_moves = r.moves[0::2] if r.black == "a" else r.moves[1::2]
        chosen = colour_moves[colour_moves != size * size]
        assert list(r.move) == list(chosen) and len(r.x) == len(chosen)
        mask = np.unpackbits(r.mask, axis=1, count=size * size).astype(bool)
        assert mask[np.arange(len(r.move)), r.move].all()      # each move was a candidate
        assert (r.baseline == 0).all() and r.z_for("a") == (r.winner if r.black == "a" else -r.winner)
        assert (r.colour == (1 if r.black == "a" else -1)).all()
    assert {r.winner for r in results} <= {-1, 1}                # komi 7.5: no draws


def test_baseline_from_the_value_network(tiny, tmp_path):
    torch.manual_seed(1)
    value = nets.build("value", "cpu", layers=3, filters=8)
    export_onnx(value, "value", tmp_path / "v.onnx", {"training_data": "random weights"})
    w = worker_with(tiny[1], "a")
    w.load("v", (tmp_path / "v.onnx").read_bytes(), kind="value")
    results = w.play(GamesJob(pairs=[("a", "a")] * 2, size=5, seed=2, learner="a", value="v"))
    b = np.concatenate([r.baseline for r in results])
    assert len(b) > 0 and np.all(np.abs(b) <= 1) and len(np.unique(b)) > 1
    ev = OnnxEvaluator(tmp_path / "v.onnx", kind="value", symmetry="none")
    g = replay(GameResult("a", "a", 5, 7.5, results[0].moves[:1], 0.0, False))
    want = ev.evaluate(extract(g, "alphago49")[None]).value_stm[0]
    assert results[0].baseline[1] == pytest.approx(want, abs=1e-5)   # white's first move


def test_same_seed_same_games(tiny):
    job = GamesJob(pairs=[("a", "a")] * 3, size=5, seed=11)
    one = worker_with(tiny[1], "a").play(job)
    two = worker_with(tiny[1], "a").play(job)
    assert all((x.moves == y.moves).all() for x, y in zip(one, two))
    other = worker_with(tiny[1], "a").play(GamesJob(pairs=[("a", "a")] * 3, size=5, seed=12))
    assert any(len(x.moves) != len(y.moves) or (x.moves != y.moves).any()
               for x, y in zip(one, other))


def test_greedy_after_the_sampled_moves(tiny):
    """--sampled-moves K: the first K moves of each game sampled, then the most probable
    candidate: with K = 0 every seed plays the same game, each move the policy's argmax."""
    w = worker_with(tiny[1], "a")
    games = [w.play(GamesJob(pairs=[("a", "a")], size=5, seed=s, sampled_moves=0))[0]
             for s in (1, 2)]
    assert (games[0].moves == games[1].moves).all()
    g = Game(5, selfplay_rules(KOMI))
    buf = np.zeros(27, dtype=np.int64)
    pos_of = pos_table(5)
    for pos in games[0].moves[:6]:
        if pos == 25:
            break
        cands = candidates(g, buf)
        planes = extract(g, "alphago48")[None]
        mask = np.zeros((1, 26), dtype=bool)
        mask[0, pos_of[cands]] = True
        priors = w.nets["a"].evaluate(planes, mask).priors[0]
        assert pos == pos_of[cands[int(np.argmax(priors[pos_of[cands]]))]]
        g.play(g.to_play, pos_to_loc(int(pos), 5))
    sampled = [w.play(GamesJob(pairs=[("a", "a")], size=5, seed=s, sampled_moves=4))[0]
               for s in range(1, 7)]
    assert len({r.moves[:4].tobytes() for r in sampled}) > 1       # openings differ


def test_a_zero_networks_policy_head_plays_from_its_own_planes(tiny, tmp_path):
    """A dual-head Zero network fills the policy role (as in the AlphaGo search): its greedy
    games read its own 17 planes, each move the argmax of its policy head over the candidates,
    and it plays a 48-plane policy network in the same job."""
    _, path = export_tiny_zero(tmp_path, "zero.onnx", seed=3)
    w = SelfPlayWorker()
    w.load("z", path.read_bytes())
    result = w.play(GamesJob(pairs=[("z", "z")], size=5, seed=1, sampled_moves=0))[0]
    check_record(result)
    g = Game(5, selfplay_rules(KOMI))
    for pos in result.moves[:8]:
        if pos == 25:
            break
        cands = pos_table(5)[candidates(g, np.zeros(27, dtype=np.int64))]
        mask = np.zeros((1, 26), dtype=bool)
        mask[0, cands] = True
        priors = w.nets["z"].evaluate(extract(g, "zero17")[None], mask).priors[0]
        assert pos == cands[int(np.argmax(priors[cands]))]
        g.play(g.to_play, pos_to_loc(int(pos), 5))
    assert w.nets["z"].meta.feature_set == "zero17"
    w.load("a", tiny[1].read_bytes())
    mixed = w.play(GamesJob(pairs=[("z", "a"), ("a", "z")], size=5, seed=2))
    for r in mixed:
        check_record(r)


def candidate_priors(ev, g: Game) -> tuple[np.ndarray, np.ndarray]:
    """(Pos of each candidate move of `g`, its probability under the policy `ev`)."""
    n = g.size
    pos = pos_table(n)[candidates(g, np.zeros(n * n + 2, dtype=np.int64))]
    mask = np.zeros((1, n * n + 1), dtype=bool)
    mask[0, pos] = True
    if len(pos) == 0:
        return pos, np.zeros(0)
    return pos, ev.evaluate(extract(g, "alphago48")[None], mask).priors[0, pos]


def most_probable(ev, g: Game) -> int:
    """The Pos of the most probable candidate move of `g` under the policy `ev` (N*N: none)."""
    pos, p = candidate_priors(ev, g)
    return int(pos[np.argmax(p)]) if len(pos) else g.size * g.size


def _frames(results, n):
    """(played Pos, planes as played, recorded planes, recorded mask, recorded move) of every
    learner position of self-play `results` (one network on both sides)."""
    out = []
    for r in results:
        g, j = Game(n, selfplay_rules(KOMI)), 0
        for pos in r.moves:
            if pos != n * n:
                x = np.unpackbits(r.x[j], count=48 * n * n).reshape(48, n, n)
                mask = np.unpackbits(r.mask[j], count=n * n).astype(bool)
                out.append((int(pos), extract(g, "alphago48").astype(np.uint8), x, mask,
                            int(r.move[j])))
                j += 1
            g.play(g.to_play, PASS if pos == n * n else pos_to_loc(int(pos), n))
        assert j == len(r.move)
    return out


@pytest.mark.parametrize("symmetry", ["none", "random", "average"])
def test_symmetric_games_record_each_move_where_the_network_saw_it(tiny, symmetry):
    """`symmetry="random"`: each move's network call is on a random board symmetry, and the
    learner's record holds the planes, mask and move in that frame, so the move played greedily
    is the most probable candidate of the recorded planes (the update's log p is the one it was
    chosen by) and the record is a symmetry of the position as played; "none": the board as is;
    "average": the learner plays as with "random" (one frame to record)."""
    w = worker_with(tiny[1], "a")
    n = 5
    results = w.play(GamesJob(pairs=[("a", "a")] * 4, size=n, seed=2, learner="a",
                              sampled_moves=0, symmetry=symmetry))
    frames = _frames(results, n)
    ks = []
    for played, as_played, x, mask, move in frames:
        legal = np.append(mask, False)
        priors = w.nets["a"].evaluate(x[None].astype(np.float32), legal[None]).priors[0]
        assert mask[move] and move == int(np.argmax(np.where(legal, priors, -1.0)))
        k = [k for k in range(N_SYMMETRIES) if np.array_equal(apply(as_played, k), x)]
        assert k, "the recorded planes are no symmetry of the position"
        one = np.zeros(n * n + 1, np.float32)
        one[played] = 1.0
        assert any(int(np.argmax(apply_policy(one, kk, n))) == move for kk in k)
        ks.append(k[0])
    assert len(frames) > 20
    assert (len(set(ks)) > 4) if symmetry != "none" else set(ks) == {0}


def test_average_games_play_the_evaluators_averaged_move(tiny):
    """`symmetry="average"`: every greedy move is the most probable candidate of the mean of the
    8 symmetries' policies, as the engine's evaluator computes it (OnnxEvaluator "average"), and
    it differs from the board as played's in some positions of these games (the tiny network is
    not symmetric), so the mode is not "none" under another name."""
    w = worker_with(tiny[1], "a")
    engine = OnnxEvaluator(tiny[1], symmetry="average", cache_size=0)
    n = 5
    results = w.play(GamesJob(pairs=[("a", "a")] * 4, size=n, seed=3, sampled_moves=2,
                              symmetry="average"))
    pos_of, buf = pos_table(n), np.zeros(n * n + 2, dtype=np.int64)
    checked = differs = 0
    for r in results:
        g = Game(n, selfplay_rules())
        for t, pos in enumerate(r.moves):
            c = candidates(g, buf)
            if t >= 2 and len(c):
                x = extract(g, "alphago48")[None].astype(np.float32)
                mask = np.zeros((1, n * n + 1), bool)
                mask[0, pos_of[c]] = True
                p = engine.evaluate(x, mask).priors[0][pos_of[c]]
                assert int(pos) == int(pos_of[c[int(np.argmax(p))]])
                plain = w.nets["a"].evaluate(x, mask).priors[0][pos_of[c]]
                differs += int(np.argmax(plain) != np.argmax(p))
                checked += 1
            g.play(g.to_play, PASS if pos == n * n else pos_to_loc(int(pos), n))
    assert checked > 20 and differs > 0


def test_forked_games_explore_one_learner_move_against_the_greedy_branch(tiny):
    """`fork`: after the sampled opening every move is the most probable one but one learner
    move per game, never the most probable; a game records that move alone, weighted by
    1 - p(most probable), and its baseline is the outcome, for the learner, of the game replayed
    with the most probable move there and greedy play after it."""
    w = worker_with(tiny[1], "a", "b")
    job = GamesJob(pairs=[("a", "b")] * 12 + [("b", "a")] * 12, size=5, seed=3,
                   sampled_moves=2, learner="a", fork=True)
    results = w.play(job)
    assert len(results) == 24
    recorded = [r for r in results if len(r.move)]
    assert recorded and all(len(r.move) == 1 for r in recorded)
    for r in results:
        check_record(r)
        g, deviations = Game(5, selfplay_rules(KOMI)), []
        for t, pos in enumerate(r.moves):
            if t >= 2 and pos != most_probable(w.nets["a"], g):
                mover = r.black if g.to_play == BLACK else r.white
                deviations.append((t, mover, g.copy()))
            g.play(g.to_play, PASS if pos == 25 else pos_to_loc(int(pos), 5))
        assert len(deviations) == len(r.move)             # one explored move or none, the learner's
        for t, mover, at in deviations:
            assert mover == "a" and r.move[0] == r.moves[t]
            assert r.colour[0] == (1 if at.to_play == BLACK else -1)
            assert r.weight[0] == pytest.approx(1 - candidate_priors(w.nets["a"], at)[1].max(),
                                                abs=1e-5)
            twin = at
            twin.play(twin.to_play, pos_to_loc(most_probable(w.nets["a"], twin), 5))
            while not twin.is_over() and twin.move_number < move_cap(5):
                pos = most_probable(w.nets["a"], twin)
                twin.play(twin.to_play, PASS if pos == 25 else pos_to_loc(pos, 5))
            assert r.baseline[0] == np.sign(twin.area_score()) * r.colour[0]
            assert r.winner * r.colour[0] - r.baseline[0] in (-2, 0, 2)
    assert any(r.winner * r.colour[0] != r.baseline[0] for r in recorded)   # branches that differ


def test_greedy_opponents_play_their_most_probable_moves_while_the_learner_samples(tiny):
    """`greedy_opponent`: after the sampled opening the learner's opponent plays its most probable
    move every time, while the learner keeps sampling (some of its moves are not its most
    probable) and every one of its moves but a forced pass is a training position."""
    w = worker_with(tiny[1], "a", "b")
    job = GamesJob(pairs=[("a", "b")] * 8 + [("b", "a")] * 8, size=5, seed=4,
                   sampled_moves=2, learner="a", greedy_opponent=True)
    learner_sampled = 0
    for r in w.play(job):
        check_record(r)
        g, learner_moves = Game(5, selfplay_rules(KOMI)), []
        for t, pos in enumerate(r.moves):
            mover = r.black if g.to_play == BLACK else r.white
            if mover == "b" and t >= 2:
                assert pos == most_probable(w.nets["b"], g)
            if mover == "a" and pos != 25:
                learner_moves.append(pos)
                learner_sampled += t >= 2 and pos != most_probable(w.nets["a"], g)
            g.play(g.to_play, PASS if pos == 25 else pos_to_loc(int(pos), 5))
        assert r.move.tolist() == learner_moves
    assert learner_sampled > 0


# ---- game shards -----------------------------------------------------------------------------

def test_shards_round_trip_and_replace_by_name(tiny, tmp_path):
    results = worker_with(tiny[1], "a").play(GamesJob(pairs=[("a", "a")] * 5, size=5, seed=1))
    shards = GameShards(tmp_path, shard_games=2)
    for r in results:
        shards.add(r)
    shards.flush()
    assert [s["games"] for s in read_manifest(tmp_path)["shards"]] == [2, 2, 1]
    back = list(read_games(tmp_path))
    assert [list(b.moves) for b in back] == [list(r.moves) for r in results]
    assert [b.score for b in back] == [r.score for r in results]
    again = GameShards(tmp_path)            # a named shard written twice counts once
    again.buffer = results[:3]
    again.flush("x.npz")
    again.buffer = results[:1]
    again.flush("x.npz")
    assert read_manifest(tmp_path)["games"] == 6 and not list(tmp_path.glob("*.tmp"))


def selfplay_cmd(out, onnx_path, games):
    return [sys.executable, "-m", "goengine.training.cli", "selfplay", "--out", str(out),
            "--policy", str(onnx_path), "--games", str(games), "--size", "5", "--workers", "0",
            "--shard-games", "3", "--games-per-job", "3"]


def test_selfplay_killed_mid_run_resumes_from_its_shards(tiny, tmp_path):
    out = tmp_path / "games"
    p = subprocess.Popen(selfplay_cmd(out, tiny[1], 100_000), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while read_manifest(out)["games"] < 9 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    manifest = read_manifest(out)
    assert manifest["games"] >= 9
    kept = list(read_games(out))               # every shard in the manifest is whole
    assert len(kept) == manifest["games"] == sum(s["games"] for s in manifest["shards"])
    target = manifest["games"] + 7
    done = subprocess.run(selfplay_cmd(out, tiny[1], target), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    games = list(read_games(out))
    assert len(games) == target == read_manifest(out)["games"]
    assert [list(g.moves) for g in games[:len(kept)]] == [list(g.moves) for g in kept]
    for g in games:
        check_record(g)
    resumed = {tuple(g.moves) for g in games[len(kept):]}
    assert not resumed & {tuple(g.moves) for g in kept}      # new seeds, not the same games again


# ---- Ray ---------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_ray_with_two_local_workers_plays_the_games_asked(tiny):
    pool = WorkerPool(workers=2)
    try:
        assert pool.size == 2
        pool.publish("a", tiny[1].read_bytes())
        pool.publish("b", tiny[1].read_bytes())
        jobs = make_jobs([("a", "b"), ("b", "a")] * 5, 4, np.random.SeedSequence(3), size=7,
                         learner="a")
        assert sum(len(j.pairs) for j in jobs) == 10
        got = dict(pool.run(jobs))
    finally:
        pool.close()
    assert sorted(got) == [0, 1, 2, 3]
    results = [r for k in sorted(got) for r in got[k]]
    assert len(results) == 10
    for r in results:
        check_record(r)
        assert len(r.move) > 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# CPUs the test cluster says it has: more than this machine's, a number a local Ray never picks
CLUSTER_CPUS = (os.cpu_count() or 1) + 1


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """A Ray cluster of one head node started by `ray start`, as a user starts one on each
    machine; its address and the environment to join it in. Token authentication, as Ray advises
    for a cluster, with a token of its own in a home of its own: a local `ray.init` earlier in
    this process sets RAY_AUTH_MODE for its children, and a token left in the machine's ~/.ray
    must not be the one that lets the client in. `--block` and a temp dir of its own, so that
    stopping it stops only it (`ray stop` would stop every Ray on the machine)."""
    home = tmp_path_factory.mktemp("ray-home")
    env = {**_without_ray_auth(os.environ), "HOME": str(home), "RAY_AUTH_MODE": "token"}
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    token = subprocess.run([ray_cli, "get-auth-token", "--generate"], capture_output=True,
                           text=True, timeout=120, env=env)
    assert token.returncode == 0 and (home / ".ray" / "auth_token").is_file(), token.stderr
    temp_dir = tempfile.mkdtemp(prefix="ray")     # short: Ray's unix sockets live under it
    port = _free_port()
    log = open(home / "ray-start.log", "w")
    head = subprocess.Popen([ray_cli, "start", "--head", "--block", "--node-ip-address",
                             "127.0.0.1", "--port", str(port), "--num-cpus", str(CLUSTER_CPUS),
                             "--temp-dir", temp_dir, "--include-dashboard", "false",
                             "--disable-usage-stats"], stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 180
        while not _answers(port):
            assert head.poll() is None and time.monotonic() < deadline, \
                (home / "ray-start.log").read_text()[-2000:]
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", env
    finally:
        head.terminate()                          # --block stops the node's processes on SIGTERM
        try:
            head.wait(timeout=120)
        except subprocess.TimeoutExpired:
            head.kill()
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _without_ray_auth(env) -> dict:
    return {k: v for k, v in env.items() if not k.startswith("RAY_AUTH_")}


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_selfplay_joins_a_ray_cluster_by_address(tiny, tmp_path, ray_cluster):
    """`--ray-address` sends the games to a cluster that `ray start` made, and nothing else
    changes: a worker per CPU of the cluster, the games asked for, whole shards, records the
    rules core replays."""
    out = tmp_path / "games"
    address, env = ray_cluster
    p = subprocess.run(ray_address_cmd(tiny, out, address, 8), capture_output=True, text=True,
                       timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"{CLUSTER_CPUS} worker(s)" in p.stdout + p.stderr
    games = list(read_games(out))
    assert len(games) == 8 == read_manifest(out)["games"]
    for g in games:
        check_record(g)


def ray_address_cmd(tiny, out, address, games=2):
    """selfplay_cmd at a cluster's address, with no --workers: the cluster's CPUs."""
    cmd = selfplay_cmd(out, tiny[1], games)
    del cmd[cmd.index("--workers"):cmd.index("--workers") + 2]
    return cmd + ["--ray-address", address]


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_client_without_the_clusters_token_is_told_so(tiny, tmp_path, ray_cluster):
    """A cluster with token authentication refuses a client that lacks its token: one clear
    line naming the token, no traceback, nothing played."""
    address, cluster_env = ray_cluster
    env = {**_without_ray_auth(cluster_env), "HOME": str(tmp_path)}  # no ~/.ray/auth_token here
    p = subprocess.run(ray_address_cmd(tiny, tmp_path / "games", address), capture_output=True,
                       text=True, timeout=300, env=env)
    assert p.returncode == 1
    assert f"Error: cannot join the Ray cluster at {address}: the cluster uses token " \
        "authentication" in p.stderr, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "games" / "manifest.json").exists()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_local_run_beside_a_started_cluster_starts_its_own_ray(tiny, tmp_path, ray_cluster):
    """`--workers 2` without an address is a local Ray of 2 workers even while a cluster that
    `ray start` made runs on this machine (a bare ray.init() would join that cluster)."""
    out = tmp_path / "games"
    cmd = selfplay_cmd(out, tiny[1], 4)
    cmd[cmd.index("--workers") + 1] = "2"
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "2 worker(s)" in p.stdout + p.stderr
    assert len(list(read_games(out))) == 4


@pytest.mark.xdist_group("ray")
def test_an_address_where_nothing_answers_fails_at_once(tiny, tmp_path):
    """Ray would retry a dead address for minutes; the command says so in seconds."""
    address = f"127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    p = subprocess.run(ray_address_cmd(tiny, tmp_path / "games", address), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 1
    assert f"Error: cannot join the Ray cluster at {address}: nothing answers" in p.stderr, \
        p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    assert time.monotonic() - t0 < 120


# ---- REINFORCE ---------------------------------------------------------------------------------

def test_reinforce_raises_the_probability_of_moves_in_won_games(tiny):
    """The same toy position and move, recorded in a won and in a lost game: one update on the
    won game's records raises p(move), one on the lost game's lowers it."""
    n, move = 5, 7
    planes = extract(Game(n), "alphago48").astype(np.uint8)
    mask = np.ones(n * n, dtype=bool)

    def record(score):
        return GameResult("rl", "sl", n, 7.5, np.array([move], np.int16), score, True,
                          x=np.packbits(planes.reshape(-1))[None], move=np.array([move], np.int16),
                          mask=np.packbits(mask)[None], baseline=np.zeros(1, np.float32),
                          colour=np.ones(1, np.int8))

    def p_move(net):
        with torch.no_grad():
            return torch.softmax(net(torch.from_numpy(planes[None].astype(np.float32))), 1)[0, move]

    for score, sign in ((12.5, 1), (-3.5, -1)):
        net = load_initial(tiny[0])
        before = float(p_move(net))
        data = learner_positions([record(score)], n)
        assert data[3].tolist() == [sign]
        reinforce_step(net, torch.optim.SGD(net.parameters(), lr=0.1), data, 1, n, chunk=512)
        after = float(p_move(net))
        assert (after - before) * sign > 0, (score, before, after)


class _Logits(torch.nn.Module):
    """A "network" whose output is one learnable row of logits, whatever the planes."""

    def __init__(self, logits):
        super().__init__()
        self.logits = torch.nn.Parameter(torch.tensor([logits], dtype=torch.float32))

    def forward(self, planes):
        return self.logits.expand(len(planes), -1)


@pytest.mark.parametrize("temperature", [1.0, 0.5, 0.2])
def test_the_update_follows_the_gradient_of_the_distribution_self_play_sampled(temperature):
    """At temperature T the moves were sampled from softmax(l / T): the REINFORCE gradient of
    the logits is -(z - b) / n * (onehot(a) - softmax(l / T)) / T, the same law as at T = 1;
    a move the tempered policy already plays almost surely gets almost no push."""
    logits = [2.0, 1.0, 0.0, -1.0, 0.5]
    mask = torch.tensor([[True, True, True, True, False]])   # the last is no candidate
    for move, adv in ((1, 1.0), (3, -0.5), (0, 1.0)):
        net = _Logits(logits)
        loss, _ = reinforce_loss(net, torch.zeros(1, 1), torch.tensor([move]), mask,
                                 torch.tensor([adv]), games=2, temperature=temperature)
        loss.backward()
        p = torch.softmax(torch.tensor(logits[:4]) / temperature, 0)
        want = -adv / 2 * (torch.eye(4)[move] - p) / temperature
        assert torch.allclose(net.logits.grad[0, :4], want, atol=1e-6)
        assert float(net.logits.grad[0, 4]) == 0.0
    sharp = _Logits([10.0, 0.0, 0.0, 0.0, 0.0])
    loss, _ = reinforce_loss(sharp, torch.zeros(1, 1), torch.tensor([0]), mask,
                             torch.tensor([1.0]), games=1, temperature=temperature)
    loss.backward()
    assert float(sharp.logits.grad.abs().max()) < 1e-3      # (a move of p 1/4 gets ~0.75 / T)


def test_the_entropy_bonus_flattens_a_sure_policy_and_only_over_the_candidates():
    """With no advantage the bonus's gradient is that of -eta H over the candidate moves: it
    lowers the logit of the sure move, raises the others', leaves the non-candidate alone and is
    finite (the masked -inf log p would give NaN as 0 * -inf); a step along it raises H."""
    logits = [4.0, 0.0, -1.0, 0.5, 3.0]
    mask = torch.tensor([[True, True, True, True, False]])
    eta = 0.1
    net = _Logits(logits)
    loss, _ = reinforce_loss(net, torch.zeros(1, 1), torch.tensor([0]), mask, torch.tensor([0.0]),
                             games=1, entropy_weight=eta)
    loss.backward()
    g = net.logits.grad[0]
    assert torch.isfinite(g).all() and float(g[4]) == 0.0
    z = torch.tensor(logits[:4], requires_grad=True)
    p = torch.softmax(z, 0)
    (eta * (p * p.log()).sum()).backward()             # the same term by hand
    assert torch.allclose(g[:4], z.grad, atol=1e-6)
    assert float(g[0]) > 0 and all(float(x) < 0 for x in g[1:3])

    def entropy(t):
        q = torch.softmax(t[:4], 0)
        return float(-(q * q.log()).sum())
    before = entropy(net.logits.detach()[0])
    assert entropy(net.logits.detach()[0] - 1.0 * g) > before
    plain = _Logits(logits)
    loss, _ = reinforce_loss(plain, torch.zeros(1, 1), torch.tensor([0]), mask, torch.tensor([0.0]),
                             games=1)
    loss.backward()
    assert float(plain.logits.grad.abs().max()) == 0.0   # no advantage, no bonus: no gradient


def test_the_kl_anchor_pulls_the_policy_back_to_the_sl_network(tiny):
    """No KL against the network's own copy; after a REINFORCE step has moved p(move), steps on
    a record whose advantage is zero (b = z) and a KL weight bring it back toward the anchor's."""
    n, move = 5, 7
    planes = extract(Game(n), "alphago48").astype(np.uint8)
    mask = np.ones(n * n, dtype=bool)

    def data(baseline):
        r = GameResult("rl", "sl", n, 7.5, np.array([move], np.int16), -3.5, True,
                       x=np.packbits(planes.reshape(-1))[None], move=np.array([move], np.int16),
                       mask=np.packbits(mask)[None], baseline=np.full(1, baseline, np.float32),
                       colour=np.ones(1, np.int8))
        return learner_positions([r], n)

    def p_move(net):
        with torch.no_grad():
            return float(torch.softmax(net(torch.from_numpy(planes[None].astype(np.float32))), 1)[0, move])

    anchor, net = load_initial(tiny[0]).eval(), load_initial(tiny[0])
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    _, kl = reinforce_step(net, opt, data(0.0), 1, n, chunk=512, anchor=anchor, kl_weight=1.0)
    assert kl == pytest.approx(0.0, abs=1e-6)            # the step's KL is measured before it
    moved = p_move(net)
    assert moved < p_move(anchor) - 0.01                 # the lost game lowered p(move)
    kls = [reinforce_step(net, opt, data(-1.0), 1, n, chunk=512, anchor=anchor, kl_weight=2.0)[1]
           for _ in range(5)]
    assert kls[0] > 0 and kls[-1] < 0.5 * kls[0]
    assert moved < p_move(net) <= p_move(anchor) + 1e-3
    assert data(-1.0)[3].tolist() == [0.0]


def test_outcome_follows_the_colour_of_each_move(tiny):
    """A network playing both colours: its black moves get the black result, its white moves
    the white one."""
    results = worker_with(tiny[1], "a").play(GamesJob(pairs=[("a", "a")] * 2, size=5, seed=4,
                                                      learner="a"))
    adv = learner_positions(results, 5)[3]
    want = np.concatenate([r.winner * np.where(np.arange(len(r.moves)) % 2 == 0, 1, -1)
                           [r.moves != 25] for r in results])
    assert adv.tolist() == want.tolist() and set(adv.tolist()) == {-1.0, 1.0}


def test_baseline_is_subtracted_from_the_outcome(tiny):
    r = GameResult("sl", "rl", 5, 7.5, np.zeros(0, np.int16), -1.5, True,
                   x=np.zeros((2, 150), np.uint8), move=np.array([1, 2], np.int16),
                   mask=np.zeros((2, 4), np.uint8), baseline=np.array([0.25, -0.5], np.float32),
                   colour=np.array([-1, -1], np.int8))
    assert learner_positions([r], 5)[3].tolist() == [0.75, 1.5]    # white won: z = +1


def test_pool_starts_with_sl_and_is_sampled_uniformly():
    pool = OpponentPool()
    rng = np.random.default_rng(0)
    assert {pool.sample(rng) for _ in range(20)} == {"sl"}
    joined = [pool.after(i, 3) for i in range(1, 11)]
    assert [j for j in joined if j] == ["iter-00003", "iter-00006", "iter-00009"]
    assert pool.names == ["sl", "iter-00003", "iter-00006", "iter-00009"]
    draws = [pool.sample(rng) for _ in range(4000)]
    freq = {name: draws.count(name) / len(draws) for name in pool.names}
    assert all(0.2 < f < 0.3 for f in freq.values()), freq
    assert OpponentPool().after(5, 0) is None          # K = 0: the pool stays the SL network


def test_prioritized_pool_draws_the_opponents_the_learner_still_loses_to():
    pool = OpponentPool(["sl", "iter-00005", "iter-00010"])
    rng = np.random.default_rng(0)
    for _ in range(20):
        pool.record("iter-00005", 1.0)       # beaten in every game
        pool.record("iter-00010", 0.75)
    assert pool.winrate("sl") == 0.5 and pool.winrate("iter-00005") > 0.99
    draws = [pool.sample(rng, 2.0) for _ in range(4000)]
    freq = {name: draws.count(name) / len(draws) for name in pool.names}
    # weights (1 - x)^2: 0.25 (sl, not played yet), ~0 and 0.0625
    assert freq["sl"] > 0.75 and freq["iter-00005"] < 0.01 and 0.12 < freq["iter-00010"] < 0.28
    uniform = [pool.sample(rng) for _ in range(3000)]
    assert all(0.28 < uniform.count(n) / 3000 < 0.39 for n in pool.names)
    restored = OpponentPool(pool.names, json.loads(json.dumps(pool.winrates)))
    assert restored.winrate("iter-00010") == pool.winrate("iter-00010")
    # a newcomer starts at the mean of the estimates so far, not at 0.5: it does not take the
    # draws from the network the learner still loses to
    pool.record("sl", 0.6)
    mean = np.mean([pool.winrate(n) for n in pool.names])
    assert pool.after(15, 5) == "iter-00015" and pool.winrate("iter-00015") == pytest.approx(mean)
    draws = [pool.sample(rng, 2.0) for _ in range(4000)]
    assert draws.count("sl") > 2 * draws.count("iter-00015")
    assert OpponentPool().after(5, 5) == "iter-00005"      # nothing played yet: the prior


def test_initial_network_from_onnx_equals_the_checkpoint(tiny):
    a, b = load_initial(tiny[0]), load_initial(tiny[1])
    x = torch.from_numpy(extract(Game(7), "alphago48")[None])
    with torch.no_grad():
        assert torch.allclose(a(x), b(x), atol=1e-6)


def rl_args(out, init, *extra):
    return ["rl", "--out", out, "--init", init, "--size", 5, "--games", 4, "--eval-every", 2,
            "--eval-games", 2, "--pool-every", 1, "--games-per-job", 2, "--workers", 0, *extra]


@pytest.mark.slow
def test_rl_cli_runs_exports_and_resumes(engine_train, tiny, tmp_path):
    out = tmp_path / "rl"
    engine_train(*rl_args(out, tiny[0], "--iterations", "2"))
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [(r["iteration"], r["updates"]) for r in rows] == [("1", "0"), ("2", "1"), ("2", "2")]
    assert rows[0]["opponent"] == "sl" and rows[0]["winrate_sl"] != "" and rows[1]["winrate_sl"] == ""
    assert rows[2]["winrate_sl"] != "" and rows[2]["winrate_pool"] == ""    # the final weights
    assert all(0 <= float(r["winrate_pool"]) <= 1 for r in rows[:2])
    assert (out / "curve.png").exists() and read_manifest(out / "games")["games"] == 8
    engine_train(*rl_args(out, tiny[0], "--iterations", "2", "--resume"))
    assert len(list(csv.DictReader((out / "curve.csv").open()))) == 3
    ev = OnnxEvaluator(out / "policy.onnx", kind="policy")
    assert ev.meta.kind == "policy" and "RL self-play" in ev.meta.training_data
    engine_train(*rl_args(out, tiny[0], "--iterations", "3", "--resume"))
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [r["updates"] for r in rows] == ["0", "1", "2", "2", "3"] and rows[3]["winrate_sl"] != ""
    assert all(r["winrate_sl_greedy"] == "" for r in rows)      # no greedy checks asked for
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    assert json.loads(ckpt["pool"]) == ["sl", "iter-00001", "iter-00002", "iter-00003"]
    # the learner's running win rate against each opponent it played, kept for --pfsp
    assert json.loads(ckpt["pool_winrates"]) and set(json.loads(ckpt["pool_winrates"])) <= \
        set(json.loads(ckpt["pool"]))
    assert int(ckpt["iteration"]) == 3 and read_manifest(out / "games")["games"] == 12
    # the run's policy bundled as rl-policy.onnx, with its config and checks against SL
    bundled = tmp_path / "bundled"
    engine_train("bundle", "--rl-policy", out, "--out-dir", bundled)
    entry = json.loads((bundled / "MODELS.json").read_text())["rl-policy"]
    assert entry["file"] == "rl-policy.onnx" and entry["run"]["updates"] == 3
    assert entry["run"]["config"]["size"] == 5
    assert [c["updates"] for c in entry["run"]["against_sl"]] == [0, 2, 2, 3]
    verify(bundled / "rl-policy.onnx")
    assert (bundled / "rl-policy.onnx").read_bytes() == (out / "policy.onnx").read_bytes()


def test_update_average_moves_each_weight_a_fraction_towards_the_network():
    torch.manual_seed(1)
    average, net = (nets.build("policy", "cpu", layers=3, filters=4) for _ in range(2))
    before = {k: v.clone() for k, v in average.state_dict().items()}
    update_average(average, net, 0.75)
    after, target = average.state_dict(), net.state_dict()
    for k, v in before.items():
        assert torch.allclose(after[k], 0.75 * v + 0.25 * target[k])
        assert torch.equal(v, target[k]) or not torch.equal(after[k], target[k])


@pytest.mark.slow
def test_rl_ema_plays_its_checks_with_the_average_against_the_reference(engine_train, tiny,
                                                                        tmp_path):
    """`--ema`: the checks, the pool and policy.onnx hold the weights' moving average, which the
    checkpoint keeps for `--resume`; `--reference`: the pool's first member and the checks'
    opponent is that network, not the starting one."""
    torch.manual_seed(7)
    reference = tmp_path / "reference.onnx"
    export_onnx(nets.build("policy", "cpu", layers=3, filters=8), "policy", reference,
                {"training_data": "random weights"})
    out = tmp_path / "rl"
    engine_train(*rl_args(out, tiny[0], "--iterations", "2", "--ema", "0.5", "--reference",
                          reference))

    def weights(path):
        return {k: v.float() for k, v in load_initial(path).state_dict().items()}

    def same(a, b):
        return all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)

    assert same(weights(out / "pool" / "sl.onnx"), weights(reference))
    assert not same(weights(out / "pool" / "sl.onnx"), weights(tiny[1]))
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    average = {k: v.float() for k, v in ckpt["average"].items()}
    last = {k: v.float() for k, v in ckpt["state_dict"].items()}
    assert same(weights(out / "policy.onnx"), average) and not same(average, last)
    assert same(weights(out / "pool" / "iter-00002.onnx"), average)
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert rows[-1]["winrate_sl"] != ""
    engine_train(*rl_args(out, tiny[0], "--iterations", "3", "--ema", "0.5", "--resume"))
    resumed = torch.load(out / "checkpoint.pt", weights_only=True)
    # one more update from the saved average, not from a fresh copy of the weights
    new_last = {k: v.float() for k, v in resumed["state_dict"].items()}
    assert all(torch.allclose(resumed["average"][k].float(), 0.5 * average[k] + 0.5 * new_last[k],
                              atol=1e-6) for k in average)


def test_rl_greedy_checks_play_the_most_probable_moves(engine_train, tiny, tmp_path):
    """`--eval-greedy-games` adds games against SL in which both sides play greedy after the
    sampled opening; the curve and the bundle carry their win rate beside the sampled one."""
    out = tmp_path / "rl"
    engine_train(*rl_args(out, tiny[0], "--iterations", "1", "--eval-greedy-games", "6",
                          "--eval-sampled-moves", "2"))
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [(r["updates"], r["greedy_games"], r["sl_games"]) for r in rows] == [
        ("0", "6", "2"), ("1", "6", "2")]
    assert all(0 <= float(r["winrate_sl_greedy"]) <= 1 for r in rows)
    bundled = tmp_path / "bundled"
    engine_train("bundle", "--rl-policy", out, "--out-dir", bundled)
    run = json.loads((bundled / "MODELS.json").read_text())["rl-policy"]["run"]
    assert [(c["updates"], c["games"]) for c in run["against_sl_greedy"]] == [(0, 6), (1, 6)]
    assert run["config"]["eval_sampled_moves"] == 2


def test_rl_fork_trains_on_one_position_per_game(engine_train, tiny, tmp_path):
    """`engine-train rl --fork`: the training games fork at one learner move each, so an
    iteration trains on at most one position per game; the run trains, checks and exports."""
    out = tmp_path / "rl"
    engine_train(*rl_args(out, tiny[0], "--iterations", "2", "--fork", "--games", "8",
                          "--eval-greedy-games", "2"))
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert all(0 < int(r["positions"]) <= 8 for r in rows[:2])
    assert json.loads((out / "rl_config.json").read_text())["fork"] is True
    assert (out / "policy.onnx").exists()


def test_rl_greedy_checks_repeat_without_a_sampled_opening(tiny, tmp_path):
    """With no sampled opening moves a greedy check is deterministic: before the first update both
    sides are the SL network, so all its games are one game, while the sampled check's differ."""
    cfg = RLConfig(size=5, games=2, eval_games=8, eval_greedy_games=8, eval_sampled_moves=0)
    pool = WorkerPool(0)
    try:
        run = RLRun(cfg, tmp_path / "rl", tiny[0], None, pool, False, log=lambda *_: None)
        run.pool.publish(CURRENT, (tmp_path / "rl" / "pool" / "sl.onnx").read_bytes())
        with tqdm(disable=True) as bar:
            played = run.play(run.check_games(), 1, bar)
    finally:
        pool.close()
    assert len(played["greedy"]) == 8 and len(played["eval"]) == 8
    assert len({r.moves.tobytes() for r in played["greedy"]}) == 1
    assert len({r.moves.tobytes() for r in played["eval"]}) > 2


def test_rl_kl_anchor_is_the_sl_reference_when_the_run_continues_an_rl_policy(tiny, tmp_path):
    """`--kl-weight` with `--reference`: the anchor is the SL network the checks play, not the
    RL policy the run starts from, and a resumed run anchors to the same network."""
    torch.manual_seed(1)
    other = nets.build("policy", "cpu", layers=3, filters=8)
    nets.save_checkpoint(other, tmp_path / "rl-start.pt")
    planes = torch.from_numpy(extract(Game(5), "alphago48")[None].astype(np.float32))

    def logits(net):
        with torch.no_grad():
            return net.float()(planes.contiguous())
    cfg = RLConfig(size=5, games=2, kl_weight=0.1, channels_last=False)
    pool = WorkerPool(0)
    try:
        for resume in (False, True):
            run = RLRun(cfg, tmp_path / "rl", tmp_path / "rl-start.pt", None, pool, resume,
                        log=lambda *_: None, reference=tiny[0])
            if not resume:
                run.save()
            assert torch.allclose(logits(run.anchor), logits(load_initial(tiny[0])), atol=1e-4)
            assert not torch.allclose(logits(run.anchor), logits(other), atol=1e-2)
    finally:
        pool.close()


def test_rl_greedy_opponent_trains_against_the_most_probable_moves(tiny, tmp_path):
    """`--greedy-opponent`: in the training games the SL opponent plays its most probable move
    after the opening (none here) while the learner samples, and the learner's moves are the
    positions it trains on."""
    cfg = RLConfig(size=5, games=8, eval_sampled_moves=0, greedy_opponent=True)
    pool = WorkerPool(0)
    try:
        run = RLRun(cfg, tmp_path / "rl", tiny[0], None, pool, False, log=lambda *_: None)
        run.pool.publish(CURRENT, (tmp_path / "rl" / "pool" / "sl.onnx").read_bytes())
        with tqdm(disable=True) as bar:
            played = run.play({"train": [(CURRENT, SL), (SL, CURRENT)] * 4}, 1, bar)["train"]
    finally:
        pool.close()
    sl = worker_with(tmp_path / "rl" / "pool" / "sl.onnx", SL).nets[SL]
    learner_sampled = 0
    for r in played:
        g = Game(5, selfplay_rules(KOMI))
        for pos in r.moves:
            greedy = most_probable(sl, g)
            if (r.black if g.to_play == BLACK else r.white) == SL:
                assert pos == greedy
            else:
                learner_sampled += pos != greedy
            g.play(g.to_play, PASS if pos == 25 else pos_to_loc(int(pos), 5))
        assert len(r.move) > 0
    assert learner_sampled > 0


@pytest.mark.slow
def test_rl_with_adam_keeps_its_moments_across_a_resume(engine_train, tiny, tmp_path):
    """`--optimizer adam`: the checkpoint carries Adam's step count and moments, a resume goes on
    from them; a resume that changes the optimizer says so and starts its state anew."""
    out = tmp_path / "rl"

    def run(*extra):
        p = engine_train(*rl_args(out, tiny[0], "--lr", "1e-4", *extra))
        return p.stdout + p.stderr

    def adam_steps():
        state = torch.load(out / "checkpoint.pt", weights_only=True)["optimizer"]["state"]
        return {float(s["step"]) for s in state.values()}

    run("--iterations", "2", "--optimizer", "adam")
    assert adam_steps() == {2.0}
    first = load_initial(tiny[0]).state_dict()
    moved = nets.load_checkpoint(out / "checkpoint.pt")[0].state_dict()
    assert any(not torch.equal(first[k], moved[k]) for k in first)
    run("--iterations", "3", "--optimizer", "adam", "--resume")
    assert adam_steps() == {3.0}
    log = run("--iterations", "4", "--optimizer", "sgd", "--momentum", "0.9", "--resume")
    assert "adam -> sgd" in log
    state = torch.load(out / "checkpoint.pt", weights_only=True)["optimizer"]
    assert state["param_groups"][0]["momentum"] == 0.9 and "step" not in next(iter(state["state"].values()))
