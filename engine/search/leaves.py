"""A batch of simulations in two numba calls: its descents (`select_leaves`) before the network
call, its expansions and backups (`finish_leaves`) after it (docs/algorithms.md §2.6 "Speed").

With an int8 network a 9x9 simulation spends less time in onnxruntime than in the Python around
it when every descent, leaf board, expansion and backup is a call of its own. Here the search's
Python runs once a batch: `select_leaves` walks `want` paths (PUCT, virtual loss), rebuilds each
leaf's board and the colour rows of its last positions (the Zero planes' history), scores and
backs up two-pass leaves at once and drops a leaf met twice; `finish_leaves` expands the leaves
with their priors and backs up their values, rollout results or score utilities.

Batch arrays, row j for leaf j (the first `m` rows are filled):
    paths   int64[want, L]   the nodes from the root; lengths[j] of them
    sts     int32[want, NF, A], metas int64[want, NM]   the leaf boards
    hists   int32[want, 8, A], counts[j]   colour rows, oldest first, newest (the leaf) last
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine import board as B
from goengine.engine.colors import EMPTY
from goengine.engine.search import tree as T
from goengine.engine.search.komi import value_at_komi
from goengine.engine.search.priors import heuristic_priors
from goengine.engine.search.terminal import judged_area_ownership

HISTORY = 8                 # colour rows kept per leaf: the Zero planes' 8 positions
SL_PASS_PRIOR = 1e-3        # the SL policy has no pass output: a small fixed share for pass


@njit(cache=True)
def descend(ti, tf, tm, path, c_puct, lam, fpu, n_vl, use_az, c_base, c_init, k_forced,
            root_child):
    """Walk from the root to a leaf by PUCT (at the root, `root_child` when it is >= 0 (the
    Gumbel root's choice, engine.search.gumbel), else a child short of its forced playouts first
    when k_forced > 0); add virtual loss along the path; return its length."""
    node = tm[T.T_ROOT]
    length = 0
    path[length] = node
    length += 1
    while ti[T.I_FIRST, node] >= 0:
        c = c_puct
        if use_az:
            c = np.log((1.0 + ti[T.I_N, node] + c_base) / c_base) + c_init
        ch = root_child if length == 1 else -1
        if ch < 0 and k_forced > 0.0 and length == 1:
            ch = T.forced_child(ti, tf, node, k_forced)
        if ch < 0:
            ch = T.select_child(ti, tf, node, c, lam, fpu, 0.0)
        if ch < 0:
            break
        node = ch
        path[length] = node
        length += 1
    T.add_virtual_loss(ti, path, length, n_vl)
    return length


@njit(cache=True)
def apply_path(ti, st, meta, path, length, hist, root_hist, hist_len):
    """Play the moves of path[1:length] on (st, meta). hist[8, A] receives the colour rows of the
    last positions, newest last, for the Zero features: those of root_hist[:hist_len] (the
    root's, oldest first) that the path leaves among the last 8, then the path's own; returns
    how many rows it holds (up to 8) and whether the leaf is terminal (two passes in a row).
    Only the rows that stay are written (no row is shifted: on a 9x9 tree's deep paths the
    shifts cost more than the moves)."""
    moves = length - 1
    keep = min(hist_len, HISTORY - moves) if moves < HISTORY else 0
    for j in range(keep):
        hist[j, :] = root_hist[hist_len - keep + j]
    k = keep
    for i in range(1, length):
        node = path[i]
        m = ti[T.I_MOVE, node]
        col = ti[T.I_COLOR, node]
        if m < 0:
            B.play_pass(meta, col)
        else:
            B.play(st, meta, m, col)
        if i > moves - HISTORY:
            hist[k, :] = st[B.F_COLOR, :]
            k += 1
    return k, meta[B.M_PASSES] >= 2


@njit(cache=True)
def candidate_moves(st, meta, moves):
    """Legal moves (simple ko) that do not fill a true own eye, then pass; returns the count."""
    c = meta[B.M_TOPLAY]
    w = meta[B.M_W]
    color = st[B.F_COLOR]
    k = 0
    for i in range(meta[B.M_NEMPTY]):
        p = st[B.F_ELIST, i]
        if (color[p - w] == EMPTY or color[p + w] == EMPTY or color[p - 1] == EMPTY
                or color[p + 1] == EMPTY):
            # an empty neighbour: legal but at the ko point, and no eye. Most points are so;
            # deciding them here, without the calls to `legality` and `is_eye` (each costs
            # about ten times its test: its array arguments), makes the expansion of a 9x9
            # leaf about 15x cheaper
            ok = not (p == meta[B.M_KO] and c == meta[B.M_KOCOLOR])
        else:
            ok = B.legality(st, meta, p, c) == B.LEGAL and not B.is_eye(st, meta, p, c)
        if ok:
            moves[k] = p
            k += 1
    moves[k] = -1
    return k + 1


# the score utility's settings, a float64 row (engine.search.network.utility_row)
U_STATIC, U_SCALE, U_DYNAMIC, U_CENTRE, U_DSCALE = range(5)


@njit(cache=True)
def utility_on(util):
    """Whether the row `util` adds any score term to the leaves' utilities."""
    return util[U_STATIC] != 0.0 or util[U_DYNAMIC] != 0.0


@njit(cache=True)
def score_utility(v_black, lead_black, util):
    """KataGo's score utility of a leaf, Black's view: (v + F_s (2/pi) atan(lead / scale_s)
    + F_d (2/pi) atan((lead - centre) / scale_d)) / (1 + F_s + F_d), v itself when both weights
    are 0. The static term is centred on 0, the dynamic one on the score the root expects (in
    Black's view: the same curve read by either colour), so that far ahead (or behind) the
    utility still tells a safer lead from a riskier one. The division keeps it in [-1, 1], the
    range Q, virtual loss and fpu assume; a clamp would instead erase the difference between two
    sure wins, which is what the utility is for."""
    weight = util[U_STATIC]
    dyn = util[U_DYNAMIC]
    if weight == 0.0 and dyn == 0.0:
        return v_black
    s = (2.0 / np.pi) * np.arctan(lead_black / util[U_SCALE])
    if dyn == 0.0:
        return (v_black + weight * s) / (1.0 + weight)
    d = (2.0 / np.pi) * np.arctan((lead_black - util[U_CENTRE]) / util[U_DSCALE])
    return (v_black + weight * s + dyn * d) / (1.0 + weight + dyn)


@njit(cache=True)
def fill_priors(moves, k, row, n, sharpen, temperature, out):
    """out[:k] = the network row's probabilities of moves[:k] (Locs, pass = -1 as the row's last
    entry), normalised. `sharpen` (AlphaGo's SL priors): the last move, the pass, gets
    SL_PASS_PRIOR, and every prior is raised to 1 / temperature first."""
    w = n + 2
    total = 0.0
    for i in range(k):
        m = moves[i]
        p = np.float64(row[(m // w - 1) * n + (m % w - 1)] if m >= 0 else row[n * n])
        if sharpen:
            if i == k - 1:
                p = SL_PASS_PRIOR
            p = max(p, 1e-12) ** (1.0 / temperature)
        out[i] = p
        total += p
    for i in range(k):
        out[i] = out[i] / total if total > 0 else 1.0 / k


@njit(cache=True)
def expand_node(ti, tf, tm, node, st, meta, row, has_row, sharpen, temperature, moves, priors):
    """Children for every candidate move of the leaf `node` (board st, meta), with priors from
    the network `row` when `has_row`, else the heuristic ones. A node already expanded (AlphaGo:
    with heuristic priors, before its network answered) gets the row's priors instead."""
    n = meta[B.M_N]
    first = ti[T.I_FIRST, node]
    if first >= 0:
        if has_row:
            k = ti[T.I_NCHILD, node]
            fill_priors(ti[T.I_MOVE, first:first + k], k, row, n, sharpen, temperature, priors)
            for i in range(k):
                tf[T.F_P, first + i] = priors[i]
        return
    if has_row:
        k = candidate_moves(st, meta, moves)
        fill_priors(moves, k, row, n, sharpen, temperature, priors)
    else:
        k = heuristic_priors(st, meta, meta[B.M_TOPLAY], moves, priors)
    T.alloc_children(ti, tf, tm, node, moves, priors, k)


@njit(cache=True)
def select_leaves(ti, tf, tm, st0, meta0, root_hist, hist_len, want, c_puct, lam, fpu, n_vl,
                  use_az, c_base, c_init, k_forced, root_kids, komi, dead, util, paths, lengths,
                  sts, metas, hists, counts):
    """`want` descents from the root with virtual loss, descent i into the root child
    root_kids[i] where that is >= 0 (else by PUCT); a two-pass leaf is scored by the rules
    (the stones in `dead` off, engine.search.terminal) and backed up at once, a leaf met twice
    is dropped with its virtual loss undone. Returns m: the leaves kept fill rows [0, m)."""
    own = np.empty(st0.shape[1], dtype=np.int8)
    m = 0
    for i in range(want):
        path = paths[m]
        length = descend(ti, tf, tm, path, c_puct, lam, fpu, n_vl, use_az, c_base, c_init,
                         k_forced, root_kids[i])
        sts[m, :, :] = st0
        metas[m, :] = meta0
        k, terminal = apply_path(ti, sts[m], metas[m], path, length, hists[m], root_hist,
                                 hist_len)
        if terminal:
            d = judged_area_ownership(sts[m], metas[m], dead, own) - komi
            z = 1.0 if d > 0 else (-1.0 if d < 0 else 0.0)
            if utility_on(util):    # the rules' result as both a rollout's and a value's
                u = score_utility(z, d, util)
                T.backup(ti, tf, path, length, u, True, u, True, n_vl)
                T.add_sums(ti, tf, path, length, T.F_ZR, z, True, T.F_ZV, z, True)
            else:
                T.backup(ti, tf, path, length, z, True, z, True, n_vl)
            T.add_sums(ti, tf, path, length, T.F_SR, d, True, T.F_SV, d, True)
            continue
        leaf = path[length - 1]
        seen = False
        for j in range(m):
            seen = seen or paths[j, lengths[j] - 1] == leaf
        if seen:  # collision within the batch: undo and let the others go (keeping it as a
            # second rollout of the leaf played worse: 2 of 8 games against this rule at equal
            # time on 9x9)
            T.add_virtual_loss(ti, path, length, -n_vl)
            continue
        lengths[m] = length
        counts[m] = k
        m += 1
    return m


@njit(cache=True)
def black_view(x, metas, m):
    """float64[m]: x[j], a value or score for the side to move of metas[j], from Black's view
    (one call where numpy took four on a batch of 8)."""
    out = np.empty(m, dtype=np.float64)
    for j in range(m):
        out[j] = x[j] if metas[j, B.M_TOPLAY] == B.BLACK else -np.float64(x[j])
    return out


@njit(cache=True)
def black_values(values, scores, metas, m, shift, has_value, has_lead, lead_shift):
    """(float64[m], float64[m]): the values (side to move's view) of a batch's leaves from Black's
    view moved to the game's komi by `shift` (engine.search.komi), zeros without `has_value`;
    the score leads from Black's view plus `lead_shift` (the learned komi less the game's),
    zeros without `has_lead`. One call a batch."""
    v = value_at_komi(black_view(values, metas, m), shift) if has_value else np.zeros(m)
    lead = black_view(scores, metas, m) + lead_shift if has_lead else np.zeros(m)
    return v, lead


@njit(cache=True)
def finish_leaves(ti, tf, tm, paths, lengths, m, sts, metas, expand, rows, has_rows, sharpen,
                  temperature, v_black, has_value, z, margin, has_z, lead_black, has_lead, util,
                  n_vl, moves, priors):
    """Expand the leaves flagged in `expand` (their network rows when `has_rows`) and back up
    every leaf, all from Black's view: the rollout result z and its final margin (when `has_z`),
    the value (when `has_value`) and the value network's score lead (when `has_lead`). With a
    score utility (`util`) Q's sums get the rollout's utility of (z, margin) and the value's of
    (v, lead) (v alone where the network has no lead), and the win/loss results go to the Z
    sums the win rates are reported from; the margins and leads go to the score sums."""
    on = utility_on(util)
    for j in range(m):
        length = lengths[j]
        path = paths[j]
        if expand[j]:
            expand_node(ti, tf, tm, path[length - 1], sts[j], metas[j], rows[j], has_rows,
                        sharpen, temperature, moves, priors)
        if on:
            ur = score_utility(z[j], margin[j], util) if has_z else 0.0
            uv = score_utility(v_black[j], lead_black[j], util) if has_lead else v_black[j]
            T.backup(ti, tf, path, length, ur, has_z, uv, has_value, n_vl)
            T.add_sums(ti, tf, path, length, T.F_ZR, z[j], has_z, T.F_ZV, v_black[j], has_value)
        else:
            T.backup(ti, tf, path, length, z[j] if has_z else 0.0, has_z, v_black[j],
                     has_value, n_vl)
        T.add_sums(ti, tf, path, length, T.F_SR, margin[j], has_z, T.F_SV, lead_black[j],
                   has_lead)


__all__ = ["HISTORY", "U_CENTRE", "U_DSCALE", "U_DYNAMIC", "U_SCALE", "U_STATIC", "apply_path",
           "black_values", "black_view", "candidate_moves", "descend", "expand_node", "fill_priors",
           "finish_leaves", "score_utility", "select_leaves", "utility_on"]
