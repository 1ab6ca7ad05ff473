"""Train AlphaGo's fast rollout policy (engine.rollout) on human games.

    engine-train rollout --sgf ../shared/data/tygem9d --out models/bundled/rollout.npz \\
        --positions 4000000         # the bundled model (about 10 minutes on one core)

Pipeline (numba kernels, no torch needed), one module per step:

1. Games (`training.rollout.data`): read as flat move arrays; without `heldout`, the last
   archive among the SGF paths (by name) is held out and never used for training.
2. Dictionary (`training.rollout.features`): the pattern keys of every candidate move of
   `dict_positions` training positions are counted; 3x3, diamond (response) and nakade patterns
   seen at least `min_count` times become features (plus the scalar features).
3. Training (`training.rollout.sgd`): positions are sampled uniformly over all training games
   (each position with the same probability), features of every candidate are extracted, and
   the linear softmax over the candidates is fitted to the human move by minibatch Adam (lazy,
   sparse updates), one pass.
4. Evaluation: held-out top-1 accuracy on `heldout_positions` positions of the held-out games,
   along the way (learning curve CSV, `training.nets.curves`) and at the end; the speed of the
   trained policy's playouts (`training.rollout.speed`).
5. Save: the .npz gets the metrics in its meta, and a JSON with the metrics goes beside it.

The command line is `training.rollout.cli`.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from goengine.engine.rollout.policy import FORMAT, RolloutPolicy
from goengine.training.nets.curves import append_row
from goengine.training.rollout.data import GameSet, load_games, progress_bar, select_positions, \
    split_heldout
from goengine.training.rollout.features import (Batch, Dictionary, Extractor, build_dictionary,
                                                count_patterns, extract_all)
from goengine.training.rollout.sgd import heldout_metrics, sgd_pass, uniform_top1
from goengine.training.rollout.speed import playout_speed

DEFAULT_MIN_COUNT = {"3x3": 10, "diamond": 10, "nakade": 5}
CURVE_FIELDS = ["positions", "train_loss", "train_top1", "heldout_top1", "heldout_nll", "lr",
                "seconds"]


@dataclass(frozen=True)
class SgdConfig:
    lr: float = 0.01            # Adam's step size at the start ...
    lr_final: float = 0.001     # ... decaying exponentially to this at the end of the pass
    batch: int = 64             # positions per Adam step
    l2: float = 1e-6            # weight decay on the touched weights


class Adam:
    """The weights and lazy Adam's moments, one entry per feature."""

    def __init__(self, features: int):
        self.w = np.zeros(features)
        self.m = np.zeros(features)
        self.v = np.zeros(features)
        self.step = 0

    def train_step(self, b: Batch, order: np.ndarray, lr: float, cfg: SgdConfig):
        """One pass over the positions of `b` in `order`: (loss sum, top-1 hits, positions)."""
        loss, hits, npos, steps = sgd_pass(b.pos_off, b.target, b.feat, order, self.w, self.m,
                                           self.v, self.step, lr, 0.9, 0.999, 1e-8, cfg.l2,
                                           cfg.batch)
        self.step += steps
        return loss, hits, npos


class Curve:
    """The learning curve CSV: held-out metrics every `eval_every` positions."""

    def __init__(self, path: Path, held: Batch, t0: float):
        self.path, self.held, self.t0 = path, held, t0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)

    def record(self, seen: int, train_loss: float, train_top1: float, lr: float,
               w: np.ndarray) -> dict:
        hm = heldout_metrics(self.held, w)
        append_row(self.path, CURVE_FIELDS, {
            "positions": seen, "train_loss": round(train_loss, 5),
            "train_top1": round(train_top1, 5), "heldout_top1": round(hm["top1"], 5),
            "heldout_nll": round(hm["nll"], 5), "lr": lr,
            "seconds": round(time.time() - self.t0, 1)})
        return hm


def load_split(sgf_paths, heldout, size: int, max_games: int | None, progress: bool, log):
    """(training files, held-out files, training games, held-out games)."""
    train_files, held_files = split_heldout(sgf_paths, heldout)
    log(f"training files: {', '.join(f.name for f in train_files)}")
    log(f"held-out files: {', '.join(f.name for f in held_files)}")
    train = load_games(train_files, size=size, max_games=max_games, progress=progress)
    held = load_games(held_files, size=size, max_games=max_games, progress=progress)
    if train.games == 0 or held.games == 0:
        raise ValueError(f"no {size}x{size} games: {train.games} training, {held.games} held-out")
    log(f"{train.games} training games ({train.moves} moves), {held.games} held-out games")
    return train_files, held_files, train, held


def make_dictionary(train: GameSet, dict_positions: int, min_count: dict,
                    max_features: dict | None, seed: int, progress: bool, log):
    """The feature dictionary from about `dict_positions` training positions, and how many
    positions were counted."""
    dsel = select_positions(train, dict_positions, np.random.default_rng(seed + 1))
    ckeys, ccounts = count_patterns(train, dsel, progress=progress)
    dic = build_dictionary(ckeys, ccounts, min_count, max_features)
    log(f"dictionary: {len(dic)} features {dic.family_counts()} from {int(dsel.sum())} positions "
        f"({len(ckeys)} distinct keys; min counts {min_count})")
    return dic, int(dsel.sum())


def fit(train: GameSet, dic: Dictionary, opt: Adam, cfg: SgdConfig, positions: int,
        eval_every: int, curve: Curve, rng: np.random.Generator, progress: bool, log):
    """One pass of `opt` over about `positions` positions sampled uniformly from the training
    games (in random order); the curve gets a row every `eval_every` positions. Returns
    (positions seen, games cut at an illegal move)."""
    curve.record(0, float("nan"), float("nan"), cfg.lr, opt.w)
    train_o = train.subset(rng.permutation(train.games))
    tsel = select_positions(train_o, positions, rng)
    total = int(tsel.sum())
    bar = progress_bar(progress, total, "pos", "training")
    seen = 0
    next_eval = eval_every
    run_loss = run_hits = run_n = 0.0
    ex = Extractor(train_o, tsel, dic, chunk_positions=20000)
    for b in ex:
        lr_now = cfg.lr * (cfg.lr_final / cfg.lr) ** (seen / max(total, 1))  # exponential decay
        loss, hits, npos = opt.train_step(b, rng.permutation(len(b)).astype(np.int64), lr_now, cfg)
        seen += len(b)
        run_loss += loss
        run_hits += hits
        run_n += npos
        if bar is not None:
            bar.update(len(b))
            bar.set_postfix(loss=f"{loss / max(npos, 1):.3f}", top1=f"{hits / max(npos, 1):.3f}")
        if seen >= next_eval or seen >= total:
            hm = curve.record(seen, run_loss / max(run_n, 1), run_hits / max(run_n, 1), lr_now,
                              opt.w)
            run_loss = run_hits = run_n = 0.0
            next_eval += eval_every
            (bar.write if bar is not None else log)(
                f"{seen} positions: held-out top-1 {hm['top1']:.4f} nll {hm['nll']:.4f}")
    if bar is not None:
        bar.close()
    return seen, ex.illegal_games


def speed_metrics(policy: RolloutPolicy, seconds: float) -> dict:
    """us/move on 19x19 and 9x9 (`seconds` and half of it), or nothing for 0 seconds."""
    if seconds <= 0:
        return {}
    speed = playout_speed(policy, 19, seconds)
    speed9 = playout_speed(policy, 9, seconds / 2)
    return {"us_per_move_19x19": round(speed["us_per_move"], 3),
            "playouts_per_s_19x19": round(speed["playouts_per_s"], 1),
            "us_per_move_9x9": round(speed9["us_per_move"], 3),
            "speed_note": "CPU time of one thread, whole playouts from the empty board, "
                          "measured at the end of training"}


def save(policy: RolloutPolicy, out: Path, metrics: dict) -> None:
    """The .npz (metrics in its meta) and `<out>.json`; adds `file_bytes` to `metrics`."""
    policy.save(out, **metrics)
    metrics["file_bytes"] = out.stat().st_size
    with open(out.with_suffix(".json"), "w") as f:
        json.dump(metrics, f, indent=2, sort_keys=True)
        f.write("\n")


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
    cfg = SgdConfig(lr=lr, lr_final=lr_final, batch=batch, l2=l2)
    train_files, held_files, train, held = load_split(sgf_paths, heldout, size, max_games,
                                                      progress, log)
    if dict_positions is None:
        dict_positions = max(300_000, min(2_000_000, positions // 2))
    dic, dict_seen = make_dictionary(train, dict_positions, min_count, max_features, seed,
                                     progress, log)
    hb = extract_all(held, select_positions(held, heldout_positions,
                                            np.random.default_rng(seed + 2)), dic)
    log(f"held-out: {len(hb)} positions")
    curve_path = Path(curve) if curve else out.with_name(out.stem + ".curve.csv")
    opt = Adam(len(dic))
    seen, illegal = fit(train, dic, opt, cfg, positions, eval_every, Curve(curve_path, hb, t0),
                        np.random.default_rng(seed), progress, log)
    final = heldout_metrics(hb, opt.w)
    uniform = uniform_top1(hb)
    policy = RolloutPolicy(dic.keys, opt.w.astype(np.float32))
    speed = speed_metrics(policy, bench_seconds)
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
        "illegal_games_cut": illegal,
        "features": len(dic),
        "feature_families": dic.family_counts(),
        "min_count": min_count,
        "dict_positions": dict_seen,
        "optimizer": {"name": "adam (lazy)", **asdict(cfg)},
        "seed": seed,
        "train_seconds": round(time.time() - t0, 1),
        "goal_top1": 0.24,
        "goal_us_per_move": 5.0,
        **speed,
    }
    save(policy, out, metrics)
    log(f"held-out top-1 {final['top1']:.4f} (uniform {uniform:.4f}) on {final['positions']} "
        f"positions; {metrics.get('us_per_move_19x19', 'n/a')} us/move; wrote {out} "
        f"({metrics['file_bytes']} bytes), {out.with_suffix('.json')}, {curve_path}")
    return metrics
