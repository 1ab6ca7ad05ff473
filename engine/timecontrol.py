"""Clocks and time management.

`Clock` holds a time system (its settings) and, per colour, the state of that colour's clock: what the
controller last reported (`Clock.update`), advanced by our own measured thinking time plus an assumed lag
(`Clock.spend`, `TimeManager.charge`) for controllers that never report. A referee (`engine-match`)
keeps the players' clocks with the same `Clock`, charging the measured time and tolerating a lag.

`TimeManager(config).budget(clock, color, move_number, board_size)` gives the
seconds to think on the next move; `hard_limit(...)` the most the search may extend to before it must
answer. Both always keep a lag margin and never plan to use more than the clock has left.
`TimeManager.timer(...)` turns the two into a `MoveTimer`, the stop rule the search loop
(`engine.search.base.run`) asks after every chunk: past the budget it searches on, up to the hard limit,
while the two most visited moves are close; before it, it stops once the second cannot overtake the
best in the time left (Leela Zero's pruning of non-contenders), where the time saved is there for later.

Time systems (`Clock.system`) and what a report `update(color, T, N)` means in each:

| system   | settings                                   | N == 0            | N > 0                              |
|----------|--------------------------------------------|-------------------|------------------------------------|
| none     | no limit                                   | ignored           | ignored                            |
| absolute | main                                       | T = main left     | (ignored, treated as 0)            |
| byoyomi  | main + periods x period (Japanese)         | T = main left     | T left in period, N = PERIODS left |
| canadian | main + period for `stones` stones          | T = main left     | T left in period, N = STONES left  |
| fischer  | main + increment per move (optional caps)  | T = main left     | (ignored, treated as 0)            |
| simple   | period seconds for every move              | T left for move   | T left for move                    |

A Canadian or byo-yomi clock with no main time and one stone (or one period) is `simple`; byo-yomi with
no periods is `absolute`. Reading the GTP time commands into a Clock is `gtp/timekeeping.py`'s job.

Only the standard library is used.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from goengine.engine.colors import BLACK, WHITE

__all__ = [
    "SYSTEMS",
    "BLACK",
    "WHITE",
    "Clock",
    "ColorClock",
    "TimeConfig",
    "TimeManager",
    "LagEstimator",
    "Leaders",
    "MoveTimer",
    "Stopwatch",
    "TIME_MANAGERS",
]

SYSTEMS = ("none", "absolute", "byoyomi", "canadian", "fischer", "simple")
# simple: every move searches its budget; dynamic: MoveTimer's soft and hard limits.
TIME_MANAGERS = ("dynamic", "simple")

# Same bound as KataGo's MAX_USER_INPUT_TIME order of magnitude: anything above is a typo or an overflow.
_MAX_TIME = 1e9
# A reported time left may be slightly negative (clock drift corrections of controllers); KataGo
# tolerates > -10.
_MIN_TIME_LEFT = -10.0


def _color_index(color: int) -> int:
    if isinstance(color, int) and not isinstance(color, bool) and color in (BLACK, WHITE):
        return int(color)
    raise ValueError(f"invalid color {color!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _time(value: float, what: str, allow_negative: bool = False) -> float:
    if not _is_number(value):
        raise ValueError(f"{what}: expected a number of seconds, got {value!r}")
    t = float(value)
    if not math.isfinite(t) or t > _MAX_TIME:
        raise ValueError(f"{what}: invalid time {value!r}")
    if t < 0 and not allow_negative:
        raise ValueError(f"{what}: negative time {value!r}")
    return t


def _count(value: int, what: str) -> int:
    if not _is_number(value) or not float(value).is_integer():
        raise ValueError(f"{what}: expected a non-negative integer, got {value!r}")
    n = int(value)
    if n < 0 or n > 100000:
        raise ValueError(f"{what}: out of range: {value!r}")
    return n


def _take(s: "ColorClock", t: float) -> float:
    """Take `t` seconds off the main time; the overrun beyond it (the main time stops at 0)."""
    s.main_left -= t
    if s.main_left >= 0:
        return 0.0
    over, s.main_left = -s.main_left, 0.0
    return over


@dataclass
class ColorClock:
    """One colour's clock.

    main_left:    main time left (for fischer: the whole clock).
    in_overtime:  main time is over (byoyomi, canadian, simple).
    period_left:  seconds left in the current overtime period (a full period before overtime starts).
    periods_left: byoyomi periods left, the current one included (1 for the other systems).
    stones_left:  canadian stones still to play in the current period (1 for byoyomi and simple).
    flagged:      this colour has lost on time (only `spend` sets it; `update` clears it).
    reported:     the state comes from a report (`update`) rather than only from settings and `spend`.
    """

    main_left: float = 0.0
    in_overtime: bool = False
    period_left: float = 0.0
    periods_left: int = 0
    stones_left: int = 0
    flagged: bool = False
    reported: bool = False


class Clock:
    """A time system and both colours' clocks. Build it with a named constructor (`Clock.byoyomi(...)`)."""

    # Seconds `spend` adds to each measured move by default: the server also counts the transmission
    # lag, which the engine cannot measure. Without it a controller that never reports the time left
    # would let our estimate drift above the real clock (a Canadian period can then run out).
    assumed_lag: float = 1.0

    def __init__(
        self,
        system: str = "none",
        main_time: float = 0.0,
        period_time: float = 0.0,
        periods: int = 0,
        stones: int = 0,
        increment: float = 0.0,
        main_time_cap: float | None = None,
        max_time_per_move: float | None = None,
    ) -> None:
        if system not in SYSTEMS:
            raise ValueError(f"unknown time system {system!r}")
        self.system = system
        self.main_time = _time(main_time, "main time")
        self.period_time = _time(period_time, "period time")
        self.periods = _count(periods, "periods")
        self.stones = _count(stones, "stones")
        self.increment = _time(increment, "increment")
        self.main_time_cap = None if main_time_cap is None else _time(main_time_cap, "main time cap")
        self.max_time_per_move = (
            None if max_time_per_move is None else _time(max_time_per_move, "max time per move")
        )
        if system == "byoyomi":
            if self.periods < 1:
                raise ValueError("byoyomi needs at least one period")
            self.stones = 1
        elif system == "canadian":
            if self.stones < 1:
                raise ValueError("canadian needs at least one stone per period")
            self.periods = 1
        elif system == "simple":
            if self.period_time <= 0:
                raise ValueError("simple time needs a positive time per move")
            self.main_time = 0.0
            self.periods = 1
            self.stones = 1
        else:
            self.period_time = 0.0
            self.periods = 0
            self.stones = 0
        if system != "fischer":
            self.increment = 0.0
            self.main_time_cap = None
            self.max_time_per_move = None
        elif self.main_time_cap is not None and self.main_time_cap < self.main_time:
            raise ValueError("fischer-capped: the main time cap must be >= the main time")
        self._state: dict[int, ColorClock] = {}
        self.generation = -1
        self.reset()

    # ---------------------------------------------------------------- constructors
    @classmethod
    def none(cls) -> "Clock":
        return cls("none")

    @classmethod
    def absolute(cls, main_time: float) -> "Clock":
        return cls("absolute", main_time=main_time)

    @classmethod
    def byoyomi(cls, main_time: float, period_time: float, periods: int) -> "Clock":
        """Japanese byo-yomi. No main time and one period is `simple`."""
        periods = _count(periods, "periods")
        if periods == 0:
            return cls.absolute(main_time)
        if _time(main_time, "main time") == 0 and periods == 1 and _time(period_time, "period time") > 0:
            return cls.simple(period_time)
        return cls("byoyomi", main_time=main_time, period_time=period_time, periods=periods)

    @classmethod
    def canadian(cls, main_time: float, period_time: float, stones: int) -> "Clock":
        """Canadian overtime: `period_time` seconds for every `stones` stones (at least one)."""
        one_stone = _count(stones, "stones") == 1
        if _time(main_time, "main time") == 0 and one_stone and _time(period_time, "period time") > 0:
            return cls.simple(period_time)
        return cls("canadian", main_time=main_time, period_time=period_time, stones=stones)

    @classmethod
    def fischer(
        cls,
        main_time: float,
        increment: float,
        main_time_cap: float | None = None,
        max_time_per_move: float | None = None,
    ) -> "Clock":
        return cls(
            "fischer",
            main_time=main_time,
            increment=increment,
            main_time_cap=main_time_cap,
            max_time_per_move=max_time_per_move,
        )

    @classmethod
    def simple(cls, time_per_move: float) -> "Clock":
        return cls("simple", period_time=time_per_move)

    # ---------------------------------------------------------------- state
    def _fresh(self) -> ColorClock:
        overtime = self.system == "simple" or (self.system in ("byoyomi", "canadian") and self.main_time <= 0)
        return ColorClock(
            main_left=self.main_time,
            in_overtime=overtime,
            period_left=self.period_time,
            periods_left=self.periods if self.system == "byoyomi" else (1 if self.period_time > 0 else 0),
            stones_left=self.stones,
        )

    def reset(self) -> None:
        """Both clocks back to the start of a game (e.g. on `clear_board`)."""
        self._state = {BLACK: self._fresh(), WHITE: self._fresh()}
        self.generation += 1            # reports from before a reset belong to another game

    def state(self, color: int) -> ColorClock:
        """A copy of one colour's clock."""
        return replace(self._state[_color_index(color)])

    def update(self, color: int, time_left: float, stones_or_periods: int) -> None:
        """A report of `color`'s clock (GTP `time_left COLOR T N`): N == 0 in main time; in overtime N is
        periods left (byoyomi) or stones left in the period (canadian). Slightly negative T (down to
        -10 s) is read as 0."""
        c = _color_index(color)
        t = _time(time_left, "time left", allow_negative=True)
        if t < _MIN_TIME_LEFT:
            raise ValueError(f"time left: invalid time {time_left!r}")
        t = max(0.0, t)
        n = _count(stones_or_periods, "stones")
        s = self._fresh()
        s.reported = True
        sysname = self.system
        if sysname in ("none",):
            pass
        elif sysname in ("absolute", "fischer"):
            s.main_left = t
        elif sysname == "simple":
            s.in_overtime = True
            s.period_left = t
        elif sysname in ("byoyomi", "canadian"):
            if n == 0 and self.main_time > 0:
                s.main_left = t
                s.in_overtime = False
            else:
                s.main_left = 0.0
                s.in_overtime = True
                # N == 0 without main time: a fresh period (0 s would be a controller glitch)
                s.period_left = t if (n > 0 or t > 0) else self.period_time
                # N counts the periods left in byo-yomi, the stones still to play in Canadian
                if sysname == "byoyomi":
                    s.periods_left = min(n, self.periods) if n > 0 else self.periods
                else:
                    s.stones_left = min(n, self.stones) if n > 0 else self.stones
        self._state[c] = s

    def settings(self) -> tuple:
        """The time system and its figures (not the clocks' state)."""
        return (self.system, self.main_time, self.period_time, self.periods, self.stones,
                self.increment, self.main_time_cap, self.max_time_per_move)

    def available(self, color: int) -> float:
        """Seconds `color`'s next move may take before the colour loses on time (math.inf without
        a limit): main time, then what overtime leaves (byo-yomi: every period left, each used up
        in turn; Canadian: the period; Fischer: the clock, within the cap per move)."""
        s = self._state[_color_index(color)]
        if self.system == "none":
            return math.inf
        if s.flagged:
            return 0.0
        if self.system == "absolute":
            return s.main_left
        if self.system == "fischer":
            cap = self.max_time_per_move
            return s.main_left if cap is None else min(s.main_left, cap)
        if not s.in_overtime:
            periods = self.periods if self.system == "byoyomi" else 1
            return s.main_left + periods * self.period_time
        if self.system == "byoyomi":
            return s.period_left + (s.periods_left - 1) * self.period_time
        return s.period_left

    def charged(self, before: ColorClock, after: ColorClock) -> float | None:
        """Seconds the controller charged for one move, from its reports just before the move
        (`before`) and just after it (`after`); None where the reports cannot show it: a byo-yomi
        period starts afresh after every move, a Canadian period after its last stone, a simple
        clock after every move, a capped Fischer clock may have thrown increment away, and the
        step from main time into overtime mixes both."""
        if not (before.reported and after.reported) or before.flagged:
            return None
        if self.system == "absolute":
            return before.main_left - after.main_left
        if self.system == "fischer":
            if self.main_time_cap is not None and after.main_left >= self.main_time_cap - 1e-9:
                return None
            return before.main_left + self.increment - after.main_left
        if self.system in ("byoyomi", "canadian") and not before.in_overtime and not after.in_overtime:
            return before.main_left - after.main_left
        if (self.system == "canadian" and before.in_overtime and after.in_overtime
                and after.stones_left == before.stones_left - 1):
            return before.period_left - after.period_left
        return None

    def spend(self, color: int, seconds: float, lag: float | None = None, tolerance: float = 0.0) -> float:
        """Charge `seconds` of thinking plus `lag` (default `assumed_lag`) to `color` and advance its
        clock as a server would: main time first, then byo-yomi periods (a period is lost only when used
        up; it resets after each move), Canadian stones (the period resets after its last stone), Fischer
        increment (and cap). The next `update` replaces this estimate.

        Returns the overrun: the seconds the move took beyond what the clock allowed (0.0 in time).
        An overrun above `tolerance` flags the colour (lost on time); a smaller one is forgiven, as a
        referee forgives transmission lag, and the clock goes on from zero as after a move in time."""
        s = self._state[_color_index(color)]
        t = max(0.0, float(seconds)) + max(0.0, float(self.assumed_lag if lag is None else lag))
        s.reported = False
        if self.system == "none" or s.flagged:
            return 0.0
        if self.system == "absolute":
            over = _take(s, t)
            s.flagged = over > tolerance
            return over
        if self.system == "fischer":
            return self._spend_fischer(s, t, tolerance)
        if not s.in_overtime:
            if t <= s.main_left:
                s.main_left -= t
                return 0.0
            t -= s.main_left
            s.main_left = 0.0
            s.in_overtime = True
            s.period_left = self.period_time
            s.periods_left = self.periods
            s.stones_left = self.stones
        if self.system == "byoyomi":
            return self._spend_periods(s, t, tolerance)
        return self._spend_stones(s, t, tolerance)

    def _spend_fischer(self, s: ColorClock, t: float, tolerance: float) -> float:
        over = 0.0 if self.max_time_per_move is None else max(0.0, t - self.max_time_per_move)
        over = max(over, _take(s, t))
        if over > tolerance:
            s.flagged = True
            return over
        s.main_left += self.increment
        if self.main_time_cap is not None:
            s.main_left = min(s.main_left, self.main_time_cap)
        return over

    def _spend_periods(self, s: ColorClock, t: float, tolerance: float) -> float:
        """Byo-yomi overtime: every period used up is lost; using all of the last one loses the game."""
        while t >= s.period_left:
            if s.periods_left <= 1:
                over = t - s.period_left
                if t >= s.period_left + tolerance:
                    s.periods_left, s.period_left, s.flagged = 0, 0.0, True
                    return over
                break
            t -= s.period_left
            s.periods_left -= 1
            s.period_left = self.period_time
        else:
            over = 0.0
        s.period_left = self.period_time  # moved within the period: it starts afresh
        return over

    def _spend_stones(self, s: ColorClock, t: float, tolerance: float) -> float:
        """Canadian (and simple) overtime: the period resets after its last stone."""
        s.period_left -= t
        over = max(0.0, -s.period_left)
        if over > 0:
            s.period_left = 0.0
            if over > tolerance:
                s.flagged = True
                return over
        s.stones_left -= 1
        if s.stones_left <= 0:
            s.stones_left = self.stones
            s.period_left = self.period_time
        return over

    def describe(self) -> str:
        if self.system == "none":
            return "none"
        if self.system == "absolute":
            return f"absolute {self.main_time:g}s"
        if self.system == "byoyomi":
            return f"byoyomi {self.main_time:g}s + {self.periods}x{self.period_time:g}s"
        if self.system == "canadian":
            return f"canadian {self.main_time:g}s + {self.period_time:g}s/{self.stones} stones"
        if self.system == "simple":
            return f"simple {self.period_time:g}s/move"
        text = f"fischer {self.main_time:g}s + {self.increment:g}s/move"
        if self.main_time_cap is not None:
            text += f" cap {self.main_time_cap:g}s"
        if self.max_time_per_move is not None:
            text += f" max {self.max_time_per_move:g}s/move"
        return text

    def __repr__(self) -> str:
        return f"Clock({self.describe()}; B={self._state[BLACK]}, W={self._state[WHITE]})"


@dataclass(frozen=True)
class TimeConfig:
    """Time management knobs. Board-size dependent numbers are fractions of the board area N*N."""

    # Seconds kept back on every move for GTP / network / server lag (LZ#2296: per move, not per period).
    # None: measured from the controller's time_left reports (`LagEstimator`); a number fixes it.
    lag_margin: float | None = None
    # The measured margin: lag_initial (Leela Zero's and KataGo's fixed 1 s) until lag_min_samples
    # moves have been measured, then mean + lag_sigmas * sd of the last lag_window moves' lag (a
    # high quantile: 99.4% of a normal), never below lag_min.
    lag_initial: float = 1.0
    lag_min_samples: int = 5
    lag_window: int = 50
    lag_block: int = 8          # whole-second reports: consecutive samples averaged (truncation)
    lag_sigmas: float = 2.5
    lag_min: float = 0.1
    # A controller that has sent no time_left by our lag_unreported_after-th move keeps the clock
    # itself without telling (GoGui and gogui-twogtp, other GUIs): a local program whose lag is that
    # of a pipe, so lag_unreported (plus our measured overrun) replaces lag_initial. Servers (KGS,
    # OGS through gtp2ogs, CGOS) report before every move; `lag_margin` fixes the margin for one
    # that does not.
    lag_unreported: float = 0.25
    lag_unreported_after: int = 1
    # The per-move lag margin is at least this fraction of the overtime time per move (byo-yomi period,
    # Canadian period / stones, simple time per move, Fischer increment).
    lag_fraction: float = 0.05
    # Never plan less than this (an answer takes time); only lowered when the clock itself has less.
    min_move_time: float = 0.1
    # Own moves still to play: max(game_length * area - move_number / 2, min_moves_left * area,
    # min_moves_left_abs). 0.35 * 361 = 126 own moves (a 250-move game) on 19x19, 28 on 9x9;
    # never fewer than 36 (19x19) or 10 (9x9).
    game_length: float = 0.35
    min_moves_left: float = 0.10
    min_moves_left_abs: float = 10.0
    # Absolute and Fischer time keep the lag margin for this many moves beyond the expected game, so that
    # a game longer than expected runs on minimal thinking time instead of losing on lag.
    reserve_moves: float = 30.0
    # Middle-game bell: weight(m) = 1 + emphasis * exp(-((m - peak*area) / (width*area))^2 / 2).
    # Peak at move 108 on 19x19 (24 on 9x9), weight 3 there against ~1.7 at the first moves.
    middle_game_emphasis: float = 2.0
    middle_game_peak: float = 0.30
    middle_game_width: float = 0.20
    # Fischer: the part of each future increment planned as thinking time.
    increment_fraction: float = 0.9
    # hard_limit = min(what the clock safely allows, max_extension * budget).
    max_extension: float = 2.0
    # Without a clock (or with `none`): seconds per move; math.inf leaves it to visit / playout limits.
    default_time_per_move: float = 5.0
    # Fixed seconds per move (--time-per-move), still capped by what the clock safely allows.
    fixed_time_per_move: float | None = None
    # Never think longer than this on one move.
    max_time_per_move: float | None = None
    # Within a move (`MoveTimer`): "dynamic" searches past the budget, up to the hard limit, while
    # the best move is unclear, and stops before it once the second move cannot overtake the best
    # in the time left; "simple" searches the budget, no more, no less.
    time_manager: str = "dynamic"
    # Unclear: the best move has fewer than extend_ratio times the second's visits, or fewer than
    # extend_share of the root's children's visits (Pachi extends below 2.5 times the second).
    extend_ratio: float = 1.5
    extend_share: float = 0.25
    # The simulation rate that decides "cannot be overtaken" is trusted once the search has run
    # rate_min_simulations and rate_min_fraction of its budget (Leela Zero: 100 playouts and 1 s).
    rate_min_simulations: int = 100
    rate_min_fraction: float = 0.1

    def __post_init__(self) -> None:
        for name in ("lag_fraction", "min_move_time", "game_length", "min_moves_left",
                     "min_moves_left_abs", "reserve_moves", "middle_game_emphasis", "increment_fraction",
                     "default_time_per_move", "lag_initial", "lag_sigmas", "lag_min",
                     "lag_unreported"):
            v = getattr(self, name)
            if not (v >= 0):
                raise ValueError(f"TimeConfig.{name} must be >= 0, got {v!r}")
        if self.lag_margin is not None and not (self.lag_margin >= 0):
            raise ValueError(f"TimeConfig.lag_margin must be >= 0 or None, got {self.lag_margin!r}")
        if self.lag_min_samples < 2 or self.lag_window < self.lag_min_samples:
            raise ValueError("TimeConfig: need 2 <= lag_min_samples <= lag_window")
        if self.lag_unreported_after < 1:
            raise ValueError("TimeConfig.lag_unreported_after must be >= 1")
        if self.lag_block < 1:
            raise ValueError("TimeConfig.lag_block must be >= 1")
        if not (self.middle_game_width > 0):
            raise ValueError("TimeConfig.middle_game_width must be > 0")
        if not (self.max_extension >= 1):
            raise ValueError("TimeConfig.max_extension must be >= 1")
        for name in ("fixed_time_per_move", "max_time_per_move"):
            v = getattr(self, name)
            if v is not None and not (v > 0):
                raise ValueError(f"TimeConfig.{name} must be > 0 or None, got {v!r}")
        if self.time_manager not in TIME_MANAGERS:
            raise ValueError(f"TimeConfig.time_manager must be one of {', '.join(TIME_MANAGERS)}, "
                             f"got {self.time_manager!r}")
        if not (self.extend_ratio >= 1):
            raise ValueError("TimeConfig.extend_ratio must be >= 1")
        if not (0 <= self.extend_share <= 1) or not (0 <= self.rate_min_fraction <= 1):
            raise ValueError("TimeConfig.extend_share and rate_min_fraction must be in [0, 1]")
        if self.rate_min_simulations < 1:
            raise ValueError("TimeConfig.rate_min_simulations must be >= 1")


class LagEstimator:
    """The lag a controller adds to each of our moves, measured from its `time_left` reports: the
    decrease of our clock between the report before a move and the report after it, minus our own
    thinking time (`Clock.charged`). The margin is a high quantile of that lag over the last moves:
    mean + k * sd (TimeConfig.lag_*).

    Controllers report whole seconds (GTP's time_left takes an integer; KGS, gtp2ogs and engine-match
    send one), so each sample carries the difference of two truncations, an error in (-1, 1) s.
    Over consecutive moves the truncations cancel (the sum of k samples carries only the first and
    the last), so the quantile is taken over the means of `lag_block` consecutive samples, whose
    error is at most 1/lag_block, and the spread leaves out the variance that error can have.

    Our own overrun is kept back too: the move's time beyond what the search was planned to take
    (the last batch, the choice around a pass, the answer), measured on every move, high quantile
    the same way. It grows when other processes share the CPU.
    """

    QUANTISATION_VAR = 1.0 / 6.0     # variance of the difference of two uniform [0, 1) fractions

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.overruns: list[float] = []
        self.whole_seconds = True     # every report so far was a whole number of seconds
        self.reports = 0              # time_left reports of either colour, ever
        self.moves = 0                # our moves under a clock, ever
        self._pending: dict[int, tuple] = {}

    def moved(self, clock: Clock, color: int, elapsed: float, planned: float | None,
              window: int) -> None:
        """Our move for `color` took `elapsed` seconds, `planned` of them for the search; `clock`
        still holds the report before it."""
        self._pending[color] = (clock, clock.generation, clock.state(color), elapsed)
        self.moves += 1
        if planned is not None:
            self.overruns = (self.overruns + [max(0.0, elapsed - planned)])[-window:]

    def reported(self, clock: Clock, color: int, window: int) -> None:
        """The controller has just reported `color`'s clock (`Clock.update`)."""
        self.reports += 1
        pending = self._pending.pop(color, None)
        if pending is None:
            return
        old_clock, generation, before, elapsed = pending
        if old_clock is not clock or generation != clock.generation:
            return                      # new time settings or a new game in between
        after = clock.state(color)
        charged = clock.charged(before, after)
        if charged is None:
            return
        reports = (before.main_left, before.period_left, after.main_left, after.period_left)
        self.whole_seconds &= all(float(x).is_integer() for x in reports)
        self.samples = (self.samples + [charged - elapsed])[-window:]

    def margin(self, config: "TimeConfig") -> float:
        if config.lag_margin is not None:
            return config.lag_margin
        overrun = _high_quantile(self.overruns, config.lag_sigmas, 0.0) if self.overruns else 0.0
        if len(self.samples) < config.lag_min_samples:
            if self.reports == 0 and self.moves >= config.lag_unreported_after:
                return config.lag_unreported + overrun
            return config.lag_initial
        if self.whole_seconds:
            k = min(config.lag_block, len(self.samples) - 1)
            means = [sum(self.samples[i:i + k]) / k for i in range(len(self.samples) - k + 1)]
            lag = _high_quantile(means, config.lag_sigmas, self.QUANTISATION_VAR / (k * k))
        else:
            lag = _high_quantile(self.samples, config.lag_sigmas, 0.0)
        return max(config.lag_min, lag) + max(0.0, overrun)


def _high_quantile(samples: list[float], sigmas: float, noise_var: float) -> float:
    """mean + sigmas * sd of `samples` (their variance less `noise_var`, measurement noise), and
    never less than the largest of them: one slow move in the window is kept back for every
    move, since with a single byo-yomi period a move over its time loses the game."""
    n = len(samples)
    mean = sum(samples) / n
    var = sum((x - mean) ** 2 for x in samples) / (n - 1) if n > 1 else 0.0
    return max(mean + sigmas * math.sqrt(max(0.0, var - noise_var)), max(samples))


@dataclass(frozen=True)
class _Plan:
    budget: float
    hard: float


class Leaders(NamedTuple):
    """The root's children as the stop rule sees them (engine.search.base.root_leaders)."""

    best: int       # visits of the most visited move
    second: int     # visits of the next one (0 with a single move)
    visits: int     # visits of all the root's moves
    moves: int      # how many moves (children) the root has


class MoveTimer:
    """The stop rule of one move's search: its budget `soft`, its `hard` limit, and whether the time
    it leaves unused is there for later moves (`save`). Asked after every chunk of simulations with
    the seconds and simulations so far and the root's `Leaders` (None for a search without a tree):

    - at `hard`: stop;
    - unclear (the best move has fewer than `extend_ratio` times the second's visits, or fewer than
      `extend_share` of all): search on to `hard`; clear: stop at `soft`;
    - with `save`, once the rate is trusted (`rate_min_simulations` and `rate_min_fraction` of
      `soft`): stop when best - second > rate x (seconds to the limit that applies now), as no
      move can overtake the best in the time left, or when the root has a single move (Leela
      Zero's pruning of non-contenders, which it too applies only where the time can be saved:
      a byo-yomi period left unused is lost).

    After it says stop, `planned` holds what the move was planned to take (the limit it stopped at,
    or the seconds so far where it stopped on a decision) and `reason` why: "soft" (the budget,
    the move clear), "hard" (unclear to the end), "clear" (past the budget until the move became
    clear), "decided" (no move can overtake the best)."""

    def __init__(self, soft: float, hard: float, save: bool = False, extend_ratio: float = 1.5,
                 extend_share: float = 0.25, rate_min_simulations: int = 100,
                 rate_min_fraction: float = 0.1) -> None:
        self.soft = soft
        self.hard = max(soft, hard)
        self.save = save
        self.extend_ratio = extend_ratio
        self.extend_share = extend_share
        self.rate_min_simulations = rate_min_simulations
        self.rate_min_fraction = rate_min_fraction
        self.planned: float | None = None
        self.reason = ""
        self.extended = False       # the search has gone past `soft`, the move being unclear

    def unclear(self, leaders: Leaders | None) -> bool:
        """Whether more search may change the move: the best is not far ahead of the second."""
        if leaders is None or leaders.moves < 2:
            return False
        return (leaders.best < self.extend_ratio * leaders.second
                or leaders.best < self.extend_share * leaders.visits)

    def limit(self, leaders: Leaders | None) -> float:
        """The seconds the search runs to as things stand: `hard` while unclear, else `soft`."""
        return self.hard if self.unclear(leaders) else self.soft

    def decided(self, elapsed: float, simulations: int, leaders: Leaders | None) -> bool:
        """No move can overtake the best before the limit, at the rate so far."""
        if not self.save or leaders is None or elapsed <= 0:
            return False
        if simulations < self.rate_min_simulations or elapsed < self.rate_min_fraction * self.soft:
            return False
        if leaders.moves < 2:
            return True
        rate = simulations / elapsed
        return leaders.best - leaders.second > rate * max(0.0, self.limit(leaders) - elapsed)

    def stop(self, elapsed: float, simulations: int, leaders: Leaders | None) -> bool:
        limit = self.limit(leaders)
        if elapsed >= self.soft and limit > self.soft:
            self.extended = True
        if elapsed >= limit:
            if limit > self.soft:
                self.planned, self.reason = limit, "hard"
            elif self.extended:       # searched past the budget until the move became clear
                self.planned, self.reason = elapsed, "clear"
            else:
                self.planned, self.reason = limit, "soft"
            return True
        if self.decided(elapsed, simulations, leaders):
            self.planned, self.reason = elapsed, "decided"
            return True
        return False


class TimeManager:
    """Turns a clock and the position into a thinking time."""

    def __init__(self, config: TimeConfig | None = None, lag: LagEstimator | None = None) -> None:
        self.config = config if config is not None else TimeConfig()
        self.lag = lag if lag is not None else LagEstimator()

    # ---------------------------------------------------------------- game-shape model
    def moves_left(self, move_number: int, board_size: int) -> float:
        """Expected number of OWN moves still to play (move_number counts both colours)."""
        cfg = self.config
        area = board_size * board_size
        return max(cfg.game_length * area - move_number / 2.0, cfg.min_moves_left * area, cfg.min_moves_left_abs, 1.0)

    def weight(self, move_number: int, board_size: int) -> float:
        """Relative thinking time of a move: a bell over the move number, highest in the middle game."""
        cfg = self.config
        area = board_size * board_size
        z = (move_number - cfg.middle_game_peak * area) / (cfg.middle_game_width * area)
        return 1.0 + cfg.middle_game_emphasis * math.exp(-0.5 * z * z)

    def _share(self, total: float, move_number: int, board_size: int, moves_left: float) -> float:
        """This move's part of `total` seconds spread over the remaining own moves by weight."""
        if total <= 0:
            return 0.0
        k = int(moves_left)
        frac = moves_left - k
        s = 0.0
        for j in range(k):
            s += self.weight(move_number + 2 * j, board_size)
        s += frac * self.weight(move_number + 2 * k, board_size)
        return total * self.weight(move_number, board_size) / s

    # ---------------------------------------------------------------- public API
    def budget(self, clock: Clock | None, color: int, move_number: int,
               board_size: int) -> float:
        """Seconds to think on the next move: `color`'s, `move_number` moves played on a
        `board_size` board."""
        return self._plan(clock, *self._args(color, move_number, board_size)).budget

    def hard_limit(self, clock: Clock | None, color: int, move_number: int,
                   board_size: int) -> float:
        """The most the search may take on this move (e.g. when the best move is unstable) before it
        must answer: min(max_extension * budget, what the clock safely allows). Always >= budget."""
        return self._plan(clock, *self._args(color, move_number, board_size)).hard

    def limits(self, clock: Clock | None, color: int, move_number: int,
               board_size: int) -> tuple[float, float]:
        """(budget, hard_limit) in one call."""
        p = self._plan(clock, *self._args(color, move_number, board_size))
        return p.budget, p.hard

    def timer(self, clock: Clock | None, color: int, move_number: int, board_size: int,
              used: float = 0.0) -> MoveTimer:
        """The stop rule of the next move's search (`MoveTimer`), `used` seconds of the move already
        gone (judging dead stones first) taken off its limits, never below min_move_time. Under
        "simple", or with a fixed time per move, it searches the budget: no extension, no early stop."""
        cfg = self.config
        budget, hard = self.limits(clock, color, move_number, board_size)
        soft, hard = max(cfg.min_move_time, budget - used), max(cfg.min_move_time, hard - used)
        if cfg.time_manager == "simple" or cfg.fixed_time_per_move is not None:
            return MoveTimer(soft, soft)
        return MoveTimer(soft, hard, self.can_save(clock, color), cfg.extend_ratio, cfg.extend_share,
                         cfg.rate_min_simulations, cfg.rate_min_fraction)

    @staticmethod
    def can_save(clock: Clock | None, color: int) -> bool:
        """Whether the time this move leaves unused is there for later moves: main time, absolute and
        Fischer time (below the cap) and a Canadian period before its last stone; not a byo-yomi
        period (it starts afresh after the move), simple time, or no clock at all."""
        if clock is None or clock.system in ("none", "simple"):
            return False
        s = clock.state(color)
        if s.flagged:
            return False
        if clock.system == "fischer":
            return clock.main_time_cap is None or s.main_left + clock.increment < clock.main_time_cap
        if clock.system == "absolute" or not s.in_overtime:
            return True
        return clock.system == "canadian" and s.stones_left > 1

    def charge(self, clock: Clock | None, color: int, elapsed: float,
               planned: float | None = None) -> None:
        """Advance our own model of `color`'s clock after a move that took `elapsed` seconds as measured
        by the engine (`planned` of them planned for the search), with the lag margin on top (the
        server counts the lag too). The controller's next report replaces the estimate and, through
        `reported`, measures the lag."""
        if clock is not None:
            self.lag.moved(clock, color, elapsed, planned, self.config.lag_window)
            clock.spend(color, elapsed, lag=self.lag_margin())

    def reported(self, clock: Clock, color: int) -> None:
        """The controller has reported `color`'s clock: a lag sample if our move came before it."""
        self.lag.reported(clock, color, self.config.lag_window)

    def lag_margin(self) -> float:
        """Seconds kept back on each move for lag: fixed, or measured (`LagEstimator`)."""
        return self.lag.margin(self.config)

    @staticmethod
    def _args(color: int, move_number: int, board_size: int) -> tuple[int, int, int]:
        if board_size < 1:
            raise ValueError(f"invalid board size {board_size!r}")
        return _color_index(color), max(0, int(move_number)), int(board_size)

    def _lag(self, per_move: float) -> float:
        return max(self.lag_margin(), self.config.lag_fraction * per_move)

    def _absolute(self, s: ColorClock, m: int, n: int, M: float) -> tuple[float, float, float]:
        lag = self._lag(0.0)
        usable = max(0.0, s.main_left - lag * (M + self.config.reserve_moves))
        return self._share(usable, m, n, M), usable, s.main_left

    def _fischer(self, clock: Clock, s: ColorClock, m: int, n: int, M: float) -> tuple[float, float, float]:
        cfg = self.config
        inc = clock.increment
        lag = self._lag(inc)
        reserve = lag * (M + cfg.reserve_moves)
        total = max(0.0, s.main_left - reserve) + M * inc * cfg.increment_fraction
        share = self._share(total, m, n, M)
        safe = max(0.0, s.main_left - lag)
        avail = s.main_left
        if clock.main_time_cap is not None:
            # increment that the cap would throw away is free thinking time
            share = max(share, s.main_left + inc - clock.main_time_cap)
        if clock.max_time_per_move is not None:
            safe = min(safe, max(0.0, clock.max_time_per_move - lag))
            avail = min(avail, clock.max_time_per_move)
        return share, safe, avail

    def _overtime(self, clock: Clock, s: ColorClock, m: int, n: int, M: float) -> tuple[float, float, float]:
        """byoyomi, canadian, simple: main time, then `unit` seconds a move (a byo-yomi period, a
        Canadian period per stone)."""
        unit = clock.period_time if clock.system == "byoyomi" else clock.period_time / clock.stones
        lag = self._lag(unit)
        per = max(0.0, unit - lag)
        if s.in_overtime and clock.system == "byoyomi":
            share = max(0.0, min(s.period_left, clock.period_time) - lag)
            return share, share, s.period_left
        if s.in_overtime:
            k = max(1, s.stones_left)
            share = max(0.0, s.period_left / k - lag)
            # may borrow up to half of the later stones' shares
            safe = max(share, s.period_left - k * lag - (k - 1) * 0.5 * s.period_left / k)
            return share, safe, (s.period_left / k if k > 1 else s.period_left)
        if s.main_left <= lag:
            return per, per, s.main_left + unit
        # overtime gives `per` seconds to every later move; main time is the extra
        return self._share(s.main_left - lag + M * per, m, n, M), s.main_left + per, s.main_left + unit

    def _plan(self, clock: Clock | None, color: int, m: int, n: int) -> _Plan:
        cfg = self.config
        if clock is None or clock.system == "none":
            b = cfg.fixed_time_per_move if cfg.fixed_time_per_move is not None else cfg.default_time_per_move
            if cfg.max_time_per_move is not None:
                b = min(b, cfg.max_time_per_move)
            return _Plan(b, b)

        s = clock.state(color)
        M = self.moves_left(m, n)
        # share: what the time plan gives this move; safe: the most this move can take and leave the
        # plan sound; avail: the time before losing on time (or a byo-yomi period), lag not counted.
        if clock.system == "absolute":
            share, safe, avail = self._absolute(s, m, n, M)
        elif clock.system == "fischer":
            share, safe, avail = self._fischer(clock, s, m, n, M)
        else:
            share, safe, avail = self._overtime(clock, s, m, n, M)

        if s.flagged:
            share = safe = 0.0
            avail = 0.0
        if cfg.fixed_time_per_move is not None:
            share = cfg.fixed_time_per_move
        if cfg.max_time_per_move is not None:
            safe = min(safe, cfg.max_time_per_move)
        budget = min(share, safe)
        floor = min(cfg.min_move_time, 0.5 * max(0.0, avail)) if not s.flagged else cfg.min_move_time
        budget = max(budget, floor)
        hard = max(budget, min(safe, cfg.max_extension * budget))
        return _Plan(budget, hard)


class Stopwatch:
    """Measures our thinking time for `Clock.spend` (monotonic; injectable for tests)."""

    def __init__(self, now=time.monotonic) -> None:
        self._now = now
        self._start: float | None = None

    def start(self) -> None:
        self._start = self._now()

    def elapsed(self) -> float:
        """Seconds since `start` (0 when not running); the watch keeps running."""
        return 0.0 if self._start is None else max(0.0, self._now() - self._start)

    def stop(self) -> float:
        elapsed = self.elapsed()
        self._start = None
        return elapsed

