"""Dead stones: the one judgement behind the count (docs/algorithms.md §5.3).

`judge(game)` plays `playouts` heuristic playouts (engine.playout: never filling a true own eye,
no self-atari of more than one stone, captures and escapes next to the last move) from the
position as it stands, half of them with black to move first and half with white, so that
neither side gets the tempo. Each playout ends with every point settled and is counted by
Tromp-Taylor area; the mean over the playouts is the ownership of each point, +1 black.

* a string is **dead** when its stones' mean ownership leans to the opponent: captured in more
  playouts than not (`sign * mean < -dead_margin`);
* an alive string is in **seki** when one of its liberties is still neutral at the end of the
  playouts (|ownership| <= `seki_threshold`: both sides keep off it) and touches an alive
  opponent string;
* every other string is alive.

There is no tree: a search from the final position lets the side to move choose its moves and
leans the ownership its way, and a 4,000-simulation tree cost seconds on 19x19. The same
judgement counts `final_status_list` and `final_score`, decides whether a pass wins, names the
targets of `kgs-genmove_cleanup`, and takes the dead stones off at the searches' two-pass
endings (engine.search.terminal).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from goengine.engine import board as B
from goengine.engine.playout import playout, seed as playout_seed

PLAYOUTS = 2000          # about 0.2 s on 19x19 final positions, 0.02 s on 9x9 (one core)
DEAD_MARGIN = 0.0        # dead: mean ownership of the string's stones below -margin, own view
SEKI_THRESHOLD = 0.2     # a liberty this close to neutral at the playouts' end is shared (seki)
MAX_MOVES_FACTOR = 3     # playout length cap: factor x board points


@njit(cache=True)
def playout_ownership(st0, meta0, count, max_moves, out):
    """Mean Tromp-Taylor ownership (+1 black, -1 white) of each Loc over `count` playouts from
    (st0, meta0), black first in the even ones and white first in the odd ones, into out
    (float64[A])."""
    a = st0.shape[1]
    for p in range(a):
        out[p] = 0.0
    amaf = np.zeros(a, dtype=np.int8)
    for i in range(count):
        st = st0.copy()
        meta = meta0.copy()
        meta[B.M_TOPLAY] = B.BLACK if i % 2 == 0 else B.WHITE
        meta[B.M_KO] = -1
        meta[B.M_LAST] = -1
        meta[B.M_LAST2] = -1
        _score, own = playout(st, meta, max_moves, amaf, False)
        for p in range(a):
            if own[p] == B.BLACK:
                out[p] += 1.0
            elif own[p] == B.WHITE:
                out[p] -= 1.0
    if count > 0:
        for p in range(a):
            out[p] /= count


@dataclass
class Judgement:
    """The status of every stone on the board (Locs) and the ownership it was judged by."""
    ownership: np.ndarray                  # float[N, N], +1 black, row 0 at the top
    alive: list[int] = field(default_factory=list)
    dead: list[int] = field(default_factory=list)
    seki: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[int]]:
        return {"alive": self.alive, "dead": self.dead, "seki": self.seki}


def strings(game) -> list[list[int]]:
    """The strings on the board, each a list of Locs, in board order of their first stone."""
    heads: dict[int, list[int]] = {}
    colours = game.st[B.F_COLOR]
    n, w = game.size, game.size + 2
    for r in range(n):
        for c in range(n):
            lc = (r + 1) * w + c + 1
            if colours[lc] == B.BLACK or colours[lc] == B.WHITE:
                heads.setdefault(int(game.st[B.F_HEAD, lc]), []).append(lc)
    return list(heads.values())


def judge(game, playouts: int = PLAYOUTS, seed: int = 1, dead_margin: float = DEAD_MARGIN,
          seki_threshold: float = SEKI_THRESHOLD) -> Judgement:
    """Alive, dead and seki strings of `game`'s position (see the module's docstring). The same
    position, playouts and seed give the same answer."""
    n, w = game.size, game.size + 2
    playout_seed(seed)
    flat = np.zeros(game.st.shape[1], dtype=np.float64)
    playout_ownership(game.st, game.meta, playouts, MAX_MOVES_FACTOR * n * n, flat)
    colours = game.st[B.F_COLOR]
    out = Judgement(ownership=flat.reshape(w, w)[1:-1, 1:-1].copy())
    groups = strings(game)
    status = {}
    for stones in groups:
        sign = 1.0 if colours[stones[0]] == B.BLACK else -1.0
        mean = float(np.mean(flat[stones]))
        status[stones[0]] = "dead" if sign * mean < -dead_margin else "alive"
    head_of = {lc: stones[0] for stones in groups for lc in stones}
    for stones in groups:
        if status[stones[0]] == "alive" and _shares_a_neutral_liberty(
                stones, colours, flat, w, head_of, status, seki_threshold):
            status[stones[0]] = "seki"
        getattr(out, status[stones[0]]).extend(stones)
    return out


def _shares_a_neutral_liberty(stones, colours, flat, w, head_of, status, threshold) -> bool:
    """A liberty of `stones` that stays neutral in the playouts and touches a living opponent
    string."""
    enemy = 3 - colours[stones[0]]
    for s in stones:
        for q in (s - w, s + w, s - 1, s + 1):
            if colours[q] != B.EMPTY or abs(flat[q]) > threshold:
                continue
            for r in (q - w, q + w, q - 1, q + 1):
                if colours[r] == enemy and status[head_of[r]] != "dead":
                    return True
    return False
