"""The search tree as structure-of-arrays, shared by every search of the engine.

Notation as in AlphaGo (Nature 2016) and docs/algorithms.md §2. A node is the position after a
move; its statistics are those of the EDGE from its parent, seen by the player who made the move
(`COLOR`): W sums are wins (+1) minus losses (-1) for that player.

`ti` int32[TI, cap]                      `tf` float64[TF, cap]
| I_FIRST  first child, -1 = leaf        | F_P    prior P(s, a)
| I_NCHILD children, contiguous          | F_WR   rollout value sum  (W_r), mover's view
| I_MOVE   Loc of the move (-1 = pass)   | F_WV   value-net sum      (W_v), mover's view
| I_COLOR  colour that made the move     | F_AW   AMAF (RAVE) value sum
| I_N      visits (N), incl. in flight   | F_ZR   rollout win/loss sum, score utility on
| I_NR     rollout results (N_r)         | F_ZV   value win/loss sum, score utility on
| I_NV     value results   (N_v)         | F_SR   rollout final margin sum (points)
| I_VL     virtual losses in flight      | F_SV   value-net score lead sum (points)
| I_PARENT parent node, -1 at the root   |
| I_FLAGS  PRUNED (illegal by superko)   |
| I_AN     AMAF visits                   |

Q reads W_r and W_v. With a score utility (engine.search.leaves.score_utility) those hold the
leaves' utilities, and the win/loss results that the win rates are reported from go to Z_r and
Z_v; the score sums (S_r over N_r, S_v over N_v) give the reported score leads. All sums but
F_P and F_AW are from the mover's view.

`tm` int64[TM]: used nodes, capacity, root.
"""
from __future__ import annotations

import numpy as np
from numba import njit

(I_FIRST, I_NCHILD, I_MOVE, I_COLOR, I_N, I_NR, I_NV, I_VL, I_PARENT, I_FLAGS, I_AN) = range(11)
TI = 11
F_P, F_WR, F_WV, F_AW, F_ZR, F_ZV, F_SR, F_SV = range(8)
TF = 8
T_USED, T_CAP, T_ROOT = range(3)
TM = 3

PRUNED = 1


class Tree:
    """Owns the arrays. `reset(color_to_play)` makes a fresh root."""

    def __init__(self, capacity: int):
        self.ti = np.zeros((TI, capacity), dtype=np.int32)
        self.tf = np.zeros((TF, capacity), dtype=np.float64)
        self.tm = np.zeros(TM, dtype=np.int64)
        self.tm[T_CAP] = capacity
        self._key = None        # (size, komi, handicap, history) of the last prepared root
        self._color = None      # the colour to play there
        self._spare = None      # (ti, tf) compaction writes into, allocated on first reuse
        self.reset(1)

    def reset(self, color_to_play: int) -> None:
        init_root(self.ti, self.tf, self.tm, 3 - color_to_play)

    @property
    def root(self) -> int:
        return int(self.tm[T_ROOT])

    @property
    def used(self) -> int:
        return int(self.tm[T_USED])

    @property
    def capacity(self) -> int:
        return int(self.tm[T_CAP])

    def prepare_root(self, game, color: int) -> None:
        """Tree reuse: when `game` continues the position of the previous search (same board,
        more moves), the node reached by those moves becomes the root with its subtree
        (compacted); otherwise the tree starts afresh with `color` to play."""
        key = (game.size, game.komi, tuple(game.handicap), tuple(game.history))
        old, old_color = self._key, self._color
        self._key, self._color = key, color
        if old is not None and old[:3] == key[:3]:
            prev, now = old[3], key[3]
            if len(now) >= len(prev) and now[:len(prev)] == prev and (
                    len(now) > len(prev) or old_color == color):
                node = self.root
                for c, mv in now[len(prev):]:
                    node = find_child(self.ti, node, mv) if node >= 0 else -1
                    if node >= 0 and int(self.ti[I_COLOR, node]) != c:
                        node = -1  # the same point played by the other colour (GTP allows it)
                if node >= 0 and int(self.ti[I_COLOR, node]) == 3 - color:
                    spare = self._spare
                    if spare is None:
                        spare = (np.zeros_like(self.ti), np.zeros_like(self.tf))
                    compact(self.ti, self.tf, self.tm, node, spare[0], spare[1])
                    self._spare = (self.ti, self.tf)
                    self.ti, self.tf = spare
                    return
        self.reset(color)

    def children(self, node: int) -> range:
        first = int(self.ti[I_FIRST, node])
        if first < 0:
            return range(0)
        return range(first, first + int(self.ti[I_NCHILD, node]))


@njit(cache=True)
def init_root(ti, tf, tm, mover):
    ti[:, 0] = 0
    tf[:, 0] = 0.0
    ti[I_FIRST, 0] = -1
    ti[I_MOVE, 0] = -1
    ti[I_COLOR, 0] = mover
    ti[I_PARENT, 0] = -1
    tm[T_USED] = 1
    tm[T_ROOT] = 0


@njit(cache=True)
def alloc_children(ti, tf, tm, node, moves, priors, k):
    """Give `node` k children with the given moves and priors. False if the tree is full."""
    used = tm[T_USED]
    if used + k > tm[T_CAP]:
        return False
    mover = 3 - ti[I_COLOR, node]
    for r in range(TI):     # row by row: contiguous, where a column a child strides across rows
        ti[r, used:used + k] = 0
    for r in range(TF):
        tf[r, used:used + k] = 0.0
    for i in range(k):
        ch = used + i
        ti[I_FIRST, ch] = -1
        ti[I_MOVE, ch] = moves[i]
        ti[I_COLOR, ch] = mover
        ti[I_PARENT, ch] = node
        tf[F_P, ch] = priors[i]
    ti[I_NCHILD, node] = k
    ti[I_FIRST, node] = used
    tm[T_USED] = used + k
    return True


@njit(cache=True)
def node_q(ti, tf, node, lam):
    """Q of the edge into `node` for its mover: (1 - lam) W_v/N_v + lam W_r/N_r, with virtual
    losses counted as lost rollouts and lost evaluations (AlphaGo's n_vl)."""
    return mixed_mean(ti, tf, node, lam, F_WR, F_WV, ti[I_VL, node])


@njit(cache=True)
def mixed_mean(ti, tf, node, lam, fr, fv, vl):
    """(1 - lam) tf[fv]/N_v + lam tf[fr]/N_r at `node`, with `vl` results of -1 added to both
    (virtual losses; 0 for a report); the one part there is where the other has no results."""
    nr = ti[I_NR, node] + vl
    nv = ti[I_NV, node] + vl
    qr = (tf[fr, node] - vl) / nr if nr > 0 else 0.0
    qv = (tf[fv, node] - vl) / nv if nv > 0 else 0.0
    if nr == 0:
        return qv
    if nv == 0:
        return qr
    return (1.0 - lam) * qv + lam * qr


@njit(cache=True)
def select_child(ti, tf, node, c_puct, lam, fpu, rave_k):
    """PUCT: argmax Q + c_puct P sqrt(N_parent) / (1 + N). Unvisited children use `fpu` as Q
    (relative to the parent's Q); RAVE blends AMAF values in with weight sqrt(k / (3N + k))."""
    first = ti[I_FIRST, node]
    k = ti[I_NCHILD, node]
    total = 0
    for i in range(k):
        total += ti[I_N, first + i] + ti[I_VL, first + i]
    sq = np.sqrt(max(total, 1))
    parent_q = 0.0
    if ti[I_N, node] > 0:
        parent_q = -node_q(ti, tf, node, lam)  # the children's mover is the parent's opponent
    best = -1
    best_score = -1e30
    for i in range(k):
        ch = first + i
        if ti[I_FLAGS, ch] & PRUNED:
            continue
        n = ti[I_N, ch] + ti[I_VL, ch]
        if n > 0:
            q = node_q(ti, tf, ch, lam)
        else:
            q = parent_q - fpu
        if rave_k > 0.0 and ti[I_AN, ch] > 0:
            aq = tf[F_AW, ch] / ti[I_AN, ch]
            beta = np.sqrt(rave_k / (3.0 * n + rave_k))
            q = (1.0 - beta) * q + beta * aq
        score = q + c_puct * tf[F_P, ch] * sq / (1.0 + n)
        if score > best_score:
            best_score = score
            best = ch
    return best


@njit(cache=True)
def forced_child(ti, tf, node, k_forced):
    """KataGo's forced playouts (Wu 2019, §3.1): the child of `node` furthest below its forced
    visits sqrt(k_forced P N_children), or -1 when every child has its share. Used at the root
    of a noised self-play search, so that a move the noise found is searched deep enough for
    its value to show."""
    first = ti[I_FIRST, node]
    k = ti[I_NCHILD, node]
    total = 0
    for i in range(k):
        total += ti[I_N, first + i] + ti[I_VL, first + i]
    best = -1
    best_gap = 0.0
    for i in range(k):
        ch = first + i
        if ti[I_FLAGS, ch] & PRUNED:
            continue
        gap = np.sqrt(k_forced * tf[F_P, ch] * total) - (ti[I_N, ch] + ti[I_VL, ch])
        if gap > best_gap:
            best_gap = gap
            best = ch
    return best


@njit(cache=True)
def pruned_visits(ti, tf, node, c_puct, lam, k_forced):
    """KataGo's policy target pruning: int64[children of `node`], the visits with the forced
    playouts taken back. Every child but the most visited one loses visits, at most its forced
    number sqrt(k_forced P N), as long as its PUCT score stays below the best child's with them
    gone; a child left with one visit is dropped. The best child keeps its visits."""
    first = ti[I_FIRST, node]
    k = ti[I_NCHILD, node]
    out = np.zeros(k, dtype=np.int64)
    total = 0
    best = -1
    for i in range(k):
        ch = first + i
        if ti[I_FLAGS, ch] & PRUNED:
            continue
        out[i] = ti[I_N, ch]
        total += ti[I_N, ch]
        if best < 0 or out[i] > out[best]:
            best = i
    if best < 0 or total == 0:
        return out
    sq = np.sqrt(total)
    b = first + best
    best_score = node_q(ti, tf, b, lam) + c_puct * tf[F_P, b] * sq / (1.0 + out[best])
    for i in range(k):
        n = out[i]
        if i == best or n == 0:
            continue
        ch = first + i
        q = node_q(ti, tf, ch, lam)
        forced = np.sqrt(k_forced * tf[F_P, ch] * total)
        # the fewest visits m >= n - forced with q + c P sq / (1 + m) < best_score
        room = best_score - q
        if room <= 0.0:
            continue
        m = int(np.floor(c_puct * tf[F_P, ch] * sq / room - 1.0)) + 1
        m = max(m, int(np.ceil(n - forced)), 0)
        if m < n:
            out[i] = 0 if m <= 1 else m
    return out


@njit(cache=True)
def add_virtual_loss(ti, path, length, n_vl):
    for i in range(length):
        ti[I_VL, path[i]] += n_vl


@njit(cache=True)
def backup(ti, tf, path, length, z_black, has_rollout, v_black, has_value, n_vl):
    """Add a rollout result and/or a value estimate (both from black's view, in [-1, 1]) to every
    edge on the path, flipping to each mover's view, and remove the path's virtual loss."""
    for i in range(length):
        node = path[i]
        ti[I_VL, node] -= n_vl
        ti[I_N, node] += 1
        sign = 1.0 if ti[I_COLOR, node] == 1 else -1.0
        if has_rollout:
            ti[I_NR, node] += 1
            tf[F_WR, node] += sign * z_black
        if has_value:
            ti[I_NV, node] += 1
            tf[F_WV, node] += sign * v_black


@njit(cache=True)
def add_sums(ti, tf, path, length, fr, r_black, has_r, fv, v_black, has_v):
    """Add `r_black` to tf[fr] (when `has_r`) and `v_black` to tf[fv] (when `has_v`), both from
    black's view, on every edge of the path, flipped to each mover's view: the sums that ride
    along with `backup`'s counts (win/loss results beside utilities, score margins)."""
    for i in range(length):
        node = path[i]
        sign = 1.0 if ti[I_COLOR, node] == 1 else -1.0
        if has_r:
            tf[fr, node] += sign * r_black
        if has_v:
            tf[fv, node] += sign * v_black


@njit(cache=True)
def backup_amaf(ti, tf, path, length, amaf, z_black):
    """RAVE: for every node on the path, credit each child whose move its mover played first in
    the rest of the simulation (amaf[loc] holds the first colour to play loc)."""
    for i in range(length):
        node = path[i]
        first = ti[I_FIRST, node]
        if first < 0:
            continue
        for j in range(ti[I_NCHILD, node]):
            ch = first + j
            m = ti[I_MOVE, ch]
            if m >= 0 and amaf[m] == ti[I_COLOR, ch]:
                ti[I_AN, ch] += 1
                tf[F_AW, ch] += z_black if ti[I_COLOR, ch] == 1 else -z_black


@njit(cache=True)
def find_child(ti, node, move):
    first = ti[I_FIRST, node]
    if first < 0:
        return -1
    for i in range(ti[I_NCHILD, node]):
        if ti[I_MOVE, first + i] == move:
            return first + i
    return -1


@njit(cache=True)
def most_visited_line(ti, node, max_len):
    """int64[<= max_len]: the moves from `node` down its most visited children (ties: the first
    child), stopping at an unvisited or unexpanded node; the principal variation."""
    out = np.empty(max_len, dtype=np.int64)
    k = 0
    while node >= 0 and k < max_len:
        out[k] = ti[I_MOVE, node]
        k += 1
        best, best_n = -1, 0
        first = ti[I_FIRST, node]
        if first >= 0:
            for ch in range(first, first + ti[I_NCHILD, node]):
                if ti[I_N, ch] > best_n:
                    best, best_n = ch, ti[I_N, ch]
        node = best
    return out[:k]


@njit(cache=True)
def compact(ti, tf, tm, new_root, ti2, tf2):
    """Copy the subtree under `new_root` into (ti2, tf2) breadth-first, so that sibling groups
    stay contiguous, make it the root (index 0) and return the node count. Used for tree reuse."""
    cap = ti2.shape[1]
    queue = np.empty(cap, dtype=np.int64)  # old index of each new node
    ti2[:, 0] = ti[:, new_root]
    tf2[:, 0] = tf[:, new_root]
    ti2[I_PARENT, 0] = -1
    queue[0] = new_root
    head = 0
    used = 1
    while head < used:
        old = queue[head]
        new = head
        head += 1
        first = ti[I_FIRST, old]
        k = ti[I_NCHILD, old]
        if first < 0 or used + k > cap:
            ti2[I_FIRST, new] = -1
            ti2[I_NCHILD, new] = 0
            continue
        ti2[I_FIRST, new] = used
        for j in range(k):
            ti2[:, used + j] = ti[:, first + j]
            tf2[:, used + j] = tf[:, first + j]
            ti2[I_PARENT, used + j] = new
            queue[used + j] = first + j
        used += k
    for i in range(used):
        ti2[I_VL, i] = 0
    tm[T_USED] = used
    tm[T_ROOT] = 0
    return used
