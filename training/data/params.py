"""The command-line types of the game options, checked where click parses them so that a bad
value is a usage error before any work starts: a rank (`--min-rank 6d`), lists of integers
(`--sizes 9,13,19`, registry generations), a range of komi (`--komi-range 6.5,7.5`) and the run
directory of an earlier command (`--run runs/zero9`)."""
from __future__ import annotations

import click

from pathlib import Path

from goengine.sgf_tools.record import parse_rank


class Rank(click.ParamType):
    """A player's rank as SGF files write it (30k, 1d, 9p); '' for no rank filter."""

    name = "rank"

    def convert(self, value, param, ctx):
        if value == "" or parse_rank(value) is not None:
            return value
        self.fail(f"{value!r} is not a rank such as 30k, 1d or 9p ('' for none)", param, ctx)


class IntList(click.ParamType):
    """Comma-separated integers from `low` to `high`, as a tuple ('' gives an empty one)."""

    name = "integers"

    def __init__(self, low: int, high: int | None = None, empty: bool = False):
        self.low, self.high, self.empty = low, high, empty

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            numbers = tuple(int(v) for v in str(value).replace(" ", "").split(",") if v)
        except ValueError:
            self.fail(f"{value!r}: expected comma-separated integers like 9,13,19", param, ctx)
        bounds = f"from {self.low}" + (f" to {self.high}" if self.high is not None else " up")
        if any(n < self.low or (self.high is not None and n > self.high) for n in numbers):
            self.fail(f"{value!r}: each number must be {bounds}", param, ctx)
        if not numbers and not self.empty:
            self.fail("give at least one number", param, ctx)
        return numbers


class FloatRangePair(click.ParamType):
    """LOW,HIGH: two numbers within [-limit, limit], LOW at most HIGH, as a tuple."""

    name = "low,high"

    def __init__(self, limit: float):
        self.limit = limit

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            low, high = (float(v) for v in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r}: expected LOW,HIGH like 6.5,7.5", param, ctx)
        if not -self.limit <= low <= high <= self.limit:
            self.fail(f"{value!r}: expected LOW <= HIGH within +-{self.limit:g}", param, ctx)
        return low, high


class RunDirectory(click.Path):
    """An existing run directory that holds the `files` a command reads from it."""

    def __init__(self, *files: str):
        super().__init__(exists=True, file_okay=False)
        self.files = files

    def convert(self, value, param, ctx):
        value = super().convert(value, param, ctx)
        missing = [f for f in self.files if not (Path(value) / f).is_file()]
        if missing:
            self.fail(f"{value!r} is no run directory of that command: no {', '.join(missing)}",
                      param, ctx)
        return value


RANK = Rank()
BOARD_SIZES = IntList(2, 25)
GENERATIONS = IntList(0, empty=True)
KOMI_RANGE = FloatRangePair(1000)
TRAINED_RUN = RunDirectory("checkpoint.pt")                   # sl, value, zero: the trainer's state
ZERO_RUN = RunDirectory("state.json", "zero_config.json")      # engine-train zero
