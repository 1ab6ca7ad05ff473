"""The GTP time commands read into, and written from, `engine.timecontrol.Clock`.

How the commands map (GTP 2 section 4.2 and KataGo's GTP extensions):
  * `time_settings M T S`: S == 0 and T > 0 means no time limit; S == 0 and T == 0 is absolute; otherwise
    Canadian (stones). So the plain-GTP byo-yomi fallback of gtp2ogs (`time_settings 720 30 1`) is a
    Canadian clock of one stone per period, and `time_settings 0 30 1` is simple time.
  * `kgs-time_settings none | absolute M | byoyomi M T P | canadian M T S`: for byoyomi the N of
    `time_left` counts periods (P == 0 means absolute); Canadian with S == 0 follows time_settings.
  * `kata-time_settings`: the kgs kinds plus `fischer M INC` and `fischer-capped M INC CAP MAXMOVE`
    (a negative CAP or MAXMOVE means no such limit); floats allowed everywhere. `byo-yomi` (KataGo's
    spelling in its documentation) is read as `byoyomi`.
  * `time_left COLOR T N`: `Clock.update`; without any settings it is read as absolute time, which is
    the safe reading.

The server's session holds one Clock (None until a time command arrives: the player then uses its own
per-move default); `engine-match` writes a referee's Clock back as `time_settings` and `time_left`.
Every function raises ValueError on bad input (the command handlers answer it as a syntax error).
Pure Python, cheap to import.
"""
from __future__ import annotations

import math

from goengine.engine.timecontrol import Clock

__all__ = ["KGS_KINDS", "KATA_KINDS", "time_settings", "kgs_time_settings", "kata_time_settings",
           "time_left", "time_settings_args", "time_left_args"]

KGS_KINDS = ("none", "absolute", "byoyomi", "canadian")
# What `kata-list_time_settings` answers: the kinds of `kata-time_settings`, KataGo's spelling too.
KATA_KINDS = KGS_KINDS + ("fischer", "fischer-capped", "byo-yomi")
_NARGS = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3, "fischer": 2, "fischer-capped": 4}


def _number(token: str, what: str, kind: type = float):
    """`token` read as a float (seconds) or an int (a count)."""
    try:
        value = kind(token)
    except ValueError:
        expected = "an integer" if kind is int else "a number of seconds"
        raise ValueError(f"{what}: expected {expected}, got {token!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{what}: invalid time {token!r}")
    return value


def time_settings(args: list[str]) -> Clock:
    """`time_settings MAIN BYO_YOMI STONES`: Canadian; stones 0 means absolute (byo-yomi time 0) or
    no time limit (byo-yomi time > 0)."""
    main, byo = _number(args[0], "main time"), _number(args[1], "byo-yomi time")
    return _canadian(main, byo, _number(args[2], "byo-yomi stones", int))


def _canadian(main: float, byo: float, stones: int) -> Clock:
    if stones != 0:
        return Clock.canadian(main, byo, stones)
    if byo < 0:
        raise ValueError(f"byo-yomi time: negative time {byo!r}")
    return Clock.none() if byo > 0 else Clock.absolute(main)


def kgs_time_settings(args: list[str]) -> Clock:
    """`kgs-time_settings none | absolute M | byoyomi M T P | canadian M T S` (args after the command)."""
    return _from_kind(args, KGS_KINDS, "kgs-time_settings")


def kata_time_settings(args: list[str]) -> Clock:
    """`kata-time_settings`: the kgs kinds plus `fischer M INC` and `fischer-capped M INC CAP MAXMOVE`."""
    if args and args[0].lower() == "byo-yomi":
        args = ["byoyomi"] + list(args[1:])
    return _from_kind(args, KATA_KINDS, "kata-time_settings")


def _from_kind(toks: list[str], kinds: tuple[str, ...], command: str) -> Clock:
    if not toks or toks[0].lower() not in kinds:
        got = f", got {toks[0]!r}" if toks else ""
        raise ValueError(f"{command}: expected one of {', '.join(kinds)}{got}")
    kind, a = toks[0].lower(), toks[1:]
    if len(a) != _NARGS[kind]:
        raise ValueError(f"{command} {kind}: expected {_NARGS[kind]} argument(s), got {len(a)}")
    if kind == "none":
        return Clock.none()
    main = _number(a[0], "main time")
    if kind == "absolute":
        return Clock.absolute(main)
    if kind == "byoyomi":
        return Clock.byoyomi(main, _number(a[1], "period time"), _number(a[2], "periods", int))
    if kind == "canadian":
        return _canadian(main, _number(a[1], "period time"), _number(a[2], "stones", int))
    increment = _number(a[1], "increment")
    if kind == "fischer":
        return Clock.fischer(main, increment)
    cap = _number(a[2], "main time limit")
    per_move = _number(a[3], "max time per move")
    return Clock.fischer(main, increment, None if cap < 0 else cap, None if per_move < 0 else per_move)


def time_left(clock: Clock | None, colour: int, seconds: float, stones: int) -> Clock:
    """`time_left COLOUR SECONDS STONES` applied to `clock` (absolute time when there is none yet)."""
    if clock is None:
        clock = Clock.absolute(max(0.0, seconds))
    clock.update(colour, seconds, stones)
    return clock


def _whole_seconds(x: float) -> int:
    """GTP sends integers; a positive time is never rounded down to 0."""
    return 0 if x <= 0 else max(1, int(math.floor(x)))


def time_settings_args(clock: Clock) -> tuple[int, int, int]:
    """(MAIN, BYO_YOMI, STONES) of `time_settings` for `clock` (absolute, canadian or simple)."""
    if clock.system == "absolute":
        return _whole_seconds(clock.main_time), 0, 0
    if clock.system in ("canadian", "simple"):
        byo = _whole_seconds(clock.period_time)
        return _whole_seconds(clock.main_time), byo, clock.stones if byo > 0 else 0
    raise ValueError(f"time_settings cannot express a {clock.describe()} clock")


def time_left_args(clock: Clock, colour: int) -> tuple[int, int]:
    """(SECONDS, N) of `time_left` for one colour: N is 0 in main time, else the stones (byo-yomi:
    periods) left; the inverse of `Clock.update`."""
    s = clock.state(colour)
    if s.in_overtime:
        n = s.periods_left if clock.system == "byoyomi" else s.stones_left
        return max(0, int(math.floor(s.period_left))), n
    return max(0, int(math.floor(s.main_left))), 0
