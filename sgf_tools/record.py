"""The game record: what `sgf_tools` reads, filters and writes.

Coordinates are ``(row, col)`` with row 0 the TOP row, exactly as SGF writes them:
``aa`` is ``(0, 0)``, ``sa`` on 19x19 is ``(0, 18)`` (top right), ``as`` is ``(18, 0)``.
A pass is ``None``.  Colours are ``'b'`` and ``'w'``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Optional, Tuple

Point = Tuple[int, int]
Move = Tuple[str, Optional[Point]]  # ('b' | 'w', (row, col) or None for a pass)

__all__ = ["GameRecord", "Point", "Move", "parse_rank", "parse_winner", "parse_margin",
           "is_draw_result", "is_off_board_result"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


# --------------------------------------------------------------------------- ranks

_CN_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_KYU_UNITS = ("k", "kyu", "級", "级", "급")
_DAN_UNITS = ("d", "dan", "段", "단")
_PRO_UNITS = ("p", "pro")
_PRO_PREFIXES = ("p", "pro", "职业", "職業", "プロ", "프로")
_RANK_RE = re.compile(r"^(?P<pre>[^\d一二三四五六七八九十]*)\s*(?P<num>\d+|[一二三四五六七八九十])\s*(?P<unit>.*)$")


def parse_rank(rank: str | None) -> int | None:
    """A comparable strength from a rank string, or None when the rank is unknown.

    Kyu ranks are negative (``'3k'`` -> -3, ``'30k'`` -> -30), amateur dan ranks are positive
    (``'6d'`` -> 6, ``'9段'`` -> 9), professional ranks sit above 9 dan (``'1p'`` -> 10,
    ``'9p'`` -> 18; Fox's ``'P9'``/``'P8段'`` are pro ranks too, a bare ``'P'`` is 10).
    KGS's uncertainty marks (``'1k?'``, ``'2d*'``) are ignored.  ``''``, ``'?'``, ``'-'``
    and anything unrecognised give None.  Note the scale has no 0: ``'1d' - '1k'`` is 2.
    """
    if rank is None:
        return None
    s = rank.strip().lower().rstrip("?*+ ").strip()
    if not s:
        return None
    if s in ("p", "pro"):
        return 10
    m = _RANK_RE.match(s)
    if m is None:
        return None
    pre, num, unit = m.group("pre").strip(), m.group("num"), m.group("unit").strip()
    n = int(num) if num.isdigit() else _CN_DIGITS[num]
    if n <= 0:
        return None
    if pre:
        if pre not in _PRO_PREFIXES:
            return None
        if unit and unit not in _DAN_UNITS and unit not in _PRO_UNITS:
            return None
        return 9 + n
    if unit in _KYU_UNITS:
        return -n
    if unit in _DAN_UNITS:
        return n
    if unit in _PRO_UNITS:
        return 9 + n
    return None


# --------------------------------------------------------------------------- results

def parse_winner(result: str | None) -> str | None:
    """'b', 'w' or None (draw, void, unknown, missing) from an RE value."""
    if not result:
        return None
    s = result.strip()
    u = s.upper()
    if u.startswith("B+"):
        return "b"
    if u.startswith("W+"):
        return "w"
    # Chinese / Japanese results, e.g. '黑中盘胜', '白胜2目半'
    if ("胜" in s or "勝" in s) and s[0] in "黑白":
        return "b" if s[0] == "黑" else "w"
    return None


_COUNTED = re.compile(r"^[BW]\+(\d+(?:\.\d+)?)$", re.IGNORECASE)


def parse_margin(result: str | None) -> float | None:
    """The winner's margin in points of a counted result ('B+3.5' -> 3.5), None for a game
    ended otherwise (resignation 'B+R', time 'W+T', forfeit, a result without a number) or a
    result that names no winner."""
    m = _COUNTED.match((result or "").strip())
    return float(m.group(1)) if m else None


# SGF's B+T / B+Time (the loser ran out of time) and B+F / B+Forfeit (disqualified or gone)
_OFF_BOARD = re.compile(r"^[BW]\+(T|TIME|F|FORFEIT)$", re.IGNORECASE)


def is_off_board_result(result: str | None) -> bool:
    """True for a game won on time or by forfeit: its winner was not decided by the position."""
    return bool(_OFF_BOARD.match((result or "").strip()))


def is_draw_result(result: str | None) -> bool:
    """True for RE[0], RE[Draw], RE[Jigo] (and their case variants)."""
    if not result:
        return False
    return result.strip().lower() in ("0", "draw", "jigo", "d", "和棋", "持碁")


# --------------------------------------------------------------------------- record

@dataclass
class GameRecord:
    """One game: the main line of an SGF file, normalised.

    ``komi`` is None when the file has no usable KM.  ``handicap`` is HA (0 when absent);
    free-placement handicap written as consecutive B moves is already turned into
    ``setup_black``.  Text fields are None when missing or empty.

    Equality compares the game fields only (``source`` and ``comments`` are excluded), so
    ``read_sgf(write_sgf(r)) == r``.
    """

    size: int = 19
    komi: float | None = None
    handicap: int = 0
    setup_black: list[Point] = field(default_factory=list)
    setup_white: list[Point] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    result: str | None = None
    black_player: str | None = None
    white_player: str | None = None
    black_rank: str | None = None
    white_rank: str | None = None
    rules: str | None = None
    date: str | None = None
    source: str | None = field(default=None, compare=False)
    # move index -> comment text; -1 is the game (root) comment.  Filled only when the
    # reader is asked for comments.
    comments: dict[int, str] = field(default_factory=dict, compare=False, repr=False)

    # ---- derived values
    @property
    def winner(self) -> str | None:
        """'b', 'w' or None (draw, no result, unknown result)."""
        return parse_winner(self.result)

    @property
    def margin(self) -> float | None:
        """The winner's margin in points when the game was counted, else None (`parse_margin`)."""
        return parse_margin(self.result)

    @property
    def is_draw(self) -> bool:
        return is_draw_result(self.result)

    @property
    def black_rank_value(self) -> int | None:
        """`parse_rank(black_rank)`."""
        return parse_rank(self.black_rank)

    @property
    def white_rank_value(self) -> int | None:
        """`parse_rank(white_rank)`."""
        return parse_rank(self.white_rank)

    @property
    def first_player(self) -> str | None:
        """Colour of the first move ('b' / 'w'), None when there are no moves."""
        return self.moves[0][0] if self.moves else None

    # ---- identity
    def move_key(self) -> str:
        """Stable sha1 (hex) of the board size, the setup stones (as sets) and the moves.

        Two records of the same game from different files (different names, comments,
        times, komi or result) get the same key.  Used for deduplication and the fixed
        held-out split, so the format below must never change.
        """
        parts = ["SZ%d" % self.size,
                 "AB" + ",".join(_pt(p) for p in sorted(set(self.setup_black))),
                 "AW" + ",".join(_pt(p) for p in sorted(set(self.setup_white))),
                 ";".join(c + _pt(p) for c, p in self.moves)]
        return hashlib.sha1("|".join(parts).encode("ascii")).hexdigest()

    def heldout(self, fraction: float) -> bool:
        """Deterministic held-out membership: True for about ``fraction`` of all games.

        Depends only on `move_key()`, so it is stable across runs, machines and files, and
        a game and its duplicates always land on the same side.
        """
        if fraction <= 0.0:
            return False
        if fraction >= 1.0:
            return True
        u = int(self.move_key()[-13:], 16) / float(16 ** 13)   # uniform in [0, 1)
        return u < fraction


def _pt(p: Point | None) -> str:
    if p is None:
        return ""
    r, c = p
    if 0 <= r < 26 and 0 <= c < 26:
        return _LETTERS[c] + _LETTERS[r]
    return "(%d,%d)" % (r, c)
