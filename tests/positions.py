"""Test helpers: build Games from ASCII boards, and check a board's kept fields from scratch.

`load_board` works like minigo's `load_board`: one text row per board row, row 0 at the TOP,
'X' black, 'O' white, '.' empty (spaces are ignored, so "X . O" and "X.O" are the same row).
The stones are put on with the setup kernel, so the game starts at move 0 with an empty history,
and the loaded position (with `to_play`) is the first position of the game for superko.

`check_board` recomputes every incrementally kept field of `engine.board` (heads, circular stone
lists, sizes, liberties, the empty list, the Zobrist hash) by flood fill and compares.
"""
from __future__ import annotations

import numpy as np

from goengine.engine import board as B
from goengine.engine.board import BLACK, EMPTY, WHITE
from goengine.engine.coords import format_gtp, loc, parse_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules

_CHARS = {".": EMPTY, "+": EMPTY, "X": BLACK, "x": BLACK, "O": WHITE, "o": WHITE}
_SYMBOL = {EMPTY: ".", BLACK: "X", WHITE: "O"}


def parse_rows(text: str) -> list[list[int]]:
    rows = []
    for line in text.strip("\n").splitlines():
        line = line.replace(" ", "").replace("\t", "")
        if not line:
            continue
        try:
            rows.append([_CHARS[ch] for ch in line])
        except KeyError as e:
            raise ValueError(f"bad board character {e} in {line!r}") from None
    n = len(rows)
    if any(len(r) != n for r in rows):
        raise ValueError(f"board is not square: {[len(r) for r in rows]}")
    return rows


def load_board(text: str, rules: Rules | None = None, to_play: int = BLACK) -> Game:
    """A Game at move 0 holding the ASCII position; raises ValueError on a string with no
    liberties (the kernel would have captured it)."""
    rows = parse_rows(text)
    n = len(rows)
    g = Game(n, rules)
    for r, row in enumerate(rows):
        for c, color in enumerate(row):
            if color != EMPTY:
                B.place_setup_stone(g.st, g.meta, loc(r, c, n), color)
    if not np.array_equal(g.board_colors(), np.array(rows, dtype=np.int8)):
        raise ValueError("position has a string without liberties")
    g.meta[B.M_TOPLAY] = to_play
    g.meta[B.M_CAPB] = 0
    g.meta[B.M_CAPW] = 0
    # The loaded position is the start of the game: the first (and only) position seen.
    g._seen = [g._key()]
    g._seen_set = {g._seen[0]}
    g.board_history = [g.st[B.F_COLOR].copy()]
    return g


def board_text(g: Game) -> str:
    return "\n".join("".join(_SYMBOL[int(v)] for v in row) for row in g.board_colors())


def rows_array(text: str) -> np.ndarray:
    return np.array(parse_rows(text), dtype=np.int8)


def pt(g: Game, vertex: str) -> int:
    """GTP vertex to Loc on g's board."""
    return parse_gtp(vertex, g.size)


def name(g: Game, lc: int) -> str:
    return format_gtp(lc, g.size)


def zobrist_from_scratch(st: np.ndarray, n: int) -> int:
    """XOR of the Zobrist keys of every stone, computed from the colour array alone."""
    h = np.int64(0)
    for r in range(n):
        for c in range(n):
            p = loc(r, c, n)
            col = int(st[B.F_COLOR, p])
            if col in (BLACK, WHITE):
                h ^= B.ZOBRIST[col, p]
    return int(h)


def snapshot(g: Game) -> dict:
    """Everything observable about a game (and its private bookkeeping), for equality checks."""
    return dict(
        st=g.st.copy(), meta=g.meta.copy(), history=list(g.history), to_play=g.to_play,
        hash=g.hash, captures=g.captures, seen=list(g._seen), seen_set=set(g._seen_set),
        board_history=[b.copy() for b in g.board_history], undo_len=len(g._undo),
        handicap=list(g.handicap))


def assert_same(a: dict, b: dict) -> None:
    assert np.array_equal(a["st"], b["st"]), "st differs"
    assert np.array_equal(a["meta"], b["meta"]), f"meta differs: {a['meta']} vs {b['meta']}"
    for k in ("history", "to_play", "hash", "captures", "seen", "seen_set", "undo_len", "handicap"):
        assert a[k] == b[k], f"{k} differs: {a[k]} vs {b[k]}"
    assert len(a["board_history"]) == len(b["board_history"]), "board_history length differs"
    for x, y in zip(a["board_history"], b["board_history"]):
        assert np.array_equal(x, y), "board_history differs"


def flood_string(colors: np.ndarray, p: int, w: int) -> tuple[set[int], set[int]]:
    """(stones, liberties) of the string through p, from the colour array only."""
    c = colors[p]
    stones = {p}
    libs = set()
    todo = [p]
    while todo:
        x = todo.pop()
        for q in (x - w, x + w, x - 1, x + 1):
            qc = colors[q]
            if qc == c and q not in stones:
                stones.add(q)
                todo.append(q)
            elif qc == EMPTY:
                libs.add(q)
    return stones, libs


def check_board(g: Game) -> None:
    """Assert every kept field of g's board agrees with a from-scratch recomputation."""
    st, meta = g.st, g.meta
    n = g.size
    w = n + 2
    colors = st[B.F_COLOR]
    assert meta[B.M_N] == n and meta[B.M_W] == w
    # the border ring is intact
    ring = np.ones((w, w), dtype=bool)
    ring[1:-1, 1:-1] = False
    assert np.all(colors.reshape(w, w)[ring] == B.BORDER)
    done: set[int] = set()
    empties: set[int] = set()
    for r in range(n):
        for c in range(n):
            p = loc(r, c, n)
            col = int(colors[p])
            assert col in (EMPTY, BLACK, WHITE)
            if col == EMPTY:
                empties.add(p)
                continue
            # the kept liberty count of the stone's string equals the kernel's flood fill
            assert st[B.F_LIBS, st[B.F_HEAD, p]] == B.libs_from_scratch(st, meta, p), \
                f"liberties at {format_gtp(p, n)}\n{board_text(g)}"
            if p in done:
                continue
            stones, libs = flood_string(colors, p, w)
            done |= stones
            head = int(st[B.F_HEAD, p])
            visited = []
            s = head
            for _ in range(len(stones) + 1):
                visited.append(s)
                s = int(st[B.F_NEXT, s])
                if s == head:
                    break
            ok = (head in stones and all(st[B.F_HEAD, s] == head for s in stones)
                  and st[B.F_SIZE, head] == len(stones) and st[B.F_LIBS, head] == len(libs) > 0
                  and s == head and len(visited) == len(stones) and set(visited) == stones)
            assert ok, (f"string at {format_gtp(p, n)}: head {head}, size {st[B.F_SIZE, head]} vs "
                        f"{len(stones)}, libs {st[B.F_LIBS, head]} vs {len(libs)}, list {visited}"
                        f"\n{board_text(g)}")
    k = int(meta[B.M_NEMPTY])
    elist = [int(x) for x in st[B.F_ELIST, :k]]
    assert len(elist) == len(empties) and set(elist) == empties
    for i, p in enumerate(elist):
        assert st[B.F_EIDX, p] == i
    assert g.hash == zobrist_from_scratch(st, n)


# From a 19x19 game against Pachi 11.99 (move 405, white to move): white's 26 stones from L7
# down to O1 and black's three inside (L2, M2, M3) share their only liberties, K2 and L1, a seki
# worth about 50 points to white. White's K2 (or L1) puts the 26 in atari and black takes them.
BIG_SEKI = """
    . O . O O . O O O O O O O X . X X X X
    O O O . O O . O O . O . O X X X X X O
    . O O O . O O O O O O O X X X X X O O
    O O O O O O O O O O O X X . X X X O O
    O . O O . O . O O O O X O X X X O O .
    . O . O O . O O . O O X O O X X O O O
    O O O . O O O O O O . O O . O X O . O
    O . O O O . O O O O O O . O O O X O O
    X O . O O O O O O X O . O . O X X X X
    X X O O X X X X X X X O O O X X X X O
    X X O X O X X X X X X X O O O X . X O
    X X O X . X . X X . X X X O X X X O O
    X X X X X X X X X X O O X X X X O O O
    X X X X X X X X X X X O X X O O O O .
    . X X X X O . X X O O O O X O . O . O
    X X X X X X X X X X O O O X O O O O .
    X X X X X X X O O O O X O X X O O . O
    X X X X . X X X O . X X O X X X O O .
    X O . X X X X O O O . O O O X X X O .
"""
