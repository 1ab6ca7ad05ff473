"""The one interface every search implements, and the one loop that runs them all.

`mcts.MctsSearch` (heuristic priors and rollouts), `alphago.AlphaGoSearch` and `zero.ZeroSearch`
(the network searches, on `network.NetworkSearch`'s tree) and `policy.PolicyPlayer` (the SL
policy alone) implement `Search`. The Player, GTP, self-play and
gating drive any of them the same way, through `run` (bound as each search's `search` method):

    result = search.search(game, color, playouts=None, seconds=None, stop=None, report=None,
                           report_interval=1.0, visits=None, dead_at_terminals=None,
                           stop_rule=None, now=time.monotonic)

`run` is the whole control flow of a search:

1. tree reuse: `search.tree.prepare_root(game, color)` keeps the subtree below the moves played
   since the previous search (a search without a tree skips this and step 3);
2. `search.begin(game, color, dead_at_terminals, budget, seconds)` readies the root: buffers,
   children and their priors, and the stones judged dead at the two-pass endings
   (engine.search.terminal); `budget` (the new simulations the count limits allow) and
   `seconds` are for a search that plans its simulations ahead (the Gumbel root's sequential
   halving, engine.search.gumbel);
3. root pruning: the kernels know only simple ko, so root moves that repeat an earlier position
   (superko) are marked PRUNED; so are those that leave a string of `BIG_SELF_ATARI` (7) or more
   stones in atari, capturing nothing: no nakade is that large, and such a move gives the group
   away. The searches' priors and values may not see it where every move looks lost (a seki the
   rollouts give up: the search then played the first move that fills it);
4. `search.step(count)` runs up to `count` simulations (`count` <= `search.chunk`) until a limit
   is reached: `playouts` new simulations, `visits` at the root counting those kept from the
   reused tree (Leela Zero's -p and -v, KataGo's maxPlayouts and maxVisits), `seconds`, `stop`
   set, `stop_rule.stop(elapsed, simulations, root_leaders(search))` true (the time policy of a
   move, engine.timecontrol.MoveTimer: its soft and hard limits, asked after every chunk), or a
   step that runs nothing (a search with nothing left to do, like the policy player);
5. `search.result(ran, elapsed)` goes to `report` every `report_interval` seconds, and is what
   `run` returns.

Features are chosen by what a search declares, never by its class: `tree` (reuse, pruning, and
so pondering), `ownership` (its results judge dead stones), `head_ownership` (a network's
ownership without a search) and `config` (a frozen dataclass whose fields `Player.set_param`
tunes by name).
"""
from __future__ import annotations

import time
from typing import Any, Protocol

import numpy as np

from goengine.engine.playout import BIG_SELF_ATARI, self_atari_size
from goengine.engine.search import tree as T
from goengine.engine.search.result import SearchResult
from goengine.engine.timecontrol import Leaders

UNLIMITED = 1 << 62


class Search(Protocol):
    name: str            # what --search calls it: heuristic | alphago | zero | policy
    config: Any          # frozen dataclass of the search's settings (Player.set_param replaces it)
    tree: T.Tree | None  # the tree kept between moves; None: nothing to reuse, prune or ponder
    ownership: bool      # True: every result's ownership_black averages the final positions of
                         # all its simulations, fit to judge dead stones

    @property
    def chunk(self) -> int:
        """Simulations per `step`: how often the clock, `stop` and `report` are looked at."""
        ...

    def begin(self, game, color: int, dead_at_terminals: np.ndarray | None = None,
              budget: int | None = None, seconds: float | None = None) -> None:
        """Ready the root for a search of `game` with `color` to play (after tree reuse); a
        two-pass ending counts the board with the stones in `dead_at_terminals` off
        (engine.search.terminal; None: as it stands). `budget`: the new simulations the count
        limits allow (None: none set); `seconds`: the time limit (None: none)."""
        ...

    def step(self, count: int) -> int:
        """Run up to `count` simulations; return how many ran (0: nothing left to do)."""
        ...

    def result(self, ran: int, elapsed: float) -> SearchResult:
        """The root's statistics now, `ran` simulations and `elapsed` seconds into the search."""
        ...

    def head_ownership(self, game) -> np.ndarray | None:
        """float[N, N], +1 black: a network's ownership head on `game` as it stands (no
        search); None for a search without one."""
        ...

    def close(self) -> None:
        """Release what the search holds beyond its tree (threads); it is not used after."""
        ...

    def search(self, game, color: int, playouts: int | None = None,
               seconds: float | None = None, stop=None, report=None,
               report_interval: float = 1.0, visits: int | None = None,
               dead_at_terminals: np.ndarray | None = None, stop_rule: StopRule | None = None,
               now=time.monotonic) -> SearchResult:
        """`run(self, ...)`."""
        ...


class StopRule(Protocol):
    """When a search stops short of its other limits (engine.timecontrol.MoveTimer)."""

    def stop(self, elapsed: float, simulations: int, leaders: Leaders | None) -> bool:
        """Whether to stop, `elapsed` seconds and `simulations` new simulations into the search,
        the root's children as `leaders` (None for a search without a tree)."""
        ...


def simulations_left(root_visits: int, ran: int, playouts: int | None, visits: int | None) -> int:
    """The smaller of what `playouts` (new simulations this search) and `visits` (root visits
    counting those kept from the reused tree) still allow; UNLIMITED when neither is set (time or
    stop decides)."""
    left = UNLIMITED
    if playouts is not None:
        left = min(left, playouts - ran)
    if visits is not None:
        left = min(left, visits - root_visits)
    return left


def prune_root(tree: T.Tree, game, color: int) -> None:
    """Mark PRUNED the root moves that repeat a position (superko is not known to the kernels)
    and those that leave a string of `BIG_SELF_ATARI` or more stones in atari, capturing
    nothing."""
    st, meta = game.st.copy(), game.meta.copy()     # the self-atari test writes marks
    for ch in tree.children(tree.root):
        mv = int(tree.ti[T.I_MOVE, ch])
        if mv >= 0 and (game.illegal_reason(color, mv) is not None
                        or self_atari_size(st, meta, mv, color) >= BIG_SELF_ATARI):
            tree.ti[T.I_FLAGS, ch] |= T.PRUNED


def root_visits(search: Search) -> int:
    tree = search.tree
    return 0 if tree is None else int(tree.ti[T.I_N, tree.root])


def root_leaders(search: Search) -> Leaders | None:
    """The visits of the root's two most visited moves, of all its moves, and how many there are
    (superko-pruned moves left out); None for a search without a tree. Cheap: read every chunk."""
    tree = search.tree
    if tree is None:
        return None
    kids = tree.children(tree.root)
    ti = tree.ti
    n = ti[T.I_N, kids.start:kids.stop][(ti[T.I_FLAGS, kids.start:kids.stop] & T.PRUNED) == 0]
    if n.size == 0:
        return Leaders(0, 0, 0, 0)
    top = np.partition(n, n.size - 2)[-2:] if n.size > 1 else np.array([0, n[0]])
    return Leaders(int(top[1]), int(top[0]), int(n.sum()), int(n.size))


def run(search: Search, game, color: int, playouts: int | None = None,
        seconds: float | None = None, stop=None, report=None, report_interval: float = 1.0,
        visits: int | None = None, dead_at_terminals: np.ndarray | None = None,
        stop_rule: StopRule | None = None, now=time.monotonic) -> SearchResult:
    """Search the position of `game` with `color` to play until `playouts` new simulations, or
    `visits` at the root counting those kept from the reused tree, or `seconds`, or `stop` is
    set, or `stop_rule` says stop, or the search has nothing left to do. `report(SearchResult)`
    every `report_interval`. Two-pass endings are counted with the stones in `dead_at_terminals`
    off (None: the board as it stands; engine.search.terminal). `now` is the clock (seconds)."""
    if search.tree is not None:
        search.tree.prepare_root(game, color)
    budget = simulations_left(root_visits(search), 0, playouts, visits)
    search.begin(game, color, dead_at_terminals, budget if budget < UNLIMITED else None, seconds)
    if search.tree is not None:
        prune_root(search.tree, game, color)
    start = now()
    last_report = start
    ran = 0
    while True:
        left = simulations_left(root_visits(search), ran, playouts, visits)
        if left <= 0:
            break
        elapsed = now() - start
        if stop_rule is not None and stop_rule.stop(elapsed, ran, root_leaders(search)):
            break
        if seconds is not None and elapsed >= seconds:
            break
        if stop is not None and stop.is_set():
            break
        done = search.step(min(search.chunk, left))
        if done == 0:
            break
        ran += done
        t = now()
        if report is not None and t - last_report >= report_interval:
            last_report = t
            report(search.result(ran, t - start))
    return search.result(ran, now() - start)


__all__ = ["Search", "StopRule", "UNLIMITED", "prune_root", "root_leaders", "run",
           "simulations_left"]
