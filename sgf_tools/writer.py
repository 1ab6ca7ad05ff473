"""`GameRecord` -> SGF bytes (FF[4], UTF-8), such that ``read_sgf(write_sgf(r)) == r``."""

from __future__ import annotations

from typing import Mapping, Sequence

from .record import GameRecord, Point

__all__ = ["write_sgf", "format_komi", "sgf_rules"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_MOVES_PER_LINE = 12
# RU[] spellings of the rule set names goengine uses (`kgs-rules`, `engine-match --rules`).
_RULES = {"chinese": "Chinese", "tromp-taylor": "Tromp-Taylor", "aga": "AGA", "new_zealand": "NZ",
          "japanese": "Japanese", "korean": "Korean"}


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _pt(p: Point | None, size: int) -> str:
    if p is None:
        return ""
    r, c = p
    if not (0 <= r < size and 0 <= c < size):
        raise ValueError("point %r off a %dx%d board" % (p, size, size))
    return _LETTERS[c] + _LETTERS[r]


def format_komi(komi: float) -> str:
    """6.5 -> '6.5', 7.0 -> '7', -0.5 -> '-0.5' (shortest exact form, no exponent)."""
    k = float(komi)
    if k != k or k in (float("inf"), float("-inf")):
        raise ValueError("bad komi %r" % komi)
    s = repr(k)
    if "e" in s or "E" in s:
        s = "%.12f" % k
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def sgf_rules(name: str | None) -> str | None:
    """The RU[] value for a rule set name: 'chinese' -> 'Chinese', 'new_zealand' -> 'NZ'; other
    names as given."""
    if name is None:
        return None
    return _RULES.get(name.lower(), name)


def write_sgf(record: GameRecord,
              comments: Mapping[int, str] | Sequence[str | None] | None = None,
              *, application: str | None = "goengine:sgf_tools") -> bytes:
    """Serialise a record: one root node, then one node per move.

    ``comments`` maps a move index to the text put in that move's node (``-1`` = the root,
    i.e. a game comment); a sequence is indexed the same way (``None`` entries skipped).
    Without it, ``record.comments`` is written.  The record's ``source`` is not written.
    """
    size = record.size
    if not (1 <= size <= 26):
        raise ValueError("cannot write board size %r" % size)
    if comments is None:
        cmap: Mapping[int, str] = record.comments or {}
    elif isinstance(comments, Mapping):
        cmap = comments
    else:
        cmap = {i: c for i, c in enumerate(comments) if c is not None}

    root = ["GM[1]FF[4]CA[UTF-8]"]
    if application:
        root.append("AP[%s]" % _esc(application))
    root.append("SZ[%d]" % size)
    if record.komi is not None:
        root.append("KM[%s]" % format_komi(record.komi))
    if record.handicap:
        root.append("HA[%d]" % record.handicap)
    for ident, value in (("RU", record.rules), ("PB", record.black_player),
                         ("BR", record.black_rank), ("PW", record.white_player),
                         ("WR", record.white_rank), ("DT", record.date),
                         ("RE", record.result)):
        if value is not None and value != "":
            root.append("%s[%s]" % (ident, _esc(value)))
    if record.setup_black:
        root.append("AB" + "".join("[%s]" % _pt(p, size) for p in record.setup_black))
    if record.setup_white:
        root.append("AW" + "".join("[%s]" % _pt(p, size) for p in record.setup_white))
    c = cmap.get(-1)
    if c:
        root.append("C[%s]" % _esc(c))

    out = ["(;", "".join(root), "\n"]
    line = 0
    for i, (colour, p) in enumerate(record.moves):
        if colour not in ("b", "w"):
            raise ValueError("bad colour %r at move %d" % (colour, i))
        out.append(";%s[%s]" % ("B" if colour == "b" else "W", _pt(p, size)))
        line += 1
        c = cmap.get(i)
        if c:
            out.append("C[%s]" % _esc(c))
            line = _MOVES_PER_LINE
        if line >= _MOVES_PER_LINE:
            out.append("\n")
            line = 0
    if out[-1] == "\n":
        out.pop()
    out.append(")\n")
    return "".join(out).encode("utf-8")
