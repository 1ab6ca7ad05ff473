"""AlphaGo Fan/Lee's APV-MCTS: SL policy priors, the value network and rollouts mixed by lambda.

The tree, its batches of leaves and the report are engine.search.network's. Here each leaf of a
batch gets a rollout z (fast rollout policy, to the end, scored by the rules) and the value
network's v, backed up separately into (W_r, N_r) and (W_v, N_v); Q mixes them as
(1 - lambda) W_v/N_v + lambda W_r/N_r (docs/algorithms.md §2). A leaf is expanded once its visits
reach `n_thr`, with heuristic priors at once, replaced by the SL policy's (softmax temperature
0.67) when the network answers (same batch).

With a score utility (`score_utility`, `dynamic_score_utility`; docs/algorithms.md §2.3) each
leaf's rollout counts by the utility of its result and final margin, and its value by that of
the value and the value network's score lead where the network has a score head (the value
alone where it has none); the win rates reported stay the results' (engine.search.network).
The reported score leads, the root's and each move's, are the rollouts' mean margins and the
value network's mean leads mixed by lambda.

The rollouts of a batch run in numba (GIL released) while onnxruntime evaluates the batch in
another thread. With `rollout_threads` > 1 the batch's rollouts are split over that many threads,
so that a core the network leaves idle (lambda = 1, or a network faster than the rollouts) runs
rollouts too; `rollout_threads` 0 takes the machine's cores where lambda is 1 on the board and one
thread where the value network runs beside the rollouts (`rollout_threads_for`;
docs/results/speed.md).
"""
from __future__ import annotations

import threading
import time

import numpy as np
from numba import njit

from goengine.engine.cores import cores_up_to
from goengine.engine.evaluator import Evaluator, feature_set_for
from goengine.engine.playout import playout, seed as playout_seed
from goengine.engine.rollout.policy import RolloutPolicy, policy_playout
from goengine.engine.search import tree as T
from goengine.engine.search.criticality import LeafOwnership
from goengine.engine.search.network import (LeafBatch, NetSearchConfig, NetworkSearch, Position,
                                            features, network_for, run_network)


AUTO_ROLLOUT_THREADS = 4   # rollout_threads 0 takes at most this many: a batch of 8 leaves is
                           # small to split further


def rollout_threads_for(configured: int, use_value: bool, cores: int | None = None) -> int:
    """The threads that share a batch's rollouts: `configured` when it is > 0; for 0, one where
    the value network evaluates every batch (`use_value`: it takes a core beside the rollouts),
    else the machine's `cores` (os.cpu_count()), at most AUTO_ROLLOUT_THREADS: at lambda 1 the
    network's thread only expands leaves (busy 2-36% of a 19x19 search), so the rollouts get the
    other cores (docs/results/speed.md)."""
    if configured > 0:
        return configured
    if use_value:
        return 1
    return cores_up_to(AUTO_ROLLOUT_THREADS, cores)


@njit(cache=True, nogil=True)
def rollouts(sts, metas, count, komi, max_moves, own_acc, own_z_acc, rollout_tab, use_policy):
    """(z, margin) from black's view for `count` leaf boards (modified), by the fast rollout
    policy (when `use_policy`) or the heuristic playout policy: each game's result and its final
    score less komi; the final ownership o of each (+1 black, -1 white) is added to own_acc, and
    o z to own_z_acc (engine.search.criticality)."""
    out = np.zeros(count, dtype=np.float64)
    margin = np.zeros(count, dtype=np.float64)
    amaf = np.zeros(sts.shape[2], dtype=np.int8)
    for i in range(count):
        if use_policy:
            score, own = policy_playout(sts[i], metas[i], max_moves, amaf, rollout_tab)
        else:
            score, own = playout(sts[i], metas[i], max_moves, amaf)
        d = score - komi
        out[i] = 1.0 if d > 0 else (-1.0 if d < 0 else 0.0)
        margin[i] = d
        for p in range(own.shape[0]):
            if own[p] == 1:
                own_acc[p] += 1.0
                own_z_acc[p] += out[i]
            elif own[p] == 2:
                own_acc[p] -= 1.0
                own_z_acc[p] -= out[i]
    return out, margin


class _RolloutHelper:
    """A daemon thread that runs `rollouts` on the share of a batch it is given. One per extra
    rollout thread, kept for the search's life (a thread per batch would cost more than it
    saves), with its own pattern cache and its own seeded numba generator."""

    def __init__(self, tables, seed: int):
        self.tables = tables
        self._job = None
        self._out = None
        self._error = None
        self._go = threading.Event()
        self._done = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, args=(seed,), daemon=True,
                                        name="rollouts")
        self._thread.start()

    def submit(self, sts, metas, count, komi, max_moves, area, use_policy) -> None:
        self._job = (sts, metas, count, komi, max_moves, area, use_policy)
        self._done.clear()
        self._go.set()

    def result(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._out

    def close(self) -> None:
        self._closed = True
        self._go.set()

    def _loop(self, seed: int) -> None:
        playout_seed(seed)  # numba keeps one generator per thread: seed this one's
        while True:
            self._go.wait()
            self._go.clear()
            if self._closed:
                return
            sts, metas, count, komi, max_moves, area, use_policy = self._job
            try:
                stats = LeafOwnership(area)
                z, margin = rollouts(sts, metas, count, komi, max_moves, stats.own,
                                     stats.own_z, self.tables, use_policy)
                self._out, self._error = (z, margin, stats.own, stats.own_z), None
            except Exception as exc:  # handed to the search thread by result()
                self._out, self._error = None, exc
            self._done.set()


class AlphaGoSearch(NetworkSearch):
    """AlphaGo Fan/Lee's search over evaluators (a `Search`): `policy` (SL policy evaluator,
    priors) and `value` (value evaluator), either may be None (heuristic priors; rollouts only);
    `rollout` is the fast rollout policy (None: the heuristic playouts)."""

    name = "alphago"
    sl_priors = True
    tree_scores = True

    def __init__(self, config: NetSearchConfig, policy: Evaluator | None = None,
                 value: Evaluator | None = None, policy_features: str = "alphago48",
                 value_features: str = "alphago49", seed: int | None = None,
                 rollout: RolloutPolicy | None = None):
        super().__init__(config, seed)
        self.policy, self.value = policy, value
        self.rollout = rollout
        self._rollout_pol = rollout or RolloutPolicy.uniform()
        self._rollout_tab = self._rollout_pol.new_tables()
        self._helpers: list[_RolloutHelper] = []
        # the planes each network takes; a by-size evaluator's network for the board may take
        # others, read from its metadata when a game begins (`_configure`)
        self.policy_features, self.value_features = policy_features, value_features
        self._pf, self._vf, self._shared = policy_features, value_features, False
        self._use_value = False
        self._threads = 1                   # threads sharing a batch's rollouts (`_configure`)
        self._leaf_own = LeafOwnership(0)   # the rollouts' ownership sums

    def _configure(self, game) -> None:
        cfg = self.config
        self._features_for(game.size)
        self._max_moves = int(cfg.max_moves_factor * game.size * game.size)
        lam = cfg.lam_for(game.size)
        self._use_rollouts = lam > 0 or self.value is None
        self._use_value = self.value is not None and lam < 1
        self._lam = 1.0 if self.value is None else lam
        self._threads = rollout_threads_for(cfg.rollout_threads, self._use_value)
        value = network_for(self.value, game.size)
        self._value_leads = self._use_value and value.has_score
        self._utility = cfg.score_utility    # the rollouts' margins give every leaf a score
        self._leaf_own = LeafOwnership(game.st.shape[1])

    def _dynamic_weight(self) -> float:
        return self.config.dynamic_score_utility

    def _features_for(self, size: int) -> None:
        """The feature sets of the networks that answer `size` x `size` boards, and whether one
        network answers both roles there (decided once per search, not per batch)."""
        policy, value = network_for(self.policy, size), network_for(self.value, size)
        self._pf = feature_set_for(self.policy, size, self.policy_features)
        self._vf = feature_set_for(self.value, size, self.value_features)
        self._shared = policy is not None and self._pf == self._vf and policy is value

    def _one_net(self) -> bool:
        """Whether the priors and values come from the same network on the same planes (a
        dual-head Zero network in both roles) on the board of the game begun."""
        return self._shared

    def _head_net(self, size: int) -> tuple:
        return self.value, feature_set_for(self.value, size, self.value_features)

    # ---- evaluation ---------------------------------------------------------------------------
    def _evaluate(self, positions, need_policy, need_value) -> tuple:
        """(priors [B, N*N+1] or None, value_stm [B] or None, score [B] or None) for the leaf
        positions: the priors of those flagged in `need_policy`, the values (and the score
        head's leads, where the value network has one) of all when `need_value`."""
        t0 = time.perf_counter()
        priors = values = scores = None
        if need_value and self._one_net():
            # one dual-head network fills both roles: a single call gives every leaf its value
            # and the expanding leaves their priors (the others' rows go unused)
            ev = run_network(self.value, features(positions, self._vf), _metas(positions))
            priors, values, scores = ev.priors, ev.value_stm, ev.score
        else:
            if self.policy is not None and need_policy.any():
                sel = [p for p, f in zip(positions, need_policy) if f]
                pr = run_network(self.policy, features(sel, self._pf), _metas(sel)).priors
                priors = np.zeros((len(positions), pr.shape[1]), dtype=np.float32)
                priors[need_policy] = pr
            if need_value and self.value is not None:
                ev = run_network(self.value, features(positions, self._vf), _metas(positions))
                values, scores = ev.value_stm, ev.score
        self._timed(t0, len(positions))
        return priors, values, scores

    def _root_priors(self, pos: Position) -> np.ndarray | None:
        if self.policy is None:
            return None
        return self._evaluate([pos], np.array([True]), False)[0][0]

    def _prepare(self, batch: LeafBatch) -> None:
        """The leaves as positions (the AlphaGo features read a position); the leaves whose
        visits reach n_thr are expanded, and need the policy, now."""
        cfg, t, n = self.config, self.tree, self._game.size
        m = batch.size
        batch.leaves = [Position(batch.sts[j], batch.metas[j],
                                 list(batch.hists[j, :batch.counts[j]]), n) for j in range(m)]
        leaf = batch.paths[np.arange(m), batch.lengths - 1]
        batch.expand = (t.ti[T.I_N, leaf] + 1 >= cfg.n_thr) & (t.ti[T.I_FIRST, leaf] < 0)
        batch.need_net = self._use_value or (bool(batch.expand.any()) and self.policy is not None)

    def _net_for(self, batch: LeafBatch) -> tuple:
        if not batch.need_net:
            return None, None, None
        return self._evaluate(batch.leaves, batch.expand, self._use_value)

    # ---- the rollouts -------------------------------------------------------------------------
    def step(self, want: int) -> int:
        """One batch: `want` descents, one network call for their leaves on a second thread
        while the rollouts run, then the backups."""
        if not self._use_rollouts:      # nothing to overlap with: a thread would only cost
            return super().step(want)
        batch = self.select(want)
        if batch is None:
            return want
        result = {}

        def run_net():
            result["net"] = self._net_for(batch)

        worker = None
        if batch.need_net:
            worker = threading.Thread(target=run_net)
            worker.start()
        m = batch.size
        z, margin = self._rollouts(batch.sts.copy(), batch.metas.copy(), m, self._game.komi,
                                   self._max_moves)
        self._leaf_own.z += float(z.sum())
        self._leaf_own.n += m
        if worker is not None:
            worker.join()
        self.finish(batch, result.get("net", (None, None, None)), z, margin)
        return want

    def _rollouts(self, sts, metas, m, komi, max_moves) -> np.ndarray:
        """(z, margin) (black's view) for the m leaf boards; the first share runs here, the
        others on the helper threads (each with its own pattern cache and ownership sums)."""
        k = max(1, min(self._threads, m))
        while len(self._helpers) < k - 1:
            self._helpers.append(_RolloutHelper(self._rollout_pol.new_tables(),
                                                int(self._rng.integers(2**31))))
        bounds = np.linspace(0, m, k + 1).astype(int)
        shares = list(zip(self._helpers, bounds[1:-1], bounds[2:]))
        use_policy = self.rollout is not None
        for h, lo, hi in shares:
            h.submit(sts[lo:hi], metas[lo:hi], hi - lo, komi, max_moves,
                     self._leaf_own.own.shape[0], use_policy)
        z, margin = np.empty(m, dtype=np.float64), np.empty(m, dtype=np.float64)
        first = bounds[1]
        z[:first], margin[:first] = rollouts(sts[:first], metas[:first], first, komi, max_moves,
                                             self._leaf_own.own, self._leaf_own.own_z,
                                             self._rollout_tab, use_policy)
        for h, lo, hi in shares:
            z[lo:hi], margin[lo:hi], own, own_z = h.result()
            self._leaf_own.own += own
            self._leaf_own.own_z += own_z
        return z, margin

    def _rollout_ownership(self, size: int) -> np.ndarray | None:
        return self._leaf_own.mean_ownership(size)     # None at lambda 0: no rollouts

    def _leaf_ownership(self) -> LeafOwnership | None:
        return self._leaf_own if self._use_rollouts else None

    def close(self) -> None:
        """Stop the rollout helper threads (they are daemons: a process may also just exit)."""
        for h in self._helpers:
            h.close()
        self._helpers = []

    def __del__(self):
        self.close()  # a search dropped without close() does not leave its helpers waiting


def _metas(positions) -> np.ndarray:
    return np.stack([p.meta for p in positions])


__all__ = ["AUTO_ROLLOUT_THREADS", "AlphaGoSearch", "rollout_threads_for", "rollouts"]
