import numpy as np
import pytest

from goengine.engine import symmetry

KS = range(symmetry.N_SYMMETRIES)


def _policy_of(planes: np.ndarray, with_pass: bool) -> np.ndarray:
    """A stand-in 'network': the policy is plane 0, row-major, plus a pass entry."""
    p = planes[..., 0, :, :].reshape(planes.shape[:-3] + (-1,))
    if with_pass:
        p = np.concatenate([p, np.full(p.shape[:-1] + (1,), 7.0)], axis=-1)
    return p


@pytest.mark.parametrize("n", [4, 5, 9, 19])
@pytest.mark.parametrize("k", KS)
def test_inverse_undoes_apply(n, k):
    x = np.random.default_rng(n).random((3, n, n))
    back = symmetry.apply(symmetry.apply(x, k), symmetry.INVERSE[k])
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("with_pass", [False, True])
@pytest.mark.parametrize("n", [5, 9, 19])
@pytest.mark.parametrize("k", KS)
def test_invert_policy_maps_back(n, k, with_pass):
    x = np.random.default_rng(k).random((2, 4, n, n))   # batched [B, C, N, N]
    got = symmetry.invert_policy(_policy_of(symmetry.apply(x, k), with_pass), k, n)
    np.testing.assert_array_equal(got, _policy_of(x, with_pass))
    for i in range(2):                                    # and unbatched [C, N, N]
        got = symmetry.invert_policy(_policy_of(symmetry.apply(x[i], k), with_pass), k, n)
        np.testing.assert_array_equal(got, _policy_of(x[i], with_pass))


@pytest.mark.parametrize("k", KS)
def test_apply_policy_matches_apply_and_round_trips(k):
    n = 9
    x = np.random.default_rng(0).random((1, n, n))
    p = _policy_of(x, with_pass=True)
    np.testing.assert_array_equal(symmetry.apply_policy(p, k, n),
                                  _policy_of(symmetry.apply(x, k), with_pass=True))
    np.testing.assert_array_equal(symmetry.invert_policy(symmetry.apply_policy(p, k, n), k, n), p)
    assert symmetry.apply_policy(p, k, n)[-1] == p[-1]   # pass never moves


def test_the_eight_are_distinct_and_a_group():
    n = 5
    x = np.arange(n * n, dtype=float).reshape(1, n, n)
    images = [symmetry.apply(x, k) for k in KS]
    assert len({im.tobytes() for im in images}) == 8
    for a in KS:
        for b in KS:   # the composition of two symmetries is one of the eight
            ab = symmetry.apply(symmetry.apply(x, a), b)
            assert any(np.array_equal(ab, im) for im in images)


def test_known_transforms():
    x = np.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(symmetry.apply(x, 0), x)
    np.testing.assert_array_equal(symmetry.apply(x, 1), [[2, 4], [1, 3]])   # 90 anticlockwise
    np.testing.assert_array_equal(symmetry.apply(x, 2), [[4, 3], [2, 1]])
    np.testing.assert_array_equal(symmetry.apply(x, 4), [[1, 3], [2, 4]])   # transpose


def test_bad_arguments():
    with pytest.raises(ValueError):
        symmetry.apply(np.zeros((1, 3, 3)), 8)
    with pytest.raises(ValueError):
        symmetry.invert_policy(np.zeros(11), 1, 3)


@pytest.mark.parametrize("n", [5, 9, 19])
def test_batched_forms_agree_with_one_symmetry_at_a_time(n):
    """apply_each / apply_policy_each / invert_policy_each (one gather for a batch, each row its
    own symmetry) give what apply / apply_policy / invert_policy give row by row."""
    rng = np.random.default_rng(n)
    ks = np.array([0, 1, 2, 3, 4, 5, 6, 7, 3, 5])
    x = rng.random((len(ks), 3, n, n)).astype(np.float32)
    p = rng.random((len(ks), n * n + 1)).astype(np.float32)
    moved = symmetry.apply_each(x, ks)
    for i, k in enumerate(ks):
        np.testing.assert_array_equal(moved[i], symmetry.apply(x[i], k))
        np.testing.assert_array_equal(symmetry.apply_policy_each(p, ks, n)[i],
                                      symmetry.apply_policy(p[i], k, n))
        np.testing.assert_array_equal(symmetry.invert_policy_each(p, ks, n)[i],
                                      symmetry.invert_policy(p[i], k, n))
    np.testing.assert_array_equal(symmetry.invert_policy_each(
        symmetry.apply_policy_each(p[:, :-1], ks, n), ks, n), p[:, :-1])   # no pass entry
    with pytest.raises(ValueError):
        symmetry.apply_each(x, np.full(len(ks), 8))
