"""Several Zero searches in lockstep (engine.search.lockstep): each search's tree is the one it
grows alone under `run`, while a round evaluates all the leaves of a network in one call."""
import pytest

torch = pytest.importorskip("torch")

from goengine.engine.board import BLACK, WHITE  # noqa: E402
from goengine.engine.coords import parse_gtp  # noqa: E402
from goengine.engine.evaluator import UniformEvaluator  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.search import tree as T  # noqa: E402
from goengine.engine.search.lockstep import Lockstep  # noqa: E402
from goengine.engine.search.alphago import AlphaGoSearch  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.engine.search.zero import ZeroSearch  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402

from zero_nets import export_tiny_zero  # noqa: E402


class CountingEvaluator(OnnxEvaluator):
    """A real onnxruntime network on no symmetry (its answer depends on the position alone) that
    counts its calls and the positions in them."""

    def __init__(self, path):
        super().__init__(path, symmetry="none", cache_size=0)
        self.calls = []

    def evaluate(self, planes, legal_mask=None, keys=None):
        self.calls.append(len(planes))
        return super().evaluate(planes, legal_mask, keys)


@pytest.fixture(scope="module")
def net_files(tmp_path_factory):
    """Two different tiny 5x5 Zero nets with a score head."""
    d = tmp_path_factory.mktemp("lockstep")
    return [export_tiny_zero(d, f"net-{seed}.onnx", seed, score=True)[1] for seed in (0, 1)]


def positions():
    """Three 5x5 positions, each with its colour to move."""
    out = []
    for moves in ([], ["C3"], ["C3", "B2", "D4"]):
        g = Game(5)
        for i, v in enumerate(moves):
            g.play(BLACK if i % 2 == 0 else WHITE, parse_gtp(v, 5))
        out.append((g, g.to_play))
    return out


def tree_of(search):
    t = search.tree
    return [(int(t.ti[T.I_MOVE, c]), int(t.ti[T.I_N, c])) for c in t.children(t.root)]


def make(net, seed):
    return ZeroSearch(NetSearchConfig(mode="zero", score_utility=0.3), net=net, seed=seed)


def test_lockstep_searches_grow_the_trees_they_grow_alone_in_fewer_calls(net_files):
    a, b = CountingEvaluator(net_files[0]), CountingEvaluator(net_files[1])
    nets_of = [a, a, b]                     # two searches share a network, one has its own
    alone = []
    for i, (g, color) in enumerate(positions()):
        s = make(nets_of[i], seed=i)
        res = s.search(g, color, visits=120)
        alone.append((tree_of(s), res.winrate, res.root_visits, s.evaluations))
    calls_alone = len(a.calls) + len(b.calls)
    a.calls.clear(), b.calls.clear()

    lock = Lockstep()
    searches = {}
    for i, (g, color) in enumerate(positions()):
        searches[i] = make(nets_of[i], seed=i)
        lock.start(i, searches[i], g, color, visits=120)
    done = {}
    while lock.active:
        done.update(lock.round())
    for i, (tree, winrate, visits, evaluations) in enumerate(alone):
        assert tree_of(searches[i]) == tree and done[i].root_visits == visits == 120
        assert done[i].winrate == pytest.approx(winrate, abs=1e-6)
        assert searches[i].evaluations == evaluations
        assert (searches[i].tree.ti[T.I_VL, :searches[i].tree.used] == 0).all()
    # the two searches on network a share its calls: fewer, larger ones
    assert len(a.calls) + len(b.calls) < calls_alone and max(a.calls) > 8


def test_a_search_already_at_its_visits_is_done_at_once():
    g = Game(5)
    s = ZeroSearch(NetSearchConfig(mode="zero"), net=UniformEvaluator(), seed=1)
    s.search(g, BLACK, visits=40)
    lock = Lockstep()
    lock.start("k", s, g, BLACK, visits=30)        # the kept tree holds 40 already
    (key, res), = lock.round()
    assert key == "k" and res.root_visits == 40 and not lock.active


def test_only_zero_searches_run_in_lockstep():
    s = AlphaGoSearch(NetSearchConfig(mode="alphago"), policy=UniformEvaluator(), seed=1)
    with pytest.raises(ValueError, match="Zero"):
        Lockstep().start(0, s, Game(5), BLACK, visits=10)
