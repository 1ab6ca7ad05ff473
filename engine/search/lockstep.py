"""Several Zero searches at once, one network call a round for all of them: what self-play
needs to feed the network batches larger than one search's (engine.search.base.run runs one
search; this runs many, each exactly as `run` would).

    lock = Lockstep()
    lock.start("game 1", search1, game1, BLACK, visits=100)
    lock.start("game 2", search2, game2, WHITE, visits=100)
    while lock.active:
        for key, result in lock.round(): ...    # searches that reached their visits

A round takes one batch (`ZeroSearch.select`) from every search still short of its visits,
evaluates the batches of the searches that share a network in one call, and hands each batch its
rows (`ZeroSearch.finish`). Each search's tree sees the same batches, in the same order, as
under `run`; with a network whose answer depends on the position alone (no random symmetry) its
result is the same (tests/engine/test_lockstep.py). On this project's 2-core machine a batch of 8 9x9
positions spends about as long in the evaluator's Python around onnxruntime as in the int8
network itself, which a larger call shares out.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from goengine.engine.search.base import prune_root, root_visits
from goengine.engine.search.network import run_network
from goengine.engine.search.result import SearchResult
from goengine.engine.search.zero import ZeroSearch


@dataclass
class _Run:
    search: ZeroSearch
    visits: int
    start: float
    ran: int = 0


class Lockstep:
    def __init__(self):
        self.active: dict = {}          # key -> _Run

    def start(self, key, search: ZeroSearch, game, color: int, visits: int) -> None:
        """Ready `search` for `game` with `color` to play, as `run` does (tree reuse, the root,
        superko pruning), to search until `visits` at its root (counting the reused tree's)."""
        if not isinstance(search, ZeroSearch):
            raise ValueError("Lockstep runs Zero searches (no rollouts)")
        search.tree.prepare_root(game, color)
        search.begin(game, color, budget=visits - root_visits(search))
        prune_root(search.tree, game, color)
        self.active[key] = _Run(search, visits, time.monotonic())

    def round(self) -> list[tuple[object, SearchResult]]:
        """One batch of every active search, its network calls merged; the (key, result) of
        the searches done (removed from `active`)."""
        done, waiting = [], {}
        for key, r in list(self.active.items()):
            left = r.visits - root_visits(r.search)
            if left <= 0:
                done.append((key, self._result(key)))
                continue
            root_kids = r.search.root_children(min(r.search.chunk, left))
            r.ran += len(root_kids)
            batch = r.search.select(len(root_kids), root_kids)
            if batch is not None:     # None: every descent ended at a terminal, backed up
                waiting.setdefault(id(r.search.net), []).append((r.search, batch))
        for group in waiting.values():
            evaluate_together(group)
        return done

    def _result(self, key) -> SearchResult:
        r = self.active.pop(key)
        return r.search.result(r.ran, time.monotonic() - r.start)


def evaluate_together(group: list) -> None:
    """One network call for the leaves of several (search, batch) pairs on the same network;
    each search finishes its batch with its rows and counts its evaluations."""
    t0 = time.perf_counter()
    searches = [s for s, _ in group]
    planes = np.concatenate([b.planes for _, b in group])
    metas = np.concatenate([b.metas for _, b in group])
    ev = run_network(searches[0].net, planes, metas)
    share = (time.perf_counter() - t0) / len(metas)
    at = 0
    for search, batch in group:
        m = batch.size
        rows = slice(at, at + m)
        at += m
        search.eval_time += share * m
        search.evaluations += m
        search.finish(batch, (ev.priors[rows], ev.value_stm[rows],
                              None if ev.score is None else ev.score[rows]))


__all__ = ["Lockstep", "evaluate_together"]
