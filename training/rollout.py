"""Train AlphaGo's fast rollout policy (engine.rollout) on human games.

    engine-train rollout --sgf /work/shared/data/tygem9d --out models/bundled/rollout.npz \\
        --positions 4000000         # the bundled model (about 10 minutes on one core)

Pipeline (numba kernels, no torch needed):

1. Games are read with `sgf_tools.archives.iter_games` and kept as flat move arrays. When
   `--heldout` is not given and an `--sgf` directory holds archives, the LAST archive (in name
   order; `tygem9d-2015-06.tar.bz2` for the Tygem set) is held out and never used for training.
2. Dictionary: the pattern keys (`engine.rollout.patterns.position_keys`) of every candidate move
   of `dict_positions` training positions are counted; 3x3, diamond (response) and nakade
   patterns seen at least `min_count` times become features (plus the scalar features).
3. Training: positions are sampled uniformly over all training games (each position with the same
   probability), features of every candidate are extracted, and the linear softmax over the
   candidates is fitted to the human move by minibatch Adam (lazy, sparse updates), one pass.
4. Held-out top-1 accuracy (argmax of the policy equals the human move; passes are not positions,
   a human move that is not a candidate, e.g. an own-eye fill, counts as a miss) is measured on
   `heldout_positions` positions of the held-out games along the way (learning curve CSV) and at
   the end; the .npz gets the metrics in its meta, and a JSON with the metrics goes beside it.
"""
from __future__ import annotations

import csv
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
from numba import njit

from engine import board as B
from engine.board import LEGAL, legality, new_board, place_setup_stone, play_pass
from engine.coords import PASS, loc
from engine.rollout import patterns as P
from engine.rollout.policy import FORMAT, RolloutPolicy, policy_playouts

NF = 6  # feature columns per candidate: 3x3, diamond, response, save atari, neighbour, nakade


# ---- games -------------------------------------------------------------------------------------
@dataclass
class GameSet:
    """Games of one board size as flat arrays: game g's moves are loc[off[g]:off[g+1]] with
    colours col (1 black, 2 white, 3 / 4 a black / white setup stone); loc -1 is a pass."""
    size: int
    off: np.ndarray
    loc: np.ndarray
    col: np.ndarray
    sources: list

    @property
    def games(self) -> int:
        return len(self.off) - 1

    @property
    def moves(self) -> int:
        return int((self.col <= 2).sum())

    def subset(self, idx) -> "GameSet":
        idx = np.asarray(idx, dtype=np.int64)
        lens = self.off[idx + 1] - self.off[idx]
        off = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        take = np.concatenate([np.arange(self.off[g], self.off[g + 1]) for g in idx]) if len(idx) \
            else np.zeros(0, dtype=np.int64)
        return GameSet(self.size, off, self.loc[take], self.col[take],
                       [self.sources[g] for g in idx])


def expand_paths(paths) -> list[Path]:
    """Files behind the given paths: a directory gives its archives and .sgf files (sorted,
    recursive); files are kept as given."""
    from sgf_tools.archives import is_archive
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")
                           and (is_archive(f.name) or f.name.lower().endswith(".sgf")))
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(p)
    return out


def split_heldout(paths, heldout=None) -> tuple[list[Path], list[Path]]:
    """(training files, held-out files). Without `heldout`, the last archive (by name) among the
    expanded paths is held out. Held-out files are removed from the training files."""
    files = expand_paths(paths)
    if heldout:
        held = expand_paths([heldout] if isinstance(heldout, (str, os.PathLike)) else heldout)
    else:
        from sgf_tools.archives import is_archive
        archives = sorted((f for f in files if is_archive(f.name)), key=lambda f: f.name)
        if len(archives) < 2:
            raise ValueError("give --heldout: no second archive to hold out among the --sgf paths")
        held = [archives[-1]]
    held_set = {f.resolve() for f in held}
    train = [f for f in files if f.resolve() not in held_set]
    if not train:
        raise ValueError("no training files left after removing the held-out ones")
    return train, held


def load_games(paths, size: int = 19, max_games: int | None = None, progress: bool = False,
               stats=None) -> GameSet:
    """Read every game of board size `size` from `paths` (files, directories or archives)."""
    from sgf_tools.archives import ReadStats, iter_games
    stats = stats if stats is not None else ReadStats()
    locs: list[int] = []
    cols: list[int] = []
    off = [0]
    sources = []
    bar = _bar(progress, None, "games", "reading games")
    for path in expand_paths(paths):
        for rec in iter_games(path, stats):
            if rec.size != size:
                continue
            for r, c in rec.setup_black:
                locs.append(loc(r, c, size))
                cols.append(3)
            for r, c in rec.setup_white:
                locs.append(loc(r, c, size))
                cols.append(4)
            for colour, pt in rec.moves:
                locs.append(PASS if pt is None else loc(pt[0], pt[1], size))
                cols.append(1 if colour == "b" else 2)
            off.append(len(locs))
            sources.append(rec.source)
            if bar is not None:
                bar.update(1)
            if max_games is not None and len(off) - 1 >= max_games:
                break
        if max_games is not None and len(off) - 1 >= max_games:
            break
    if bar is not None:
        bar.close()
    return GameSet(size, np.array(off, dtype=np.int64), np.array(locs, dtype=np.int32),
                   np.array(cols, dtype=np.int8), sources)


def select_positions(gs: GameSet, count: int, rng: np.random.Generator) -> np.ndarray:
    """uint8 mask over gs's moves: about `count` non-pass moves chosen uniformly."""
    movable = (gs.col <= 2) & (gs.loc >= 0)
    total = int(movable.sum())
    rate = min(1.0, count / max(total, 1))
    return (movable & (rng.random(len(gs.loc)) < rate)).astype(np.uint8)


# ---- feature extraction kernels ----------------------------------------------------------------
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
    bar = _bar(progress, total_sel, "pos", "counting patterns")
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


# ---- the model's fit -----------------------------------------------------------------------------
@njit(cache=True)
def _logits(feat, lo, hi, w, z):
    for j in range(lo, hi):
        s = 0.0
        for f in range(feat.shape[1]):
            i = feat[j, f]
            if i >= 0:
                s += w[i]
        z[j - lo] = s


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
        _logits(feat, lo, hi, w, z)
        zmax = z[0]
        am = 0
        for j in range(1, k):
            if z[j] > zmax:
                zmax = z[j]
                am = j
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
        _logits(feat, lo, hi, w, z)
        zmax = z[0]
        am = 0
        for j in range(1, k):
            if z[j] > zmax:
                zmax = z[j]
                am = j
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


# ---- speed -----------------------------------------------------------------------------------
def playout_speed(policy: RolloutPolicy, size: int = 19, seconds: float = 3.0,
                  seed: int = 1) -> dict:
    """Microseconds per move and playouts per second of policy playouts from the empty board
    (one thread; the first call compiles)."""
    from engine.playout import seed as np_seed
    st, meta = new_board(size)
    max_moves = 3 * size * size
    np_seed(seed)
    policy_playouts(st, meta, 2, max_moves, policy.tables)
    playouts = moves = 0
    start = time.process_time()  # single-threaded kernel: CPU time, steadier on a shared machine
    while time.process_time() - start < seconds:
        _score, m = policy_playouts(st, meta, 20, max_moves, policy.tables)
        playouts += 20
        moves += m
    dt = time.process_time() - start
    return {"us_per_move": dt / max(moves, 1) * 1e6, "playouts_per_s": playouts / dt,
            "moves_per_playout": moves / max(playouts, 1), "size": size}


# ---- driver ----------------------------------------------------------------------------------
DEFAULT_MIN_COUNT = {"3x3": 10, "diamond": 10, "nakade": 5}


def train_rollout(sgf_paths, out, positions: int = 1_000_000, heldout=None,
                  heldout_positions: int = 50_000, dict_positions: int | None = None,
                  min_count: dict | None = None, max_features: dict | None = None,
                  lr: float = 0.01, lr_final: float = 0.001, batch: int = 64, l2: float = 1e-6,
                  seed: int = 0, curve=None, eval_every: int = 200_000, size: int = 19,
                  progress: bool = True, bench_seconds: float = 3.0, max_games: int | None = None,
                  log=print) -> dict:
    """Train the rollout policy and write it to `out` (.npz) with `<out>.json` metrics and a
    learning curve CSV (`curve`, default `<out>.curve.csv`). Returns the metrics dict."""
    t0 = time.time()
    out = Path(out)
    min_count = {**DEFAULT_MIN_COUNT, **(min_count or {})}
    rng = np.random.default_rng(seed)
    train_files, held_files = split_heldout(sgf_paths, heldout)
    log(f"training files: {', '.join(f.name for f in train_files)}")
    log(f"held-out files: {', '.join(f.name for f in held_files)}")
    train = load_games(train_files, size=size, max_games=max_games, progress=progress)
    held = load_games(held_files, size=size, max_games=max_games, progress=progress)
    if train.games == 0 or held.games == 0:
        raise ValueError(f"no {size}x{size} games: {train.games} training, {held.games} held-out")
    log(f"{train.games} training games ({train.moves} moves), {held.games} held-out games")

    # dictionary
    if dict_positions is None:
        dict_positions = max(300_000, min(2_000_000, positions // 2))
    dsel = select_positions(train, dict_positions, np.random.default_rng(seed + 1))
    ckeys, ccounts = count_patterns(train, dsel, progress=progress)
    dic = build_dictionary(ckeys, ccounts, min_count, max_features)
    log(f"dictionary: {len(dic)} features {dic.family_counts()} from {int(dsel.sum())} positions "
        f"({len(ckeys)} distinct keys; min counts {min_count})")

    # held-out positions
    hsel = select_positions(held, heldout_positions, np.random.default_rng(seed + 2))
    hb = extract_all(held, hsel, dic)
    log(f"held-out: {len(hb)} positions")

    nf = len(dic)
    w = np.zeros(nf)
    m = np.zeros(nf)
    v = np.zeros(nf)
    step = 0
    curve_path = Path(curve) if curve else out.with_name(out.stem + ".curve.csv")
    curve_path.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    fcsv = open(curve_path, "w", newline="")
    writer = csv.writer(fcsv)
    writer.writerow(["positions", "train_loss", "train_top1", "heldout_top1", "heldout_nll",
                     "lr", "seconds"])

    def record(seen, tl, ta, lr_now):
        hm = heldout_metrics(hb, w)
        row = [seen, round(tl, 5), round(ta, 5), round(hm["top1"], 5), round(hm["nll"], 5),
               lr_now, round(time.time() - t0, 1)]
        writer.writerow(row)
        fcsv.flush()
        rows.append(row)
        return hm

    record(0, float("nan"), float("nan"), lr)
    # training positions: games in random order, positions sampled uniformly
    order = rng.permutation(train.games)
    train_o = train.subset(order)
    tsel = select_positions(train_o, positions, rng)
    total = int(tsel.sum())
    bar = _bar(progress, total, "pos", "training")
    seen = 0
    next_eval = eval_every
    run_loss = run_hits = run_n = 0.0
    ex = Extractor(train_o, tsel, dic, chunk_positions=20000)
    for b in ex:
        frac = seen / max(total, 1)
        lr_now = lr * (lr_final / lr) ** frac  # exponential decay from lr to lr_final
        perm = rng.permutation(len(b)).astype(np.int64)
        loss, hits, npos, steps = sgd_pass(b.pos_off, b.target, b.feat, perm, w, m, v, step,
                                           lr_now, 0.9, 0.999, 1e-8, l2, batch)
        step += steps
        seen += len(b)
        run_loss += loss
        run_hits += hits
        run_n += npos
        if bar is not None:
            bar.update(len(b))
            bar.set_postfix(loss=f"{loss / max(npos, 1):.3f}", top1=f"{hits / max(npos, 1):.3f}")
        if seen >= next_eval or seen >= total:
            hm = record(seen, run_loss / max(run_n, 1), run_hits / max(run_n, 1), lr_now)
            run_loss = run_hits = run_n = 0.0
            next_eval += eval_every
            if bar is not None:
                bar.write(f"{seen} positions: held-out top-1 {hm['top1']:.4f} nll {hm['nll']:.4f}")
            else:
                log(f"{seen} positions: held-out top-1 {hm['top1']:.4f} nll {hm['nll']:.4f}")
    if bar is not None:
        bar.close()
    fcsv.close()
    final = heldout_metrics(hb, w)
    uniform = _uniform_top1(hb)
    policy = RolloutPolicy(dic.keys, w.astype(np.float32))
    speed = playout_speed(policy, 19, bench_seconds) if bench_seconds > 0 else None
    speed9 = playout_speed(policy, 9, bench_seconds / 2) if bench_seconds > 0 else None
    metrics = {
        "kind": "rollout",
        "format": FORMAT,
        "heldout_top1": round(final["top1"], 5),
        "heldout_nll": round(final["nll"], 5),
        "heldout_positions": final["positions"],
        "uniform_top1": round(uniform, 5),
        "heldout_files": [f.name for f in held_files],
        "training_files": [f.name for f in train_files],
        "training_games": train.games,
        "positions": seen,
        "illegal_games_cut": ex.illegal_games,
        "features": len(dic),
        "feature_families": dic.family_counts(),
        "min_count": min_count,
        "dict_positions": int(dsel.sum()),
        "optimizer": {"name": "adam (lazy)", "lr": lr, "lr_final": lr_final, "batch": batch,
                      "l2": l2},
        "seed": seed,
        "train_seconds": round(time.time() - t0, 1),
        "goal_top1": 0.24,
        "goal_us_per_move": 5.0,
    }
    if speed:
        metrics["us_per_move_19x19"] = round(speed["us_per_move"], 3)
        metrics["playouts_per_s_19x19"] = round(speed["playouts_per_s"], 1)
        metrics["us_per_move_9x9"] = round(speed9["us_per_move"], 3)
        metrics["speed_note"] = ("CPU time of one thread, whole playouts from the empty board, "
                                 "measured at the end of training")
    policy.save(out, **metrics)
    metrics["file_bytes"] = out.stat().st_size
    with open(out.with_suffix(".json"), "w") as f:
        json.dump(metrics, f, indent=2, sort_keys=True)
        f.write("\n")
    log(f"held-out top-1 {final['top1']:.4f} (uniform {uniform:.4f}) on {final['positions']} "
        f"positions; {metrics.get('us_per_move_19x19', 'n/a')} us/move; wrote {out} "
        f"({metrics['file_bytes']} bytes), {out.with_suffix('.json')}, {curve_path}")
    return metrics


def _uniform_top1(b: Batch) -> float:
    """Expected top-1 of a uniformly random choice among the candidates."""
    k = np.diff(b.pos_off)
    ok = (b.target >= 0) & (k > 0)
    return float((1.0 / k[ok]).sum() / max(len(b.target), 1))


def _bar(progress: bool, total, unit: str, desc: str):
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, dynamic_ncols=True,
                file=sys.stderr, smoothing=0.05)


# ---- command line ----------------------------------------------------------------------------
@click.command("rollout")
@click.option("--sgf", "sgf", multiple=True, required=True, type=click.Path(exists=True),
              help="SGF files, directories or archives (repeatable)")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="the .npz to write (a .json of metrics and a .curve.csv go beside it)")
@click.option("--positions", default=1_000_000, show_default=True,
              help="training positions (one pass, sampled uniformly over the games)")
@click.option("--heldout", default=None, type=click.Path(exists=True),
              help="held-out games (default: the last archive among --sgf, by name)")
@click.option("--heldout-positions", default=50_000, show_default=True)
@click.option("--dict-positions", default=None, type=int,
              help="positions whose candidates' patterns are counted for the dictionary "
                   "[default: positions / 2, within 300k..2M]")
@click.option("--min-count", "min_count_", default="3x3=10,diamond=10,nakade=5",
              show_default=True, help="minimum count per pattern family")
@click.option("--lr", default=0.01, show_default=True)
@click.option("--lr-final", default=0.001, show_default=True)
@click.option("--batch", default=64, show_default=True)
@click.option("--l2", default=1e-6, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--curve", default=None, type=click.Path(dir_okay=False),
              help="learning curve CSV (default <out>.curve.csv)")
@click.option("--eval-every", default=200_000, show_default=True)
@click.option("--bench-seconds", default=3.0, show_default=True,
              help="seconds of playouts to measure us/move for the metrics (0 = skip)")
@click.option("--max-games", default=None, type=int, help="read at most this many games per set")
@click.option("--progress/--no-progress", default=True)
def rollout_command(sgf, out, positions, heldout, heldout_positions, dict_positions, min_count_,
                    lr, lr_final, batch, l2, seed, curve, eval_every, bench_seconds, max_games,
                    progress):
    """Train the fast rollout policy (linear softmax over patterns) on SGF games."""
    mc = {}
    for part in min_count_.split(","):
        if part.strip():
            name, _, val = part.partition("=")
            if name.strip() not in DEFAULT_MIN_COUNT:
                raise click.BadParameter(f"unknown family {name!r}", param_hint="--min-count")
            mc[name.strip()] = int(val)
    train_rollout(list(sgf), out, positions=positions, heldout=heldout,
                  heldout_positions=heldout_positions, dict_positions=dict_positions,
                  min_count=mc, lr=lr, lr_final=lr_final, batch=batch, l2=l2, seed=seed,
                  curve=curve, eval_every=eval_every, bench_seconds=bench_seconds,
                  max_games=max_games, progress=progress,
                  log=lambda s: click.echo(s, err=True))


def main(argv=None):
    """`python -m training.rollout --sgf DIR --out rollout.npz` (same options as the command)."""
    return rollout_command.main(args=argv, prog_name="rollout", standalone_mode=True)


if __name__ == "__main__":
    main()
