"""Value games on the self-play workers (training.value.games, training.value.data): SL policy to
move U-1, a random move U, the RL policy to the end; the outcome, score and ownership targets
checked against the game replayed by the rules core. 5x5 and 7x7, tiny nets through onnxruntime."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray")

from goengine.engine.colors import BLACK, WHITE  # noqa: E402
from goengine.engine.coords import PASS, pos_to_loc  # noqa: E402
from goengine.engine.features import extract  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.symmetry import apply as apply_symmetry  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.data.dataset import PackedPositions  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402
from goengine.training.workers.selfplay import SelfPlayWorker, selfplay_rules  # noqa: E402
from goengine.training.value.data import ValueDataConfig, generate  # noqa: E402
from goengine.training.value.games import RL, SL, ValueGamesJob  # noqa: E402
from goengine.training.workers.pool import WorkerPool  # noqa: E402


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    """Two different 3-layer policy nets with random weights, as ONNX bytes: SL and RL."""
    d = tmp_path_factory.mktemp("vgames")
    out = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        net = nets.build("policy", "cpu", layers=3, filters=8)
        export_onnx(net, "policy", d / f"p{seed}.onnx", {"training_data": "random weights"})
        out.append((d / f"p{seed}.onnx").read_bytes())
    return out


def worker(policies) -> SelfPlayWorker:
    w = SelfPlayWorker()
    w.load(SL, policies[0])
    w.load(RL, policies[1])
    return w


def test_targets_match_the_game_replayed_by_the_rules_core(policies):
    job = ValueGamesJob(games=6, size=7, seed=3, max_u=20, positions_per_game=3)
    games = worker(policies).play(job)
    assert len(games) == 6
    for g in games:
        n = g.size
        assert 1 <= g.u <= 20 and g.two_passes            # own eyes are never filled: games end
        replayed = Game(n, selfplay_rules(g.komi))
        snapshots = {}
        for t, p in enumerate(g.moves):
            snapshots[t] = (replayed.to_play, extract(replayed, "alphago49"))
            replayed.play(replayed.to_play, PASS if p == n * n else pos_to_loc(int(p), n))
        snapshots[len(g.moves)] = (replayed.to_play, extract(replayed, "alphago49"))
        assert replayed.is_over() and replayed.area_score() == g.score
        owner = replayed.ownership().reshape(-1)
        own_black = (owner == BLACK).astype(int) - (owner == WHITE).astype(int)
        assert own_black.sum() - g.komi == g.score                # Tromp-Taylor: area minus komi
        times = [p.move_number for p in g.positions]
        assert len(times) == 3 == len(set(times)) and min(g.u, len(g.moves)) in times
        assert min(times) == min(g.u, len(g.moves))         # none before the RL policy plays
        for p in g.positions:
            to_play, planes = snapshots[p.move_number]
            colour = 1 if to_play == BLACK else -1
            assert p.colour == colour
            assert p.score == colour * g.score and p.z == np.sign(colour * g.score)
            assert (p.own == colour * own_black).all()
            assert p.own.sum() - colour * g.komi == p.score       # the side to move's count
            got = np.unpackbits(p.x, count=planes.size).reshape(planes.shape)
            assert (got == planes).all()


def test_move_u_is_random_and_the_rl_policy_plays_after_it(policies):
    """With U past the end of every game the RL policy never moves: the games are the SL
    policy's own, so naming the SL net as RL too gives the same games move for move."""
    late = ValueGamesJob(games=4, size=5, seed=7, max_u=10_000)
    w = worker(policies)
    a = w.play(late)
    w.load(RL, policies[0])
    b = w.play(late)
    assert [list(g.moves) for g in a] == [list(g.moves) for g in b]
    early = ValueGamesJob(games=4, size=5, seed=7, max_u=1)     # U = 1: RL from move 2 on
    w.load(RL, policies[1])
    c = w.play(early)
    w.load(RL, policies[0])
    d = w.play(early)
    assert [list(g.moves) for g in c] != [list(g.moves) for g in d]


def test_shards_carry_ownership_and_score_under_the_same_symmetry(policies, tmp_path):
    pool = WorkerPool(workers=0)
    pool.publish(SL, policies[0])
    pool.publish(RL, policies[1])
    cfg = ValueDataConfig(games=10, size=7, games_per_job=4, positions_per_game=2,
                          heldout_fraction=0.3, seed=1)
    meta = generate(pool, cfg, tmp_path, {"sl_policy": "p0", "rl_policy": "p1"})
    st = meta["stats"]
    assert st["games"]["train"] + st["games"]["heldout"] == 10 == st["played"]["games"]
    assert st["positions"]["train"] == 2 * st["games"]["train"]
    data = PackedPositions(tmp_path, "train", 7, 49)
    assert data.has_aux
    idx = np.arange(len(data))
    planes, _, z, own, score, mask = data.batch(idx, symmetry=0, aux=True)
    assert (mask == 1).all()                                       # every position has targets
    komi_stm = np.where(planes[:, 48, 0, 0] == 1, 1.0, -1.0) * cfg.komi   # plane 48: black to move
    assert np.array_equal(own.sum(1) - komi_stm, score) and np.array_equal(np.sign(score), z)
    for k in (1, 5):
        p_k, _, _, own_k, _, _ = data.batch(idx, symmetry=k, aux=True)
        assert np.array_equal(p_k, apply_symmetry(planes, k))
        assert np.array_equal(own_k.reshape(-1, 7, 7), apply_symmetry(own.reshape(-1, 7, 7), k))


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_two_ray_workers_play_every_game(policies, tmp_path):
    pool = WorkerPool(workers=2)
    try:
        pool.publish(SL, policies[0])
        pool.publish(RL, policies[1])
        meta = generate(pool, ValueDataConfig(games=6, size=5, games_per_job=2, seed=2),
                        tmp_path, {})
    finally:
        pool.close()
    assert meta["stats"]["played"]["games"] == 6 and meta["runs"][-1]["workers"] == 2
