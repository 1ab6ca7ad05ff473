"""Every coordinate system of the engine, and the only place that converts between them.

| name  | what                                   | example on 19x19          |
|-------|----------------------------------------|---------------------------|
| Loc   | index into the padded board arrays      | (row + 1) * W + (col + 1) |
|       | W = N + 2; a border ring surrounds it   |                           |
| Pos   | index into an N*N tensor (row-major)    | row * N + col; pass = N*N |
| (r,c) | row 0 is the TOP row, col 0 is column A | (0, 0) is A19             |
| GTP   | column letter without I, row from below | "A19", "T1", "pass"       |
| SGF   | two letters, column first, 'a' = top    | "aa" is A19               |

PASS and RESIGN are negative Locs so that they never index an array by accident.
"""
from __future__ import annotations

PASS = -1
RESIGN = -2

MIN_SIZE = 2
MAX_SIZE = 25  # GTP's limit: 25 columns A..Z without I

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


class CoordError(ValueError):
    """A vertex that does not name a point of the board."""


def stride(n: int) -> int:
    """Row stride of the padded board of size n."""
    return n + 2


def area(n: int) -> int:
    """Number of cells of the padded board of size n."""
    return (n + 2) * (n + 2)


def loc(row: int, col: int, n: int) -> int:
    return (row + 1) * (n + 2) + (col + 1)


def loc_to_rc(lc: int, n: int) -> tuple[int, int]:
    w = n + 2
    return lc // w - 1, lc % w - 1


def on_board(lc: int, n: int) -> bool:
    if lc < 0:
        return False
    r, c = loc_to_rc(lc, n)
    return 0 <= r < n and 0 <= c < n


def loc_to_pos(lc: int, n: int) -> int:
    if lc == PASS:
        return n * n
    r, c = loc_to_rc(lc, n)
    return r * n + c


def pos_to_loc(pos: int, n: int) -> int:
    if pos == n * n:
        return PASS
    return loc(pos // n, pos % n, n)


def all_locs(n: int) -> list[int]:
    return [loc(r, c, n) for r in range(n) for c in range(n)]


def parse_gtp(text: str, n: int) -> int:
    """GTP vertex (any case) to Loc; 'pass' to PASS. Raises CoordError."""
    t = text.strip().upper()
    if t == "PASS":
        return PASS
    if t == "RESIGN":
        return RESIGN
    if len(t) < 2 or t[0] not in GTP_COLUMNS or not (t[1:].isascii() and t[1:].isdigit()):
        raise CoordError(f"invalid vertex {text!r}")
    col = GTP_COLUMNS.index(t[0])
    number = int(t[1:])
    if col >= n or not 1 <= number <= n:
        raise CoordError(f"vertex {text!r} is off the {n}x{n} board")
    return loc(n - number, col, n)


def format_gtp(lc: int, n: int) -> str:
    if lc == PASS:
        return "pass"
    if lc == RESIGN:
        return "resign"
    if not on_board(lc, n):
        raise CoordError(f"Loc {lc} is not a point of the {n}x{n} board")
    r, c = loc_to_rc(lc, n)
    return f"{GTP_COLUMNS[c]}{n - r}"


def parse_sgf(text: str, n: int) -> int:
    """SGF point ('dd') to Loc; '' and 'tt' (on boards up to 19) are passes."""
    t = text.strip()
    if t == "" or (t == "tt" and n <= 19):
        return PASS
    if len(t) != 2:
        raise CoordError(f"invalid SGF point {text!r}")
    col = ord(t[0]) - ord("a")
    row = ord(t[1]) - ord("a")
    if not (0 <= col < n and 0 <= row < n):
        raise CoordError(f"SGF point {text!r} is off the {n}x{n} board")
    return loc(row, col, n)


def format_sgf(lc: int, n: int) -> str:
    if lc == PASS:
        return ""
    r, c = loc_to_rc(lc, n)
    return chr(ord("a") + c) + chr(ord("a") + r)
