"""A search's batch in two numba calls (engine.search.leaves): the leaves `select` hands the
network are the positions the rules core reaches by playing their paths, with the planes
`features.extract` gives them, and `finish` takes back every virtual loss."""
import numpy as np
import pytest

from goengine.engine import board as B
from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import PASS, parse_gtp
from goengine.engine.evaluator import Evaluation, UniformEvaluator
from goengine.engine.features import extract, extract_leaves
from goengine.engine.game import Game
from goengine.engine.search import tree as T
from goengine.engine.search.leaves import candidate_moves
from goengine.engine.search.network import NetSearchConfig, position_keys
from goengine.engine.search.zero import ZeroSearch


def opening(moves) -> Game:
    g = Game(9)
    for i, v in enumerate(moves):
        g.play(BLACK if i % 2 == 0 else WHITE, PASS if v == "pass" else parse_gtp(v, 9))
    return g


def replay(game: Game, search: ZeroSearch, path) -> Game:
    """The leaf at the end of `path`, reached by the rules core (Game.play) from `game`."""
    g = game.copy()
    for node in path[1:]:
        move = int(search.tree.ti[T.I_MOVE, node])
        g.play(int(search.tree.ti[T.I_COLOR, node]), PASS if move < 0 else move)
    return g


class OneLine(UniformEvaluator):
    """Priors falling steeply with the point's index: the search follows one line deep (the
    leaves' history then comes from the path alone)."""

    def evaluate(self, planes, legal_mask=None, keys=None):
        batch, n = planes.shape[0], planes.shape[-1]
        row = np.exp(-0.7 * np.arange(n * n + 1, dtype=np.float32))
        return Evaluation(priors=np.tile(row / row.sum(), (batch, 1)),
                          value_stm=np.zeros(batch, dtype=np.float32))


@pytest.mark.parametrize("moves, net, deepest", [
    ([], UniformEvaluator(), 3),
    (["E5", "C3", "pass", "G7", "D4", "F6", "C7", "G3", "E3", "pass"], UniformEvaluator(), 3),
    (["E5", "C3", "pass", "G7", "D4", "F6"], OneLine(), 9)])
def test_a_batchs_leaves_are_the_rules_positions_of_their_paths(moves, net, deepest):
    game = opening(moves)
    s = ZeroSearch(NetSearchConfig(mode="zero", batch_size=8), net=net, seed=3)
    s.search(game, game.to_play, visits=300)   # a tree several moves deep
    batch = s.select(16)
    assert batch is not None and batch.size > 1
    assert batch.lengths.max() > deepest      # paths of fewer and more moves than the history
    for j in range(batch.size):
        path = batch.paths[j, :batch.lengths[j]]
        leaf = replay(game, s, path)
        assert np.array_equal(batch.sts[j][B.F_COLOR], leaf.st[B.F_COLOR])
        assert batch.metas[j][B.M_HASH] == leaf.meta[B.M_HASH]
        assert np.array_equal(batch.planes[j], extract(leaf, "zero17"))
    leaves = batch.paths[np.arange(batch.size), batch.lengths - 1]
    assert len(set(leaves.tolist())) == batch.size                   # no leaf twice
    vl = s.tree.ti[T.I_VL, :s.tree.used]
    assert vl.sum() == s.config.n_vl * batch.lengths.sum()
    s.finish(batch, s._net_for(batch))
    assert (s.tree.ti[T.I_VL, :s.tree.used] == 0).all()
    assert (s.tree.ti[T.I_FIRST, leaves] >= 0).all()                 # every leaf expanded


def test_the_leaves_planes_need_a_history_only_feature_set():
    with pytest.raises(ValueError, match="history-only"):
        extract_leaves("alphago48", np.zeros((1, 8, 121), np.int32), np.ones(1, np.int64),
                       np.zeros((1, B.NM), np.int64), 9)


def test_candidate_moves_are_the_legal_non_eye_points():
    """The expansion's move list (decided in place for a point with an empty neighbour) is the
    rules core's: every legal point (simple ko) that is not a true own eye, then pass, on
    crowded boards of random play with captures, kos and eyes."""
    rng = np.random.default_rng(7)
    moves = np.empty(9 * 9 + 2, dtype=np.int32)
    for _ in range(40):
        g = Game(9)
        for _ in range(int(rng.integers(20, 120))):
            c = g.to_play
            legal = [p for p in range(g.st.shape[1])
                     if B.legality(g.st, g.meta, p, c) == B.LEGAL and not B.is_eye(g.st, g.meta, p, c)]
            want = sorted(legal)
            k = candidate_moves(g.st, g.meta, moves)
            assert sorted(moves[:k - 1].tolist()) == want and moves[k - 1] == -1
            if not legal:
                break
            g.play(c, int(rng.choice(legal)))


def test_position_keys_tell_apart_what_the_planes_read():
    g = opening(["E5", "C3", "G7"])
    metas = np.stack([g.meta] * 6)
    for row, field in enumerate((B.M_TOPLAY, B.M_KO, B.M_LAST, B.M_LAST2, B.M_HASH), start=1):
        metas[row, field] += 1
    keys = position_keys(metas, 9)
    assert len(set(keys.tolist())) == 6                      # each field changes the key
    assert position_keys(metas[:1], 9)[0] == keys[0]          # the same position, the same key
    assert position_keys(metas[:1], 13)[0] != keys[0]         # the board size is part of it
