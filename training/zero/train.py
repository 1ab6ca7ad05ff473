"""The Zero loop's training step: minibatches of the recent window under random symmetries, and
AlphaGo Zero's loss with KataGo's auxiliary heads (docs/algorithms.md §4.6).

    batch = sample_batch(window, size, 256, rng)      # a ZeroBatch under random symmetries
    loss, parts = zero_loss(net, batch)               # (z - v)^2 - pi^T log p (+ the heads')
    opt = build_optimizer(net, "sgd", lr=0.01, l2=1e-4)   # training.nets.optimizers

The c ||theta||^2 term is the optimizer's weight decay (c = `l2`). A net with the ownership and score heads adds the value net's terms
(`training.nets.loop.aux_loss`, docs/algorithms.md §4.3) over the positions of played-out games.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import NamedTuple

import numpy as np
import torch
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel

from goengine.engine import symmetry
from goengine.models.metadata import PLANES
from goengine.training.nets import networks as nets
from goengine.training.nets.loop import aux_loss
from goengine.training.nets.precision import autocast
from goengine.training.zero.selfplay import ZERO_FEATURES
from goengine.training.zero.shards import Window

STATS = "train_stats.json"      # what the distributed trainer's rank 0 reports to the loop


class ZeroBatch(NamedTuple):
    planes: np.ndarray   # float32[B, 17, N, N]
    pi: np.ndarray       # float32[B, N*N+1]
    z: np.ndarray        # float32[B]
    own: np.ndarray      # float32[B, N*N]: final owner, +1 = the side to move
    score: np.ndarray    # float32[B]: final area score for the side to move, points
    mask: np.ndarray     # float32[B]: 1 where own and score are known (a played-out game)


class HeadWeights(NamedTuple):
    ownership: float = 1.5      # ZeroConfig.ownership_weight
    score: float = 1.0          # ZeroConfig.score_weight


# what train_step returns, and run_steps sums: the loss and its parts (means over the batch);
# the heads' ownership MSE and score MAE (points) are weighted by `targets`, the positions that
# have them, so that their sums divided by its sum are means over those positions
PARTS = ("loss", "value_loss", "policy_loss", "ownership_mse", "score_mae", "targets")


def sample_batch(window: Window, size: int, batch_size: int,
                 rng: np.random.Generator) -> ZeroBatch:
    """Positions drawn uniformly from the window, each under one of the 8 symmetries drawn at
    random (planes, pi and the ownership target alike)."""
    rows = rng.integers(len(window.z), size=batch_size)
    c = PLANES[ZERO_FEATURES]
    planes = np.unpackbits(window.x[rows], axis=1, count=c * size * size).astype(np.float32)
    planes = planes.reshape(batch_size, c, size, size)
    pi = window.pi[rows]
    own = window.own[rows].astype(np.float32)
    ks = rng.integers(symmetry.N_SYMMETRIES, size=batch_size)
    return ZeroBatch(symmetry.apply_each(planes, ks), symmetry.apply_policy_each(pi, ks, size),
                     window.z[rows], symmetry.apply_policy_each(own, ks, size),
                     window.score[rows], window.mask[rows])


def zero_loss(net, batch, weights: HeadWeights = HeadWeights()):
    """zero_loss_of on the net's outputs for a batch of tensors."""
    return zero_loss_of(dict(zip(net.output_names, net(batch.planes))), batch, weights)


def zero_loss_of(outputs: dict, batch, weights: HeadWeights = HeadWeights()):
    """(loss, parts): the mean over the batch of (z - v)^2 - pi^T log p, plus w_own times the
    ownership MSE and w_score times the MSE of score / N^2 over the positions with targets, for
    the heads `outputs` holds; parts as PARTS (nan for a head the net lacks)."""
    n = batch.planes.shape[-1]
    value_loss = F.mse_loss(outputs["value"], batch.z)
    policy_loss = -(batch.pi * F.log_softmax(outputs["policy_logits"], dim=1)).sum(dim=1).mean()
    terms = aux_loss(outputs, batch.own, batch.score, n, batch.mask)
    loss = value_loss + policy_loss + weights.ownership * terms.get("ownership", 0.0) \
        + weights.score * terms.get("score", 0.0)
    targets = float(batch.mask.sum())
    mae = math.nan
    if "score" in outputs:
        err = (outputs["score"].detach() - batch.score).abs()
        mae = float((err * batch.mask).sum()) / max(targets, 1.0)
    own = float(terms["ownership"].detach()) if "ownership" in terms else math.nan
    return loss, (float(loss.detach()), float(value_loss.detach()), float(policy_loss.detach()),
                  own, mae, targets)


def train_step(net, opt, batch: ZeroBatch, device=None, precision: str = "fp32",
               channels_last: bool = False, weights: HeadWeights = HeadWeights()) -> tuple:
    """One optimizer step on a numpy batch (moved to `device` when given); returns PARTS.
    `precision`: a resolved one ("fp32" / "bf16", training.nets.precision.resolve); the loss is taken
    in float32 either way."""
    device = torch.device(device or "cpu")
    batch = ZeroBatch(*(torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in batch))
    planes = batch.planes
    if channels_last:
        planes = planes.contiguous(memory_format=torch.channels_last)
    net.train()
    opt.zero_grad(set_to_none=True)
    with autocast(device, precision):
        out = net(planes)
    names = (net.module if isinstance(net, DistributedDataParallel) else net).output_names
    loss, parts = zero_loss_of({k: t.float() for k, t in zip(names, out)}, batch, weights)
    loss.backward()
    opt.step()
    return parts


def run_steps(net, opt, window: Window, size: int, batch_size: int, rng, steps: int,
              target: int, save_every: int, save, bar=None, device=None,
              precision: str = "fp32", channels_last: bool = False,
              weights: HeadWeights = HeadWeights()):
    """Train from step `steps` to `target`, calling `save(steps)` every `save_every` steps and at
    the end; returns (steps, sums, steps run): sums float[6] of PARTS over the steps, the heads'
    two weighted by the positions with targets (`part_means` turns them into means)."""
    k, sums = 0, np.zeros(len(PARTS))
    while steps < target:
        parts = np.asarray(train_step(net, opt, sample_batch(window, size, batch_size, rng),
                                      device, precision, channels_last, weights))
        parts[3:5] *= parts[5]
        sums += parts
        steps += 1
        k += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{sums[0] / k:.3f}")
        if steps % save_every == 0:
            save(steps)
    save(steps)
    return steps, sums, k


def measure(net, window: Window, size: int, device, precision: str,
            weights: HeadWeights = HeadWeights(), batch: int = 2048) -> dict:
    """PARTS' means over every position of `window`, as stored (no symmetry), the net in
    evaluation mode: the losses per position, the heads' figures per position with targets.
    The loss on positions a net never trained on (held-out games, the next generation's) is
    what tells its fit from its memory."""
    net.eval()
    sums, positions = np.zeros(len(PARTS)), 0
    c = window.x.shape[1] * 8 // (size * size)
    with torch.no_grad():
        for start in range(0, len(window.z), batch):
            rows = slice(start, start + batch)
            n = len(window.z[rows])
            planes = np.unpackbits(window.x[rows], axis=1, count=c * size * size)
            arrays = ZeroBatch(planes.reshape(n, c, size, size).astype(np.float32),
                               window.pi[rows], window.z[rows],
                               window.own[rows].astype(np.float32), window.score[rows],
                               window.mask[rows])
            b = ZeroBatch(*(torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in arrays))
            with autocast(device, precision):
                out = net(b.planes)
            _, parts = zero_loss_of({k: t.float() for k, t in zip(net.output_names, out)}, b,
                                    weights)
            parts = np.asarray(parts)
            sums[:3] += parts[:3] * n
            sums[3:5] += np.nan_to_num(parts[3:5]) * parts[5]
            sums[5] += parts[5]
            positions += n
    means = {name: sums[i] / positions for i, name in enumerate(PARTS[:3])}
    for i, head in ((3, "ownership"), (4, "score")):
        known = sums[5] > 0 and head in net.output_names
        means[PARTS[i]] = sums[i] / sums[5] if known else math.nan
    return means


def part_means(sums, k: int) -> dict:
    """PARTS' means from run_steps' sums over k steps: the losses per step, the heads' figures
    per position with targets (nan when there were none, or the net lacks the head)."""
    means = {name: sums[i] / k for i, name in enumerate(PARTS[:3])}
    for i in (3, 4):
        means[PARTS[i]] = sums[i] / sums[5] if sums[5] > 0 else math.nan
    return means


def save_trainer(path, net, opt, steps: int, cfg) -> None:
    """The trainer's checkpoint: weights, optimizer state, steps run, the run's config."""
    nets.save_checkpoint(net, path, optimizer=opt.state_dict(), steps=steps,
                         zero_config=json.dumps(asdict(cfg)))


__all__ = ["PARTS", "STATS", "HeadWeights", "ZeroBatch", "measure", "part_means", "run_steps",
           "sample_batch", "save_trainer", "train_step", "zero_loss", "zero_loss_of"]
