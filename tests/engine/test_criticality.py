"""Coulom's criticality (engine.search.criticality): the covariance of a point's owner with the
result over a search's leaves, zero on settled points; its mix into the root's priors; and the
searches that feed it, rollouts in the AlphaGo search on a group whose life is one move, the
bundled 9x9 network's ownership and value heads in the Zero search."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from goengine.engine import board as B
from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import PASS, all_locs, loc
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search.alphago import AlphaGoSearch
from goengine.engine.search.criticality import LeafOwnership, mixed_priors
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.zero import ZeroSearch
from goengine.gtp.main import cli
from goengine.models.names import BUNDLED_DIR
from goengine.models.onnx_evaluator import OnnxEvaluator
from positions import load_board

# White's corner group has the straight three A7-C7 for its eyes: White at B7 lives, Black at B7
# kills. Black's one group is alive with seven single eyes. At komi 34.5 the corner decides the
# game: alive, White has 8 points to Black's 41 and wins by 1.5; dead, Black has the board.
CORNER = """
. . . O X . X
O O O O X X X
X X X X X . X
X . X X X X X
X X X . X X .
X X X X X X X
. X X X . X X
"""
KOMI = 34.5
N = 7


def corner_points() -> set[int]:
    """The Locs of White's group and its eye space."""
    return {loc(0, c, N) for c in range(4)} | {loc(1, c, N) for c in range(4)}


def rows(colours: list[int], owners: list[list[float]], values: list[float], size: int):
    """add_predictions' arguments: leaves of `colours` to move, their ownership rows (float[N*N])
    and values, all given from Black's view and turned to the side to move's."""
    sign = np.array([1.0 if c == BLACK else -1.0 for c in colours])
    metas = np.zeros((len(colours), B.NM), dtype=np.int64)
    metas[:, B.M_TOPLAY] = colours
    own = np.array(owners, dtype=np.float64) * sign[:, None]
    return own.astype(np.float32), (np.array(values) * sign).astype(np.float32), metas, size


def test_criticality_is_the_owners_covariance_with_the_result():
    # 2x2 board, Pos order: point 0 goes with the result, point 1 is always Black's, point 2
    # goes against the result, point 3 is Black's in half the leaves regardless of the result
    owners = [[1, 1, -1, 1], [-1, 1, 1, 1], [1, 1, -1, -1], [-1, 1, 1, -1]]
    values = [1.0, -1.0, 1.0, -1.0]
    stats = LeafOwnership((2 + 2) ** 2)
    stats.add_predictions(*rows([BLACK, WHITE, WHITE, BLACK], owners, values, 2))
    assert stats.n == 4
    crit = stats.criticality()
    locs = all_locs(2)
    assert crit[locs] == pytest.approx([1.0, 0.0, 0.0, 0.0])
    # Coulom's form, P(owner = winner) - (mu_B nu_B + mu_W nu_W), is half the covariance
    # where every point is owned: point 0, always owned by the winner, 1 - (0.5*0.5 + 0.5*0.5)
    assert crit[locs[0]] / 2 == pytest.approx(1.0 - 0.5)
    # the mean ownership is the rollouts' and the ownership heads' report
    assert stats.mean_ownership(2).ravel().tolist() == pytest.approx([0.0, 1.0, 0.0, 0.0])


def test_no_leaf_no_criticality():
    stats = LeafOwnership(16)
    assert stats.mean_ownership(2) is None
    assert not stats.criticality().any()


def test_mixed_priors_move_weight_to_the_critical_moves_only():
    priors = np.array([0.7, 0.2, 0.1])
    moves = np.array([5, 6, PASS])
    crit = np.zeros(16)
    crit[6] = 0.4
    crit[9] = 5.0                   # a point no root move plays: no weight to it
    mixed = mixed_priors(priors, moves, crit, 0.5)
    assert mixed.tolist() == pytest.approx([0.35, 0.6, 0.05])
    assert mixed.sum() == pytest.approx(1.0)
    assert mixed_priors(priors, moves, np.zeros(16), 0.5) is priors     # nothing to mix
    assert mixed_priors(priors, moves, crit, 0.0) is priors


def corner_search(weight: float) -> tuple:
    """(result, search) of a rollouts-only AlphaGo search (heuristic priors and playouts) of
    CORNER, Black to move."""
    g = load_board(CORNER, Rules(komi=KOMI), to_play=BLACK)
    search = AlphaGoSearch(NetSearchConfig(mode="alphago", criticality=weight), seed=3)
    return search.search(g, BLACK, playouts=800), search


def test_the_rollouts_find_the_group_whose_life_decides_the_game():
    _, search = corner_search(0.5)
    crit = search._leaf_ownership().criticality()
    corner = sorted(corner_points())
    black = [lc for lc in all_locs(N) if lc not in corner_points()]
    assert crit[corner].min() > 0.2                         # the corner's owner is the winner's
    assert crit[black] == pytest.approx(0.0, abs=1e-9)      # Black's group is Black's always


def test_criticality_moves_the_roots_priors_to_the_vital_points():
    plain, _ = corner_search(0.0)
    mixed, _ = corner_search(0.5)
    eye_space = {loc(0, c, N) for c in range(3)}

    def prior_on(res, moves):
        return sum(s.prior for s in res.moves if s.move in moves)
    # the heuristic priors spread over Black's eyes, the eye space and pass; the mix gives the
    # eye space half the root's prior on top (the other moves' criticality is 0)
    assert prior_on(mixed, eye_space) == pytest.approx(0.5 + 0.5 * prior_on(plain, eye_space))
    assert mixed.moves[0].move == loc(0, 1, N)               # and Black kills at B7


@pytest.fixture(scope="module")
def zero9():
    return OnnxEvaluator(BUNDLED_DIR / "zero-9x9.int8.onnx", kind="zero", symmetry="none",
                         cache_size=0, seed=1)


def opening(moves: list[tuple[int, int]]) -> Game:
    g = Game(9)
    for r, c in moves:
        g.play(g.to_play, loc(r, c, 9))
    return g


def test_the_zero_search_reads_criticality_from_its_heads(zero9):
    g = opening([(4, 4), (6, 2), (4, 6), (3, 3), (6, 5), (2, 2), (2, 6)])
    off = ZeroSearch(NetSearchConfig(mode="zero"), net=zero9, seed=1)
    on = ZeroSearch(NetSearchConfig(mode="zero", criticality=0.3), net=zero9, seed=1)
    res_off, res_on = off.search(g, g.to_play, playouts=400), on.search(g, g.to_play,
                                                                        playouts=400)
    assert off._leaf_ownership() is None                    # off: nothing summed
    stats = on._leaf_ownership()
    assert stats.n == on.evaluations - 1        # every leaf, not the root's priors
    crit = stats.criticality()
    assert crit.max() > 0 and crit[[lc for lc in range(len(crit))
                                    if lc not in set(all_locs(9))]].max() == 0   # off-board
    net_priors = {s.move: s.prior for s in res_off.moves}
    assert sum(net_priors.values()) == pytest.approx(1.0, abs=1e-3)
    moved = {s.move: s.prior for s in res_on.moves}
    assert sum(moved.values()) == pytest.approx(1.0, abs=1e-3)
    # the mix lowers the top prior by up to the weight, and raises some other move's
    top = max(net_priors, key=net_priors.get)
    assert 0.7 * net_priors[top] - 1e-6 <= moved[top] < net_priors[top]
    assert any(moved.get(mv, 0.0) > p for mv, p in net_priors.items())


def test_a_weight_outside_0_1_is_a_usage_error():
    out = CliRunner().invoke(cli, ["--criticality", "1.5"])
    assert out.exit_code == 2 and "--criticality" in out.output
    with pytest.raises(ValueError, match="criticality"):
        NetSearchConfig(mode="zero", criticality=-0.1)
