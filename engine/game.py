"""A game: the board kernels plus history, superko, undo, handicap and scoring.

This is the small readable API over engine.board; the search and the features work on its arrays
(`game.st`, `game.meta`) directly.
"""
from __future__ import annotations

import numpy as np

from goengine.engine import board as B
from goengine.engine.board import BLACK, EMPTY, WHITE
from goengine.engine.coords import MAX_SIZE, MIN_SIZE, PASS, RESIGN, loc, on_board
from goengine.engine.rules import Rules

_REASONS = {B.OCCUPIED: "occupied", B.SUICIDE: "suicide", B.KO: "ko"}


class IllegalMove(ValueError):
    """A move the rules forbid; `reason` is one of occupied, suicide, ko, superko, off board."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def opponent(color: int) -> int:
    return 3 - color


def parse_color(text: str) -> int:
    t = text.strip().lower()
    if t in ("b", "black"):
        return BLACK
    if t in ("w", "white"):
        return WHITE
    raise ValueError(f"invalid color {text!r}")


class Game:
    """Board + history. `to_play` alternates, but play() accepts either colour (GTP does)."""

    def __init__(self, size: int = 19, rules: Rules | None = None):
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"board size {size} outside {MIN_SIZE}..{MAX_SIZE}")
        self.size = size
        self.rules = rules or Rules()
        self.st, self.meta = B.new_board(size)
        self.history: list[tuple[int, int]] = []
        self.handicap: list[int] = []
        self._undo: list[tuple[np.ndarray, np.ndarray]] = []
        # Every position that occurred, for superko: keyed as `_key()` makes it.
        self._seen: list[int] = [self._key()]
        self._seen_set: set[int] = {self._seen[0]}
        # Board colour arrays of the last 8 positions, newest last (for the Zero features).
        self.board_history: list[np.ndarray] = [self.st[B.F_COLOR].copy()]

    # ---- properties -------------------------------------------------------------------------
    @property
    def komi(self) -> float:
        return self.rules.komi

    @property
    def to_play(self) -> int:
        return int(self.meta[B.M_TOPLAY])

    @to_play.setter
    def to_play(self, color: int) -> None:
        self.meta[B.M_TOPLAY] = color

    @property
    def move_number(self) -> int:
        return len(self.history)

    @property
    def hash(self) -> int:
        return int(self.meta[B.M_HASH])

    @property
    def passes_in_a_row(self) -> int:
        return int(self.meta[B.M_PASSES])

    @property
    def captures(self) -> tuple[int, int]:
        return int(self.meta[B.M_CAPB]), int(self.meta[B.M_CAPW])

    @property
    def last_move(self) -> int | None:
        return self.history[-1][1] if self.history else None

    @property
    def ko_point(self) -> int:
        return int(self.meta[B.M_KO])

    def color_at(self, lc: int) -> int:
        return int(self.st[B.F_COLOR, lc])

    def board_colors(self) -> np.ndarray:
        """int8[N, N] of EMPTY/BLACK/WHITE, row 0 at the top."""
        n = self.size
        return self.st[B.F_COLOR].reshape(n + 2, n + 2)[1:-1, 1:-1].astype(np.int8)

    def liberties(self, lc: int) -> int:
        return int(self.st[B.F_LIBS, self.st[B.F_HEAD, lc]])

    def is_over(self) -> bool:
        return self.passes_in_a_row >= 2

    # ---- legality -----------------------------------------------------------------------------
    def _key(self, st=None, meta=None, to_play=None) -> int:
        meta = self.meta if meta is None else meta
        key = int(meta[B.M_HASH])
        if self.rules.superko == "situational":
            tp = int(meta[B.M_TOPLAY]) if to_play is None else to_play
            if tp == WHITE:
                key ^= int(B.ZOBRIST_WHITE_TO_PLAY)
        return key

    def illegal_reason(self, color: int, lc: int) -> str | None:
        if lc == PASS:
            return None
        if not on_board(lc, self.size):
            return "off board"
        code = B.legality(self.st, self.meta, lc, color)
        if code == B.SUICIDE and self.rules.suicide:
            code = B.LEGAL
        if code != B.LEGAL:
            return _REASONS[code]
        if self.rules.superko != "none":
            st, meta = self.st.copy(), self.meta.copy()
            B.play(st, meta, lc, color)
            if self._key(st, meta, opponent(color)) in self._seen_set:
                return "superko"
        elif self.rules.suicide:
            # Without superko a single-stone suicide would repeat the position for ever.
            st, meta = self.st.copy(), self.meta.copy()
            B.play(st, meta, lc, color)
            if st[B.F_COLOR, lc] == EMPTY and meta[B.M_HASH] == self.meta[B.M_HASH]:
                return "suicide"
        return None

    def is_legal(self, color: int, lc: int) -> bool:
        return self.illegal_reason(color, lc) is None

    def legal_moves(self, color: int | None = None) -> list[int]:
        color = self.to_play if color is None else color
        n = self.size
        out = []
        for r in range(n):
            for c in range(n):
                lc = loc(r, c, n)
                if self.st[B.F_COLOR, lc] == EMPTY and self.illegal_reason(color, lc) is None:
                    out.append(lc)
        return out

    # ---- moves --------------------------------------------------------------------------------
    def play(self, color: int, lc: int) -> int:
        """Play a move (or PASS). Raises IllegalMove and leaves the game unchanged. Returns captures."""
        if color not in (BLACK, WHITE):
            raise ValueError(f"invalid color {color}")
        if lc == RESIGN:
            raise IllegalMove("resign is not a move")
        reason = self.illegal_reason(color, lc)
        if reason is not None:
            raise IllegalMove(reason)
        self._undo.append((self.st.copy(), self.meta.copy()))
        if lc == PASS:
            B.play_pass(self.meta, color)
            captured = 0
        else:
            captured = B.play(self.st, self.meta, lc, color)
        self.history.append((color, lc))
        key = self._key()
        self._seen.append(key)
        self._seen_set.add(key)
        self.board_history.append(self.st[B.F_COLOR].copy())
        if len(self.board_history) > 8:
            self.board_history.pop(0)
        return captured

    def undo(self) -> None:
        if not self._undo:
            raise IndexError("no move to undo")
        st, meta = self._undo.pop()
        # copies: a Game.copy() may share this snapshot in its own undo stack
        self.st, self.meta = st.copy(), meta.copy()
        self.history.pop()
        key = self._seen.pop()
        if key not in self._seen:
            self._seen_set.discard(key)
        self._rebuild_board_history()

    def _rebuild_board_history(self) -> None:
        snaps = [s for s, _ in self._undo[-7:]]
        self.board_history = [s[B.F_COLOR].copy() for s in snaps] + [self.st[B.F_COLOR].copy()]

    def set_handicap(self, locs: list[int]) -> None:
        """Place black handicap stones on an empty board; white plays next."""
        if self.history or self.handicap or np.any(self.board_colors() != EMPTY):
            raise ValueError("board not empty")
        if len(set(locs)) != len(locs):
            raise ValueError("repeated vertex")
        if len(locs) < 2 or len(locs) > self.size * self.size - 1:
            raise ValueError("invalid number of stones")
        for lc in locs:
            if not on_board(lc, self.size):
                raise ValueError("vertex off board")
        for lc in locs:
            B.place_setup_stone(self.st, self.meta, lc, BLACK)
        self.handicap = list(locs)
        self.meta[B.M_TOPLAY] = WHITE
        self._seen = [self._key()]
        self._seen_set = {self._seen[0]}
        self.board_history = [self.st[B.F_COLOR].copy()]

    def fixed_handicap_locs(self, count: int) -> list[int]:
        """Placement of the GTP specification (4.1.1): star points, 2..9 stones on odd sizes
        from 9 (edge distance 4th line from 13, 3rd line below), at most 4 on 7x7 and even sizes."""
        n = self.size
        if n < 7:
            raise ValueError("board too small for fixed handicap")
        limit = 9 if (n % 2 == 1 and n >= 9) else 4
        if not 2 <= count <= limit:
            raise ValueError("invalid number of stones")
        e = 3 if n >= 13 else 2
        lo, hi, mid = e, n - 1 - e, n // 2
        # (row, col) with row 0 at the top: D4 is (hi, lo), Q16 is (lo, hi)
        corners = [(hi, lo), (lo, hi), (lo, lo), (hi, hi)]
        sides = [(mid, lo), (mid, hi)]
        tops = [(hi, mid), (lo, mid)]
        centre = (mid, mid)
        table = {
            2: corners[:2],
            3: corners[:3],
            4: corners,
            5: corners + [centre],
            6: corners + sides,
            7: corners + sides + [centre],
            8: corners + sides + tops,
            9: corners + sides + tops + [centre],
        }
        return [loc(r, c, n) for r, c in table[count]]

    def copy(self) -> "Game":
        g = Game.__new__(Game)
        g.size = self.size
        g.rules = self.rules
        g.st = self.st.copy()
        g.meta = self.meta.copy()
        g.history = list(self.history)
        g.handicap = list(self.handicap)
        g._undo = list(self._undo)
        g._seen = list(self._seen)
        g._seen_set = set(self._seen_set)
        g.board_history = list(self.board_history)
        return g

    # ---- scoring ------------------------------------------------------------------------------
    def _without(self, dead) -> tuple[np.ndarray, np.ndarray]:
        st, meta = self.st.copy(), self.meta.copy()
        if dead:
            for lc in dead:
                if st[B.F_COLOR, lc] in (BLACK, WHITE):
                    st[B.F_COLOR, lc] = EMPTY
        return st, meta

    def ownership(self, dead=None) -> np.ndarray:
        """int8[N, N]: BLACK, WHITE or EMPTY (neutral) per point under area scoring."""
        st, meta = self._without(dead)
        out = np.zeros(st.shape[1], dtype=np.int8)
        B.area_ownership(st, meta, out)
        n = self.size
        return out.reshape(n + 2, n + 2)[1:-1, 1:-1].copy()

    def area_score(self, dead=None) -> float:
        """Black minus white, komi included; Tromp-Taylor when no dead stones are given."""
        st, meta = self._without(dead)
        out = np.zeros(st.shape[1], dtype=np.int8)
        return float(B.area_ownership(st, meta, out)) - self.komi

    def territory_score(self, dead=None) -> float:
        """Japanese count: surrounded empty points plus prisoners (captures and dead stones)."""
        dead = list(dict.fromkeys(dead or []))  # a point named twice is still one prisoner
        own = self.ownership(dead)
        colors = self.board_colors()
        n = self.size
        terr_b = terr_w = 0
        for r in range(n):
            for c in range(n):
                if colors[r, c] == EMPTY or loc(r, c, n) in dead:
                    if own[r, c] == BLACK:
                        terr_b += 1
                    elif own[r, c] == WHITE:
                        terr_w += 1
        cap_b, cap_w = self.captures
        dead_w = sum(1 for lc in dead if self.st[B.F_COLOR, lc] == WHITE)
        dead_b = sum(1 for lc in dead if self.st[B.F_COLOR, lc] == BLACK)
        return (terr_b + cap_b + dead_w) - (terr_w + cap_w + dead_b) - self.komi

    def score(self, dead=None) -> float:
        if self.rules.scoring == "territory":
            return self.territory_score(dead)
        return self.area_score(dead)


def format_result(score: float) -> str:
    """SGF/GTP result string from black-minus-white."""
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"
