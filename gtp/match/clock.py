"""The referee's clock for one player: main time, then Canadian byo-yomi (GTP's time model).

GTP `time_settings main byo_yomi_time byo_yomi_stones`:
  * byo_yomi_time == 0                      -> absolute time (main time only);
  * byo_yomi_stones == 1                    -> Japanese-style byo-yomi with one period of byo_yomi_time;
  * main == 0, byo_yomi_time = T, stones 1  -> T seconds per move (the `--time-per-move` mode).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class TimeControl:
    main_time: float = 0.0
    byoyomi_time: float = 0.0
    byoyomi_stones: int = 1

    def __post_init__(self):
        if self.main_time < 0 or self.byoyomi_time < 0:
            raise ValueError("times must be >= 0")
        if self.byoyomi_time > 0 and self.byoyomi_stones < 1:
            raise ValueError("byo-yomi needs at least one stone per period")
        if self.main_time == 0 and self.byoyomi_time == 0:
            raise ValueError("a time control needs main time or byo-yomi time")

    @classmethod
    def per_move(cls, seconds: float) -> "TimeControl":
        return cls(0.0, seconds, 1)

    def gtp_time_settings(self) -> tuple[int, int, int]:
        """Arguments for `time_settings` (GTP wants integers; never round a positive time to 0)."""
        main = _gtp_seconds(self.main_time)
        byo = _gtp_seconds(self.byoyomi_time)
        stones = self.byoyomi_stones if byo > 0 else 0
        return main, byo, stones

    def describe(self) -> str:
        if self.main_time == 0:
            return f"{self.byoyomi_time:g} s per move" if self.byoyomi_stones == 1 else (
                f"{self.byoyomi_time:g} s per {self.byoyomi_stones} moves")
        if self.byoyomi_time == 0:
            return f"{self.main_time:g} s absolute"
        return (f"{self.main_time:g} s + {self.byoyomi_time:g} s / {self.byoyomi_stones} "
                f"stone{'s' if self.byoyomi_stones > 1 else ''}")


def _gtp_seconds(x: float) -> int:
    if x <= 0:
        return 0
    return max(1, int(math.floor(x)))


class PlayerClock:
    """Remaining time of one player. `charge(elapsed)` after each of its moves."""

    def __init__(self, tc: TimeControl):
        self.tc = tc
        self.main_left = float(tc.main_time)
        self.in_byoyomi = tc.main_time <= 0 and tc.byoyomi_time > 0
        self.period_left = float(tc.byoyomi_time)
        self.stones_left = tc.byoyomi_stones if self.in_byoyomi else 0
        self.overrun = 0.0   # seconds beyond the allowed time, on the move that flagged

    def gtp_time_left(self) -> tuple[int, int]:
        """(seconds, stones) for `time_left`: stones is 0 during main time."""
        if self.in_byoyomi:
            return max(0, int(math.floor(self.period_left))), self.stones_left
        return max(0, int(math.floor(self.main_left))), 0

    def charge(self, elapsed: float, lag: float = 0.0) -> bool:
        """Charge one move; False when the player overstepped its time by more than `lag`."""
        self.overrun = 0.0
        if not self.in_byoyomi:
            if elapsed <= self.main_left:
                self.main_left -= elapsed
                return True
            elapsed -= self.main_left
            self.main_left = 0.0
            if self.tc.byoyomi_time <= 0:      # absolute time: flag fell
                self.overrun = elapsed
                return elapsed <= lag
            self.in_byoyomi = True
            self.period_left = float(self.tc.byoyomi_time)
            self.stones_left = self.tc.byoyomi_stones
        self.period_left -= elapsed
        if self.period_left < 0:
            self.overrun = -self.period_left
            if self.overrun > lag:
                return False
            self.period_left = 0.0
        self.stones_left -= 1
        if self.stones_left <= 0:
            self.period_left = float(self.tc.byoyomi_time)
            self.stones_left = self.tc.byoyomi_stones
        return True
