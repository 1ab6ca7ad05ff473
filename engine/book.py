"""An opening book: the moves that long searches chose in the first positions of a game, looked up
under the board's 8 symmetries.

The engine's move in a book position is the one a search of many times its match budget found
(`engine-train book` builds the file; Pachi's fuseki book and KataGo's books play the same part).
A position is its stones and the side to move; the book holds it once, in the orientation whose
key sorts first among the 8 (`canonical`), with its move in that orientation, so a game that
reaches the position rotated or reflected finds it and gets the move mapped back. Captures, the
move history and superko do not enter the key: the book covers the first moves of a game, where
none of them differ between two games on the same stones.

A book is made for one board size, komi and scoring (area or territory): elsewhere `lookup`
answers None and the search plays.

The file is JSON:

    {"format": "goengine-book", "version": 1, "size": 9, "komi": 7.5, "scoring": "area",
     "made_by": {...what searched, how long...},
     "positions": {KEY: {"move": "E5", "visits": 20000, "winrate": 0.52,
                         "candidates": [["E5", 0.61], ["C4", 0.12], ...]}, ...}}

KEY is the canonical position: N*N characters row by row from the top ('.' empty, 'x' black,
'o' white), then 'b' or 'w' for the side to move. `move` and the `candidates` (the moves the
search spent at least a share of its visits on, with that share) are GTP vertices on the
canonical board.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from goengine.engine import symmetry
from goengine.engine.board import BLACK, EMPTY, WHITE
from goengine.engine.coords import CoordError, format_gtp, loc, loc_to_rc, parse_gtp
from goengine.engine.search.result import MoveStat, SearchResult

FORMAT = "goengine-book"
VERSION = 1
_STONE = {EMPTY: ".", BLACK: "x", WHITE: "o"}
_TO_PLAY = {BLACK: "b", WHITE: "w"}


class BookError(ValueError):
    """A book file that cannot be read: what is wrong and where."""


@dataclass(frozen=True)
class BookEntry:
    move: int                                   # Loc on the canonical board
    visits: int                                 # the search that chose it
    winrate: float                              # its win rate for the side to move
    candidates: tuple[tuple[int, float], ...]   # (Loc, share of the root's visits), best first


def canonical(colors: np.ndarray, to_play: int) -> tuple[str, int]:
    """(key, k): the position `colors` (int8[N, N], EMPTY/BLACK/WHITE) with `to_play` to move as
    its canonical key, and the symmetry k that maps the game's board onto the canonical one."""
    best, best_k = None, 0
    for k in range(symmetry.N_SYMMETRIES):
        text = "".join(_STONE[int(c)] for c in symmetry.apply(colors, k).reshape(-1))
        if best is None or text < best:
            best, best_k = text, k
    return best + _TO_PLAY[to_play], best_k


def map_move(lc: int, n: int, k: int) -> int:
    """The point `lc` of a board after symmetry k of the board (a pass stays a pass)."""
    if lc < 0:
        return lc
    r, c = loc_to_rc(lc, n)
    # permutations(n)[k] gathers the transformed board from the original: find where it takes r, c
    moved = int(np.flatnonzero(symmetry.permutations(n)[k] == r * n + c)[0])
    return loc(moved // n, moved % n, n)


@dataclass
class Book:
    size: int
    komi: float
    scoring: str = "area"
    made_by: dict = field(default_factory=dict)
    positions: dict[str, BookEntry] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.positions)

    def fits(self, game) -> bool:
        """Whether the book was made for `game`'s board, komi and scoring."""
        return (game.size == self.size and game.komi == self.komi
                and game.rules.scoring == self.scoring)

    def entry(self, game, color: int) -> tuple[BookEntry, int] | None:
        """(entry, k) of the position with `color` to move, k the symmetry to the canonical
        board; None when the book does not hold it or was made for another game."""
        if not self.fits(game):
            return None
        key, k = canonical(game.board_colors(), color)
        found = self.positions.get(key)
        return None if found is None else (found, k)

    def lookup(self, game, color: int) -> int | None:
        """The book's move for `color` in `game` (a Loc on the game's board), or None: not in
        the book, made for another game, or not legal here (a ko the key does not see)."""
        hit = self._hit(game, color)
        return None if hit is None else hit[0]

    def _hit(self, game, color: int) -> tuple[int, BookEntry] | None:
        """(the book's move on the game's board, its entry), as `lookup` says."""
        found = self.entry(game, color)
        if found is None:
            return None
        entry, k = found
        move = map_move(entry.move, self.size, symmetry.INVERSE[k])
        return (move, entry) if game.is_legal(color, move) else None

    def result(self, game, color: int) -> SearchResult | None:
        """The book's answer as a search would report it, for analysis lines and the chat: its
        move, with its share of the visits of the search that chose it and that search's win
        rate (the other candidates' win rates are not kept, so they are not shown); None where
        `lookup` has no move."""
        hit = self._hit(game, color)
        if hit is None:
            return None
        move, entry = hit
        share = entry.candidates[0][1] if entry.candidates else 1.0
        visits = max(1, int(round(share * entry.visits)))
        stat = MoveStat(move, visits, entry.winrate, share, entry.winrate, pv=[move])
        return SearchResult(color, [stat], entry.visits, 0, 0.0)

    def add(self, game, color: int, move: int, visits: int, winrate: float,
            candidates: list[tuple[int, float]]) -> str:
        """Record the search's `move` (a Loc of the game's board) for `color` in `game`; returns
        the position's key."""
        key, k = canonical(game.board_colors(), color)
        self.positions[key] = BookEntry(
            map_move(move, self.size, k), int(visits), float(winrate),
            tuple((map_move(m, self.size, k), float(s)) for m, s in candidates))
        return key

    # ---- the file ------------------------------------------------------------------------------
    def to_json(self) -> dict:
        n = self.size

        def vertex(lc):
            return format_gtp(lc, n)
        return {"format": FORMAT, "version": VERSION, "size": n, "komi": self.komi,
                "scoring": self.scoring, "made_by": self.made_by,
                "positions": {key: {"move": vertex(e.move), "visits": e.visits,
                                    "winrate": round(e.winrate, 4),
                                    "candidates": [[vertex(m), round(s, 4)]
                                                   for m, s in e.candidates]}
                              for key, e in sorted(self.positions.items())}}

    def save(self, path: str) -> None:
        """Write the book atomically (a temporary file renamed over `path`)."""
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(self.to_json(), f, indent=1)
            f.write("\n")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str) -> "Book":
        try:
            with open(path) as f:
                data = json.load(f)
        except OSError as e:
            raise BookError(f"{path}: cannot read the book: {e.strerror or e}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise BookError(f"{path}: not a JSON book file: {e}") from None
        return cls.from_json(data, path)

    @classmethod
    def from_json(cls, data, where: str = "book") -> "Book":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BookError(f"{where}: not a goengine book (no \"format\": \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise BookError(f"{where}: book version {data.get('version')!r}, this engine reads "
                            f"{VERSION}")
        n, komi, scoring = data.get("size"), data.get("komi"), data.get("scoring", "area")
        if not isinstance(n, int) or not 2 <= n <= 25:
            raise BookError(f"{where}: size {n!r} is not a board size")
        if not isinstance(komi, (int, float)) or not math.isfinite(komi):
            raise BookError(f"{where}: komi {komi!r} is not a number")
        if scoring not in ("area", "territory"):
            raise BookError(f"{where}: scoring {scoring!r} is not area or territory")
        positions = data.get("positions")
        if not isinstance(positions, dict):
            raise BookError(f"{where}: no \"positions\" object")
        book = cls(n, float(komi), scoring, dict(data.get("made_by") or {}))
        for key, e in positions.items():
            book.positions[key] = _entry(key, e, n, f"{where}: position {key!r}")
        return book


def _entry(key, e, n: int, where: str) -> BookEntry:
    if (not isinstance(key, str) or len(key) != n * n + 1
            or set(key[:-1]) - set(".xo") or key[-1] not in "bw"):
        raise BookError(f"{where}: the key is not {n * n} of '.xo' and 'b' or 'w'")
    if not isinstance(e, dict):
        raise BookError(f"{where}: not an object")
    try:
        move = parse_gtp(str(e["move"]), n)
        cands = tuple((parse_gtp(str(m), n), float(s)) for m, s in e.get("candidates", []))
        visits, winrate = int(e.get("visits", 0)), float(e.get("winrate", 0.5))
    except KeyError:
        raise BookError(f"{where}: no \"move\"") from None
    except (CoordError, TypeError, ValueError) as err:
        raise BookError(f"{where}: {err}") from None
    r, c = loc_to_rc(move, n) if move >= 0 else (0, 0)
    if move >= 0 and key[r * n + c] != ".":
        raise BookError(f"{where}: the move {e['move']} is on a stone")
    return BookEntry(move, visits, winrate, cands)
