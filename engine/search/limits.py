"""How many more simulations a search may run under its count limits."""
from __future__ import annotations

UNLIMITED = 1 << 62


def simulations_left(root_visits: int, ran: int, playouts: int | None, visits: int | None) -> int:
    """The smaller of what `playouts` (new simulations this search: Leela Zero's -p, KataGo's
    maxPlayouts) and `visits` (root visits counting those kept from the reused tree: Leela Zero's
    -v, KataGo's maxVisits) still allow; UNLIMITED when neither is set (time or stop decides)."""
    left = UNLIMITED
    if playouts is not None:
        left = min(left, playouts - ran)
    if visits is not None:
        left = min(left, visits - root_visits)
    return left
