"""The GTP time commands onto `engine.timecontrol.Clock` (pure Python, cheap to import).

The session holds one Clock (None until a time command arrives: the player then uses its own
per-move default). `time_left` without any settings is read as absolute time, which is the
safe reading. After each generated move our own thinking time is charged with `Clock.spend`, so
controllers that never send `time_left` still get a clock that runs down.
"""
from __future__ import annotations

from engine.timecontrol import Clock, kata_list_time_settings
from gtp.server import GtpError


def _set(s, make) -> None:
    try:
        clock = make()
    except ValueError as exc:
        raise GtpError(f"syntax error: {exc}") from None
    s.clock = clock


def set_gtp(s, main: float, byo: float, stones: int) -> None:
    _set(s, lambda: Clock.from_time_settings(main, byo, stones))


def set_kgs(s, args: list[str]) -> None:
    _set(s, lambda: Clock.from_kgs(args))


def set_kata(s, args: list[str]) -> None:
    args = [a.lower() for a in args[:1]] + list(args[1:])
    if args and args[0] == "byo-yomi":         # KataGo's spelling in its documentation
        args[0] = "byoyomi"
    _set(s, lambda: Clock.from_kata(args))


def kata_kinds() -> list[str]:
    kinds = kata_list_time_settings()
    return kinds + (["byo-yomi"] if "byoyomi" in kinds else [])


def time_left(s, colour: int, seconds: float, stones: int) -> None:
    if s.clock is None:
        s.clock = Clock.absolute(max(0.0, seconds))
    try:
        s.clock.update(colour, seconds, stones)
    except ValueError as exc:
        raise GtpError(f"syntax error: {exc}") from None


def spend(s, colour: int, seconds: float) -> None:
    if s.clock is not None:
        s.clock.spend(colour, seconds)


def reset(s) -> None:
    if s.clock is not None:
        s.clock.reset()
