"""What a search reports: per-move statistics of the root, for genmove, analysis and ownership.

Winrates are from the side to move at the root, in [0, 1]. Ownership is from black's view in
[-1, 1], row 0 at the top.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from goengine.engine.search import tree as T


@dataclass
class MoveStat:
    move: int                      # Loc, -1 = pass
    visits: int
    winrate: float                 # mover's view, 0..1
    prior: float
    lcb: float
    order: int = 0
    pv: list = field(default_factory=list)
    value_winrate: float | None = None    # value network part (AlphaGo search)
    rollout_winrate: float | None = None  # rollout part (AlphaGo search)
    target_visits: int | None = None      # the visits a self-play policy target counts, with
                                          # the forced playouts pruned; None: `visits`
    score_lead: float | None = None       # points the mover leads by after this move; None: no
                                          # estimate per move (GTP shows the root's)


@dataclass
class SearchResult:
    color: int
    moves: list                    # MoveStat, the move to play first: the most visited (the
                                   # Gumbel root: the halving's survivor), then by visits
    root_visits: int
    simulations: int               # run in this search (not counting reused ones)
    elapsed: float
    ownership_black: np.ndarray | None = None
    score_lead_black: float | None = None
    improved_policy: np.ndarray | None = None  # Gumbel root (engine.search.gumbel): softmax(
                                               # logits + sigma(completed q)), float32[N*N+1],
                                               # Pos order, pass last; None: not a Gumbel search

    @property
    def best(self) -> MoveStat | None:
        return self.moves[0] if self.moves else None

    @property
    def winrate(self) -> float:
        return self.moves[0].winrate if self.moves else 0.5


def _q_to_winrate(q: float) -> float:
    return min(1.0, max(0.0, (q + 1.0) / 2.0))


def _lcb(winrate: float, visits: int) -> float:
    if visits <= 0:
        return 0.0
    return winrate - 1.96 * math.sqrt(max(winrate * (1 - winrate), 0.0025) / visits)


def principal_variation(tree: T.Tree, node: int, max_len: int = 20) -> list[int]:
    return T.most_visited_line(tree.ti, node, max_len).tolist()


def summarize_root(tree: T.Tree, color: int, size: int, ownership_black=None, simulations=0,
                   elapsed=0.0, lam=1.0, komi=None, wins=(T.F_WR, T.F_WV)) -> SearchResult:
    """The root's moves; win rates from the sums `wins` (rollouts', value's) mixed by `lam`
    (Q's own, or the win/loss sums kept beside a score utility's)."""
    ti, tf = tree.ti, tree.tf
    fr, fv = wins
    stats = []
    for ch in tree.children(tree.root):
        if ti[T.I_FLAGS, ch] & T.PRUNED:
            continue
        n = int(ti[T.I_N, ch])
        q = float(T.mixed_mean(ti, tf, ch, lam, fr, fv, 0)) if n > 0 else -1.0
        wr = _q_to_winrate(q) if n > 0 else 0.0
        nv, nr = int(ti[T.I_NV, ch]), int(ti[T.I_NR, ch])
        stats.append(MoveStat(
            move=int(ti[T.I_MOVE, ch]), visits=n, winrate=wr, prior=float(tf[T.F_P, ch]),
            lcb=_lcb(wr, n),
            value_winrate=_q_to_winrate(tf[fv, ch] / nv) if nv else None,
            rollout_winrate=_q_to_winrate(tf[fr, ch] / nr) if nr else None))
    stats.sort(key=lambda s: (s.visits, s.prior), reverse=True)
    for i, s in enumerate(stats):
        s.order = i
    for s in stats[:10]:
        ch = T.find_child(ti, tree.root, s.move)
        s.pv = principal_variation(tree, ch)
    lead = None
    if ownership_black is not None and komi is not None:
        lead = float(np.sum(ownership_black) - komi)
    return SearchResult(color=color, moves=stats, root_visits=int(ti[T.I_N, tree.root]),
                        simulations=simulations, elapsed=elapsed, ownership_black=ownership_black,
                        score_lead_black=lead)
