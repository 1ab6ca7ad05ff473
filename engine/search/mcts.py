"""Monte-Carlo tree search with heuristic priors and fast rollouts (no network).

Each simulation descends the tree by PUCT blended with RAVE (engine.search.tree.select_child),
expands a leaf once it has `expand_threshold` visits, plays a heuristic playout
(engine.playout) to the end, scores it by Tromp-Taylor area with komi and backs the result up;
a two-pass leaf is counted with the stones the Player judged dead taken off (search.terminal).
The whole simulation loop is one numba kernel; Python only slices it into chunks to watch the
clock, stream analysis and stop on request.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from engine import board as B
from engine.playout import playout
from engine.rollout.policy import RolloutPolicy, policy_playout
from engine.search import tree as T
from engine.search.limits import simulations_left
from engine.search.priors import heuristic_priors
from engine.search.result import MoveStat, SearchResult, summarize_root
from engine.search.terminal import judged_area_ownership, terminal_mask


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
    """Rollout MCTS over a reusable tree. Not thread-safe: one search at a time."""

    name = "heuristic"

    def __init__(self, config: MctsConfig | None = None, seed: int | None = None,
                 rollout: RolloutPolicy | None = None):
        self.config = config or MctsConfig()
        self.rollout = rollout  # the fast rollout policy; None = heuristic playouts
        self._rollout_tab = (rollout or RolloutPolicy.uniform()).new_tables()
        self.tree = T.Tree(self.config.tree_capacity)
        self.ownership_sum: np.ndarray | None = None
        self.ownership_count = 0
        self.dead_at_terminals: np.ndarray | None = None  # set by the Player (search.terminal)
        from engine.playout import seed as _seed
        _seed(int(np.random.SeedSequence(seed).generate_state(1)[0] % (2**31)))

    def _prune_root(self, game, color) -> None:
        """Superko is not known to the kernels: mark root moves that repeat a position."""
        t = self.tree
        for ch in t.children(t.root):
            mv = int(t.ti[T.I_MOVE, ch])
            if mv >= 0 and game.illegal_reason(color, mv) is not None:
                t.ti[T.I_FLAGS, ch] |= T.PRUNED

    # ---- search -------------------------------------------------------------------------------
    def search(self, game, color, playouts: int | None = None, seconds: float | None = None,
               stop=None, report=None, report_interval: float = 1.0,
               visits: int | None = None) -> SearchResult:
        """Search the position of `game` with `color` to play until `playouts` new simulations,
        or `visits` at the root counting those kept from the reused tree (Leela Zero's -p and
        -v), or `seconds`, or `stop` is set."""
        cfg = self.config
        self.tree.prepare_root(game, color)
        st, meta = game.st.copy(), game.meta.copy()
        meta[B.M_TOPLAY] = color
        if color != game.to_play:
            meta[B.M_KO] = -1
        t = self.tree
        a = st.shape[1]
        moves_buf = np.empty(a + 1, dtype=np.int32)
        priors_buf = np.empty(a + 1, dtype=np.float64)
        path = np.empty(4 * a + 64, dtype=np.int64)
        amaf = np.zeros(a, dtype=np.int8)
        own_acc = np.zeros(a, dtype=np.float64)
        dead = terminal_mask(self, a)
        expand_root(t.ti, t.tf, t.tm, st, meta, moves_buf, priors_buf)
        self._prune_root(game, color)
        max_moves = int(cfg.max_moves_factor * game.size * game.size)
        start = time.monotonic()
        last_report = start
        ran = 0
        root = t.root
        while True:
            left = simulations_left(int(t.ti[T.I_N, root]), ran, playouts, visits)
            if left <= 0:
                break
            if seconds is not None and time.monotonic() - start >= seconds:
                break
            if stop is not None and stop.is_set():
                break
            count = min(cfg.chunk, left)
            ran += simulate(t.ti, t.tf, t.tm, st, meta, count, game.komi, cfg.c_puct, cfg.fpu,
                            cfg.rave_k, cfg.expand_threshold, max_moves, own_acc, path, amaf,
                            moves_buf, priors_buf, self._rollout_tab, self.rollout is not None,
                            dead)
            now = time.monotonic()
            if report is not None and now - last_report >= report_interval:
                last_report = now
                report(self._result(game, color, own_acc, ran, now - start))
        elapsed = time.monotonic() - start
        self.ownership_sum, self.ownership_count = own_acc, ran
        return self._result(game, color, own_acc, ran, elapsed)

    def _result(self, game, color, own_acc, ran, elapsed) -> SearchResult:
        t = self.tree
        n = game.size
        own = own_acc.reshape(n + 2, n + 2)[1:-1, 1:-1] / max(ran, 1)
        return summarize_root(t, color, n, ownership_black=own.copy(), simulations=ran,
                              elapsed=elapsed, lam=1.0, komi=game.komi)


__all__ = ["MctsConfig", "MctsSearch", "MoveStat", "SearchResult"]
