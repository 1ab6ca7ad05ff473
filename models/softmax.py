"""The policy head's logits to move probabilities: a softmax over the legal moves, and its
symmetry-averaged form for an evaluator that ran each position under S symmetries.

Both are one numba loop over the rows: on 9x9 batches of 8 the numpy version (a float64 copy, a
masked `where`, a repeat of the mask per symmetry, the inverse gather, then the mean) cost a
quarter of an int8 network's own time inside the search.

A row with no legal finite logit (e.g. only pass legal for a net without a pass output) becomes
uniform over its legal entries, or all on the last entry (pass) if none is legal.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_NO_MASK = np.ones((1, 1), dtype=np.bool_)    # stands for "every entry legal" in the kernels


def masked_softmax(logits: np.ndarray, mask: np.ndarray | None,
                   temperature: float = 1.0) -> np.ndarray:
    """float64[R, M]: the softmax of logits / temperature over the legal entries of each row."""
    logits = np.ascontiguousarray(logits, dtype=np.float64)
    rows, width = logits.shape
    identity = np.arange(width, dtype=np.int64)[None, :]
    out = np.zeros((rows, width), dtype=np.float64)
    _softmax_mean(logits, identity, np.zeros(rows, np.int64), *_mask_args(mask),
                  float(temperature), 1, out)
    return out


def symmetric_softmax(logits: np.ndarray, perms: np.ndarray, ks: np.ndarray, width: int,
                      mask: np.ndarray | None, temperature: float, s: int) -> np.ndarray:
    """float32[B, width]: position b's priors, the mean over its S rows b*S .. b*S+S-1 of
    logits [B*S, L] of the softmax of row r read through the gather perms[ks[r]] (the inverse of
    the symmetry the row was computed under). L may be width - 1 (a policy net without a pass
    output: pass gets -inf); entries past perms' length are copied (pass)."""
    logits = np.ascontiguousarray(logits, dtype=np.float32)
    out = np.zeros((logits.shape[0] // s, width), dtype=np.float64)
    _softmax_mean(logits, perms, np.ascontiguousarray(ks, dtype=np.int64), *_mask_args(mask),
                  float(temperature), s, out)
    return out.astype(np.float32)


def heads_one_symmetry(logits: np.ndarray | None, value: np.ndarray | None,
                       own: np.ndarray | None, score: np.ndarray | None, perms: np.ndarray,
                       ks: np.ndarray, width: int, mask: np.ndarray | None,
                       temperature: float) -> tuple:
    """The rows of B positions each run under one symmetry ks[b], in one call: (priors
    float32[B, width] as `symmetric_softmax` gives them with S = 1, or None without logits;
    value float32[B] or None; ownership float32[B, N*N] mapped back to the original board
    through perms[ks[b]], or None; score float32[B] or None). The same numbers as the numpy
    path (a copy, a gather, the same softmax loop) for a sixth of its calls: on 9x9 int8
    batches of 8 those calls weighed as much as a tenth of the network."""
    batch = len(ks)
    none = np.zeros((1, 1), dtype=np.float32)
    priors = np.zeros((batch, width), dtype=np.float32) if logits is not None else None
    values = np.empty(batch, dtype=np.float32) if value is not None else None
    owns = np.empty(own.shape, dtype=np.float32) if own is not None else None
    scores = np.empty(batch, dtype=np.float32) if score is not None else None
    m, has_mask = _mask_args(mask)
    _heads(none if logits is None else np.ascontiguousarray(logits, dtype=np.float32),
           none[0] if value is None else value.reshape(-1),
           none if own is None else own, none[0] if score is None else score.reshape(-1),
           perms, np.ascontiguousarray(ks, dtype=np.int64), m, has_mask, float(temperature),
           none if priors is None else priors, none[0] if values is None else values,
           none if owns is None else owns, none[0] if scores is None else scores,
           logits is not None, value is not None, own is not None, score is not None)
    return priors, values, owns, scores


@njit(cache=True)
def _heads(logits, value, own, score, perms, ks, mask, has_mask, temperature, priors, values,
           owns, scores, has_logits, has_value, has_own, has_score):
    if has_logits:
        _softmax_mean(logits, perms, ks, mask, has_mask, temperature, 1, priors)
    for b in range(ks.shape[0]):
        if has_value:
            values[b] = value[b]
        if has_score:
            scores[b] = score[b]
        if has_own:
            perm = perms[ks[b]]
            for p in range(perm.shape[0]):
                owns[b, p] = own[b, perm[p]]


def _mask_args(mask: np.ndarray | None) -> tuple[np.ndarray, bool]:
    if mask is None:
        return _NO_MASK, False
    return np.ascontiguousarray(mask, dtype=np.bool_), True


@njit(cache=True)
def _softmax_mean(logits, perms, ks, mask, has_mask, temperature, s, out):
    """out[b] += softmax(row r's logits through perms[ks[r]], masked by mask[b]) / s for each row r
    of position b = r // s; out must start at zero."""
    width = out.shape[1]
    z = np.empty(width, dtype=np.float64)
    for r in range(logits.shape[0]):
        b = r // s
        perm = perms[ks[r]]
        npts = perm.shape[0]
        top = -np.inf
        for p in range(width):
            if p < npts:
                x = logits[r, perm[p]]
            elif p < logits.shape[1]:
                x = logits[r, p]
            else:
                x = -np.inf
            if has_mask and not mask[b, p]:
                x = -np.inf
            else:
                x = x / temperature
            z[p] = x
            if x > top:
                top = x
        total = 0.0
        if top > -np.inf:
            for p in range(width):
                z[p] = np.exp(z[p] - top)
                total += z[p]
        if total == 0.0:        # no legal finite logit: uniform over the legal entries
            for p in range(width):
                z[p] = 1.0 if (not has_mask or mask[b, p]) else 0.0
                total += z[p]
            if total == 0.0:    # nothing legal: pass
                z[width - 1] = 1.0
                total = 1.0
        for p in range(width):
            out[b, p] += z[p] / total / s
