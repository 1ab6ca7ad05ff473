"""What a match produced: one `GameResult` per game, and the `MatchSummary` of them all."""
from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from goengine.match.sprt import Sprt
from goengine.match.stats import elo_difference, wilson_interval


@dataclass
class GameResult:
    index: int                     # 1-based
    black: str                     # "A" or "B"
    white: str
    black_name: str
    white_name: str
    winner: str | None             # "A", "B" or None (draw / no result)
    winner_color: str | None       # "B", "W" or None
    result: str                    # SGF RE: "B+3.5", "W+R", "B+F", "0", "Void"
    end: str                       # "score", "resign", "forfeit", "max-moves"
    forfeit_by: str | None = None  # "A" / "B"
    forfeit_reason: str | None = None
    score: float | None = None     # black minus white, komi included
    scoring: str | None = None     # "agreed", "referee", "tromp-taylor"
    moves: int = 0
    duration: float = 0.0
    time_a: float = 0.0            # total genmove seconds
    moves_a: int = 0
    time_b: float = 0.0
    moves_b: int = 0
    longest_a: float = 0.0         # the longest genmove, seconds
    longest_b: float = 0.0
    # the closest call on a clock: (seconds the move took, seconds the clock allowed it) of the
    # move that left the least time (None without a clock)
    closest_a: tuple[float, float] | None = None
    closest_b: tuple[float, float] | None = None
    sgf: str | None = None

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, row: dict) -> "GameResult":
        """A result as `as_dict` wrote it (JSON's lists back to tuples); keys it does not hold
        (a results row's match_id and names) are ignored."""
        d = {f.name: row[f.name] for f in dataclasses.fields(cls) if f.name in row}
        for key in ("closest_a", "closest_b"):
            if d.get(key) is not None:
                d[key] = tuple(d[key])
        return cls(**d)


def read_results(path: str) -> list[GameResult]:
    """The games of a results file (engine-match's JSON lines) in order, for a resumed match.
    ValueError unless they are games 1..k of one series, each once."""
    results = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                results.append(GameResult.from_dict(json.loads(line)))
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{path}, line {n}: not a game result ({e})") from None
    indices = [r.index for r in results]
    if indices != list(range(1, len(results) + 1)):
        raise ValueError(f"{path} holds games {indices[:10]}{'...' if len(indices) > 10 else ''},"
                         " not games 1 to k of one match")
    return results


@dataclass
class MatchSummary:
    names: dict[str, str]
    games: int
    wins: dict[str, int]
    draws: int
    no_result: int
    by_color: dict[str, dict[str, int]]       # "A" -> {"black_wins", "black_games", ...}
    black_wins: int
    white_wins: int
    forfeits: dict[str, int]                  # "A"/"B" -> count
    forfeit_reasons: dict[str, int]           # "A: timeout" -> count
    ends: dict[str, int]
    winrate_a: float
    interval_a: tuple[float, float]
    avg_move_time: dict[str, float | None]
    longest_move: dict[str, float]
    closest_call: dict[str, tuple[float, float] | None]
    results: list[GameResult]
    sprt: str | None = None                   # engine-match --sprt: the test's line (Sprt.describe)

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("results")
        return d

    def format(self) -> str:
        a, b = self.names["A"], self.names["B"]
        lines = [f"Match: A = {a}  vs  B = {b}",
                 f"games {self.games}: A {self.wins['A']} wins, B {self.wins['B']} wins"
                 + (f", {self.draws} draws" if self.draws else "")
                 + (f", {self.no_result} no result" if self.no_result else "")]
        for lab in ("A", "B"):
            c = self.by_color[lab]
            lines.append(f"  {lab} as black {c['black_wins']}/{c['black_games']}, "
                         f"as white {c['white_wins']}/{c['white_games']}")
        lines.append(f"  black won {self.black_wins}, white won {self.white_wins}")
        ends = ", ".join(f"{k} {v}" for k, v in sorted(self.ends.items()))
        lines.append(f"  endings: {ends}")
        if self.forfeit_reasons:
            lines.append(f"  forfeits: A {self.forfeits.get('A', 0)}, B {self.forfeits.get('B', 0)}")
            for reason, count in sorted(self.forfeit_reasons.items()):
                lines.append(f"    {count} x {reason}")
        else:
            lines.append("  forfeits: none")
        lo, hi = self.interval_a
        elo = elo_difference(self.winrate_a)
        elo_s = f", Elo {round(elo) + 0:+d}" if elo is not None else ""
        lines.append(f"  A win rate {self.winrate_a:.3f}  95% Wilson [{lo:.3f}, {hi:.3f}]{elo_s}")
        if self.sprt:
            lines.append(f"  {self.sprt}")
        for lab in ("A", "B"):
            t = self.avg_move_time[lab]
            lines.append(f"  {lab} average time per move: "
                         + ("n/a" if t is None else f"{t:.3f} s")
                         + f", longest {self.longest_move[lab]:.2f} s"
                         + _closest(self.closest_call[lab]))
        return "\n".join(lines)


def summarize(results: Sequence[GameResult], names: dict[str, str],
              sprt: Sprt | None = None) -> MatchSummary:
    wins = {"A": 0, "B": 0}
    draws = no_result = 0
    by_color = {lab: {"black_wins": 0, "black_games": 0, "white_wins": 0, "white_games": 0}
                for lab in ("A", "B")}
    black_wins = white_wins = 0
    forfeits: Counter = Counter()
    reasons: Counter = Counter()
    ends: Counter = Counter()
    t = {"A": 0.0, "B": 0.0}
    m = {"A": 0, "B": 0}
    for r in results:
        ends[r.end] += 1
        by_color[r.black]["black_games"] += 1
        by_color[r.white]["white_games"] += 1
        if r.winner is not None:
            wins[r.winner] += 1
            if r.winner_color == "B":
                black_wins += 1
                by_color[r.winner]["black_wins"] += 1
            else:
                white_wins += 1
                by_color[r.winner]["white_wins"] += 1
        elif r.result == "0":
            draws += 1
        else:
            no_result += 1
        if r.forfeit_by:
            forfeits[r.forfeit_by] += 1
            reasons[f"{r.forfeit_by}: {_reason_kind(r.forfeit_reason or '')}"] += 1
        t["A"] += r.time_a
        m["A"] += r.moves_a
        t["B"] += r.time_b
        m["B"] += r.moves_b
    decided = wins["A"] + wins["B"] + draws
    score_a = wins["A"] + 0.5 * draws
    winrate = score_a / decided if decided else 0.0
    return MatchSummary(
        names=dict(names), games=len(results), wins=wins, draws=draws, no_result=no_result,
        by_color=by_color, black_wins=black_wins, white_wins=white_wins,
        forfeits=dict(forfeits), forfeit_reasons=dict(reasons), ends=dict(ends),
        winrate_a=winrate, interval_a=wilson_interval(score_a, decided),
        avg_move_time={k: (t[k] / m[k] if m[k] else None) for k in ("A", "B")},
        longest_move={"A": max((r.longest_a for r in results), default=0.0),
                      "B": max((r.longest_b for r in results), default=0.0)},
        closest_call={"A": _least_slack(r.closest_a for r in results),
                      "B": _least_slack(r.closest_b for r in results)},
        results=list(results),
        sprt=sprt.describe(wins["A"], draws, wins["B"]) if sprt is not None else None)


def _least_slack(calls) -> tuple[float, float] | None:
    return min((tuple(c) for c in calls if c is not None), key=lambda c: c[1] - c[0], default=None)


def _closest(call) -> str:
    return "" if call is None else f"; closest call {call[0]:.2f} s of {call[1]:.2f} s allowed"


def _reason_kind(reason: str) -> str:
    """Group forfeit reasons for the summary: drop the move-specific tail."""
    for kind in ("timeout", "crash", "illegal move", "unparsable move", "lost on time",
                 "rejected the legal move", "GTP error", "setup failed", "could not (re)start"):
        if reason.startswith(kind):
            if kind == "illegal move":
                # keep the rule broken: "illegal move C3 (occupied) ..." -> "illegal move (occupied)"
                i, j = reason.find("("), reason.find(")")
                return f"illegal move {reason[i:j + 1]}" if 0 <= i < j else kind
            if kind == "GTP error":
                return reason.split(":")[0]
            return kind
    return reason

