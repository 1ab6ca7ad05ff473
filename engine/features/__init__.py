"""Input features of the networks: ONE code path, used by training and by play.

    from goengine.engine import features
    x = features.extract(game, "alphago48")              # float32[48, N, N], row 0 at the top
    features.extract_into(game, "alphago48", buf[i])     # uint8[48, N, N] slice, 0/1 (np.packbits-able)

Perspective: 'player' is the colour to move (`color`, default `game.to_play`), 'opponent' the other.
Feature sets, plane groups and their meaning: `engine.features.registry`. The AlphaGo planes are one
numba kernel over the game's arrays (`engine.features.alphago`, ladders in
`engine.features.ladder`); the Zero planes come from `Game.board_history` (`engine.features.zero`).
Extracting never modifies the game.
"""
from __future__ import annotations

import threading

import numpy as np

from goengine.engine.board import BLACK, WHITE
from goengine.engine.features.alphago import alphago_planes, kernel_offsets
from goengine.engine.features.ladder import new_scratch
from goengine.engine.features.registry import (FEATURE_SETS, FEATURE_VERSIONS, HISTORY_GROUPS,
                                      KERNEL_GROUPS, FeatureSet, get)
from goengine.engine.features.zero import history_planes, history_planes_batch

__all__ = ["FEATURE_SETS", "FEATURE_VERSIONS", "FeatureSet", "get", "extract", "extract_into",
           "extract_leaves", "num_planes"]

# Per feature set: the kernel offset table (None when no kernel group), and whether history is used.
_PLANS: dict[FeatureSet, tuple[np.ndarray | None, bool]] = {}


def _plan(fs: FeatureSet) -> tuple[np.ndarray | None, bool]:
    plan = _PLANS.get(fs)
    if plan is None:
        groups = {g for g, _ in fs.planes}
        offs = kernel_offsets(fs.offsets) if groups & set(KERNEL_GROUPS) else None
        plan = (offs, bool(groups & set(HISTORY_GROUPS)))
        _PLANS[fs] = plan
    return plan


_LOCAL = threading.local()  # per thread: board size -> kernel scratch (marks, ladder board pool)


def _scratch(n: int):
    cache = getattr(_LOCAL, "scratch", None)
    if cache is None:
        cache = _LOCAL.scratch = {}
    s = cache.get(n)
    if s is None:
        s = cache[n] = new_scratch(n)
    return s


def num_planes(name: str | FeatureSet) -> int:
    return get(name).num_planes


def extract_into(game, name: str | FeatureSet, out: np.ndarray, color: int | None = None) -> np.ndarray:
    """Write the planes of feature set `name` for `game` into out uint8[C, N, N] (C-contiguous,
    e.g. one row of a preallocated dataset batch); every plane is overwritten with 0 or 1."""
    fs = get(name)
    n = game.size
    if out.shape != (fs.num_planes, n, n) or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise ValueError(f"out must be C-contiguous uint8{(fs.num_planes, n, n)}, "
                         f"got {out.dtype}{out.shape}")
    c = game.to_play if color is None else int(color)
    if c not in (BLACK, WHITE):
        raise ValueError(f"invalid colour {color!r}")
    offs, history = _plan(fs)
    flat = out.reshape(fs.num_planes, n * n)
    if offs is not None:
        alphago_planes(game.st, game.meta, c, offs, flat, *_scratch(n))
    else:
        out[...] = 0
    if history:
        history_planes(game.board_history, n, c, fs.offsets, out)
    return out


def extract(game, name: str | FeatureSet, color: int | None = None) -> np.ndarray:
    """The planes of feature set `name` for `game`: float32[C, N, N], row 0 at the top, from the
    perspective of `color` (default: the colour to move)."""
    fs = get(name)
    buf = np.empty((fs.num_planes, game.size, game.size), dtype=np.uint8)
    extract_into(game, fs, buf, color)
    return buf.astype(np.float32)


def extract_leaves(name: str | FeatureSet, hists: np.ndarray, counts: np.ndarray,
                   metas: np.ndarray, n: int) -> np.ndarray:
    """float32[m, C, N, N]: the planes of a history-only feature set (the Zero planes) for the m
    leaves of a search's batch, from their colour rows hists[j, :counts[j]] (oldest first) and
    metas[j] (engine.search.leaves); what `extract` gives for each leaf as a Game."""
    fs = get(name)
    offs, history = _plan(fs)
    if offs is not None or not history:
        raise ValueError(f"{fs.name} is not a history-only feature set")
    return history_planes_batch(hists, counts, metas, n, fs.offsets, fs.num_planes,
                                np.float32)
