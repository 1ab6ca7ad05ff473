"""Streaming analysis (Sabaki, Lizzie): lz-analyze, kata-analyze and their genmove variants.

    lz-analyze [player] [interval] [interval N] [minmoves N] [maxmoves N]
    kata-analyze [player] [interval] ... [ownership true]
    lz-genmove_analyze / kata-genmove_analyze [player] [interval] ...

`=id` is written at once, then one line of `info` blocks every interval (gtp.analysis formats
them); the analysis runs until any input line arrives (Sabaki sends `protocol_version`; a raw
newline also stops it), then the blank line ends the response and the next command is answered.
The genmove variants end on their own with `play <vertex>` (or early on new input, like genmove).
"""
from __future__ import annotations

from goengine.gtp import moves
from goengine.gtp.analysis import format_kata, format_lz, parse_analyze_args
from goengine.gtp.server import command
from goengine.gtp.session import Session

_USAGE = "[player] [interval] [interval N] [minmoves N] [maxmoves N]"


def _formatter(s: Session, a, kata: bool):
    if kata:
        return lambda snap: format_kata(snap, s.fmt, a.minmoves, a.maxmoves, a.ownership)
    return lambda snap: format_lz(snap, s.fmt, a.minmoves, a.maxmoves)


def _analyze(s: Session, args, call, kata: bool) -> str:
    a = parse_analyze_args(args, kata)
    colour = a.colour or s.game.to_play
    fmt = _formatter(s, a, kata)
    call.begin()

    def report(snap) -> None:
        if a.interval > 0:
            call.line(fmt(snap))

    final = moves.analyze(s, colour, call.stop, report, max(a.interval, 1.0) / 100)
    if not call.stop.is_set():
        # The search ended by itself (a policy-only player, a full tree): show where it got to,
        # then keep the response open until the client's input ends it, as it expects.
        report(final)
        call.stop.wait()
    return ""


def _genmove_analyze(s: Session, args, call, kata: bool) -> str:
    a = parse_analyze_args(args, kata)
    colour = a.colour or s.game.to_play
    fmt = _formatter(s, a, kata)
    call.begin()
    report = (lambda snap: call.line(fmt(snap))) if a.interval > 0 else None
    move = moves.generate(s, colour, call.stop, report=report, interval_s=max(a.interval, 1.0) / 100)
    return f"play {s.fmt(move)}"


@command("lz-analyze", args=(0, None), needs="player", long=True, usage="lz-analyze " + _USAGE)
def lz_analyze(s: Session, args, call) -> str:
    return _analyze(s, args, call, kata=False)


@command("kata-analyze", args=(0, None), needs="player", long=True,
         usage="kata-analyze " + _USAGE + " [ownership true]")
def kata_analyze(s: Session, args, call) -> str:
    return _analyze(s, args, call, kata=True)


@command("lz-genmove_analyze", args=(0, None), needs="player", long=True, pending_stops=False,
         usage="lz-genmove_analyze " + _USAGE)
def lz_genmove_analyze(s: Session, args, call) -> str:
    return _genmove_analyze(s, args, call, kata=False)


@command("kata-genmove_analyze", args=(0, None), needs="player", long=True, pending_stops=False,
         usage="kata-genmove_analyze " + _USAGE + " [ownership true]")
def kata_genmove_analyze(s: Session, args, call) -> str:
    return _genmove_analyze(s, args, call, kata=True)
