"""`OnnxEvaluator`: the `engine.evaluator.Evaluator` backed by one exported network.

    ev = OnnxEvaluator("models/bundled/zero.onnx", symmetry="random", seed=1)
    out = ev.evaluate(planes, legal_mask, keys=[game.hash ...])   # planes float32[B, C, N, N]

Per call: look each position up in the LRU cache (when the caller gives `keys`), transform the
others by their symmetries (`engine.symmetry`), run them through the session `max_batch` rows at a
time, map the logits back to the original board, then a softmax at `temperature` over the legal
moves, averaged over the symmetries used. Symmetry modes (AlphaGo Zero, Methods "Search"):
"random" one of the 8 per evaluation, "average" all 8, "none" the identity.

What each kind gives: zero -> priors and value; policy -> priors (pass gets 0 unless it is the only
legal move) and value 0; value -> uniform priors over the legal moves and the value. `has_policy`
and `has_value` say which is real, for searches that combine a policy and a value model. A value
or Zero net with the auxiliary heads (models.metadata: `heads`) adds `ownership` and `score` to
every Evaluation (`has_ownership`, `has_score`), averaged over the same symmetries as the value,
the ownership mapped back to the original board.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

from goengine.engine import symmetry
from goengine.engine.evaluator import Evaluation, Evaluator, uniform_priors
from goengine.models.metadata import ModelError
from goengine.models.session import load_session
from goengine.models.softmax import heads_one_symmetry, symmetric_softmax

SYMMETRY_MODES = ("random", "average", "none")
SYMMETRY_DRAW = 4096     # random symmetries drawn at once


class OnnxEvaluator(Evaluator):
    def __init__(self, path: str | os.PathLike, threads: int = 1, *, symmetry: str = "random",
                 temperature: float = 1.0, max_batch: int = 64, cache_size: int = 200_000,
                 seed: int | None = None, kind: str | tuple[str, ...] | None = None,
                 feature_set: str | None = None):
        if symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {symmetry!r}")
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.model = load_session(path, threads, kind=kind, feature_set=feature_set)
        self.meta = self.model.meta
        if self.meta.kind not in ("policy", "value", "zero"):
            raise ModelError(f"{path}: a {self.meta.kind} model is not a network evaluator")
        self.has_policy = self.meta.kind in ("policy", "zero")
        self.has_value = self.meta.kind in ("value", "zero")
        self.has_ownership = "ownership" in self.model.output_names
        self.has_score = "score" in self.model.output_names
        self.feature_set = self.meta.feature_set
        self.learned_komi = self.meta.learned_komi   # the value's komi; None: 7.5 (engine.search.komi)
        self.symmetry = symmetry          # "random" | "average" | "none"
        self.temperature = temperature    # softmax temperature on the policy logits
        self.max_batch = max_batch        # rows per session.run
        self.cache_size = cache_size      # positions kept in the LRU cache; 0 disables it
        self._cache: OrderedDict[Hashable, tuple] = OrderedDict()   # (priors, value, own, score)
        self._lock = threading.Lock()     # guards the cache, the rng and the counters
        self._rng = np.random.default_rng(seed)
        self._drawn = np.zeros(0, dtype=np.int64)  # random symmetries drawn ahead (_symmetries)
        self._next = 0
        self.cache_hits = 0
        self.cache_misses = 0
        self.runs = 0                     # session.run calls so far

    # -----------------------------------------------------------------------------------------

    def evaluate(self, planes: np.ndarray, legal_mask: np.ndarray | None = None,
                 keys: Sequence[Hashable] | None = None, *,
                 symmetry: str | None = None) -> Evaluation:
        """planes float32[B, C, N, N]; legal_mask bool[B, N*N+1] | None; keys: B position hashes;
        symmetry: this call's mode (SYMMETRY_MODES) in place of the evaluator's own.

        A key must identify everything the planes and the mask depend on (stones, history, side
        to move, ko); positions with equal keys in one cache share one answer.
        """
        batch, n = self._check(planes, legal_mask, keys)
        mode = self.symmetry if symmetry is None else symmetry
        if mode not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {mode!r}")
        if keys is None or self.cache_size <= 0:    # every row computed: no per-row bookkeeping
            return Evaluation(*self._compute(planes, legal_mask, n, mode))
        cache, tag = self._cache, (mode, self.temperature)
        full = [(key, *tag) for key in keys]
        todo, same_as, hits = [], [], []   # same_as: (row, the earlier row with its key)
        first_row: dict = {}
        with self._lock:
            for i, key in enumerate(full):
                j = first_row.get(key)
                if j is not None:
                    same_as.append((i, j))
                    continue
                hit = cache.get(key)
                if hit is None:
                    todo.append(i)
                    first_row[key] = i
                else:
                    cache.move_to_end(key)
                    hits.append((i, hit))
            self.cache_hits += len(hits)
            self.cache_misses += len(todo)
        if not hits and not same_as:    # every row new (the search's usual batch): no gathers
            computed = self._compute(planes, legal_mask, n, mode)
            self._store(full, range(batch), computed)
            return Evaluation(*computed)
        fields = self._empty_fields(batch, n)
        if todo:
            mask = None if legal_mask is None else np.asarray(legal_mask, dtype=bool)[todo]
            computed = self._compute(np.asarray(planes)[todo], mask, n, mode)
            for f, c in zip(fields, computed):
                if f is not None:
                    f[todo] = c
            self._store([full[i] for i in todo], range(len(todo)), computed)
        for i, hit in hits:
            for f, h in zip(fields, hit):
                if f is not None:
                    f[i] = h
        for i, j in same_as:
            for f in fields:
                if f is not None:
                    f[i] = f[j]
        return Evaluation(*fields)

    def for_size(self, n: int) -> OnnxEvaluator:
        return self       # one network for every size it runs on

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    # -----------------------------------------------------------------------------------------

    def _check(self, planes, legal_mask, keys) -> tuple[int, int]:
        if planes.ndim != 4 or planes.shape[1] != self.meta.planes or \
                planes.shape[2] != planes.shape[3]:
            raise ValueError(f"planes must be [B, {self.meta.planes}, N, N], got {planes.shape}")
        batch, n = planes.shape[0], planes.shape[3]
        if self.model.fixed_size is not None and n != self.model.fixed_size:
            raise ValueError(f"{self.model.path.name} runs on {self.model.fixed_size}x"
                             f"{self.model.fixed_size} only, got {n}x{n}")
        if legal_mask is not None and legal_mask.shape != (batch, n * n + 1):
            raise ValueError(f"legal_mask must be [{batch}, {n * n + 1}], got {legal_mask.shape}")
        if keys is not None and len(keys) != batch:
            raise ValueError(f"{len(keys)} keys for {batch} positions")
        return batch, n

    def _empty_fields(self, batch: int, n: int) -> list:
        """[priors, values, ownership or None, score or None], uninitialised, for B positions."""
        return [np.empty((batch, n * n + 1), dtype=np.float32), np.empty(batch, dtype=np.float32),
                np.empty((batch, n * n), dtype=np.float32) if self.has_ownership else None,
                np.empty(batch, dtype=np.float32) if self.has_score else None]

    def _store(self, keys, rows, computed: tuple) -> None:
        """Cache rows[i] of `computed` under keys[i] (key, mode, temperature): copies of its
        rows (the caller may write into the arrays it gets, and a row kept must not keep its
        whole batch alive); the least recently used entries go beyond cache_size."""
        with self._lock:
            for key, i in zip(keys, rows):
                self._cache[key] = tuple(None if c is None else c[i].copy() for c in computed)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _symmetries(self, batch: int, mode: str) -> np.ndarray:
        """[B, S] symmetry indices for each position: S = 8 (average) or 1."""
        if mode == "average":
            return np.tile(np.arange(symmetry.N_SYMMETRIES), (batch, 1))
        if mode == "none":
            return np.zeros((batch, 1), dtype=np.int64)
        with self._lock:    # drawn SYMMETRY_DRAW at a time: a draw a batch cost a fiftieth
            if self._next + batch > len(self._drawn):     # of a 9x9 int8 network's time
                self._drawn = self._rng.integers(0, symmetry.N_SYMMETRIES,
                                                 size=max(SYMMETRY_DRAW, batch))
                self._next = 0
            ks = self._drawn[self._next:self._next + batch]
            self._next += batch
        return ks.reshape(batch, 1)

    def _compute(self, planes: np.ndarray, mask: np.ndarray | None, n: int, mode: str) -> tuple:
        """Run the net on B positions under symmetry `mode`: (priors float32[B, N*N+1], value
        float32[B], ownership float32[B, N*N] or None, score float32[B] or None)."""
        batch = planes.shape[0]
        ks = self._symmetries(batch, mode)                             # [B, S]
        s = ks.shape[1]
        flat_k = ks.reshape(-1)
        planes = np.ascontiguousarray(planes, np.float32)
        if mode == "none":      # the identity: the planes as they are
            rows = planes
        else:
            rows = symmetry.apply_each(planes if s == 1 else np.repeat(planes, s, axis=0), flat_k)
        outputs = self._run(rows)
        if s == 1:      # one symmetry a position: its rows mapped back in one numba call
            priors, values, own, score = heads_one_symmetry(
                outputs.get("policy_logits"), outputs.get("value"), outputs.get("ownership"),
                outputs.get("score"), symmetry.permutations(n), symmetry.INVERSES[flat_k],
                n * n + 1, mask, self.temperature)
            if values is None:
                values = np.zeros(batch, np.float32)
            if priors is None:
                priors = uniform_priors(batch, n, mask)
            return priors, values, own, score
        values = outputs.get("value")
        values = (np.zeros(batch, np.float32) if values is None
                  else _mean(values.reshape(-1), batch, s))
        own = outputs.get("ownership")
        if own is not None:                     # per point, like a policy over the board
            own = _mean(symmetry.invert_policy_each(own, flat_k, n), batch, s)
        score = outputs.get("score")
        score = None if score is None else _mean(score.reshape(-1), batch, s)
        if not self.has_policy:
            return uniform_priors(batch, n, mask), values.astype(np.float32), own, score
        # [B*S, N*N (+1)]; policy nets have no pass output: pass gets -inf
        priors = symmetric_softmax(outputs["policy_logits"], symmetry.permutations(n),
                                   symmetry.INVERSES[flat_k], n * n + 1, mask,
                                   self.temperature, s)
        return priors, values, own, score

    def _run(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """session.run over `rows` in chunks of max_batch; {output name: concatenated array}."""
        session, feed = self.model.session, self.model.input_name
        if len(rows) <= self.max_batch:     # the searches' batches: one call, no slicing
            out = session.run(None, {feed: rows})
            with self._lock:
                self.runs += 1
            return dict(zip(self.model.output_names, out))
        parts = []
        for start in range(0, len(rows), self.max_batch):
            parts.append(session.run(None, {feed: rows[start:start + self.max_batch]}))
            with self._lock:
                self.runs += 1
        return {name: np.concatenate([out[i] for out in parts])
                for i, name in enumerate(self.model.output_names)}


def _mean(x: np.ndarray, batch: int, s: int) -> np.ndarray:
    """float32[B, ...]: the mean of each position's S rows of x [B*S, ...] (one row: itself)."""
    x = x.reshape(batch, s, *x.shape[1:])
    return (x[:, 0] if s == 1 else x.mean(axis=1)).astype(np.float32, copy=False)
