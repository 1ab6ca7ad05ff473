"""Criticality (Coulom, "Criticality: a Monte-Carlo heuristic for Go programs", 2009): how much
owning a point goes with winning the game, over a search's leaves, mixed into the root's priors.

With o(x) = +1 where Black owns point x at the end (-1 White) and z = +1 where Black wins (-1
White), crit(x) = cov(o(x), z). Coulom's v(x) - (mu_B(x) nu_B + mu_W(x) nu_W) is half of it where
every point is owned. A point whose owner decides the game (a group whose life is a race) has a
high criticality; a point settled either way has none, however much it is worth. The AlphaGo
search takes o and z from its rollouts' final boards and results; the Zero search, which plays no
rollout, from each evaluated leaf's ownership and value heads (Black's view), so that crit is the
covariance across the tree of the network's own predictions: the points whose fate moves its
value.

The root's priors become (1 - w) P + w C, with C the positive part of crit over the root's
candidate moves, normalised (pass has none): the search reads the moves at the points that
decide the game where its priors alone would pass them by (the regression set's swings:
docs/results/strength.md). Refreshed as the leaves come in (`REFRESH` leaves apart, from
`REFRESH` on), from the search's sums over all its leaves.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from goengine.engine import board as B
from goengine.engine.coords import PASS, all_locs

REFRESH = 64    # leaves between two refreshes of the root's priors, and before the first


class LeafOwnership:
    """Sums over a search's leaves of the final ownership o (float[A] in Loc order, +1 Black),
    of o z and of z (the result, +1 Black): the rollouts' mean ownership and the criticality."""

    def __init__(self, area: int):
        self.own = np.zeros(area, dtype=np.float64)
        self.own_z = np.zeros(area, dtype=np.float64)
        self.z = 0.0
        self.n = 0

    def add_predictions(self, ownership_stm: np.ndarray, value_stm: np.ndarray,
                        metas: np.ndarray, size: int) -> None:
        """A batch of evaluated leaves: the ownership head's rows (float[B, N*N], +1 the side
        to move) and values (float[B], the side to move), turned to Black's view."""
        sign = np.where(metas[:, B.M_TOPLAY] == B.BLACK, 1.0, -1.0)
        own = ownership_stm.astype(np.float64) * sign[:, None]
        z = value_stm.astype(np.float64) * sign
        locs = _locs(size)
        self.own[locs] += own.sum(axis=0)
        self.own_z[locs] += (own * z[:, None]).sum(axis=0)
        self.z += float(z.sum())
        self.n += len(z)

    def mean_ownership(self, size: int) -> np.ndarray | None:
        """float[N, N], +1 Black: the leaves' mean final ownership; None before any leaf."""
        if self.n == 0:
            return None
        return (self.own.reshape(size + 2, size + 2)[1:-1, 1:-1] / self.n).copy()

    def criticality(self) -> np.ndarray:
        """float[A] in Loc order: cov(o, z) over the leaves, zero where negative (a point whose
        ownership goes against the result is no point to play for)."""
        if self.n == 0:
            return np.zeros_like(self.own)
        n = float(self.n)
        return np.maximum(self.own_z / n - (self.own / n) * (self.z / n), 0.0)


@lru_cache(maxsize=None)
def _locs(size: int) -> np.ndarray:
    """int64[N*N]: each point's Loc in Pos order (once a size: every batch reads it)."""
    return np.array(all_locs(size), dtype=np.int64)


def mixed_priors(priors: np.ndarray, moves: np.ndarray, crit: np.ndarray,
                 weight: float) -> np.ndarray:
    """The priors of root moves `moves` (Locs, PASS for pass) with the criticality `crit`
    (float[A], Loc order) mixed in by `weight`: (1 - w) P + w C, C the moves' criticality
    normalised to 1; the priors unchanged where no move has any."""
    c = np.where(moves == PASS, 0.0, crit[np.maximum(moves, 0)])
    total = c.sum()
    if weight <= 0 or total <= 0:
        return priors
    return (1.0 - weight) * priors + weight * c / total


__all__ = ["LeafOwnership", "REFRESH", "mixed_priors"]
