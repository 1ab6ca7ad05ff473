"""GTP framing and arguments: one input line in, one response out. Pure text, no I/O.

    parse_line("12 play b q16\r")   -> Command(id=12, name="play", args=["b", "q16"])
    parse_line("# interrupt")       -> INTERRUPT      (GoGui's gogui-interrupt request)
    parse_line("   # a comment")    -> None           (nothing to answer)
    format_success(12, "D4")        -> "=12 D4\n\n"
    format_success(None, "\nA B")  -> "= \nA B\n\n"    (a body on its own lines, as GNU Go)
    format_failure(None, "illegal move: occupied") -> "? illegal move: occupied\n\n"

Preprocessing follows GTP 2 section 2.2: control characters other than HT and LF are removed, HT
becomes a space, everything after `#` is a comment, and a line that is then empty is ignored. A
response never contains an empty line (an empty line ends it), so `format_*` drop them.

Arguments are read here, failing with `GtpError` (answered as `? message`):

    parse_colour("W")          -> WHITE
    parse_vertex("q16", 19)    -> Loc of Q16 (engine.coords); "pass" -> PASS
    parse_int("3", "stones"), parse_float("6.5", "komi")
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from goengine.engine import coords
from goengine.engine.colors import BLACK, COLOUR_NAMES, EMPTY, WHITE  # noqa: F401  (re-exported)

__all__ = [
    "GtpError",
    "Command",
    "INTERRUPT",
    "parse_line",
    "format_success",
    "format_failure",
    "format_header",
    "clean_text",
    "MAX_ECHO",
    "quote",
    "EMPTY",
    "BLACK",
    "WHITE",
    "COLOUR_NAMES",
    "parse_colour",
    "parse_vertex",
    "parse_int",
    "parse_float",
    "format_vertex",
]

# Bytes 0-31 and 127 except HT (9) and LF (10); CR is among them, so CRLF lines work.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_INTERRUPT = re.compile(r"^\s*#\s*interrupt\s*$", re.IGNORECASE)

MAX_ECHO = 40  # at most this many characters of client text are quoted back in an error message

_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


class GtpError(Exception):
    """A failure answered as `? message`; the engine and the position are unchanged."""


@dataclass(frozen=True)
class Command:
    id: int | None        # the numeric id, echoed in the response; None when absent
    name: str             # lower case
    args: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = f"{self.id} " if self.id is not None else ""
        return head + " ".join([self.name, *self.args])


class _Interrupt:
    """The `# interrupt` comment line GoGui writes to stop the running command (interrupt.xml)."""

    def __repr__(self) -> str:
        return "INTERRUPT"


INTERRUPT = _Interrupt()


def parse_line(line: str) -> Command | _Interrupt | None:
    """A raw input line (with or without its line end) as a Command, INTERRUPT, or None to ignore."""
    text = _CONTROL.sub("", line.replace("\t", " "))
    text = text.replace("\n", " ")
    if _INTERRUPT.match(text):
        return INTERRUPT
    text = text.split("#", 1)[0]
    tokens = text.split()
    if not tokens:
        return None
    ident = None
    if tokens[0].isdigit() and tokens[0].isascii():
        ident = int(tokens[0])
        tokens = tokens[1:]
        if not tokens:
            # "12" alone: an id without a command. Answer it as an error rather than stay silent.
            return Command(ident, "", [])
    return Command(ident, tokens[0].lower(), tokens[1:])


def clean_text(text: str) -> list[str]:
    """The lines of a response body, with no empty line and no control characters."""
    lines = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        raw = _CONTROL.sub("", raw.replace("\t", " ")).rstrip()
        if raw:
            lines.append(raw)
    return lines


def format_header(ident: int | None, ok: bool = True) -> str:
    """`=12` / `?12` / `=`: the start of a response, without its text."""
    return ("=" if ok else "?") + ("" if ident is None else str(ident))


def _format(ident: int | None, text: str, ok: bool) -> str:
    head = format_header(ident, ok)
    lines = clean_text(text)
    if not lines:
        return head + "\n\n"
    if text.lstrip(" ").startswith("\n"):
        # A multi-line body meant to start on its own line (showboard, gogui boards): `= ` then
        # the line end, as GNU Go writes it. GoGui drops everything up to the first space of a
        # response; without the space that is the body's first value.
        return head + " \n" + "\n".join(lines) + "\n\n"
    return head + " " + "\n".join(lines) + "\n\n"


def format_success(ident: int | None, text: str = "") -> str:
    return _format(ident, text, True)


def format_failure(ident: int | None, message: str) -> str:
    return _format(ident, message or "error", False)


def quote(text: str) -> str:
    """Client text for an error message, cut to MAX_ECHO characters."""
    text = text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + "..."
    return repr(text)


# ---- arguments ----------------------------------------------------------------------------------

def parse_colour(text: str) -> int:
    colour = _COLOURS.get(text.lower())
    if colour is None:
        raise GtpError(f"invalid color {quote(text)}")
    return colour


def parse_vertex(text: str, size: int, allow_pass: bool = True) -> int:
    """A GTP vertex on a size x size board as a Loc (or PASS); never RESIGN."""
    try:
        lc = coords.parse_gtp(text, size)
    except coords.CoordError:
        raise GtpError(f"invalid vertex {quote(text)} on a {size}x{size} board") from None
    if lc == coords.RESIGN or (lc == coords.PASS and not allow_pass):
        raise GtpError(f"invalid vertex {quote(text)}")
    return lc


def format_vertex(lc: int, size: int) -> str:
    """Q16 / pass / resign."""
    return coords.format_gtp(lc, size).upper() if lc >= 0 else coords.format_gtp(lc, size)


def parse_int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise GtpError(f"syntax error: {what} must be an integer, not {quote(text)}") from None


def parse_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GtpError(f"syntax error: {what} must be a number, not {quote(text)}") from None
    if not math.isfinite(value):
        raise GtpError(f"syntax error: {what} must be finite")
    return value
