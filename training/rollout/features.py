"""The rollout policy's features: the pattern dictionary and the positions' feature indices.

Step 2 of `training.rollout.train`. The pattern keys (`engine.rollout.patterns.position_keys`) of every
candidate move of some training positions are counted (`count_patterns`); 3x3, diamond
(response) and nakade patterns seen at least `min_count` times become features, plus the scalar
features (`build_dictionary`). `Extractor` then replays games and writes, for every selected
position, the feature indices of each candidate (`Batch`), in the numba kernels below.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from goengine.engine import board as B
from goengine.engine.board import LEGAL, legality, new_board, place_setup_stone, play_pass
from goengine.engine.rollout import patterns as P
from goengine.training.rollout.data import GameSet, progress_bar

NF = 6  # feature columns per candidate: 3x3, diamond, response, save atari, neighbour, nakade


@njit(cache=True)
def _count_rows(kv, keys, nrows):
    """Count every key >= 0 of keys[:nrows] in the table kv (values are the counts)."""
    for i in range(nrows):
        for j in range(keys.shape[1]):
            k = keys[i, j]
            if k >= 0:
                s = P.table_slot(kv, k)
                if s >= 0:
                    kv[s] += 1


@njit(cache=True)
def _replay(st, meta, loc_, col_, start, end, sel, mode, hkeys, hvals, sink,
            cand, keys, caps, pos_off, target, feat, npos, ncand, limit, idx_info):
    """Replay one game; at each selected move either count its candidates' keys (mode 0) or write
    the position's feature indices (mode 1). Returns (npos, ncand, stopped) where stopped is 1 when
    the output arrays are full."""
    ncaps = 0
    resp_idx = idx_info[0]
    unk_idx = idx_info[1]
    for i in range(start, end):
        c = col_[i]
        p = loc_[i]
        if c >= 3:
            if st[B.F_COLOR, p] == B.EMPTY:
                place_setup_stone(st, meta, p, c - 2)
            ncaps = 0
            continue
        if p < 0:
            play_pass(meta, c)
            ncaps = 0
            continue
        if legality(st, meta, p, c) != LEGAL:
            return npos, ncand, 2  # an illegal record: stop this game here
        if sel[i]:
            if mode == 1 and (npos >= limit[0] or ncand + 400 > limit[1]):
                return npos, ncand, 1
            k = P.position_keys(st, meta, c, caps, ncaps, cand, keys)
            if mode == 0:
                _count_rows(sink, keys, k)
            else:
                t = -1
                for j in range(k):
                    if cand[j] == p:
                        t = j
                    row = ncand + j
                    s = P.table_find(hkeys, keys[j, P.K_3X3])
                    feat[row, 0] = hvals[s] if s >= 0 else unk_idx
                    feat[row, 1] = -1
                    feat[row, 2] = -1
                    if keys[j, P.K_DIAMOND] >= 0:
                        s = P.table_find(hkeys, keys[j, P.K_DIAMOND])
                        if s >= 0:
                            feat[row, 1] = hvals[s]
                            feat[row, 2] = resp_idx
                    for col, kc in ((3, P.K_SAVE), (4, P.K_NEIGHBOUR), (5, P.K_NAKADE)):
                        feat[row, col] = -1
                        if keys[j, kc] >= 0:
                            s = P.table_find(hkeys, keys[j, kc])
                            if s >= 0:
                                feat[row, col] = hvals[s]
                target[npos] = t
                ncand += k
                npos += 1
                pos_off[npos] = ncand
        ncaps = P.play_record(st, meta, p, c, caps)
    return npos, ncand, 0


@njit(cache=True)
def _extract(st0, meta0, off, loc_, col_, sel, g0, mode, hkeys, hvals, sink,
             pos_off, target, feat, limit, idx_info):
    """Run `_replay` over games g0.. until the end or until the outputs are full. Returns
    (next game, positions, candidates, illegal games)."""
    a = st0.shape[1]
    cand = np.empty(a, dtype=np.int64)
    keys = np.empty((a, P.NK), dtype=np.int64)
    caps = np.empty(a, dtype=np.int64)
    npos = 0
    ncand = 0
    illegal = 0
    pos_off[0] = 0
    g = g0
    while g < off.shape[0] - 1:
        st = st0.copy()
        meta = meta0.copy()
        # positions of this game must fit entirely, so check before starting it
        if mode == 1:
            need = 0
            for i in range(off[g], off[g + 1]):
                need += sel[i]
            if npos + need > limit[0] or ncand + need * 362 > limit[1]:
                if npos == 0:
                    # a single game larger than the buffers: cannot happen with sane limits
                    return g + 1, npos, ncand, illegal
                return g, npos, ncand, illegal
        npos, ncand, stop = _replay(st, meta, loc_, col_, off[g], off[g + 1], sel, mode, hkeys,
                                    hvals, sink, cand, keys, caps, pos_off, target, feat, npos,
                                    ncand, limit, idx_info)
        if stop == 2:
            illegal += 1
        g += 1
    return g, npos, ncand, illegal


class Dictionary:
    """Feature keys (sorted) and the hash table key -> feature index used for extraction."""

    def __init__(self, keys: np.ndarray):
        self.keys = np.asarray(keys, dtype=np.int64)
        self.hkeys, self.hidx = P.build_table(self.keys, np.arange(len(self.keys), dtype=np.int64))
        self.resp_idx = self.index(P.make_key(P.FAM_SCALAR, P.SCALAR_RESPONSE))
        self.unk_idx = self.index(P.make_key(P.FAM_SCALAR, P.SCALAR_UNKNOWN_3X3))

    def index(self, key: int) -> int:
        i = int(np.searchsorted(self.keys, key))
        if i >= len(self.keys) or self.keys[i] != key:
            raise KeyError(key)
        return i

    def __len__(self) -> int:
        return len(self.keys)

    def family_counts(self) -> dict[str, int]:
        fam = self.keys >> P.FAMILY_SHIFT
        return {name: int((fam == i).sum()) for i, name in enumerate(P.FAMILY_NAMES)}


def _template(size: int):
    return new_board(size)


def count_patterns(gs: GameSet, sel: np.ndarray, table_bits: int = 24, progress: bool = False):
    """(keys, counts) of every pattern key of every candidate of the selected positions."""
    st0, meta0 = _template(gs.size)
    kv, _ = P.new_table(table_bits)
    dummy_i = np.zeros(1, dtype=np.int64)
    dummy_f = np.zeros((1, NF), dtype=np.int32)
    limit = np.array([1 << 62, 1 << 62], dtype=np.int64)
    info = np.zeros(2, dtype=np.int64)
    total_sel = int(sel.sum())
    bar = progress_bar(progress, total_sel, "pos", "counting patterns")
    step = 500
    g = 0
    while g < gs.games:
        g1 = min(gs.games, g + step)
        _extract(st0, meta0, gs.off[: g1 + 1], gs.loc, gs.col, sel, g, 0, kv, kv, kv,
                 dummy_i, dummy_i, dummy_f, limit, info)
        if bar is not None:
            bar.update(int(sel[gs.off[g]:gs.off[g1]].sum()))
        if (kv[0::128] != -1).mean() > 0.7:
            raise RuntimeError("pattern count table is full; raise table_bits or lower "
                               "dict_positions")
        g = g1
    if bar is not None:
        bar.close()
    return P.table_items(kv, kv)


def build_dictionary(keys: np.ndarray, counts: np.ndarray, min_count: dict,
                     max_features: dict | None = None) -> Dictionary:
    """Keys seen at least min_count[family] times (at most max_features[family] of the most
    frequent), plus every scalar feature."""
    fam = keys >> P.FAMILY_SHIFT
    chosen = [np.array([P.make_key(P.FAM_SCALAR, i) for i in range(P.N_SCALARS)], dtype=np.int64)]
    for f, name in ((P.FAM_3X3, "3x3"), (P.FAM_DIAMOND, "diamond"), (P.FAM_NAKADE, "nakade")):
        m = (fam == f) & (counts >= min_count.get(name, 1))
        k, c = keys[m], counts[m]
        cap = (max_features or {}).get(name)
        if cap is not None and len(k) > cap:
            top = np.argsort(-c, kind="stable")[:cap]
            k = k[top]
        chosen.append(k)
    return Dictionary(np.unique(np.concatenate(chosen)))


@dataclass
class Batch:
    """Extracted positions: candidates pos_off[i]:pos_off[i+1] of feat (int32 [C, NF] feature
    indices, -1 = none); target[i] = index of the human move among them, -1 if not a candidate."""
    pos_off: np.ndarray
    target: np.ndarray
    feat: np.ndarray

    def __len__(self) -> int:
        return len(self.target)


class Extractor:
    """Streams `Batch`es of positions from a GameSet through a Dictionary."""

    def __init__(self, gs: GameSet, sel: np.ndarray, dic: Dictionary, chunk_positions: int = 20000):
        self.gs, self.sel, self.dic = gs, sel, dic
        self.st0, self.meta0 = _template(gs.size)
        self.cap_pos = chunk_positions
        self.cap_cand = chunk_positions * 300 + 2000
        self.illegal_games = 0

    def __iter__(self):
        gs, dic = self.gs, self.dic
        limit = np.array([self.cap_pos, self.cap_cand], dtype=np.int64)
        info = np.array([dic.resp_idx, dic.unk_idx], dtype=np.int64)
        dummy = np.zeros(1, dtype=np.int64)
        g = 0
        while g < gs.games:
            pos_off = np.zeros(self.cap_pos + 1, dtype=np.int64)
            target = np.zeros(self.cap_pos, dtype=np.int32)
            feat = np.empty((self.cap_cand, NF), dtype=np.int32)
            g, npos, ncand, illegal = _extract(self.st0, self.meta0, gs.off, gs.loc, gs.col,
                                               self.sel, g, 1, dic.hkeys, dic.hidx, dummy,
                                               pos_off, target, feat, limit, info)
            self.illegal_games += illegal
            if npos:
                yield Batch(pos_off[: npos + 1], target[:npos], feat[:ncand])


def extract_all(gs: GameSet, sel: np.ndarray, dic: Dictionary) -> Batch:
    parts = list(Extractor(gs, sel, dic, chunk_positions=50000))
    if not parts:
        return Batch(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                     np.zeros((0, NF), dtype=np.int32))
    offs, base = [np.zeros(1, dtype=np.int64)], 0
    for b in parts:
        offs.append(b.pos_off[1:] + base)
        base += b.pos_off[-1]
    return Batch(np.concatenate(offs), np.concatenate([b.target for b in parts]),
                 np.concatenate([b.feat for b in parts]))
