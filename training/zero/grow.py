"""Grow a Zero run's network and train the bigger one on the run's games (docs/algorithms.md §4.6).

    engine-train zero-grow --run runs/zero9 --blocks 10 --filters 64 --games 11000 \\
        --minutes 6 --device cuda --out runs/grow-10x64

A run that has outgrown its network keeps its games and its network's knowledge: `grow` makes the
bigger net compute exactly what the run's net computes (net2net: every new filter's outgoing
weights start at zero, so the old filters never see it; every new residual block's last batch
norm starts at gamma = beta = 0, so the block is the identity), and training on the run's newest
games then only adds to it. Bigger networks trained on the same games is how KataGo and Leela
Zero moved up a size without starting over.

Training is the Zero loop's own step (`zero_train.train_step`: the same loss, symmetries and head
weights) with Adam under a cosine learning rate (after a linear warmup) over the budget
(`--minutes` or `--steps`), on the GPU when one is there. Every shard whose index is a multiple
of `--holdout-every` is held out; the held-out losses, measured every `--eval-every` steps, pick
the checkpoint that is kept (the games are few for a bigger net's value head: the best held-out
loss, not the last step).
The run's own net is measured on the same held-out positions first, as the row of step 0.

Writes to --out: checkpoint.pt (the best, in the loop's checkpoint format: `engine-train zero
--resume` continues with it once it replaces the run's checkpoint.pt), grown.onnx, curve.csv and
curve.png.
"""
from __future__ import annotations

import json
import math
import queue
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import click
import numpy as np
import torch
from tqdm import tqdm

from goengine.training.nets import networks as nets
from goengine.training.nets.curves import append_row, read_rows
from goengine.training.nets.export import export_onnx
from goengine.training.nets.optimizers import build_optimizer
from goengine.training.nets.plots import save_figure, subplots
from goengine.training.nets.precision import choose as choose_precision
from goengine.training.zero.loop import ZeroConfig, head_weights
from goengine.training.zero.shards import Window, load_shards, newest_shards
from goengine.training.zero.train import (PARTS, ZeroBatch, measure, part_means,
                                          sample_batch, save_trainer, train_step)

CURVE_FIELDS = ["step", "samples", "elapsed_s", "lr", "train_loss", "train_value_loss",
                "train_policy_loss", "loss", "value_loss", "policy_loss", "ownership_mse",
                "score_mae", "best"]


# ---- net2net ------------------------------------------------------------------------------------

def _block_slots(old: int, new: int) -> list[int]:
    """Where the old residual blocks go among the new ones: spread evenly, first to first."""
    return [i * new // old for i in range(old)]


def _widen(old: torch.Tensor, new: torch.Tensor, pooled_input: bool = False) -> torch.Tensor:
    """`new` (freshly initialised, at least `old`'s size in every dimension) with `old` in its
    leading slice; a weight's old outputs read none of the new inputs (zeros there), its new
    outputs keep their fresh weights. `pooled_input`: the input is [mean(C), max(C)] of C trunk
    filters (a linear layer on global pooling), widened per half."""
    out = new.detach().clone()
    if old.dim() == 0:
        return old.detach().clone()
    if pooled_input:
        c_old, c_new = old.shape[1] // 2, new.shape[1] // 2
        out[: old.shape[0]] = 0
        out[: old.shape[0], :c_old] = old[:, :c_old]
        out[: old.shape[0], c_new: c_new + c_old] = old[:, c_old:]
        return out
    if old.dim() == 1:
        out[: old.shape[0]] = old
        return out
    out[: old.shape[0]] = 0
    out[tuple(slice(0, k) for k in old.shape)] = old
    return out


def grow(net: nets.ZeroNet, blocks: int, filters: int, seed: int = 0) -> nets.ZeroNet:
    """A ZeroNet of `blocks` residual blocks of `filters` filters (at least `net`'s) that computes
    what `net` computes, in training and in evaluation mode alike."""
    old_blocks, old_filters = len(net.tower), net.config["filters"]
    if blocks < old_blocks or filters < old_filters:
        raise ValueError(f"cannot grow {old_blocks}x{old_filters} to {blocks}x{filters}: a grown "
                         f"net has at least as many blocks and filters")
    torch.manual_seed(seed)
    big = nets.from_config({**net.config, "blocks": blocks, "filters": filters})
    slots = _block_slots(old_blocks, blocks)
    for i in set(range(blocks)) - set(slots):           # new blocks: the identity at first
        bn = big.tower[i].b[1]
        torch.nn.init.zeros_(bn.weight)
        torch.nn.init.zeros_(bn.bias)
    fresh = big.state_dict()
    grown = dict(fresh)
    for name, tensor in net.state_dict().items():
        if name.startswith("tower."):
            _, i, rest = name.split(".", 2)
            name = f"tower.{slots[int(i)]}.{rest}"
        grown[name] = _widen(tensor, fresh[name], pooled_input=name == "p_pass.weight")
    big.load_state_dict(grown)
    return big


# ---- data -------------------------------------------------------------------------------------

def split_window(games_dir: Path, games: int, holdout_every: int) -> tuple[Window, Window]:
    """(training, held-out) positions of the newest `games` games: every `holdout_every`-th shard
    is held out, both with the score targets at the komi of all of them."""
    chosen, komi = newest_shards(games_dir, games)
    if len(chosen) < 2:
        raise click.UsageError(f"{games_dir} holds {len(chosen)} shard(s): too few to hold out")
    held = [s for i, s in enumerate(chosen) if i % holdout_every == 0]
    train = [s for i, s in enumerate(chosen) if i % holdout_every != 0]
    return load_shards(games_dir, train, komi), load_shards(games_dir, held, komi)


class Batches:
    """Training batches (sample_batch: uniform positions, random symmetries) made ahead by
    `threads` threads, so that the accelerator does not wait on numpy."""

    def __init__(self, window: Window, size: int, batch_size: int, seed: int, threads: int = 3):
        self._queue: queue.Queue = queue.Queue(maxsize=4 * threads)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._fill, daemon=True,
                                          args=(window, size, batch_size,
                                                np.random.default_rng([seed, k])))
                         for k in range(threads)]
        for t in self._threads:
            t.start()

    def _fill(self, window, size, batch_size, rng) -> None:
        while not self._stop.is_set():
            batch = sample_batch(window, size, batch_size, rng)
            while not self._stop.is_set():
                try:
                    self._queue.put(batch, timeout=0.1)
                    break
                except queue.Full:
                    continue

    def next(self) -> ZeroBatch:
        return self._queue.get()

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


# ---- training ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class GrowConfig:
    blocks: int = 10
    filters: int = 64
    games: int = 11000          # the newest games of the run to train on (and hold out from)
    holdout_every: int = 20     # every 20th shard held out: 5% of the games
    batch_size: int = 1024
    lr: float = 2e-4            # Adam, cosine to 0 over the budget
    warmup: float = 0.05        # the fraction of the budget the learning rate ramps up over
    l2: float = 1e-4
    minutes: float = 6.0        # the budget, when `steps` is 0
    steps: int = 0
    eval_every: int = 500       # steps between held-out measurements (and checkpoints)
    precision: str = "auto"     # bf16 on a GPU, timed on a CPU (training.nets.precision.choose)
    channels_last: bool = True
    threads: int = 4            # torch's CPU threads
    batch_threads: int = 3      # threads making batches
    seed: int = 0


def cosine_lr(lr: float, done: float, warmup: float = 0.0) -> float:
    """The learning rate when the fraction `done` of the budget is spent: linear from 0 over the
    first `warmup` of it (a fresh Adam's first steps move every trained weight by about the
    learning rate), then a cosine to 0."""
    done = min(max(done, 0.0), 1.0)
    ramp = min(1.0, done / warmup) if warmup > 0 else 1.0
    return lr * ramp * 0.5 * (1.0 + math.cos(math.pi * done))


def _row(step: int, samples: int, elapsed: float, lr: float, train: dict | None, held: dict,
         best: bool) -> dict:
    row = {"step": step, "samples": samples, "elapsed_s": f"{elapsed:.0f}", "lr": f"{lr:.3g}",
           "best": int(best)}
    if train:
        row.update({f"train_{k}": f"{train[k]:.4f}" for k in PARTS[:3]})
    row.update({k: "" if math.isnan(v) else f"{v:.4f}" for k, v in held.items()})
    return row


def plot_curve(csv_path: Path, png_path: Path) -> None:
    rows = read_rows(csv_path)
    fig, axes = subplots(1, 2, figsize=(10, 4))
    x = [int(r["samples"]) / 1e6 for r in rows]
    for ax, part in zip(axes, ("value_loss", "policy_loss")):
        ax.plot(x, [float(r[part]) for r in rows], "o-", label="held out")
        train = [(xi, float(r["train_" + part])) for xi, r in zip(x, rows) if r["train_" + part]]
        if train:
            ax.plot(*zip(*train), ".-", label="training")
        ax.set_xlabel("samples (millions)")
        ax.set_title(part)
        ax.legend()
    save_figure(fig, png_path)


def grow_run(run_dir: Path, out: Path, cfg: GrowConfig, device: torch.device, log=print) -> dict:
    """Grow the run's net to cfg.blocks x cfg.filters, train it on the run's newest games within
    the budget, keep the best held-out checkpoint in `out`, export it; the best held-out row."""
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.threads)
    # a trained net's float32 forward on a CPU meets denormal numbers: 29x slower held-out
    # measurements on this machine without flushing them to zero
    torch.set_flush_denormal(True)
    net, ckpt = nets.load_checkpoint(run_dir / "checkpoint.pt")
    run_cfg = ZeroConfig(**json.loads(ckpt["zero_config"]))
    size, weights = run_cfg.size, head_weights(run_cfg)
    train, held = split_window(run_dir / "games", cfg.games, cfg.holdout_every)
    log(f"{run_dir}: {train.games} games ({len(train.z)} positions) to train on, "
        f"{held.games} held out ({len(held.z)} positions)")
    big = grow(net, cfg.blocks, cfg.filters, cfg.seed).to(device)
    precision = choose_precision(cfg.precision, device, big, size, 64, cfg.channels_last, log)
    (out / "curve.csv").unlink(missing_ok=True)
    base = measure(net.to(device), held, size, device, precision, weights)
    append_row(out / "curve.csv", CURVE_FIELDS, _row(0, 0, 0.0, 0.0, None, base, False))
    log(f"grown {len(net.tower)}x{net.config['filters']} -> {cfg.blocks}x{cfg.filters}: held out "
        f"loss {base['loss']:.4f} (value {base['value_loss']:.4f}, policy "
        f"{base['policy_loss']:.4f}) for the run's net")
    if cfg.channels_last:
        big = big.to(memory_format=torch.channels_last)
    opt = build_optimizer(big, "adam", cfg.lr, cfg.l2)
    grown_cfg = replace(run_cfg, blocks=cfg.blocks, filters=cfg.filters)
    budget_s = cfg.minutes * 60.0
    best, best_row = math.inf, None
    batches = Batches(train, size, cfg.batch_size, cfg.seed, cfg.batch_threads)
    bar = tqdm(total=cfg.steps or None, unit="step", desc="growing", dynamic_ncols=True)
    t0, step, sums, k, lr = time.monotonic(), 0, np.zeros(len(PARTS)), 0, cfg.lr
    try:
        while True:
            elapsed = time.monotonic() - t0
            done = step / cfg.steps if cfg.steps else elapsed / budget_s
            finished = done >= 1.0
            if step and (step % cfg.eval_every == 0 or finished):
                held_parts = measure(big, held, size, device, precision, weights)
                better = held_parts["loss"] < best
                row = _row(step, step * cfg.batch_size, elapsed, lr, part_means(sums, k),
                           held_parts, better)
                append_row(out / "curve.csv", CURVE_FIELDS, row)
                plot_curve(out / "curve.csv", out / "curve.png")
                sums, k = np.zeros(len(PARTS)), 0
                if better:
                    best, best_row = held_parts["loss"], row
                    save_trainer(out / "checkpoint.pt", big, opt, int(ckpt["steps"]), grown_cfg)
                bar.set_postfix(held=f"{held_parts['loss']:.4f}", best=f"{best:.4f}")
            if finished:
                break
            lr = cosine_lr(cfg.lr, done, cfg.warmup)
            for group in opt.param_groups:
                group["lr"] = lr
            parts = np.asarray(train_step(big, opt, batches.next(), device, precision,
                                          cfg.channels_last, weights))
            parts[3:5] *= parts[5]
            sums += parts
            k += 1
            step += 1
            bar.update(1)
    finally:
        batches.close()
        bar.close()
    rate = step * cfg.batch_size / max(time.monotonic() - t0, 1e-9)
    log(f"{step} steps, {rate:.0f} positions/s; best held-out loss {best:.4f} at step "
        f"{best_row and best_row['step']} (the run's net: {base['loss']:.4f})")
    kept, _ = nets.load_checkpoint(out / "checkpoint.pt")
    export_onnx(kept.eval(), "zero", out / "grown.onnx",
                {"training_data": f"Zero self-play {size}x{size}: {len(net.tower)}x"
                                  f"{net.config['filters']} run net grown to {cfg.blocks}x"
                                  f"{cfg.filters}, {best_row['step']} steps of "
                                  f"{cfg.batch_size} on {train.games} games",
                 "board_sizes": str(size), "komi": f"{train.komi:g}"}, board_size=size)
    return {"base": base, "best": best_row, "positions_s": rate}


__all__ = ["Batches", "GrowConfig", "cosine_lr", "grow", "grow_run", "split_window"]
