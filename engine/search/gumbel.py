"""Gumbel AlphaZero's root (Danihelka et al. 2022, "Policy improvement by planning with Gumbel";
docs/algorithms.md §2.10): which root child each simulation descends into, the move played and
the improved policy, from the root children's statistics. Below the root the Zero search's PUCT
is unchanged; this module reads no tree, the search hands it arrays over the root's legal
children (engine.search.zero).

With Gumbel noise g and the priors' logits, the search considers the m children with the largest
g + logits (sampling m moves without replacement from the policy) and shares its n simulations
among them by sequential halving: phase after phase each considered child gets the same visits,
then the better half by g + logits + sigma(q) goes on. The schedule is DeepMind mctx's
(`considered_visits`): the child chosen at simulation s is the best-scoring considered child with
exactly `considered_visits(m, n)[s]` visits in this search, so that the phases come out of the
visit counts alone. The move played is the best-scoring of the most visited considered children;
the improved policy is softmax(logits + sigma(completed q)), unvisited children's q completed
with the mixed value (mctx's qtransform_completed_by_mix_value).
"""
from __future__ import annotations

import math

import numpy as np

TINY = 1e-30        # the smallest prior: log(0) would make a legal move's logit -inf
RESCALE_EPS = 1e-8  # min-max rescaling of q when every q is the same (mctx's epsilon)


def halving_phases(m: int, n: int) -> list[tuple[int, int]]:
    """[(children considered, visits each gets in the phase)] of sequential halving with `m`
    considered children and `n` simulations, as mctx shares them: a phase gives each of its k
    children max(1, floor(n / (ceil(log2 m) k))) visits, then k halves (at least 2), until n
    simulations are planned; the last phase may be cut short (`considered_visits`)."""
    if m <= 1:
        return [(1, n)] if n > 0 else []
    log2m = math.ceil(math.log2(m))
    phases, planned, k = [], 0, m
    while planned < n:
        extra = max(1, n // (log2m * k))
        phases.append((k, extra))
        planned += k * extra
        k = max(2, k // 2)
    return phases


def considered_visits(m: int, n: int) -> np.ndarray:
    """int64[n]: for each simulation of the search, the visits (in this search) the root child
    it goes to has had before it; one round of the phase's k children after another."""
    seq, visits = [], 0
    for k, extra in halving_phases(m, n):
        for _ in range(extra):
            seq.extend([visits] * k)
            visits += 1
    return np.asarray(seq[:n], dtype=np.int64)


def mixed_value(v_root: float, q: np.ndarray, visits: np.ndarray, prior: np.ndarray) -> float:
    """The value that completes unvisited children's q: the network's value at the root mixed
    with the prior-weighted q of the visited children, (v + N sum_b p(b) q(b) / sum_b p(b)) /
    (1 + N), sums over the visited children b, N their visits."""
    seen = visits > 0
    total = float(visits.sum())
    if not seen.any():
        return float(v_root)
    p = np.maximum(prior[seen], TINY)
    weighted = float(np.sum(p * q[seen]) / np.sum(p))
    return (float(v_root) + total * weighted) / (1.0 + total)


def completed_q(v_root: float, q: np.ndarray, visits: np.ndarray,
                prior: np.ndarray) -> np.ndarray:
    """q of the visited children, the mixed value for the others."""
    return np.where(visits > 0, q, mixed_value(v_root, q, visits, prior))


def sigma(qc: np.ndarray, visits: np.ndarray, c_visit: float, c_scale: float) -> np.ndarray:
    """The paper's monotone transform: (c_visit + max_b N(b)) c_scale q_hat, q_hat the completed
    q rescaled to [0, 1] by its min and max over the children (mctx's rescale)."""
    lo, hi = float(qc.min()), float(qc.max())
    q_hat = (qc - lo) / max(hi - lo, RESCALE_EPS)
    return (c_visit + float(visits.max())) * c_scale * q_hat


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


class GumbelRoot:
    """One search's Gumbel root over the root's legal children (index i = the i-th of them):
    their logits, Gumbel noise, the m considered and the halving schedule for `budget`
    simulations. `v_root` is the network's value of the root for its player to move (the
    children's q are from that view too)."""

    def __init__(self, prior: np.ndarray, gumbel: np.ndarray, m: int, budget: int,
                 v_root: float, c_visit: float, c_scale: float):
        total = float(prior.sum())
        self.prior = prior / total if total > 0 else np.full(len(prior), 1.0 / max(len(prior), 1))
        self.logits = np.log(np.maximum(self.prior, TINY))
        self.gumbel = gumbel
        self.m = max(1, min(m, len(prior)))
        # the m largest g + logits; a stable sort keeps the first child on a tie
        order = np.argsort(-(gumbel + self.logits), kind="stable")
        self.considered = np.zeros(len(prior), dtype=bool)
        self.considered[order[:self.m]] = True
        self.schedule = considered_visits(self.m, budget)
        phases = halving_phases(self.m, budget)
        self.last_k = phases[-1][0] if phases else self.m    # children of the last phase
        self.v_root, self.c_visit, self.c_scale = v_root, c_visit, c_scale

    def sigma_q(self, q: np.ndarray, visits: np.ndarray) -> np.ndarray:
        """sigma(completed q) of every child; q and visits are the tree's (reused visits too)."""
        qc = completed_q(self.v_root, q, visits, self.prior)
        return sigma(qc, visits, self.c_visit, self.c_scale)

    def scores(self, q: np.ndarray, visits: np.ndarray) -> np.ndarray:
        """g + logits + sigma(completed q): what sequential halving ranks children by."""
        return self.gumbel + self.logits + self.sigma_q(q, visits)

    def improved_policy(self, q: np.ndarray, visits: np.ndarray) -> np.ndarray:
        """softmax(logits + sigma(completed q)) over the children (no noise: the policy target)."""
        return softmax(self.logits + self.sigma_q(q, visits))

    def _eligible(self, new: np.ndarray, s: int, score: np.ndarray) -> np.ndarray:
        """bool over the children: those simulation `s` may go to, given the visits `new` of
        this search. Within the schedule, the considered children with its considered visits; a
        leaf met twice in a batch drops a descent and can leave none such, then the considered
        ones closest below. Past it (a time-limited search running longer than its estimate),
        the last phase goes on: its children in turn."""
        c = self.considered
        if s < len(self.schedule):
            cv = self.schedule[s]
            ok = c & (new == cv)
            if ok.any():
                return ok
            below = c & (new <= cv)
            cv = new[below].max() if below.any() else new[c].min()
            return c & (new == cv)
        idx = np.flatnonzero(c)
        top = idx[np.lexsort((-score[idx], -new[idx]))][:self.last_k]
        ok = np.zeros(len(c), dtype=bool)
        ok[top[new[top] == new[top].min()]] = True
        return ok

    def pick(self, q: np.ndarray, visits: np.ndarray, new: np.ndarray, want: int) -> np.ndarray:
        """int64[<= want]: the child each of a batch's descents goes to, in order; `visits` =
        the tree's, `new` = those of this search. The scores are the batch's start's (its
        leaves are evaluated together), the visits count the batch's own descents. The batch
        ends before a second descent into a child not yet visited: that child is still a leaf,
        and the batch would drop the descent (a leaf met twice)."""
        score = self.scores(q, visits)
        cnt = new.astype(np.int64).copy()
        out = []
        for _ in range(want):
            ok = self._eligible(cnt, int(cnt.sum()), score)
            i = int(np.argmax(np.where(ok, score, -np.inf)))
            if visits[i] == 0 and cnt[i] > new[i]:
                break
            out.append(i)
            cnt[i] += 1
        return np.asarray(out, dtype=np.int64)

    def chosen(self, q: np.ndarray, visits: np.ndarray, new: np.ndarray) -> int:
        """The move to play: the best-scoring of the most visited considered children (the
        survivor of the halving)."""
        score = self.scores(q, visits)
        c = self.considered
        ok = c & (new == new[c].max())
        return int(np.argmax(np.where(ok, score, -np.inf)))


__all__ = ["GumbelRoot", "completed_q", "considered_visits", "halving_phases", "mixed_value",
           "sigma", "softmax"]
