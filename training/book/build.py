"""Building an opening book (`engine-train book`): long Zero searches of the first positions of
a game, the most likely first.

From the empty board, each position is searched with `visits` visits (many times what a move of
a 1 s/move game gets) and its most visited move goes into the book (engine.book). The book serves
both colours, so its lines are followed from each side's point of view: where the book's side is
to move, only the book's move; where the opponent is, the replies it is likely to play: the
moves the search spent at least `min_share` of its visits on (at most `branch` of them). A line
where both sides leave the book is never reached by a game the book plays, so it is not searched.
Positions are searched best-first by the product of the opponent's shares along the line (how
likely a game against such a search reaches them), to `depth` moves, until `positions` have been
searched. Positions that are the same under a symmetry, or reached by another order of moves,
are searched once.

Another program's first moves are often ones the search spends few visits on (Pachi opens E7,
F6 or F7 on 9x9 about as often as E5), so for the first `wide_depth` moves of the game the
opponent's replies are every move the network's policy gives `wide_share` (`wide_branch` at
most; one per symmetric family), each as likely as another.

The book file is written atomically after every position and is the run's only state: a run
with `resume` reads it, walks the lines it holds without searching them again, and goes on.
"""
from __future__ import annotations

import heapq
import os
import time
from dataclasses import dataclass
from typing import Callable

from goengine.engine import symmetry
from goengine.engine.colors import BLACK, WHITE
from goengine.engine.book import Book, canonical, map_move
from goengine.engine.coords import format_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.zero import ZeroSearch
from goengine.models.onnx_evaluator import OnnxEvaluator


@dataclass(frozen=True)
class BookConfig:
    network: str                    # the Zero network (ONNX) the searches run on
    size: int = 9
    komi: float = 7.5
    scoring: str = "area"
    visits: int = 20_000            # per position: ~10x a 1 s/move search of the 9x9 network here
    depth: int = 10                 # moves from the empty board
    positions: int = 300            # searched positions at most
    min_share: float = 0.1          # candidates: moves with at least this share of the visits
    branch: int = 3                 # ... and at most this many
    wide_depth: int = 0             # the first moves: the opponent's replies, each equally likely,
    wide_share: float = 0.01        # are the moves with at least this share of the policy
    wide_branch: int = 8            # ... at most this many
    threads: int = 2                # onnxruntime threads
    seed: int = 0


def made_by(cfg: BookConfig) -> dict:
    """What the book records of how it was made."""
    return {"network": os.path.basename(cfg.network), "search": "zero", "visits": cfg.visits,
            "depth": cfg.depth, "min_share": cfg.min_share, "branch": cfg.branch,
            **({"wide_depth": cfg.wide_depth, "wide_share": cfg.wide_share,
                "wide_branch": cfg.wide_branch} if cfg.wide_depth else {})}


def candidates(game: Game, result, min_share: float, branch: int,
               by_prior: bool = False) -> list[tuple[int, float]]:
    """(Loc, share) of the moves worth following: the search's own move first (the book's line
    for the side to move), then the others with the largest shares of at least `min_share`,
    `branch` in all. Moves that lead to the same position under a symmetry (E4 and F5 on the
    empty board) are one candidate: the search splits its visits among them, so their visits
    are summed. With `by_prior` the shares are the network's policy, and a candidate counts by
    its largest single move's (the moves a program might play though the search spends little
    on them; summed, the many first-line points of an empty board would outweigh E7)."""
    total = max(sum(m.prior if by_prior else m.visits for m in result.moves), 1e-12)
    merged: dict[str, list] = {}        # child position -> [first move, weight]
    for m in result.moves:
        if m.visits == 0 and not by_prior:
            break
        child = game.copy()
        child.play(game.to_play, m.move)
        key = canonical(child.board_colors(), child.to_play)[0] if m.move >= 0 else "pass"
        entry = merged.setdefault(key, [m.move, 0.0])
        if by_prior:
            entry[1] = max(entry[1], m.prior)
        else:
            entry[1] += m.visits
    best, *others = merged.values()     # insertion order: the search's move first
    others = [mv for mv in sorted(others, key=lambda mv: -mv[1]) if mv[1] / total >= min_share]
    return [(lc, n / total) for lc, n in [best] + others[:branch - 1]]


class BookBuilder:
    def __init__(self, cfg: BookConfig, book: Book):
        self.cfg = cfg
        self.book = book
        ev = OnnxEvaluator(cfg.network, threads=cfg.threads, kind="zero", seed=cfg.seed)
        self.search = ZeroSearch(NetSearchConfig(mode="zero"), net=ev, seed=cfg.seed)
        self.rules = Rules(komi=cfg.komi, scoring=cfg.scoring)

    def _game(self, moves: tuple[int, ...]) -> Game:
        g = Game(self.cfg.size, self.rules)
        for lc in moves:
            g.play(g.to_play, lc)
        return g

    def run(self, out: str, report: Callable[[str], None] = print) -> int:
        """Search until `positions` new positions are in the book (or every line to `depth` is);
        returns how many were searched."""
        cfg = self.cfg
        # (-reach, order, moves from the empty board, the book's colour on this line)
        heap = [(-1.0, 0, (), BLACK), (-1.0, 1, (), WHITE)]
        done: set[tuple[str, int]] = set()
        order, searched, t0 = 2, 0, time.monotonic()
        while heap and searched < cfg.positions:
            reach, _, moves, ours = heapq.heappop(heap)
            g = self._game(moves)
            key, k = canonical(g.board_colors(), g.to_play)
            if (key, ours) in done:
                continue
            done.add((key, ours))
            result = None
            if key not in self.book.positions:
                result = self.search.search(g, g.to_play, playouts=cfg.visits)
                best = result.moves[0]
                self.book.add(g, g.to_play, best.move, result.root_visits, best.winrate,
                              candidates(g, result, cfg.min_share, cfg.branch))
                self.book.save(out)
                searched += 1
                rate = searched / (time.monotonic() - t0)
                report(f"[{searched}/{cfg.positions}] move {len(moves) + 1}, reach {-reach:.3f}: "
                       f"{_line(moves, cfg.size)} -> {format_gtp(best.move, cfg.size)} "
                       f"({best.winrate:.1%}; {len(self.book)} positions, {rate:.2f}/s, "
                       f"ETA {(cfg.positions - searched) / rate / 60:.0f} min)")
            if len(moves) < cfg.depth:
                for lc, weight in self._followed(g, len(moves), ours, key, k, result):
                    if lc >= 0:
                        heapq.heappush(heap, (reach * weight, order, moves + (lc,), ours))
                        order += 1
        return searched

    def _followed(self, g: Game, ply: int, ours: int, key: str, k: int,
                  result) -> list[tuple[int, float]]:
        """(Loc, weight) of the moves a line follows from `g`: the book's move where the book's
        colour `ours` is to move; else the opponent's likely replies, with their shares of the
        search's visits, or near the root every move the policy gives `wide_share`, each as
        likely as another. `result` is the search of `g` if it ran now (None if the book held
        the position already)."""
        cfg = self.cfg
        entry = self.book.positions[key]
        inverse = symmetry.INVERSE[k]
        if g.to_play == ours:
            return [(map_move(entry.move, cfg.size, inverse), 1.0)]
        if ply < cfg.wide_depth:
            priors = result or self.search.search(g, g.to_play, playouts=1)
            cands = candidates(g, priors, cfg.wide_share, cfg.wide_branch, by_prior=True)
            return [(lc, 1 / len(cands)) for lc, _ in cands]
        return [(map_move(m, cfg.size, inverse), s) for m, s in entry.candidates]


def _line(moves, n: int) -> str:
    return " ".join(format_gtp(lc, n) for lc in moves) or "(empty board)"
