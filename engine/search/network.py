"""What the two network searches share: one tree, its batches of leaves, the root and the report.

`engine.search.alphago.AlphaGoSearch` (AlphaGo Fan/Lee's APV-MCTS) and
`engine.search.zero.ZeroSearch` (AlphaGo Zero's PUCT) are this `NetworkSearch` with their own
leaf evaluation. Notation and defaults from docs/algorithms.md §2. A simulation:

1. `descend` walks the tree from the root by PUCT (virtual loss `n_vl` on the path, so that the
   other simulations of the batch spread out), to a leaf;
2. the leaf's position is rebuilt by `apply_path` (the tree stores moves, not boards); both run
   for a whole batch in one numba call (engine.search.leaves.select_leaves), as do the batch's
   expansions and backups after its network call (`finish_leaves`);
3. the leaf is evaluated as the search does it (AlphaGo: rollouts and the value network, mixed
   by lambda; Zero: the dual-head network alone) and expanded with the policy's priors. A
   terminal leaf (two passes) is scored by the rules, with the stones the Player judged dead
   taken off (engine.search.terminal). With a score utility (`score_utility` and
   `dynamic_score_utility`: KataGo's static and dynamic score utilities,
   engine.search.leaves.score_utility) the tree's Q sums hold the utility of every leaf's
   result and score: a rollout's z and final margin, the value and the network's score lead (the
   value alone where the network has no score head), the rules' result and score at a terminal;
   the win/loss results go to the Z sums, from which the win rates are reported. The dynamic
   term is centred on the score the root expects, set at each search's `begin`.
4. A batch of `batch_size` simulations shares one network call. A leaf met twice in one batch is
   dropped the second time (its virtual loss undone).

Values enter the tree from black's view (`v_black`), the tree flips to each mover's view.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from goengine.engine import board as B
from goengine.engine.coords import PASS
from goengine.engine.evaluator import Evaluation, Evaluator
from goengine.engine.features import extract
from goengine.engine.playout import seed as playout_seed
from goengine.engine.search import tree as T
from goengine.engine.search.base import run
from goengine.engine.search.criticality import REFRESH, LeafOwnership, mixed_priors
from goengine.engine.search.komi import KOMI_SCALE, komi_shift, learned_komi
from goengine.engine.search.leaves import (HISTORY, black_values, expand_node, finish_leaves,
                                           select_leaves, utility_on)
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
    lam_by_size: tuple[tuple[int, float], ...] = ()  # (board size, lambda) pairs that replace
                                                     # lam on those sizes
    n_thr: int = 8                 # expansion threshold (paper: 40, tuned to the GPU queue)
    n_vl: int = 3                  # virtual loss
    fpu: float = 0.2               # unvisited child's Q = parent's Q - fpu
    policy_temperature: float = 0.67  # softmax temperature of the SL priors (AlphaGo)
    batch_size: int = 8            # simulations per network call (16: faster, plays worse)
    tree_capacity: int = 1_000_000
    dirichlet_alpha: float = 0.0   # > 0 adds root noise (self-play only): 0.03 on 19x19
    dirichlet_eps: float = 0.25
    max_moves_factor: float = 3.0  # rollout length cap, in board points
    rollout_threads: int = 1       # threads sharing a batch's rollouts; 0: the machine's cores
                                   # (at most AUTO_ROLLOUT_THREADS) where the search runs
                                   # without its value network on the board (lambda 1: the
                                   # network's thread only expands, a core would sit idle),
                                   # else 1 (engine.search.alphago.rollout_threads_for)
    value_komi: float | None = None  # the komi the value network learned at; None: what its
                                     # file says, else 7.5 (engine.search.komi.learned_komi)
    komi_scale: float = KOMI_SCALE  # logistic scale of the final score, points per board line
    score_utility: float = 0.0     # weight of the score in a leaf's utility, centred on 0
                                   # (KataGo's static score utility: 0.1); 0: off
    score_utility_scale: float = 0.0  # points of score at which its atan reaches pi/4; 0: the
                                      # board side N (KataGo's: 2 N)
    dynamic_score_utility: float = 0.0  # weight of the score centred on the root's expected
                                        # score (KataGo's dynamic score utility: 0.3); 0: off
    dynamic_score_scale: float = 0.75   # its atan's scale, and how far its centre may lie from
                                        # the expected score, in board sides N (KataGo: 0.75)
    dynamic_score_zero_weight: float = 0.2  # the centre is the expected score moved this share
                                            # of the way to 0 (KataGo: 0.2)
    forced_k: float = 0.0          # Zero self-play: KataGo's forced playouts at the root,
                                   # sqrt(k P N) per child (KataGo: 2), taken back from the
                                   # policy target (tree.pruned_visits); 0: off
    no_pass_before: int = 0        # the root's pass is pruned before this move number while
                                   # another move is there (Zero self-play: a side whose value
                                   # says it is lost cannot end the game in the opening)
    gumbel: bool = False           # Zero (other modes ignore it): Gumbel AlphaZero's root (Danihelka et al. 2022):
                                   # sequential halving over the top gumbel_k of g + logits, the
                                   # move and improved policy from completed q (docs/algorithms.md
                                   # §2.10); it replaces the Dirichlet noise. False: PUCT's root
    gumbel_k: int = 16             # m, the most root moves considered (the paper's 16)
    gumbel_c_visit: float = 50.0   # sigma(q) = (c_visit + max_b N(b)) c_scale q_hat (the paper's)
    gumbel_c_scale: float = 1.0
    gumbel_scale: float = 1.0      # the Gumbel noise's scale (mctx's gumbel_scale); 0: none, the
                                   # m most probable moves and a deterministic choice
    criticality: float = 0.0       # weight of Coulom's criticality in the root's priors, from
                                   # the rollouts (AlphaGo) or the ownership and value heads
                                   # (Zero) of the search's leaves (engine.search.criticality);
                                   # 0: off

    def lam_for(self, size: int) -> float:
        """Lambda on size x size boards."""
        return dict(self.lam_by_size).get(size, self.lam)

    def __post_init__(self):
        if self.c_puct is None:     # frozen: the mode's default set once, here
            object.__setattr__(self, "c_puct",
                               ZERO_C_PUCT if self.mode == "zero" else ALPHAGO_C_PUCT)
        if not all(0.0 <= lam <= 1.0 for lam in (self.lam, *dict(self.lam_by_size).values())):
            raise ValueError("lambda must be in [0, 1]")
        if self.gumbel_k < 1:
            raise ValueError(f"gumbel_k must be at least 1, not {self.gumbel_k}")
        if not (self.gumbel_c_visit >= 0 and self.gumbel_c_scale >= 0 and self.gumbel_scale >= 0):
            raise ValueError("gumbel_c_visit, gumbel_c_scale and gumbel_scale must be >= 0")
        if self.rollout_threads < 0:
            raise ValueError(f"rollout_threads must be >= 0 (0: by the cores), not "
                             f"{self.rollout_threads}")
        if not 0.0 <= self.criticality <= 1.0:
            raise ValueError(f"criticality must be in [0, 1], not {self.criticality}")


def utility_row(static: float, scale: float, dynamic: float, centre: float,
                dynamic_scale: float) -> np.ndarray:
    """float64[5]: the score utility's settings as engine.search.leaves.score_utility reads
    them (Black's view; scales in points)."""
    return np.array([static, scale, dynamic, centre, dynamic_scale], dtype=np.float64)


def network_for(evaluator: Evaluator | None, n: int) -> Evaluator | None:
    """The network that answers n x n boards in a role; None where the role has none."""
    return None if evaluator is None else evaluator.for_size(n)


def run_network(evaluator: Evaluator, planes: np.ndarray, metas: np.ndarray) -> Evaluation:
    """evaluator.evaluate, with cache keys from the positions' `metas` (int64[B, NM]) when the
    evaluator keeps a cache: a leaf visited again before its expansion (n_thr > 1) costs no
    second network run. A by-size evaluator hands the positions to its network for their size,
    whose cache it is."""
    n = planes.shape[-1]
    evaluator = evaluator.for_size(n)
    if evaluator.cache_size:
        return evaluator.evaluate(planes, keys=position_keys(metas, n).tolist())
    return evaluator.evaluate(planes)


@njit(cache=True)
def _mix(x):
    """splitmix64's finaliser: every bit of x moves about half of the result's."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def position_keys(metas, n):
    """int64[B]: the cache key of each position, its stones' Zobrist hash XOR a mix of what
    else the planes read (board size, side to move, ko point, the last two moves): one int a
    position, where a tuple of the six cost more Python than the cache saved on 9x9 int8
    batches. Two positions differing in those fields collide with odds of 2**-64."""
    out = np.empty(metas.shape[0], dtype=np.int64)
    for j in range(metas.shape[0]):
        small = np.int64(n)
        for f in (B.M_TOPLAY, B.M_KO, B.M_LAST, B.M_LAST2):   # each in [-1, 1023)
            small = small * 1024 + metas[j, f] + 1
        out[j] = metas[j, B.M_HASH] ^ np.int64(_mix(np.uint64(small)))
    return out


def features(positions, name: str) -> np.ndarray:
    """float32[B, C, N, N]: the planes `name` of each position."""
    return np.stack([extract(p, name) for p in positions]).astype(np.float32)


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
    """The tree and the leaf batches of a search over networks (a `Search`); the subclasses say
    how a batch's leaves are evaluated (`_prepare`, `_net_for`), which network's heads answer
    at the root (`_head_net`) and how they ready a game (`_configure`). `config.mode` is the
    subclass's `name`."""

    name = "network"
    ownership = False   # only the AlphaGo search's rollouts give any (none at lambda 0, or Zero)
    search = run
    sl_priors = False   # the network's priors as AlphaGo's SL policy's: sharpened, pass fixed
                        # (engine.search.leaves.fill_priors)
    tree_scores = False  # the reported score leads, the root's and each move's, come from the
                         # tree's score sums (where its leaves have scores), not the root's
                         # score head alone

    def __init__(self, config: NetSearchConfig, seed: int | None = None):
        self.config = config
        self.tree = T.Tree(config.tree_capacity)
        self._rng = np.random.default_rng(seed)
        self.eval_time = 0.0
        self.evaluations = 0
        self._heads = (None, None)      # the head network's answer at the root (`_value_heads`)
        self._lam = 0.0                 # the rollouts' weight in Q (engine.search.tree)
        self._utility = 0.0             # the static score utility's weight (`_configure`)
        self._util = utility_row(0.0, 1.0, 0.0, 0.0, 1.0)   # leaves.score_utility's, by `begin`
        self._value_leads = False       # whether the leaves' values come with a score lead
        self._use_rollouts = False      # whether the leaves get rollouts (`_configure`)
        # numba's generator on this thread (the rollouts'), seeded by every network search: a
        # seed's root noise comes after this draw, as it always has
        playout_seed(int(self._rng.integers(2**31)))

    @property
    def config(self) -> NetSearchConfig:
        return self._config

    @config.setter
    def config(self, config: NetSearchConfig) -> None:
        """The settings (Player.set_param replaces them); their mode stays the search's own."""
        if config.mode != self.name:
            raise ValueError(f"the {self.name} search runs with mode {self.name!r}, "
                             f"not {config.mode!r}")
        self._config = config

    # ---- what the subclasses say --------------------------------------------------------------
    def _configure(self, game) -> None:
        """Ready the search's own settings for `game` (lambda, `_utility`, `_value_leads`,
        planes)."""
        raise NotImplementedError

    def _dynamic_weight(self) -> float:
        """The dynamic score utility's weight in the game begun (0 where the search has no
        score for its leaves)."""
        raise NotImplementedError

    def _head_net(self, size: int) -> tuple:
        """(evaluator or None, feature set) of the network whose auxiliary heads answer for
        size x size boards."""
        raise NotImplementedError

    def _root_priors(self, pos: Position) -> np.ndarray | None:
        """The network's priors row for the root `pos`, or None (heuristic priors)."""
        raise NotImplementedError

    def _prepare(self, batch: LeafBatch) -> None:
        """Fill in what the batch's network call needs (planes or positions, `expand`,
        `need_net`)."""
        raise NotImplementedError

    def _net_for(self, batch: LeafBatch) -> tuple:
        """(priors, values, scores) of the batch's leaves; each None where not asked for."""
        raise NotImplementedError

    def _rollout_ownership(self, size: int) -> np.ndarray | None:
        """float[N, N], +1 black: the mean final ownership of the search's rollouts, or None."""
        return None

    def _leaf_ownership(self) -> LeafOwnership | None:
        """The ownership and result sums of the search's leaves that its criticality reads, or
        None where it has none (engine.search.criticality)."""
        return None

    def _timed(self, t0: float, count: int) -> None:
        """Count `count` positions evaluated since perf_counter() was `t0`."""
        self.eval_time += time.perf_counter() - t0
        self.evaluations += count

    # ---- the root -----------------------------------------------------------------------------
    def _expand(self, node, st, meta, net_priors) -> None:
        """Children for every candidate move; priors from the network row (Pos order, pass last)
        when given, else the heuristic ones (engine.search.leaves.expand_node)."""
        t = self.tree
        moves_buf, priors_buf = self._bufs
        has_row = net_priors is not None
        expand_node(t.ti, t.tf, t.tm, node, st, meta,
                    net_priors if has_row else self._no_row, has_row, self.sl_priors,
                    self.config.policy_temperature, moves_buf, priors_buf)

    def _add_root_noise(self) -> None:
        cfg = self.config
        if cfg.dirichlet_alpha <= 0 or cfg.gumbel:   # the Gumbel root's noise is its own
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

    def begin(self, game, color, dead_at_terminals: np.ndarray | None = None,
              budget: int | None = None, seconds: float | None = None) -> None:
        cfg = self.config
        self._limits = (budget, seconds)
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
        self._configure(game)
        self._root = (st0, meta0, root_hist, hist_len)
        self._batch_rows = None     # `_rows`: sized for this game's board at the first batch
        self._bufs = (moves_buf, priors_buf)
        self._no_row = np.zeros(1, dtype=np.float32)    # a row for kernels that take none
        self._no_value = np.zeros(1, dtype=np.float32)  # values or scores for kernels, none
        self._dead = terminal_mask(dead_at_terminals, a)
        # the rollouts and terminals are scored at the game's komi; the value networks are not
        self._value_komi = learned_komi(network_for(self._head_net(game.size)[0], game.size),
                                        cfg.value_komi)
        self._komi_shift = komi_shift(game.komi, self._value_komi, game.size, cfg.komi_scale)
        if t.ti[T.I_FIRST, t.root] < 0:
            self._expand(t.root, st0, meta0, self._root_priors(self._root_position()))
        self._heads = self._value_heads(self._root_position(), color)
        self._util = self._utility_row(game)
        self._add_root_noise()
        if game.move_number < cfg.no_pass_before:
            self._prune_root_pass()
        kids = t.children(t.root)
        self._root_priors0 = t.tf[T.F_P, kids.start:kids.stop].copy()   # criticality mixes in
        self._crit_at = REFRESH

    def _root_position(self) -> Position:
        """The root's position as the features see it (a copy: features may not change the
        search's)."""
        st0, meta0, root_hist, hist_len = self._root
        return Position(st0.copy(), meta0.copy(), [root_hist[i].copy() for i in range(hist_len)],
                        self._game.size)

    def _utility_row(self, game) -> np.ndarray:
        """leaves.score_utility's settings for this search: the weights, the static scale, and
        the dynamic term's centre from the score the root expects now (KataGo's
        recentScoreCenter: moved `dynamic_score_zero_weight` of the way to 0, at most
        `dynamic_score_scale` N points from it)."""
        cfg, n = self.config, float(game.size)
        dyn = self._dynamic_weight()
        centre = 0.0
        if dyn:
            expected = self._expected_score(game)
            cap = cfg.dynamic_score_scale * n
            centre = expected * (1.0 - cfg.dynamic_score_zero_weight)
            centre = min(max(centre, expected - cap), expected + cap)
        return utility_row(self._utility, cfg.score_utility_scale or n, dyn, centre,
                           cfg.dynamic_score_scale * n)

    def _expected_score(self, game) -> float:
        """Black's expected lead at the root: the tree's (a reused root's score sums), else the
        value network's score head, else 0 (a fresh tree without a head: the centre waits for
        the next search)."""
        lead = self._tree_lead(self.tree.root, 1.0)
        if lead is not None:
            return lead
        head_lead = self._heads[1]
        return 0.0 if head_lead is None else head_lead + self._value_komi - game.komi

    def _score_lam(self) -> float | None:
        """The weight of the rollouts' margins in a reported score (the leaves' score lead of
        the value network taking the rest), as lambda weighs them in Q; None where the tree's
        leaves have no score (no rollouts, no score head)."""
        if self._value_leads:
            return self._lam
        return 1.0 if self._lam > 0 else None

    def _tree_lead(self, node: int, sign: float) -> float | None:
        """Points `node`'s mover leads by, from the tree's score sums (`sign` -1: the other
        side's), Black's when node is the root (its mover's sign applied); None where there
        are none."""
        t, lam = self.tree, self._score_lam()
        if lam is None or t.ti[T.I_NR, node] + t.ti[T.I_NV, node] == 0:
            return None
        if node == t.root:
            sign = 1.0 if t.ti[T.I_COLOR, node] == B.BLACK else -1.0
        return sign * float(T.mixed_mean(t.ti, t.tf, node, lam, T.F_SR, T.F_SV, 0))

    def _value_heads(self, pos: Position, color: int) -> tuple:
        """(ownership float[N, N] from Black's view, score lead for Black in points) from the
        auxiliary heads of the value or Zero network (docs/algorithms.md §4.3, §4.6) at `pos`,
        `color` to move; each None where the network has no such head (or there is none)."""
        net, planes = self._head_net(pos.size)
        net = network_for(net, pos.size)
        if net is None or not (net.has_ownership or net.has_score):
            return None, None
        ev = run_network(net, features([pos], planes), pos.meta[None])
        sign = 1.0 if color == B.BLACK else -1.0
        n = pos.size
        own = sign * ev.ownership[0].reshape(n, n).astype(np.float64) if net.has_ownership else None
        return own, (sign * float(ev.score[0]) if net.has_score else None)

    def head_ownership(self, game) -> np.ndarray | None:
        """float[N, N], +1 black, from the value or Zero network's ownership head for `game` as
        it stands (no playouts); None when the network has no such head."""
        net = network_for(self._head_net(game.size)[0], game.size)
        if net is None or not net.has_ownership:
            return None
        pos = Position(game.st.copy(), game.meta.copy(), list(game.board_history[-8:]), game.size)
        return self._value_heads(pos, game.to_play)[0]

    def step(self, want: int) -> int:
        """One batch: up to `want` descents (fewer where the Gumbel root ends a batch early),
        one network call for their leaves, then the backups; returns the descents made."""
        root_kids = self.root_children(want)
        batch = self.select(len(root_kids), root_kids)
        if batch is not None:
            self.finish(batch, self._net_for(batch))
        return len(root_kids)

    def select(self, want: int, root_kids: np.ndarray | None = None) -> LeafBatch | None:
        """The first half of `step`: `want` descents from the root with virtual loss, descent i
        into root child root_kids[i] where that is >= 0 (None: `root_children`, which may make
        fewer); terminals are scored and backed up at once, a leaf met twice is dropped with its
        virtual loss undone (engine.search.leaves.select_leaves); the others make the batch
        (None when none is left). Its network answers go to `finish` (engine.search.lockstep
        runs several searches' batches in one network call)."""
        if root_kids is None:
            root_kids = self.root_children(want)
        want = len(root_kids)
        cfg = self.config
        game, t = self._game, self.tree
        st0, meta0, root_hist, hist_len = self._root
        paths, lengths, sts, metas, hists, counts = self._rows(want)
        m = select_leaves(t.ti, t.tf, t.tm, st0, meta0, root_hist, hist_len, want, cfg.c_puct,
                          self._lam, cfg.fpu, cfg.n_vl, cfg.use_alphazero_c, cfg.c_base,
                          cfg.c_init, cfg.forced_k, root_kids, game.komi, self._dead, self._util,
                          paths, lengths, sts, metas, hists, counts)
        if m == 0:
            return None
        batch = LeafBatch(paths[:m], lengths[:m], sts[:m], metas[:m], hists[:m], counts[:m],
                          np.ones(m, dtype=bool), True)
        self._prepare(batch)
        return batch

    def root_children(self, want: int) -> np.ndarray:
        """int64[<= want]: the root child each of a batch's descents goes to, -1 where PUCT
        chooses (always, but for the Zero search's Gumbel root, which may end a batch early)."""
        return np.full(want, -1, dtype=np.int64)

    def _black_values(self, metas: np.ndarray, values, scores) -> tuple:
        """(v_black, lead_black, has_lead) of positions whose network answered `values` (side to
        move's view; None: zeros) and `scores`: float64[B] the value moved to the game's komi,
        and the score lead where the network has a score head (else zeros)."""
        has_lead = self._value_leads and scores is not None
        # the score head learned at value_komi, as the value: moved to komi
        v_black, lead = black_values(self._no_value if values is None else values,
                                     scores if has_lead else self._no_value, metas, len(metas),
                                     self._komi_shift, values is not None, has_lead,
                                     self._value_komi - self._game.komi)
        return v_black, lead, has_lead

    def _rows(self, want: int) -> tuple:
        """The batch arrays of engine.search.leaves for `want` leaves, allocated once for the
        search's chunk (a batch's rows are read by its `finish`, before the next `select`)."""
        if self._batch_rows is None or len(self._batch_rows[1]) < want:
            st0, meta0 = self._root[0], self._root[1]
            a = st0.shape[1]
            self._batch_rows = (np.empty((want, 4 * a + 64), dtype=np.int64),
                                np.empty(want, dtype=np.int64),
                                np.empty((want, B.NF, a), dtype=st0.dtype),
                                np.empty((want, B.NM), dtype=meta0.dtype),
                                np.empty((want, HISTORY, a), dtype=np.int32),
                                np.empty(want, dtype=np.int64))
        return self._batch_rows

    def finish(self, batch: LeafBatch, net: tuple, z=None, margin=None) -> None:
        """The second half of `step`: expand the batch's leaves that wait for it and back up
        every leaf's value (and rollout z and final margin, Black's view)
        (engine.search.leaves.finish_leaves); `net` = (priors, values, scores) of its
        leaves."""
        cfg = self.config
        t = self.tree
        moves_buf, priors_buf = self._bufs
        priors, values, scores = net
        m = batch.size
        v_black, lead, has_lead = self._black_values(batch.metas, values, scores)
        finish_leaves(t.ti, t.tf, t.tm, batch.paths, batch.lengths, m, batch.sts, batch.metas,
                      batch.expand, priors if priors is not None else self._no_row[None],
                      priors is not None, self.sl_priors, cfg.policy_temperature, v_black,
                      values is not None, z if z is not None else v_black,
                      margin if margin is not None else v_black, z is not None, lead, has_lead,
                      self._util, cfg.n_vl, moves_buf, priors_buf)
        self._refresh_criticality()

    def _refresh_criticality(self) -> None:
        """The root's priors mixed with the criticality of the leaves so far, every REFRESH
        leaves (engine.search.criticality)."""
        weight, stats = self.config.criticality, self._leaf_ownership()
        if weight <= 0 or stats is None or stats.n < self._crit_at or self.config.gumbel:
            return
        self._crit_at = stats.n + REFRESH
        t = self.tree
        kids = t.children(t.root)
        if len(kids) != len(self._root_priors0):    # a root expanded after begin: none to mix
            return
        t.tf[T.F_P, kids.start:kids.stop] = mixed_priors(
            self._root_priors0, t.ti[T.I_MOVE, kids.start:kids.stop], stats.criticality(), weight)

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
        """Release what the search holds beyond its tree (the AlphaGo search's threads)."""

    def result(self, ran: int, elapsed: float) -> SearchResult:
        game = self._game
        # the value network's heads, where it has them, answer for the root: ownership with no
        # playouts at lambda 0, and a score lead that the rollouts' ownership (a mean over
        # playouts of a policy much weaker than the networks) only approximates
        head_own, head_lead = self._heads
        own = self._rollout_ownership(game.size) if head_own is None else head_own
        # with a score utility Q's sums hold utilities: the win rates are the Z sums'
        wins = (T.F_ZR, T.F_ZV) if utility_on(self._util) else (T.F_WR, T.F_WV)
        res = summarize_root(self.tree, self._color, game.size, ownership_black=own,
                             simulations=ran, elapsed=elapsed, lam=self._lam, komi=game.komi,
                             wins=wins)
        if self.config.forced_k > 0:
            self._prune_target(res)
        if head_lead is not None:     # learned with value_komi: moved to the game's komi
            res.score_lead_black = head_lead + self._value_komi - game.komi
        if not self._use_rollouts:    # the rules' results at terminals are no rollouts
            for stat in res.moves:
                stat.rollout_winrate = None
        if self.tree_scores:
            self._tree_score_leads(res)
        return res

    def _tree_score_leads(self, res: SearchResult) -> None:
        """The root's and each move's score lead from the tree's score sums (the leaves' rollout
        margins and score leads, mixed as Q mixes them), where there are any."""
        t = self.tree
        lead = self._tree_lead(t.root, 1.0)
        if lead is None:
            return
        res.score_lead_black = lead
        for stat in res.moves:
            if stat.visits > 0:
                stat.score_lead = self._tree_lead(T.find_child(t.ti, t.root, stat.move), 1.0)


__all__ = ["ALPHAGO_C_PUCT", "ZERO_C_PUCT", "LeafBatch", "NetSearchConfig", "NetworkSearch",
           "Position", "features", "network_for", "position_keys", "run_network", "utility_row"]
