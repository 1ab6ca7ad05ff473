"""Searches on networks: AlphaGo Fan/Lee's APV-MCTS and AlphaGo Zero's PUCT, on one tree.

Notation and defaults from docs/algorithms.md §2. A simulation:

1. `descend` walks the tree from the root by PUCT (virtual loss `n_vl` on the path, so that the
   other simulations of the batch spread out), to a leaf;
2. the leaf's position is rebuilt by `apply_path` (the tree stores moves, not boards); both run
   for a whole batch in one numba call (engine.search.leaves.select_leaves), as do the batch's
   expansions and backups after its network call (`finish_leaves`);
3. AlphaGo: the leaf gets a rollout z (fast rollout policy, to the end, scored by the rules) and
   the value network's v, backed up separately into (W_r, N_r) and (W_v, N_v); Q mixes them as
   (1 - lambda) W_v/N_v + lambda W_r/N_r. A leaf is expanded once its visits reach `n_thr`, with
   heuristic priors at once, replaced by the SL policy's (softmax temperature 0.67) when the
   network answers (same batch). Zero: every new leaf is expanded with the network's priors and
   its value is backed up; no rollouts. A terminal leaf (two passes) is scored by the rules,
   with the stones the Player judged dead taken off (engine.search.terminal). Zero with a
   network that has a score head and `score_utility` > 0 (KataGo's static score utility): the
   tree's Q holds the utility v + score_utility (2/pi) atan(score / scale) of every leaf (the rules'
   score at a terminal), divided by 1 + score_utility, while the value alone goes to the tree's
   other sums (the rollouts' W_r, N_r, unused at lambda 0), from which the win rates are
   reported.
4. A batch of `batch_size` simulations shares one network call; the rollouts of the batch run in
   numba (GIL released) while onnxruntime evaluates the batch in another thread. With
   `rollout_threads` > 1 the batch's rollouts are split over that many threads, so that a core
   the network leaves idle (lambda = 1, or a network faster than the rollouts) runs rollouts too.
   A leaf met twice in one batch is dropped the second time (its virtual loss undone).

Values enter the tree from black's view (`v_black`), the tree flips to each mover's view.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from goengine.engine import board as B
from goengine.engine.coords import PASS
from goengine.engine.evaluator import feature_set_for, for_size
from goengine.engine.features import extract, extract_leaves
from goengine.engine.playout import playout, seed as playout_seed
from goengine.engine.rollout.policy import RolloutPolicy, policy_playout
from goengine.engine.search import tree as T
from goengine.engine.search.base import run
from goengine.engine.search.leaves import (HISTORY, expand_node, finish_leaves,
                                           select_leaves)
from goengine.engine.search.komi import KOMI_SCALE, komi_shift, learned_komi, value_at_komi
from goengine.engine.search.result import SearchResult, summarize_root
from goengine.engine.search.terminal import terminal_mask


ALPHAGO_C_PUCT = 5.0    # AlphaGo (Extended Data Table 5), with rollouts mixed into Q
ZERO_C_PUCT = 1.5       # the Zero search's: measured against 5 and 1 on the 9x9 run's networks
                        # (docs/algorithms.md §2.6)


@dataclass(frozen=True)
class NetSearchConfig:
    mode: str = "alphago"          # "alphago" (Fan/Lee: value + rollouts) or "zero"
    c_puct: float | None = None    # None: ALPHAGO_C_PUCT or ZERO_C_PUCT by the mode
    use_alphazero_c: bool = False  # AlphaZero's C(s) = log((1 + N + c_base) / c_base) + c_init
    c_base: float = 19652.0
    c_init: float = 1.25
    lam: float = 0.5               # lambda: weight of rollouts in the leaf value (AlphaGo: 0.5)
    n_thr: int = 8                 # expansion threshold (paper: 40, tuned to the GPU queue)
    n_vl: int = 3                  # virtual loss
    fpu: float = 0.2               # unvisited child's Q = parent's Q - fpu
    policy_temperature: float = 0.67  # softmax temperature of the SL priors (AlphaGo)
    batch_size: int = 8            # simulations per network call (16: faster, plays worse)
    tree_capacity: int = 1_000_000
    dirichlet_alpha: float = 0.0   # > 0 adds root noise (self-play only): 0.03 on 19x19
    dirichlet_eps: float = 0.25
    max_moves_factor: float = 3.0  # rollout length cap, in board points
    rollout_threads: int = 1       # threads sharing a batch's rollouts (2: +15% visits/s here,
                                   # no measured strength gain yet)
    value_komi: float | None = None  # the komi the value network learned at; None: what its
                                     # file says, else 7.5 (engine.search.komi.learned_komi)
    komi_scale: float = KOMI_SCALE  # logistic scale of the final score, points per board line
    score_utility: float = 0.0     # Zero: weight of the score in a leaf's utility (KataGo's
                                   # static score utility, 0.1 there beside a dynamic 0.3); 0: off
    score_utility_scale: float = 0.0  # points of score at which atan reaches pi/4; 0: the board
                                      # side N (KataGo's sqrt of the board area)
    forced_k: float = 0.0          # Zero self-play: KataGo's forced playouts at the root,
                                   # sqrt(k P N) per child (KataGo: 2), taken back from the
                                   # policy target (tree.pruned_visits); 0: off
    no_pass_before: int = 0        # the root's pass is pruned before this move number while
                                   # another move is there (Zero self-play: a side whose value
                                   # says it is lost cannot end the game in the opening)

    def __post_init__(self):
        if self.c_puct is None:     # frozen: the mode's default set once, here
            object.__setattr__(self, "c_puct",
                               ZERO_C_PUCT if self.mode == "zero" else ALPHAGO_C_PUCT)


# ---- numba kernels ------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def rollouts(sts, metas, count, komi, max_moves, own_acc, rollout_tab, use_policy):
    """z from black's view for `count` leaf boards (modified), by the fast rollout policy (when
    `use_policy`) or the heuristic playout policy; the final ownership of each (+1 black,
    -1 white) is added to own_acc."""
    out = np.zeros(count, dtype=np.float64)
    amaf = np.zeros(sts.shape[2], dtype=np.int8)
    for i in range(count):
        if use_policy:
            score, own = policy_playout(sts[i], metas[i], max_moves, amaf, rollout_tab)
        else:
            score, own = playout(sts[i], metas[i], max_moves, amaf)
        d = score - komi
        out[i] = 1.0 if d > 0 else (-1.0 if d < 0 else 0.0)
        for p in range(own.shape[0]):
            if own[p] == 1:
                own_acc[p] += 1.0
            elif own[p] == 2:
                own_acc[p] -= 1.0
    return out


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
                own = np.zeros(area, dtype=np.float64)
                z = rollouts(sts, metas, count, komi, max_moves, own, self.tables, use_policy)
                self._out, self._error = (z, own), None
            except Exception as exc:  # handed to the search thread by result()
                self._out, self._error = None, exc
            self._done.set()


class Position:
    """The leaf seen by the features: what engine.features reads of a Game."""

    __slots__ = ("st", "meta", "board_history", "size", "history")

    def __init__(self, st, meta, board_history, size):
        self.st, self.meta, self.board_history, self.size = st, meta, board_history, size
        self.history = ()

    @property
    def to_play(self) -> int:
        return int(self.meta[B.M_TOPLAY])


@dataclass
class LeafBatch:
    """One batch of descents waiting for its network call (`NetworkSearch.select`): the rows of
    engine.search.leaves for its `size` leaves (paths, boards, colour rows), which leaves the
    policy expands, whether a network call is needed at all, and the leaves' planes (Zero) or
    positions (AlphaGo, whose features read a position)."""
    paths: np.ndarray
    lengths: np.ndarray
    sts: np.ndarray
    metas: np.ndarray
    hists: np.ndarray
    counts: np.ndarray
    expand: np.ndarray
    need_net: bool
    planes: np.ndarray | None = None
    leaves: list | None = None

    @property
    def size(self) -> int:
        return len(self.lengths)


class NetworkSearch:
    """AlphaGo (mode "alphago") or Zero (mode "zero") search over evaluators.

    alphago: `policy` (SL policy evaluator, priors) and `value` (value evaluator), either may be
    None (heuristic priors; rollouts only); `rollout` is the fast rollout policy (None: the
    heuristic playouts). zero: `policy` is the dual-head evaluator. A `Search`.
    """

    ownership = False   # only the AlphaGo search's rollouts give any (none at lambda 0, or Zero)
    search = run

    def __init__(self, config: NetSearchConfig, policy=None, value=None,
                 policy_features: str = "alphago48", value_features: str = "alphago49",
                 seed: int | None = None, rollout: RolloutPolicy | None = None):
        self.config = config
        self.policy, self.value = policy, value
        self.rollout = rollout
        self._rollout_pol = rollout or RolloutPolicy.uniform()
        self._rollout_tab = self._rollout_pol.new_tables()
        self._helpers: list[_RolloutHelper] = []
        # the planes each network takes; a by-size evaluator's network for the board may take
        # others, read from its metadata when a game begins (`_features_for`)
        self.policy_features, self.value_features = policy_features, value_features
        self._pf, self._vf, self._shared = policy_features, value_features, False
        self.tree = T.Tree(config.tree_capacity)
        self._rng = np.random.default_rng(seed)
        self.eval_time = 0.0
        self.evaluations = 0
        self.dead_at_terminals: np.ndarray | None = None  # set by the Player (search.terminal)
        self._heads = (None, None)      # the value net's heads at the root (`_value_heads`)
        self._utility, self._utility_scale = 0.0, 1.0   # the score utility's, set by `begin`
        playout_seed(int(self._rng.integers(2**31)))

    @property
    def name(self) -> str:
        return self.config.mode

    # ---- evaluation ---------------------------------------------------------------------------
    def _features(self, positions, name):
        return np.stack([extract(p, name) for p in positions]).astype(np.float32)

    @staticmethod
    def run_network(evaluator, planes, metas):
        """evaluator.evaluate, with cache keys from the positions' `metas` (int64[B, NM]) when the
        evaluator keeps a cache: a leaf visited again before its expansion (n_thr > 1) costs no
        second network run. A by-size evaluator hands the positions to its network for their
        size, whose cache it is."""
        n = planes.shape[-1]
        evaluator = for_size(evaluator, n)
        if getattr(evaluator, "cache_size", 0):
            cols = metas[:, [B.M_HASH, B.M_TOPLAY, B.M_KO, B.M_LAST, B.M_LAST2]].tolist()
            return evaluator.evaluate(planes, keys=[(n, *c) for c in cols])
        return evaluator.evaluate(planes)

    @staticmethod
    def _metas(positions) -> np.ndarray:
        return np.stack([p.meta for p in positions])

    def _evaluate(self, positions, need_policy, need_value, zero_leaves=None):
        """(priors [B, N*N+1] or None, value_stm [B] or None, score_stm [B] or None) for the leaf
        positions; the score only from a Zero net with a score head. Zero: `zero_leaves` =
        (planes, metas) of a batch's leaves instead of `positions`."""
        t0 = time.perf_counter()
        priors = values = scores = None
        if self.config.mode == "zero":
            planes, metas = zero_leaves or (self._features(positions, "zero17"),
                                            self._metas(positions))
            ev = self.run_network(self.policy, planes, metas)
            priors, values, scores = ev.priors, ev.value_stm, ev.score
        elif need_value and self._one_net():
            # one dual-head network fills both roles: a single call gives every leaf its value
            # and the expanding leaves their priors (the others' rows go unused)
            ev = self.run_network(self.value, self._features(positions, self._vf),
                                  self._metas(positions))
            priors, values = ev.priors, ev.value_stm
        else:
            if need_policy is not None and self.policy is not None and need_policy.any():
                sel = [p for p, f in zip(positions, need_policy) if f]
                pr = self.run_network(self.policy, self._features(sel, self._pf),
                                      self._metas(sel)).priors
                priors = np.zeros((len(positions), pr.shape[1]), dtype=np.float32)
                priors[need_policy] = pr
            if need_value and self.value is not None:
                values = self.run_network(self.value, self._features(positions, self._vf),
                                          self._metas(positions)).value_stm
        self.eval_time += time.perf_counter() - t0
        self.evaluations += len(planes if positions is None else positions)
        return priors, values, scores

    def _one_net(self) -> bool:
        """AlphaGo search whose priors and values come from the same network on the same planes
        (a dual-head Zero network in both roles) on the board of the game begun."""
        return self._shared

    def _features_for(self, size: int) -> None:
        """The feature sets of the networks that answer `size` x `size` boards, and whether one
        network answers both roles there (decided once per search, not per batch)."""
        self._pf = feature_set_for(self.policy, size, self.policy_features)
        self._vf = feature_set_for(self.value, size, self.value_features)
        self._shared = (self.policy is not None and self._pf == self._vf
                        and for_size(self.policy, size) is for_size(self.value, size))

    # ---- expansion ----------------------------------------------------------------------------
    def _expand(self, node, st, meta, net_priors) -> None:
        """Children for every candidate move; priors from the network row (Pos order, pass last)
        when given, else the heuristic ones (engine.search.leaves.expand_node)."""
        t = self.tree
        moves_buf, priors_buf = self._bufs
        has_row = net_priors is not None
        expand_node(t.ti, t.tf, t.tm, node, st, meta,
                    net_priors if has_row else self._no_row, has_row, self._sharpen,
                    self.config.policy_temperature, moves_buf, priors_buf)

    def _add_root_noise(self) -> None:
        cfg = self.config
        if cfg.dirichlet_alpha <= 0:
            return
        t = self.tree
        kids = t.children(t.root)
        if len(kids) == 0:
            return
        noise = self._rng.dirichlet([cfg.dirichlet_alpha] * len(kids))
        p = t.tf[T.F_P, kids.start:kids.stop]
        t.tf[T.F_P, kids.start:kids.stop] = (1 - cfg.dirichlet_eps) * p + cfg.dirichlet_eps * noise

    def _prune_root_pass(self) -> None:
        t = self.tree
        kids = np.arange(t.children(t.root).start, t.children(t.root).stop)
        passes = kids[t.ti[T.I_MOVE, kids] == PASS]
        others = kids[(t.ti[T.I_MOVE, kids] != PASS) & ((t.ti[T.I_FLAGS, kids] & T.PRUNED) == 0)]
        if len(others):
            t.ti[T.I_FLAGS, passes] |= T.PRUNED

    # ---- the steps of the run loop (engine.search.base.run) ----------------------------------
    @property
    def chunk(self) -> int:
        return self.config.batch_size

    def begin(self, game, color) -> None:
        cfg = self.config
        t = self.tree
        st0, meta0 = game.st.copy(), game.meta.copy()
        meta0[B.M_TOPLAY] = color
        a = st0.shape[1]
        root_hist = np.zeros((HISTORY, a), dtype=np.int32)
        hist_len = min(HISTORY, len(game.board_history))
        for i, row in enumerate(game.board_history[-hist_len:]):
            root_hist[i] = row
        moves_buf = np.empty(a + 1, dtype=np.int32)
        priors_buf = np.empty(a + 1, dtype=np.float64)
        self._game, self._color = game, color
        self._features_for(game.size)
        self._root = (st0, meta0, root_hist, hist_len)
        self._bufs = (moves_buf, priors_buf)
        self._no_row = np.zeros(1, dtype=np.float32)    # a row for kernels that take none
        self._sharpen = cfg.mode == "alphago"           # the SL priors' temperature and pass
        self._max_moves = int(cfg.max_moves_factor * game.size * game.size)
        self._use_rollouts = cfg.mode == "alphago" and (cfg.lam > 0 or self.value is None)
        self._use_value = (cfg.mode == "zero") or (self.value is not None and cfg.lam < 1)
        self._lam = 1.0 if (cfg.mode == "alphago" and self.value is None) else (
            0.0 if cfg.mode == "zero" else cfg.lam)
        self._utility = cfg.score_utility if (
            cfg.mode == "zero" and getattr(for_size(self.policy, game.size), "has_score", False)
        ) else 0.0
        self._utility_scale = cfg.score_utility_scale or float(game.size)
        # the rollouts and terminals are scored at the game's komi; the value networks are not
        self._value_komi = learned_komi(for_size(self._head_net()[0], game.size), cfg.value_komi)
        self._komi_shift = komi_shift(game.komi, self._value_komi, game.size, cfg.komi_scale)
        if t.ti[T.I_FIRST, t.root] < 0:
            self._expand_root(game, st0, meta0, root_hist, hist_len)
        self._heads = self._value_heads(Position(st0.copy(), meta0.copy(), [
            root_hist[i].copy() for i in range(hist_len)], game.size), color)
        self._add_root_noise()
        if game.move_number < cfg.no_pass_before:
            self._prune_root_pass()
        self._own_acc = np.zeros(a, dtype=np.float64)
        self._own_n = 0

    def _head_net(self) -> tuple:
        """(evaluator, feature set) of the network whose auxiliary heads answer: the value
        network in the AlphaGo search, the dual-head network in Zero."""
        if self.config.mode == "zero":
            return self.policy, "zero17"
        return self.value, self._vf

    def _value_heads(self, pos: Position, color: int) -> tuple:
        """(ownership float[N, N] from Black's view, score lead for Black in points) from the
        auxiliary heads of the value or Zero network (docs/algorithms.md §4.3, §4.6) at `pos`,
        `color` to move; each None where the network has no such head (or there is none)."""
        net, features = self._head_net()
        net = for_size(net, pos.size)
        has_own = getattr(net, "has_ownership", False)
        has_score = getattr(net, "has_score", False)
        if not (has_own or has_score):
            return None, None
        ev = self.run_network(net, self._features([pos], features), pos.meta[None])
        sign = 1.0 if color == B.BLACK else -1.0
        n = pos.size
        own = sign * ev.ownership[0].reshape(n, n).astype(np.float64) if has_own else None
        return own, (sign * float(ev.score[0]) if has_score else None)

    def head_ownership(self, game) -> np.ndarray | None:
        """float[N, N], +1 black, from the value or Zero network's ownership head for `game` as
        it stands (no playouts); None when the network has no such head."""
        self._features_for(game.size)
        if not getattr(for_size(self._head_net()[0], game.size), "has_ownership", False):
            return None
        pos = Position(game.st.copy(), game.meta.copy(), list(game.board_history[-8:]), game.size)
        return self._value_heads(pos, game.to_play)[0]

    def _expand_root(self, game, st0, meta0, root_hist, hist_len):
        pos = Position(st0.copy(), meta0.copy(), [root_hist[i].copy() for i in range(hist_len)],
                       game.size)
        need = np.array([True])
        priors = self._evaluate([pos], need, False)[0] if self.policy is not None else None
        self._expand(self.tree.root, st0, meta0, priors[0] if priors is not None else None)

    def step(self, want: int) -> int:
        """One batch: `want` descents, one network call for their leaves (while the rollouts
        run), then the backups."""
        batch = self.select(want)
        if batch is None:
            return want
        result = {}

        def run_net():
            result["net"] = self._net_for(batch)

        worker = None
        if batch.need_net and self._use_rollouts:   # the network on a second thread while the
            worker = threading.Thread(target=run_net)   # rollouts run
            worker.start()
        elif batch.need_net:             # nothing to overlap with: a thread would only cost
            run_net()
        z = None
        if self._use_rollouts:
            m = batch.size
            z = self._rollouts(batch.sts.copy(), batch.metas.copy(), m, self._game.komi,
                               self._max_moves)
            self._own_n += m
        if worker is not None:
            worker.join()
        self.finish(batch, result.get("net", (None, None, None)), z)
        return want

    def _net_for(self, batch: LeafBatch) -> tuple:
        """(priors, values, scores) of the batch's leaves; all None when no network is needed."""
        if not batch.need_net:
            return None, None, None
        return self._evaluate(batch.leaves, batch.expand, self._use_value,
                              None if batch.leaves is not None else (batch.planes, batch.metas))

    def select(self, want: int) -> LeafBatch | None:
        """The first half of `step`: `want` descents from the root with virtual loss; terminals
        are scored and backed up at once, a leaf met twice is dropped with its virtual loss
        undone (engine.search.leaves.select_leaves); the others make the batch (None when none
        is left). Its network answers go to `finish` (engine.search.lockstep runs several
        searches' batches in one network call)."""
        cfg = self.config
        game, t = self._game, self.tree
        st0, meta0, root_hist, hist_len = self._root
        a = st0.shape[1]
        paths = np.empty((want, 4 * a + 64), dtype=np.int64)
        lengths = np.empty(want, dtype=np.int64)
        sts = np.empty((want, B.NF, a), dtype=st0.dtype)
        metas = np.empty((want, B.NM), dtype=meta0.dtype)
        hists = np.empty((want, HISTORY, a), dtype=np.int32)
        counts = np.empty(want, dtype=np.int64)
        m = select_leaves(t.ti, t.tf, t.tm, st0, meta0, root_hist, hist_len, want, cfg.c_puct,
                          self._lam, cfg.fpu, cfg.n_vl, cfg.use_alphazero_c, cfg.c_base,
                          cfg.c_init, cfg.forced_k, game.komi, terminal_mask(self, a),
                          self._utility, self._utility_scale, paths, lengths, sts, metas, hists,
                          counts)
        if m == 0:
            return None
        batch = LeafBatch(paths[:m], lengths[:m], sts[:m], metas[:m], hists[:m], counts[:m],
                          np.ones(m, dtype=bool), True)
        if cfg.mode == "zero":
            batch.planes = extract_leaves("zero17", batch.hists, batch.counts, batch.metas,
                                          game.size)
            return batch
        batch.leaves = [Position(batch.sts[j], batch.metas[j],
                                 list(batch.hists[j, :batch.counts[j]]), game.size)
                        for j in range(m)]
        # which leaves get expanded (and so need the policy) now
        leaf = paths[np.arange(m), lengths[:m] - 1]
        batch.expand = (t.ti[T.I_N, leaf] + 1 >= cfg.n_thr) & (t.ti[T.I_FIRST, leaf] < 0)
        batch.need_net = self._use_value or (bool(batch.expand.any()) and self.policy is not None)
        return batch

    def finish(self, batch: LeafBatch, net: tuple, z=None) -> None:
        """The second half of `step`: expand the batch's leaves that wait for it and back up
        every leaf's value (and rollout z) (engine.search.leaves.finish_leaves); `net` =
        (priors, values, scores) of its leaves."""
        cfg = self.config
        game, t = self._game, self.tree
        moves_buf, priors_buf = self._bufs
        priors, values, scores = net
        m = batch.size
        sign = np.where(batch.metas[:, B.M_TOPLAY] == B.BLACK, 1.0, -1.0)
        v_black = np.zeros(m)
        if values is not None:
            v_black = value_at_komi(sign * values.astype(np.float64), self._komi_shift)
        lead = np.zeros(m)
        if self._utility:   # the score head learned at value_komi, as the value: moved to komi
            lead = sign * scores.astype(np.float64) + self._value_komi - game.komi
        finish_leaves(t.ti, t.tf, t.tm, batch.paths, batch.lengths, m, batch.sts, batch.metas,
                      batch.expand, priors if priors is not None else self._no_row[None],
                      priors is not None, self._sharpen, cfg.policy_temperature, v_black,
                      values is not None, z if z is not None else v_black, z is not None, lead,
                      float(self._utility), self._utility_scale, cfg.n_vl, moves_buf, priors_buf)

    def _rollouts(self, sts, metas, m, komi, max_moves) -> np.ndarray:
        """z (black's view) for the m leaf boards; the first share runs here, the others on the
        helper threads (each with its own pattern cache and ownership sums)."""
        k = max(1, min(self.config.rollout_threads, m))
        while len(self._helpers) < k - 1:
            self._helpers.append(_RolloutHelper(self._rollout_pol.new_tables(),
                                                int(self._rng.integers(2**31))))
        bounds = np.linspace(0, m, k + 1).astype(int)
        shares = list(zip(self._helpers, bounds[1:-1], bounds[2:]))
        use_policy = self.rollout is not None
        for h, lo, hi in shares:
            h.submit(sts[lo:hi], metas[lo:hi], hi - lo, komi, max_moves, self._own_acc.shape[0],
                     use_policy)
        z = np.empty(m, dtype=np.float64)
        first = bounds[1]
        z[:first] = rollouts(sts[:first], metas[:first], first, komi, max_moves, self._own_acc,
                             self._rollout_tab, use_policy)
        for h, lo, hi in shares:
            z[lo:hi], own = h.result()
            self._own_acc += own
        return z

    def _prune_target(self, res: SearchResult) -> None:
        """Policy target pruning: each root move's `target_visits`, its visits less the forced
        playouts that PUCT alone would not have given it (tree.pruned_visits)."""
        cfg, t = self.config, self.tree
        root = t.root
        c = cfg.c_puct
        if cfg.use_alphazero_c:
            c = np.log((1.0 + t.ti[T.I_N, root] + cfg.c_base) / cfg.c_base) + cfg.c_init
        kept = T.pruned_visits(t.ti, t.tf, root, c, self._lam, cfg.forced_k)
        first = int(t.ti[T.I_FIRST, root])
        for stat in res.moves:
            stat.target_visits = int(kept[T.find_child(t.ti, root, stat.move) - first])

    def close(self) -> None:
        """Stop the rollout helper threads (they are daemons: a process may also just exit)."""
        for h in self._helpers:
            h.close()
        self._helpers = []

    def __del__(self):
        self.close()  # a search dropped without close() does not leave its helpers waiting

    def result(self, ran: int, elapsed: float) -> SearchResult:
        game = self._game
        own = None
        if self._own_n > 0:  # rollout ownership (AlphaGo search); Zero has none
            n = game.size
            own = (self._own_acc.reshape(n + 2, n + 2)[1:-1, 1:-1] / self._own_n).copy()
        # the value network's heads, where it has them, answer for the root: ownership with no
        # playouts at lambda 0, and a score lead that the rollouts' ownership (a mean over
        # playouts of a policy much weaker than the networks) only approximates
        head_own, head_lead = self._heads
        # with the score utility, the value's win rates are in the rollout sums (lambda 1)
        res = summarize_root(self.tree, self._color, game.size,
                             ownership_black=own if head_own is None else head_own,
                             simulations=ran, elapsed=elapsed,
                             lam=1.0 if self._utility else self._lam, komi=game.komi)
        if self.config.forced_k > 0:
            self._prune_target(res)
        if head_lead is not None:     # learned with value_komi: moved to the game's komi
            res.score_lead_black = head_lead + self._value_komi - game.komi
        if self._utility:     # the value's sums are the rollouts' here: report them as the value's
            for stat in res.moves:
                stat.value_winrate, stat.rollout_winrate = stat.rollout_winrate, None
        return res


__all__ = ["ALPHAGO_C_PUCT", "ZERO_C_PUCT", "NetSearchConfig", "NetworkSearch", "Position"]
