"""The optimizers the self-play trainers choose from by name (`--optimizer`).

    opt = build_optimizer(net, "sgd", lr=0.01, l2=1e-4)            # AlphaGo Zero: momentum 0.9
    opt = build_optimizer(net, "sgd", lr=1e-3, momentum=0.0)       # AlphaGo's RL: plain SGD
    opt = build_optimizer(net, "adam", lr=5e-5)

The c ||theta||^2 term of a loss is the optimizer's weight decay: its gradient is 2 c theta.

A resumed run takes its optimizer's moments from the checkpoint and its settings (rate, momentum,
decay) from the command line: `restore_state(opt, saved)`.
"""
from __future__ import annotations

import torch

OPTIMIZERS = ("sgd", "adam")


def build_optimizer(net, name: str, lr: float, l2: float = 0.0, momentum: float = 0.9):
    if name == "sgd":
        return torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum, weight_decay=2 * l2)
    if name == "adam":
        return torch.optim.Adam(net.parameters(), lr=lr, weight_decay=2 * l2)
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {name!r}")


def restore_state(opt, saved: dict) -> bool:
    """Load the per-weight state (moments, momentum buffers) of `saved`, an optimizer's
    state_dict, into `opt`, keeping `opt`'s settings; False, and `opt` untouched, when `saved`
    is another kind of optimizer's (its groups hold other settings: Adam's betas, SGD's momentum)."""
    wanted = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    if [set(w) for w in wanted] != [set(g) - {"params"} for g in saved["param_groups"]]:
        return False
    opt.load_state_dict(saved)
    for group, settings in zip(opt.param_groups, wanted):
        group.update(settings)
    return True


__all__ = ["OPTIMIZERS", "build_optimizer", "restore_state"]
