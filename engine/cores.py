"""How many of the machine's cores a part of the engine takes by default."""
from __future__ import annotations

import os


def cores_up_to(cap: int, cores: int | None = None) -> int:
    """The machine's cores (`cores` where given, else os.cpu_count()), at least 1 and at most
    `cap`: the default thread count of work that gains from a few threads and no more (a batch of
    8 positions or 8 rollouts is small to split further)."""
    n = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, min(n, cap))


__all__ = ["cores_up_to"]
