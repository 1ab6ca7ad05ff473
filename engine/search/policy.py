"""`--search policy`: the SL policy network's move, no search (AlphaGo's "SL policy alone", the
human-like strength setting), behind the same `Search` interface as the real searches.

`begin` asks the network once; the result lists every legal move that does not fill an own eye
by its prior, the chosen one first with one visit. There is no tree and nothing to step: the run
loop ends at once, whatever the limits.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from goengine.engine import board as B
from goengine.engine.coords import PASS, loc_to_pos
from goengine.engine.features import extract
from goengine.engine.search.base import run
from goengine.engine.search.network import Position
from goengine.engine.search.result import MoveStat, SearchResult


@dataclass(frozen=True)
class PolicyConfig:
    temperature: float = 0.0   # 0 = the most probable move, else sample from p^(1/T)


class PolicyPlayer:
    """The policy network's move as a `Search` (no tree, no ownership)."""

    name = "policy"
    tree = None
    ownership = False
    chunk = 1
    search = run

    def __init__(self, policy, features: str = "alphago48", temperature: float = 0.0, seed=None):
        self.policy, self.features = policy, features
        self.config = PolicyConfig(temperature=temperature)
        self._rng = np.random.default_rng(seed)

    def begin(self, game, color, dead_at_terminals: np.ndarray | None = None,
              budget: int | None = None, seconds: float | None = None) -> None:
        """The network's answer for the position (no two-pass endings to count)."""
        t0 = time.monotonic()
        pos = Position(game.st.copy(), game.meta.copy(), list(game.board_history), game.size)
        pos.meta[B.M_TOPLAY] = color
        pri = self.policy.evaluate(extract(pos, self.features)[None].astype(np.float32)).priors[0]
        n = game.size
        stats = []
        for mv in game.legal_moves(color):
            if B.is_eye(game.st, game.meta, mv, color):
                continue
            stats.append(MoveStat(move=mv, visits=0, winrate=0.5,
                                  prior=float(pri[loc_to_pos(mv, n)]), lcb=0.0))
        if not stats:
            stats = [MoveStat(move=PASS, visits=1, winrate=0.5, prior=1.0, lcb=0.0)]
        stats.sort(key=lambda s: s.prior, reverse=True)
        temperature = self.config.temperature
        if temperature > 0 and len(stats) > 1:
            p = np.array([s.prior for s in stats]) ** (1.0 / temperature)
            i = int(self._rng.choice(len(stats), p=p / p.sum()))
            stats.insert(0, stats.pop(i))
        for i, s in enumerate(stats):
            s.order = i
            s.visits = 1 if i == 0 else 0
            s.pv = [s.move]
        self._color, self._moves = color, stats
        self._seconds = time.monotonic() - t0

    def step(self, count: int) -> int:
        return 0        # the network's answer is the whole search

    def head_ownership(self, game) -> None:
        return None     # a policy network has no ownership head

    def close(self) -> None:
        pass

    def result(self, ran: int, elapsed: float) -> SearchResult:
        return SearchResult(color=self._color, moves=list(self._moves), root_visits=1,
                            simulations=1, elapsed=self._seconds + elapsed)


__all__ = ["PolicyConfig", "PolicyPlayer"]
