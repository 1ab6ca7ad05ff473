"""The Zero loop's training step: minibatches of the recent window under random symmetries, and
AlphaGo Zero's loss (docs/algorithms.md §4.6).

    batch = sample_batch(window, size, 256, rng)      # planes, pi, z under random symmetries
    loss, parts = zero_loss(net, *batch)              # (z - v)^2 - pi^T log p
    opt = make_zero_optimizer(net, "sgd", lr=0.01, l2=1e-4)

The c ||theta||^2 term is the optimizer's weight decay: its gradient is 2 c theta, so the decay is
2c (c = `l2`).
"""
from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import torch
from torch.nn import functional as F

from goengine.engine import symmetry
from goengine.models.metadata import PLANES
from goengine.training import nets
from goengine.training.precision import autocast
from goengine.training.zero_selfplay import ZERO_FEATURES
from goengine.training.zero_shards import Window

OPTIMIZERS = ("sgd", "adam")
STATS = "train_stats.json"      # what the distributed trainer's rank 0 reports to the loop


def make_zero_optimizer(net, name: str, lr: float, l2: float, momentum: float = 0.9):
    if name == "sgd":
        return torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum, weight_decay=2 * l2)
    if name == "adam":
        return torch.optim.Adam(net.parameters(), lr=lr, weight_decay=2 * l2)
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {name!r}")


def sample_batch(window: Window, size: int, batch_size: int, rng: np.random.Generator):
    """(planes float32[B, 17, N, N], pi float32[B, N*N+1], z float32[B]): positions drawn
    uniformly from the window, each under one of the 8 symmetries drawn at random (planes and pi
    alike)."""
    rows = rng.integers(len(window.z), size=batch_size)
    c = PLANES[ZERO_FEATURES]
    planes = np.unpackbits(window.x[rows], axis=1, count=c * size * size).astype(np.float32)
    planes = planes.reshape(batch_size, c, size, size)
    pi = window.pi[rows]
    ks = rng.integers(symmetry.N_SYMMETRIES, size=batch_size)
    out_planes, out_pi = np.empty_like(planes), np.empty_like(pi)
    for k in range(symmetry.N_SYMMETRIES):
        sel = ks == k
        if sel.any():
            out_planes[sel] = symmetry.apply(planes[sel], k)
            out_pi[sel] = symmetry.apply_policy(pi[sel], k, size)
    return out_planes, out_pi, window.z[rows]


def zero_loss(net, planes, pi, z):
    """(loss, (value part, policy part)): mean over the batch of (z - v)^2 - pi^T log p."""
    logits, value = net(planes)
    return zero_loss_of(logits, value, pi, z)


def zero_loss_of(logits, value, pi, z):
    """zero_loss from the network's outputs."""
    value_loss = F.mse_loss(value, z)
    policy_loss = -(pi * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    return value_loss + policy_loss, (float(value_loss.detach()), float(policy_loss.detach()))


def train_step(net, opt, batch, device=None, precision: str = "fp32",
               channels_last: bool = False) -> tuple[float, float, float]:
    """One optimizer step on a numpy batch (moved to `device` when given); (loss, value loss,
    policy loss). `precision`: a resolved one ("fp32" / "bf16", training.precision.resolve); the
    loss is taken in float32 either way."""
    device = torch.device(device or "cpu")
    planes, pi, z = (torch.from_numpy(a).to(device) for a in batch)
    if channels_last:
        planes = planes.contiguous(memory_format=torch.channels_last)
    net.train()
    opt.zero_grad(set_to_none=True)
    with autocast(device, precision):
        logits, value = net(planes)
    loss, (v, p) = zero_loss_of(logits.float(), value.float(), pi, z)
    loss.backward()
    opt.step()
    return float(loss.detach()), v, p


def run_steps(net, opt, window: Window, size: int, batch_size: int, rng, steps: int,
              target: int, save_every: int, save, bar=None, device=None,
              precision: str = "fp32", channels_last: bool = False):
    """Train from step `steps` to `target`, calling `save(steps)` every `save_every` steps and at
    the end; returns (steps, [loss, value loss, policy loss] summed, steps run)."""
    k, sums = 0, np.zeros(3)
    while steps < target:
        sums += train_step(net, opt, sample_batch(window, size, batch_size, rng), device,
                           precision, channels_last)
        steps += 1
        k += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{sums[0] / k:.3f}")
        if steps % save_every == 0:
            save(steps)
    save(steps)
    return steps, sums, k


def save_trainer(path, net, opt, steps: int, cfg) -> None:
    """The trainer's checkpoint: weights, optimizer state, steps run, the run's config."""
    nets.save_checkpoint(net, path, optimizer=opt.state_dict(), steps=steps,
                         zero_config=json.dumps(asdict(cfg)))


__all__ = ["OPTIMIZERS", "STATS", "make_zero_optimizer", "run_steps", "sample_batch", "save_trainer",
           "train_step", "zero_loss", "zero_loss_of"]
