"""The search's two-pass endings, counted as the game will be counted: dead stones off.

A game that ends by two passes is scored after the dead stones are taken off (by agreement, a
referee, or the server's count). A search that scored its two-pass leaves as the board stands
(Tromp-Taylor) would see a won game wherever its own dead stones stand in the opponent's area,
and would never resign or pass there. So the Player judges the dead stones of the root position
once (the same judgement that decides its pass, engine.player) and hands the search a mask with
the position to search:

    dead = np.zeros(A, np.int8); dead[lc] = colour of the stone judged dead on lc (0: none)
    search.search(game, color, ..., dead_at_terminals=dead)   # None: count the board as it stands

At a two-pass leaf a stone still standing on a masked point in the masked colour is taken off
before the area count (a stone played there later in the other colour is kept). The searches'
playouts still end with every dead stone captured, so they need no mask.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine import board as B


@njit(cache=True)
def judged_area_ownership(st, meta, dead, out):
    """B.area_ownership after taking off the stones `dead` names (int8[A]; st is scratch: the
    stones are removed in place). Returns black area minus white area."""
    for p in range(dead.shape[0]):
        if dead[p] != 0 and st[B.F_COLOR, p] == dead[p]:
            st[B.F_COLOR, p] = B.EMPTY
    return B.area_ownership(st, meta, out)


def terminal_mask(dead: np.ndarray | None, area: int) -> np.ndarray:
    """The mask `dead` (a search's `dead_at_terminals`) for a board of `area` Locs, or an empty
    mask (nothing judged, or judged for another board size)."""
    if dead is None or dead.shape[0] != area:
        return np.zeros(area, dtype=np.int8)
    return dead


def dead_mask(game, dead_locs) -> np.ndarray:
    """int8[A]: the colour of each stone in `dead_locs` on its Loc, 0 elsewhere."""
    dead = np.zeros(game.st.shape[1], dtype=np.int8)
    for lc in dead_locs:
        dead[lc] = game.st[B.F_COLOR, lc]
    return dead
