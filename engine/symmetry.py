"""The 8 symmetries of the square board (the dihedral group D4), on planes and on policies.

Symmetry k in 0..7 acts on the last two axes (row, col) of an array:

| k | transform                         | k | transform                                  |
|---|-----------------------------------|---|--------------------------------------------|
| 0 | identity                          | 4 | transpose (swap row and col)               |
| 1 | rotate 90 degrees anticlockwise   | 5 | transpose, then rotate 90                  |
| 2 | rotate 180                        | 6 | transpose, then rotate 180                 |
| 3 | rotate 270                        | 7 | transpose, then rotate 270                 |

Rotations are `np.rot90` on axes (-2, -1); row 0 is the top of the board (see `engine.coords`).
k = 1..3 are rotations, whose inverse is the opposite rotation; k = 4..7 are reflections, each its
own inverse.

Policies are vectors over `Pos = row * N + col` (row-major), optionally followed by one pass entry,
which no symmetry moves. The contract used by the evaluators and by training augmentation:

    p_t = net(apply(planes, k))           # a policy over the TRANSFORMED board
    p   = invert_policy(p_t, k, n)        # the same policy over the original board

and for training targets `apply_policy(p, k, n)` maps an original-board policy to the transformed
board, so that `invert_policy(apply_policy(p, k, n), k, n) == p`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

N_SYMMETRIES = 8

# INVERSE[k] undoes k: rotations by k undo by 4 - k; reflections (k >= 4) are involutions.
INVERSE = (0, 3, 2, 1, 4, 5, 6, 7)
INVERSES = np.array(INVERSE, dtype=np.int64)     # the same, to index with an array of symmetries


def apply(planes: np.ndarray, k: int) -> np.ndarray:
    """Symmetry k of `planes` [..., N, N] (e.g. [C, N, N] or [B, C, N, N]); returns a view."""
    if not 0 <= k < N_SYMMETRIES:
        raise ValueError(f"symmetry must be in 0..7, got {k}")
    x = planes
    if k >= 4:
        x = np.swapaxes(x, -1, -2)
    return np.rot90(x, k % 4, axes=(-2, -1))


@lru_cache(maxsize=None)
def permutations(n: int) -> np.ndarray:
    """int64[8, N*N], read-only: row k is symmetry k as a gather over row-major points,
    `apply(board, k).reshape(-1) == board.reshape(-1)[permutations(n)[k]]` (derived from
    `apply`, so the two cannot disagree)."""
    points = np.arange(n * n).reshape(n, n)
    perms = np.stack([apply(points, k).reshape(-1) for k in range(N_SYMMETRIES)])
    perms.flags.writeable = False
    return perms


def _symmetry_indices(ks, count: int) -> np.ndarray:
    """ks as int64[count] (the kernels check that each is in 0..7: a numpy pass here cost a
    tenth of a search's work besides the network on 9x9 batches)."""
    if not (isinstance(ks, np.ndarray) and ks.dtype == np.int64 and ks.shape == (count,)):
        ks = np.ascontiguousarray(np.broadcast_to(np.asarray(ks, dtype=np.int64), (count,)))
    return ks


@njit(cache=True)
def _check_symmetries(ks):
    for k in ks:
        if k < 0 or k >= N_SYMMETRIES:
            raise ValueError("symmetries must be in 0..7")


def apply_each(planes: np.ndarray, ks) -> np.ndarray:
    """Symmetry ks[i] of planes[i], for a batch [B, C, N, N]: one gather for the whole batch
    (the evaluators and the training batches transform every position by its own symmetry)."""
    b, c, n = planes.shape[0], planes.shape[1], planes.shape[-1]
    flat = np.ascontiguousarray(planes).reshape(b, c, n * n)
    out = np.empty_like(flat)
    _gather_planes(flat, permutations(n), _symmetry_indices(ks, b), out)
    return out.reshape(planes.shape)


@njit(cache=True)
def _gather_planes(flat, perms, ks, out):
    """out[b, c, p] = flat[b, c, perms[ks[b], p]] (numba: a batch's gather without numpy's
    per-call overhead, which cost as much as the int8 network itself on 9x9 batches)."""
    _check_symmetries(ks)
    for b in range(flat.shape[0]):
        perm = perms[ks[b]]
        for c in range(flat.shape[1]):
            for p in range(perm.shape[0]):
                out[b, c, p] = flat[b, c, perm[p]]


@njit(cache=True)
def _gather_points(policy, perms, ks, out):
    """out[b, p] = policy[b, perms[ks[b], p]] on the board's points; the entries beyond them
    (pass) are copied."""
    _check_symmetries(ks)
    for b in range(policy.shape[0]):
        perm = perms[ks[b]]
        for p in range(perm.shape[0]):
            out[b, p] = policy[b, perm[p]]
        for p in range(perm.shape[0], policy.shape[1]):
            out[b, p] = policy[b, p]


def _map_points_each(policy: np.ndarray, ks, n: int) -> np.ndarray:
    """Symmetry ks[i] on the N*N board entries of policy[i] [B, N*N (+1)]; pass is unchanged."""
    npts = n * n
    length = policy.shape[-1]
    if policy.ndim != 2 or length not in (npts, npts + 1):
        raise ValueError(f"policy shape {policy.shape} is not [B, {npts}] or [B, {npts + 1}]")
    out = np.empty_like(policy)
    _gather_points(policy, permutations(n), _symmetry_indices(ks, len(policy)), out)
    return out


def _map_points(policy: np.ndarray, k: int, n: int) -> np.ndarray:
    """Apply symmetry k to the N*N board entries of `policy` [..., N*N (+1)]; pass is unchanged."""
    if not 0 <= k < N_SYMMETRIES:
        raise ValueError(f"symmetry must be in 0..7, got {k}")
    rows = policy.reshape(-1, policy.shape[-1])
    return _map_points_each(rows, k, n).reshape(policy.shape)


def apply_policy_each(policy: np.ndarray, ks, n: int) -> np.ndarray:
    """apply_policy with symmetry ks[i] on row i of a batch [B, N*N (+1)]."""
    return _map_points_each(policy, ks, n)


def invert_policy_each(policy: np.ndarray, ks, n: int) -> np.ndarray:
    """invert_policy with symmetry ks[i] on row i of a batch [B, N*N (+1)]."""
    return _map_points_each(policy, INVERSES[np.asarray(ks, dtype=np.int64)], n)


def apply_policy(policy: np.ndarray, k: int, n: int) -> np.ndarray:
    """Map a policy [..., N*N (+1)] over the original board to the board transformed by k."""
    return _map_points(policy, k, n)


def invert_policy(policy: np.ndarray, k: int, n: int) -> np.ndarray:
    """Map a policy [..., N*N (+1)] computed on `apply(planes, k)` back to the original board."""
    return _map_points(policy, INVERSE[k], n)
