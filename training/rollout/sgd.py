"""The rollout policy's fit: a linear softmax over the candidates' features, by lazy Adam.

Step 3 of `training.rollout.train`. `sgd_pass` fits the softmax over the candidates of each position
to the human move by minibatch Adam with lazy, sparse updates (only the features a minibatch
touches move); `heldout_metrics` gives the top-1 accuracy (argmax of the policy equals the human
move; a human move that is not a candidate, e.g. an own-eye fill, counts as a miss) and the
negative log-likelihood.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from goengine.training.rollout.features import Batch


@njit(cache=True)
def _logits(feat, lo, hi, w, z):
    """Fill z[:hi - lo] with the logits of candidates lo..hi-1; returns (the largest logit, the
    first candidate that has it)."""
    zmax = 0.0
    am = 0
    for j in range(lo, hi):
        s = 0.0
        for f in range(feat.shape[1]):
            i = feat[j, f]
            if i >= 0:
                s += w[i]
        z[j - lo] = s
        if j == lo or s > zmax:
            zmax = s
            am = j - lo
    return zmax, am


@njit(cache=True)
def sgd_pass(pos_off, target, feat, order, w, m, v, step, lr, b1, b2, eps, l2, batch):
    """One pass of lazy Adam over the positions in `order` (minibatches of `batch`). Positions
    whose human move is not a candidate are skipped. Returns (loss sum, top-1 hits, positions,
    Adam steps taken)."""
    nf = w.shape[0]
    g = np.zeros(nf)
    tmark = np.zeros(nf, dtype=np.int64)
    touched = np.empty(nf, dtype=np.int64)
    z = np.empty(400)
    loss = 0.0
    hits = 0
    npos = 0
    nt = 0
    inb = 0
    t = step
    for oi in range(order.shape[0]):
        i = order[oi]
        tg = target[i]
        if tg < 0:
            continue
        lo = pos_off[i]
        hi = pos_off[i + 1]
        k = hi - lo
        zmax, am = _logits(feat, lo, hi, w, z)
        if am == tg:
            hits += 1
        tot = 0.0
        for j in range(k):
            z[j] = math.exp(z[j] - zmax)
            tot += z[j]
        loss += -math.log(max(z[tg] / tot, 1e-300))
        npos += 1
        for j in range(k):
            gj = z[j] / tot
            if j == tg:
                gj -= 1.0
            for f in range(feat.shape[1]):
                fi = feat[lo + j, f]
                if fi >= 0:
                    g[fi] += gj
                    if tmark[fi] != t + 1:
                        tmark[fi] = t + 1
                        touched[nt] = fi
                        nt += 1
        inb += 1
        if inb == batch or oi == order.shape[0] - 1:
            t += 1
            c1 = 1.0 - b1 ** t
            c2 = 1.0 - b2 ** t
            for q in range(nt):
                fi = touched[q]
                gi = g[fi] / inb + l2 * w[fi]
                g[fi] = 0.0
                m[fi] = b1 * m[fi] + (1.0 - b1) * gi
                v[fi] = b2 * v[fi] + (1.0 - b2) * gi * gi
                w[fi] -= lr * (m[fi] / c1) / (math.sqrt(v[fi] / c2) + eps)
            nt = 0
            inb = 0
    return loss, hits, npos, t - step


@njit(cache=True)
def evaluate_batch(pos_off, target, feat, w):
    """(top-1 hits, NLL sum over positions with a candidate target, positions)."""
    z = np.empty(400)
    hits = 0
    nll = 0.0
    for i in range(target.shape[0]):
        lo = pos_off[i]
        hi = pos_off[i + 1]
        k = hi - lo
        if k == 0:
            continue
        zmax, am = _logits(feat, lo, hi, w, z)
        tg = target[i]
        if tg < 0:
            continue
        if am == tg:
            hits += 1
        tot = 0.0
        for j in range(k):
            tot += math.exp(z[j] - zmax)
        nll += -(z[tg] - zmax - math.log(tot))
    return hits, nll, target.shape[0]


def heldout_metrics(b: Batch, w: np.ndarray) -> dict:
    hits, nll, n = evaluate_batch(b.pos_off, b.target, b.feat, w)
    scored = int((b.target >= 0).sum())
    return {"top1": hits / max(n, 1), "nll": nll / max(scored, 1), "positions": n}


def uniform_top1(b: Batch) -> float:
    """Expected top-1 of a uniformly random choice among the candidates."""
    k = np.diff(b.pos_off)
    ok = (b.target >= 0) & (k > 0)
    return float((1.0 / k[ok]).sum() / max(len(b.target), 1))
