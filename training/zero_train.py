"""The Zero loop's training step: minibatches of the recent window under random symmetries, and
AlphaGo Zero's loss (docs/algorithms.md §4.6).

    batch = sample_batch(window, size, 256, rng)      # planes, pi, z under random symmetries
    loss, parts = zero_loss(net, *batch)              # (z - v)^2 - pi^T log p
    opt = make_zero_optimizer(net, "sgd", lr=0.01, l2=1e-4)

The c ||theta||^2 term is the optimizer's weight decay: its gradient is 2 c theta, so the decay is
2c (c = `l2`).
"""
from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from goengine.engine import symmetry
from goengine.models.metadata import PLANES
from goengine.training.zero_selfplay import ZERO_FEATURES
from goengine.training.zero_shards import Window

OPTIMIZERS = ("sgd", "adam")


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
    value_loss = F.mse_loss(value, z)
    policy_loss = -(pi * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    return value_loss + policy_loss, (float(value_loss.detach()), float(policy_loss.detach()))


def train_step(net, opt, batch) -> tuple[float, float, float]:
    """One optimizer step on a numpy batch; (loss, value loss, policy loss)."""
    planes, pi, z = (torch.from_numpy(a) for a in batch)
    net.train()
    opt.zero_grad(set_to_none=True)
    loss, (v, p) = zero_loss(net, planes, pi, z)
    loss.backward()
    opt.step()
    return float(loss.detach()), v, p


__all__ = ["OPTIMIZERS", "make_zero_optimizer", "sample_batch", "train_step", "zero_loss"]
