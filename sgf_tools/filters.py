"""Composable game filters.

A filter is a callable ``record -> reason | None`` (None = keep).  `build_filters(config)`
turns a `FilterConfig` into a list of them, in a fixed order; `apply_filters` runs them and
counts the first rejection reason of each rejected game in a `FilterStats`.

Rejection reasons: ``"board size"``, ``"handicap"``, ``"rank"``, ``"no result"``,
``"no winner"``, ``"time or forfeit"``, ``"komi"``, ``"too short"``, ``"duplicate"``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional

from .record import GameRecord, is_off_board_result, parse_rank

__all__ = ["FilterConfig", "FilterStats", "Filter", "Deduplicator", "build_filters",
           "apply_filters", "KGS_MIN_RANK",
           "size_filter", "handicap_filter", "rank_filter", "result_filter",
           "winner_filter", "on_board_filter", "komi_filter", "length_filter"]

Filter = Callable[[GameRecord], Optional[str]]

KGS_MIN_RANK = "6d"     # the usual strength floor for KGS training data (both players)


@dataclass
class FilterConfig:
    """Which games to keep.  Every criterion is off by default (``None`` / ``False`` / 0),
    except the board size (19x19).  `FilterConfig.kgs()` is the usual KGS SL setting.

    sizes          -- allowed board sizes (None = any)
    max_handicap   -- keep games with handicap <= this (None = any)
    handicap       -- keep only games with exactly this handicap (None = any)
    min_rank       -- both players at least this strong: a rank string ('6d') or a
                      `parse_rank` value; an unknown rank fails (None = no check)
    require_result -- RE present and not empty
    require_winner -- RE names a winner (B+... / W+...); draws and unknown results fail
    decided_on_board -- the result was not won on time or by forfeit (B+T, W+F, ...): for value
                      targets, whose outcome must be the position's
    komi_range     -- (low, high) inclusive; unknown komi fails (None = any, even unknown)
    min_moves      -- at least this many moves (passes count)
    dedupe         -- drop games whose `move_key()` was already seen
    """

    sizes: tuple[int, ...] | None = (19,)
    max_handicap: int | None = None
    handicap: int | None = None
    min_rank: str | int | None = None
    require_result: bool = False
    require_winner: bool = False
    decided_on_board: bool = False
    komi_range: tuple[float, float] | None = None
    min_moves: int = 0
    dedupe: bool = False

    @classmethod
    def kgs(cls, **overrides) -> "FilterConfig":
        """KGS SL data: 19x19, both players >= 6d, a result, 30+ moves, no duplicates."""
        base = dict(sizes=(19,), min_rank=KGS_MIN_RANK, require_result=True, min_moves=30,
                    dedupe=True)
        base.update(overrides)
        return cls(**base)

    def min_rank_value(self) -> int | None:
        if self.min_rank is None:
            return None
        if isinstance(self.min_rank, int):
            return self.min_rank
        v = parse_rank(self.min_rank)
        if v is None:
            raise ValueError("unreadable min_rank %r" % (self.min_rank,))
        return v


@dataclass
class FilterStats:
    """``seen`` games, ``kept`` games, ``rejected`` Counter by reason."""

    seen: int = 0
    kept: int = 0
    rejected: Counter = field(default_factory=Counter)

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    def as_dict(self) -> dict:
        return {"seen": self.seen, "kept": self.kept, "rejected": dict(self.rejected)}

    def __str__(self) -> str:
        rs = ", ".join("%s: %d" % kv for kv in sorted(self.rejected.items()))
        return "kept %d of %d games%s" % (self.kept, self.seen, " (%s)" % rs if rs else "")


# --------------------------------------------------------------------------- filters

def size_filter(sizes: Iterable[int]) -> Filter:
    allowed = frozenset(sizes)
    return lambda r: None if r.size in allowed else "board size"


def handicap_filter(max_handicap: int | None = None, exact: int | None = None) -> Filter:
    def f(r: GameRecord) -> str | None:
        if exact is not None and r.handicap != exact:
            return "handicap"
        if max_handicap is not None and r.handicap > max_handicap:
            return "handicap"
        return None
    return f


def rank_filter(min_rank: str | int) -> Filter:
    floor = min_rank if isinstance(min_rank, int) else FilterConfig(min_rank=min_rank).min_rank_value()

    def f(r: GameRecord) -> str | None:
        b, w = r.black_rank_value, r.white_rank_value
        if b is None or w is None or b < floor or w < floor:
            return "rank"
        return None
    return f


def result_filter() -> Filter:
    return lambda r: None if r.result else "no result"


def winner_filter() -> Filter:
    return lambda r: None if r.winner is not None else "no winner"


def on_board_filter() -> Filter:
    return lambda r: "time or forfeit" if is_off_board_result(r.result) else None


def komi_filter(low: float, high: float) -> Filter:
    return lambda r: None if r.komi is not None and low <= r.komi <= high else "komi"


def length_filter(min_moves: int) -> Filter:
    return lambda r: None if len(r.moves) >= min_moves else "too short"


class Deduplicator:
    """Stateful filter: rejects a game whose `move_key()` it has already seen.

    Share one instance across several `apply_filters` calls to dedupe across sources.
    Put it last, so that only games that passed every other filter claim a key.
    """

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, r: GameRecord) -> str | None:
        k = r.move_key()
        if k in self.seen:
            return "duplicate"
        self.seen.add(k)
        return None

    def __len__(self) -> int:
        return len(self.seen)


def build_filters(config: FilterConfig, dedupe: Deduplicator | None = None) -> list[Filter]:
    """The filters `config` asks for, cheapest first, the deduplicator last."""
    fs: list[Filter] = []
    if config.sizes is not None:
        fs.append(size_filter(config.sizes))
    if config.max_handicap is not None or config.handicap is not None:
        fs.append(handicap_filter(config.max_handicap, config.handicap))
    if config.min_moves:
        fs.append(length_filter(config.min_moves))
    if config.require_result:
        fs.append(result_filter())
    if config.require_winner:
        fs.append(winner_filter())
    if config.decided_on_board:
        fs.append(on_board_filter())
    if config.komi_range is not None:
        lo, hi = config.komi_range
        fs.append(komi_filter(lo, hi))
    floor = config.min_rank_value()
    if floor is not None:
        fs.append(rank_filter(floor))
    if config.dedupe or dedupe is not None:
        fs.append(dedupe if dedupe is not None else Deduplicator())
    return fs


def apply_filters(records: Iterable[GameRecord], config: FilterConfig | list[Filter],
                  stats: FilterStats | None = None, *, dedupe: Deduplicator | None = None
                  ) -> Iterator[GameRecord]:
    """Yield the records that pass; count each rejected one under its first failing reason.

    ``config`` is a `FilterConfig` or an explicit list of filters.  ``dedupe`` supplies a
    shared `Deduplicator` (used when ``config.dedupe`` is set, or whenever it is given).
    """
    if stats is None:
        stats = FilterStats()
    if isinstance(config, FilterConfig):
        filters = build_filters(config, dedupe)
    else:
        filters = list(config)
    for r in records:
        stats.seen += 1
        for f in filters:
            reason = f(r)
            if reason is not None:
                stats.rejected[reason] += 1
                break
        else:
            stats.kept += 1
            yield r
