"""Monte-Carlo tree search with heuristic priors and fast rollouts (no network).

Each simulation descends the tree by PUCT blended with RAVE (engine.search.tree.select_child),
expands a leaf once it has `expand_threshold` visits, plays a heuristic playout
(engine.playout) to the end, scores it by Tromp-Taylor area with komi and backs the result up;
a two-pass leaf is counted with the stones the Player judged dead taken off (search.terminal).
The whole simulation loop is one numba kernel; Python only slices it into chunks to watch the
clock, stream analysis and stop on request (the run loop of engine.search.base).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from goengine.engine import board as B
from goengine.engine.playout import playout, seed as playout_seed
from goengine.engine.rollout.policy import RolloutPolicy, policy_playout
from goengine.engine.search import tree as T
from goengine.engine.search.base import run
from goengine.engine.search.priors import heuristic_priors
from goengine.engine.search.result import MoveStat, SearchResult, summarize_root
from goengine.engine.search.terminal import judged_area_ownership, terminal_mask


@dataclass(frozen=True)
class MctsConfig:
    c_puct: float = 1.0            # exploration weight on the prior
    fpu: float = 0.1               # first-play urgency: unvisited child's Q = parent Q - fpu
    rave_k: float = 300.0          # RAVE equivalence: AMAF weight sqrt(k / (3N + k)); 0 disables
    expand_threshold: int = 3      # a leaf is expanded once it has this many visits
    tree_capacity: int = 2_000_000  # nodes, 76 bytes each (twice: reuse compacts into a spare)
    chunk: int = 64                # simulations per kernel call between clock checks
    max_moves_factor: float = 3.0  # playout length cap: factor * board points


@njit(cache=True)
def simulate(ti, tf, tm, st0, meta0, count, komi, c_puct, fpu, rave_k, expand_thr, max_moves,
             own_acc, path, amaf, moves_buf, priors_buf, rollout_tab, use_policy, dead):
    """Run `count` simulations from the root position (st0, meta0). Returns how many ran.
    A two-pass leaf is counted with the stones `dead` names taken off (engine.search.terminal)."""
    done = 0
    own_t = np.empty(st0.shape[1], dtype=np.int8)
    for _ in range(count):
        st = st0.copy()
        meta = meta0.copy()
        amaf[:] = 0
        node = tm[T.T_ROOT]
        length = 0
        path[length] = node
        length += 1
        terminal = False
        while True:
            if ti[T.I_FIRST, node] < 0:
                if ti[T.I_N, node] < expand_thr:
                    break
                c = meta[B.M_TOPLAY]
                k = heuristic_priors(st, meta, c, moves_buf, priors_buf)
                if not T.alloc_children(ti, tf, tm, node, moves_buf, priors_buf, k):
                    break
            ch = T.select_child(ti, tf, node, c_puct, 1.0, fpu, rave_k)
            if ch < 0:
                break
            m = ti[T.I_MOVE, ch]
            col = ti[T.I_COLOR, ch]
            if m < 0:
                B.play_pass(meta, col)
            else:
                if amaf[m] == 0:
                    amaf[m] = col
                B.play(st, meta, m, col)
            node = ch
            path[length] = node
            length += 1
            if meta[B.M_PASSES] >= 2:
                terminal = True
                break
        if terminal:
            score = judged_area_ownership(st, meta, dead, own_t)
            own = own_t
        elif use_policy:
            score, own = policy_playout(st, meta, max_moves, amaf, rollout_tab)
        else:
            score, own = playout(st, meta, max_moves, amaf)
        diff = score - komi
        z = 1.0 if diff > 0 else (-1.0 if diff < 0 else 0.0)
        T.backup(ti, tf, path, length, z, True, 0.0, False, 0)
        if rave_k > 0.0:
            T.backup_amaf(ti, tf, path, length, amaf, z)
        for i in range(own.shape[0]):
            if own[i] == 1:
                own_acc[i] += 1.0
            elif own[i] == 2:
                own_acc[i] -= 1.0
        done += 1
    return done


@njit(cache=True)
def expand_root(ti, tf, tm, st, meta, moves_buf, priors_buf):
    node = tm[T.T_ROOT]
    if ti[T.I_FIRST, node] >= 0:
        return True
    k = heuristic_priors(st, meta, meta[B.M_TOPLAY], moves_buf, priors_buf)
    return T.alloc_children(ti, tf, tm, node, moves_buf, priors_buf, k)


class MctsSearch:
    """Rollout MCTS over a reusable tree (a `Search`). Not thread-safe: one search at a time."""

    name = "heuristic"
    ownership = True    # every simulation plays out to the end: ownership counts every one
    search = run

    def __init__(self, config: MctsConfig | None = None, seed: int | None = None,
                 rollout: RolloutPolicy | None = None):
        self.config = config or MctsConfig()
        self.rollout = rollout  # the fast rollout policy; None = heuristic playouts
        self._rollout_tab = (rollout or RolloutPolicy.uniform()).new_tables()
        self.tree = T.Tree(self.config.tree_capacity)
        playout_seed(int(np.random.SeedSequence(seed).generate_state(1)[0] % (2**31)))

    @property
    def chunk(self) -> int:
        return self.config.chunk

    def begin(self, game, color, dead_at_terminals: np.ndarray | None = None,
              budget: int | None = None, seconds: float | None = None) -> None:
        st, meta = game.st.copy(), game.meta.copy()
        meta[B.M_TOPLAY] = color
        if color != game.to_play:
            meta[B.M_KO] = -1
        a = st.shape[1]
        self._game, self._color, self._st, self._meta = game, color, st, meta
        self._moves_buf = np.empty(a + 1, dtype=np.int32)
        self._priors_buf = np.empty(a + 1, dtype=np.float64)
        self._path = np.empty(4 * a + 64, dtype=np.int64)
        self._amaf = np.zeros(a, dtype=np.int8)
        self._own_acc = np.zeros(a, dtype=np.float64)
        self._max_moves = int(self.config.max_moves_factor * game.size * game.size)
        self._dead = terminal_mask(dead_at_terminals, a)
        t = self.tree
        expand_root(t.ti, t.tf, t.tm, st, meta, self._moves_buf, self._priors_buf)

    def step(self, count: int) -> int:
        cfg, t = self.config, self.tree
        return simulate(t.ti, t.tf, t.tm, self._st, self._meta, count, self._game.komi, cfg.c_puct,
                        cfg.fpu, cfg.rave_k, cfg.expand_threshold, self._max_moves, self._own_acc,
                        self._path, self._amaf, self._moves_buf, self._priors_buf,
                        self._rollout_tab, self.rollout is not None, self._dead)

    def head_ownership(self, game) -> None:
        return None     # no network

    def close(self) -> None:
        pass            # nothing held beyond the tree

    def result(self, ran: int, elapsed: float) -> SearchResult:
        n = self._game.size
        own = self._own_acc.reshape(n + 2, n + 2)[1:-1, 1:-1] / max(ran, 1)
        return summarize_root(self.tree, self._color, n, ownership_black=own.copy(),
                              simulations=ran, elapsed=elapsed, lam=1.0, komi=self._game.komi)


__all__ = ["MctsConfig", "MctsSearch", "MoveStat", "SearchResult"]
