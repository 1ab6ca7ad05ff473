"""engine.evaluator (UniformEvaluator) and models.onnx_evaluator.OnnxEvaluator."""
import numpy as np
import pytest
import torch

from goengine.engine import symmetry
from goengine.engine.evaluator import Evaluation, Evaluator, UniformEvaluator
from goengine.models.by_size import BySizeEvaluator
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.models.softmax import masked_softmax, symmetric_softmax
from goengine.training.nets import networks as nets
from goengine.training.nets.export import export_onnx, run_torch

N = 9


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    torch.manual_seed(0)  # fixed weights: the tests compare answers of these nets
    d = tmp_path_factory.mktemp("evaluator")
    made = {
        "zero": nets.build("zero", "cpu", blocks=2, filters=16, value_channels=4, fc=16),
        "policy": nets.build("policy", "cpu", layers=4, filters=16),
        "value": nets.build("value", "cpu", layers=3, filters=8, fc=16),
        "value9": nets.build("value", "cpu", layers=3, filters=8, fc=16, head="fc", board_size=9),
    }
    out = {}
    for name, net in made.items():
        out[name] = d / f"{name}.onnx"
        export_onnx(net, net.config["kind"], out[name], {})
    out["nets"] = made
    return out


def _planes(c, b=3, n=N, seed=0):
    return np.random.default_rng(seed).integers(0, 2, (b, c, n, n)).astype(np.float32)


def _mask(b, n=N, seed=1):
    m = np.random.default_rng(seed).random((b, n * n + 1)) < 0.7
    m[:, -1] = True
    return m


def _symmetric(planes):
    """Make each position invariant under all 8 symmetries (max over the orbit)."""
    return np.max([symmetry.apply(planes, k) for k in range(8)], axis=0)


def test_every_evaluator_states_what_the_searches_ask(files):
    """The members of the Evaluator protocol are all there, on each implementation: the
    searches read them, never probe for them."""
    members = [*Evaluator.__annotations__, "evaluate", "for_size"]
    zero = OnnxEvaluator(files["zero"])
    value9 = OnnxEvaluator(files["value9"])
    by_size = BySizeEvaluator(OnnxEvaluator(files["value"]), {9: value9})
    for ev in (UniformEvaluator(), zero, by_size):
        assert Evaluator in type(ev).__mro__      # implemented explicitly
        assert [m for m in members if not hasattr(ev, m)] == []
    assert UniformEvaluator().for_size(9).feature_set is None and zero.for_size(9) is zero
    assert (zero.feature_set, zero.cache_size, zero.has_policy, zero.has_value) == (
        "zero17", 200_000, True, True)


def test_uniform_evaluator():
    ev: Evaluator = UniformEvaluator()
    mask = _mask(2)
    out = ev.evaluate(_planes(17, b=2), mask)
    assert isinstance(out, Evaluation) and out.ownership is None
    assert out.priors.dtype == np.float32 and out.priors.shape == (2, N * N + 1)
    np.testing.assert_allclose(out.priors.sum(1), 1, rtol=1e-6)
    assert np.all(out.priors[~mask] == 0)
    np.testing.assert_allclose(out.priors[mask][0], 1 / mask[0].sum(), rtol=1e-6)
    assert out.value_stm.shape == (2,) and np.all(out.value_stm == 0)
    np.testing.assert_allclose(ev.evaluate(_planes(17, b=1), None).priors, 1 / (N * N + 1))


def test_masked_softmax():
    logits = np.array([[0.0, 1.0, 2.0], [5.0, -np.inf, -np.inf], [1.0, 2.0, 3.0]])
    mask = np.array([[True, True, False], [False, True, True], [True, True, True]])
    p = masked_softmax(logits, mask, temperature=1.0)
    np.testing.assert_allclose(p[0], [1 / (1 + np.e), np.e / (1 + np.e), 0])
    np.testing.assert_allclose(p[1], [0, 0.5, 0.5])          # no finite legal logit: uniform
    hot, cold = masked_softmax(logits[2:], None, 0.5), masked_softmax(logits[2:], None, 2.0)
    assert hot[0, 2] > p[2, 2] > cold[0, 2]


def test_symmetric_softmax_is_the_mean_of_the_inverted_softmaxes():
    """Each position's S rows are read back to the original board through the inverse of their
    symmetry, masked, softmaxed and averaged; a net without a pass output gives pass nothing."""
    rng = np.random.default_rng(3)
    n, b, s = 5, 3, 8
    ks = np.tile(np.arange(s), b)
    mask = rng.random((b, n * n + 1)) < 0.7
    for width in (n * n + 1, n * n):
        logits = rng.normal(size=(b * s, width)).astype(np.float32)
        got = symmetric_softmax(logits, symmetry.permutations(n), symmetry.INVERSES[ks],
                                n * n + 1, mask, 0.8, s)
        full = np.full((b * s, n * n + 1), -np.inf)
        full[:, :width] = logits
        want = masked_softmax(symmetry.invert_policy_each(full, ks, n),
                              np.repeat(mask, s, axis=0), 0.8).reshape(b, s, -1).mean(1)
        np.testing.assert_allclose(got, want, atol=1e-6)
        assert got.dtype == np.float32
    assert np.all(got[:, -1] == 0)


def test_zero_evaluator_matches_the_net(files):
    x, mask = _planes(17), _mask(3)
    ev = OnnxEvaluator(files["zero"], symmetry="none")
    out = ev.evaluate(x, mask)
    logits, value = run_torch(files["nets"]["zero"], x)
    np.testing.assert_allclose(out.priors, masked_softmax(logits, mask), atol=1e-5)
    np.testing.assert_allclose(out.value_stm, value, atol=1e-5)
    assert out.priors.dtype == np.float32 and out.value_stm.dtype == np.float32
    np.testing.assert_allclose(out.priors.sum(1), 1, rtol=1e-5)
    assert np.all(out.priors[~mask] == 0) and np.all(np.abs(out.value_stm) <= 1)
    hot = OnnxEvaluator(files["zero"], symmetry="none", temperature=0.5).evaluate(x, mask)
    np.testing.assert_allclose(hot.priors, masked_softmax(logits, mask, 0.5), atol=1e-5)


def test_runs_on_every_size(files):
    ev = OnnxEvaluator(files["zero"], symmetry="average")
    for n in (9, 13, 19):
        out = ev.evaluate(_planes(17, b=2, n=n))
        assert out.priors.shape == (2, n * n + 1)


def test_batching_splits_rows_and_changes_nothing(files):
    x, mask = _planes(17, b=10), _mask(10)
    small = OnnxEvaluator(files["zero"], symmetry="none", max_batch=4)
    big = OnnxEvaluator(files["zero"], symmetry="none", max_batch=64)
    a, b = small.evaluate(x, mask), big.evaluate(x, mask)
    assert small.runs == 3 and big.runs == 1
    np.testing.assert_allclose(a.priors, b.priors, atol=1e-6)
    np.testing.assert_allclose(a.value_stm, b.value_stm, atol=1e-6)
    avg = OnnxEvaluator(files["zero"], symmetry="average", max_batch=64)
    avg.evaluate(x[:2], mask[:2])
    assert avg.runs == 1                                   # 2 positions x 8 symmetries = 16 rows
    avg.evaluate(x, mask)
    assert avg.runs == 3                                   # 80 rows in chunks of 64


def test_average_of_a_symmetric_position_is_symmetric(files):
    x = _symmetric(_planes(17, b=2, seed=5))
    out = OnnxEvaluator(files["zero"], symmetry="average").evaluate(x)
    board = out.priors[:, : N * N].reshape(2, N, N)
    for k in range(8):
        np.testing.assert_allclose(symmetry.apply(board, k), board, atol=1e-6)
    single = OnnxEvaluator(files["zero"], symmetry="none").evaluate(x)
    assert not np.allclose(single.priors, out.priors, atol=1e-6)   # the net itself is not


def test_average_is_equivariant(files):
    x = _planes(17, b=2, seed=3)
    ev = OnnxEvaluator(files["zero"], symmetry="average")
    base = ev.evaluate(x)
    for k in range(8):
        moved = ev.evaluate(np.ascontiguousarray(symmetry.apply(x, k)))
        np.testing.assert_allclose(moved.priors, symmetry.apply_policy(base.priors, k, N),
                                   atol=1e-5)
        np.testing.assert_allclose(moved.value_stm, base.value_stm, atol=1e-5)


def test_a_call_can_take_another_symmetry_and_caches_it_apart(files):
    """evaluate(symmetry=...): one call in another mode answers as an evaluator made in that
    mode, and a cached answer of one mode is not served to the other."""
    x, mask = _planes(17, b=2, seed=9), _mask(2)
    ev = OnnxEvaluator(files["zero"], symmetry="none", cache_size=8)
    avg = OnnxEvaluator(files["zero"], symmetry="average").evaluate(x, mask)
    plain = ev.evaluate(x, mask, keys=["a", "b"])
    got = ev.evaluate(x, mask, keys=["a", "b"], symmetry="average")
    np.testing.assert_allclose(got.priors, avg.priors, atol=1e-6)
    np.testing.assert_allclose(got.value_stm, avg.value_stm, atol=1e-6)
    assert not np.allclose(got.priors, plain.priors, atol=1e-6)
    assert (ev.runs, ev.cache_hits) == (2, 0)
    np.testing.assert_array_equal(ev.evaluate(x, mask, keys=["a", "b"]).priors, plain.priors)
    assert ev.cache_hits == 2
    with pytest.raises(ValueError, match="symmetry"):
        ev.evaluate(x, mask, symmetry="mirror")


def test_random_symmetry_is_one_of_the_eight_and_seeded(files):
    x = _planes(17, b=4, seed=7)
    plain = OnnxEvaluator(files["zero"], symmetry="none")
    per_k = [symmetry.invert_policy(
        plain.evaluate(np.ascontiguousarray(symmetry.apply(x, k))).priors, k, N)
        for k in range(8)]
    a = OnnxEvaluator(files["zero"], symmetry="random", seed=11).evaluate(x)
    b = OnnxEvaluator(files["zero"], symmetry="random", seed=11).evaluate(x)
    np.testing.assert_array_equal(a.priors, b.priors)
    for i in range(4):
        assert any(np.allclose(a.priors[i], p[i], atol=1e-5) for p in per_k)


def test_cache_hits_skip_the_network(files):
    x, mask = _planes(17, b=3), _mask(3)
    ev = OnnxEvaluator(files["zero"], symmetry="random", seed=0, cache_size=4)
    first = ev.evaluate(x, mask, keys=["a", "b", "c"])
    assert (ev.runs, ev.cache_hits, ev.cache_misses) == (1, 0, 3)
    again = ev.evaluate(x, mask, keys=["a", "b", "c"])
    assert (ev.runs, ev.cache_hits) == (1, 3)
    np.testing.assert_array_equal(first.priors, again.priors)   # random symmetry, cached answer
    np.testing.assert_array_equal(first.value_stm, again.value_stm)
    mixed = ev.evaluate(x[[2, 0]], mask[[2, 0]], keys=["c", "new"])
    assert ev.runs == 2 and ev.cache_hits == 4
    np.testing.assert_array_equal(mixed.priors[0], first.priors[2])
    ev.evaluate(x, mask, keys=["d", "e", "f"])                  # evicts a, b, c (LRU, size 4)
    ev.evaluate(x[:1], mask[:1], keys=["a"])
    assert ev.runs == 4
    ev.symmetry = "average"                                      # the mode is part of the key
    ev.evaluate(x[:1], mask[:1], keys=["a"])
    assert ev.runs == 5
    ev.evaluate(x, mask)                                         # no keys: no caching
    ev.evaluate(x, mask)
    assert ev.runs == 7


def test_equal_keys_in_one_batch_share_one_row(files):
    """A search may send one leaf twice in a batch (AlphaGo: a rollout per visit); the network
    runs once for it and both rows get that answer."""
    x, mask = _planes(17, b=3), _mask(3)
    x[2], mask[2] = x[0], mask[0]
    ev = OnnxEvaluator(files["zero"], symmetry="random", seed=0, cache_size=8)
    out = ev.evaluate(x, mask, keys=["a", "b", "a"])
    assert (ev.runs, ev.cache_misses, len(ev._cache)) == (1, 2, 2)
    np.testing.assert_array_equal(out.priors[0], out.priors[2])
    assert out.value_stm[0] == out.value_stm[2]


def test_policy_model_has_no_pass_and_no_value(files):
    ev = OnnxEvaluator(files["policy"], symmetry="none")
    assert ev.has_policy and not ev.has_value
    mask = _mask(2)
    out = ev.evaluate(_planes(48, b=2), mask)
    assert np.all(out.priors[:, -1] == 0) and np.all(out.value_stm == 0)
    np.testing.assert_allclose(out.priors.sum(1), 1, rtol=1e-5)
    only_pass = np.zeros((1, N * N + 1), bool)
    only_pass[0, -1] = True
    out = ev.evaluate(_planes(48, b=1), only_pass)
    assert out.priors[0, -1] == 1


def test_value_models(files):
    x = _planes(49, b=2)
    ev = OnnxEvaluator(files["value"], symmetry="none")
    assert ev.has_value and not ev.has_policy
    mask = _mask(2)
    out = ev.evaluate(x, mask)
    np.testing.assert_allclose(out.value_stm, run_torch(files["nets"]["value"], x)[0], atol=1e-5)
    np.testing.assert_allclose(out.priors[mask][0], 1 / mask[0].sum(), rtol=1e-6)
    fixed = OnnxEvaluator(files["value9"], symmetry="average")
    assert fixed.evaluate(x).value_stm.shape == (2,)
    with pytest.raises(ValueError, match="9x9 only"):
        fixed.evaluate(_planes(49, b=1, n=13))


def test_bad_calls(files):
    ev = OnnxEvaluator(files["zero"])
    with pytest.raises(ValueError, match="planes must be"):
        ev.evaluate(_planes(48, b=1))
    with pytest.raises(ValueError, match="legal_mask"):
        ev.evaluate(_planes(17, b=1), np.ones((1, 10), bool))
    with pytest.raises(ValueError, match="keys"):
        ev.evaluate(_planes(17, b=2), keys=["only one"])
    with pytest.raises(ValueError, match="symmetry"):
        OnnxEvaluator(files["zero"], symmetry="all")


@pytest.mark.parametrize("mode", ["none", "random", "average"])
def test_the_cached_path_answers_as_the_uncached_one(files, mode):
    """Keys change what is computed, never the answers: an evaluator with a cache (all rows new,
    then hits, then a repeat within the batch) gives what one without gives for the same draws,
    and a caller writing into an answer does not change the cache."""
    x, mask = _planes(17, b=4), _mask(4)
    plain = OnnxEvaluator(files["zero"], symmetry=mode, seed=5, cache_size=0)
    cached = OnnxEvaluator(files["zero"], symmetry=mode, seed=5, cache_size=16)
    want = plain.evaluate(x, mask)
    got = cached.evaluate(x, mask, keys=[1, 2, 3, 4])
    for field in ("priors", "value_stm"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
    got.priors[:] = 0
    again = cached.evaluate(x[[3, 0, 3]], mask[[3, 0, 3]], keys=[4, 1, 4])
    assert cached.runs == 1
    np.testing.assert_array_equal(again.priors, want.priors[[3, 0, 3]])
    np.testing.assert_array_equal(again.value_stm, want.value_stm[[3, 0, 3]])
