"""Replaying a game record into a Game: the one conversion used by `loadsgf`, training and
the match referee; and back (`record_fields`), for `printsgf` and the referee's SGF files.

A record is anything with the fields of `sgf_tools.GameRecord` (engine does not import sgf_tools):
`size`, `komi` (None = unknown), `setup_black`, `setup_white` ((row, col) lists, row 0 at the
top) and `moves` (('b' | 'w', (row, col) or None for a pass)).
"""
from __future__ import annotations

from typing import Iterator

from goengine.engine import board as B
from goengine.engine.colors import BLACK, COLOUR_LETTERS, WHITE
from goengine.engine.coords import PASS, loc, loc_to_rc
from goengine.engine.game import Game, IllegalMove
from goengine.engine.rules import Rules

COLORS = {letter: colour for colour, letter in COLOUR_LETTERS.items()}   # SGF's B / W


class ReplayError(ValueError):
    """The record cannot be replayed: `reason` says why (for skip counts)."""

    def __init__(self, reason: str, move_number: int | None = None):
        super().__init__(reason if move_number is None else f"{reason} at move {move_number}")
        self.reason = reason
        self.move_number = move_number


def initial_game(record, rules: Rules | None = None, default_komi: float = 7.5) -> Game:
    """The position before the first move: board size, komi and setup stones."""
    komi = record.komi if record.komi is not None else default_komi
    rules = (rules or Rules()).with_komi(komi)
    game = Game(record.size, rules)
    n = record.size
    black = [loc(r, c, n) for r, c in record.setup_black]
    white = [loc(r, c, n) for r, c in record.setup_white]
    if black and not white and len(black) >= 2:
        try:
            game.set_handicap(black)
        except ValueError as e:
            raise ReplayError(f"bad setup: {e}") from e
    elif black or white:
        for color, stones in ((BLACK, black), (WHITE, white)):
            for lc in stones:
                if game.color_at(lc) != B.EMPTY:
                    raise ReplayError("bad setup: stone on an occupied point")
                B.place_setup_stone(game.st, game.meta, lc, color)
        # handicap-style setup (black stones) means white moves first
        game.to_play = WHITE if black and not white else BLACK
        game._seen = [game._key()]
        game._seen_set = {game._seen[0]}
        game.board_history = [game.st[B.F_COLOR].copy()]
    if record.moves:
        game.to_play = COLORS[record.moves[0][0]]
    return game


def record_move(move, n: int) -> tuple[int, int]:
    color, point = move
    return COLORS[color], (PASS if point is None else loc(point[0], point[1], n))


def replay(record, rules: Rules | None = None, upto: int | None = None) -> Game:
    """The game after `upto` moves (all by default). Raises ReplayError on an illegal move."""
    game = initial_game(record, rules)
    moves = record.moves if upto is None else record.moves[:upto]
    for i, mv in enumerate(moves):
        color, lc = record_move(mv, record.size)
        try:
            game.play(color, lc)
        except IllegalMove as e:
            raise ReplayError(f"illegal move ({e.reason})", i + 1) from e
    return game


def positions(record, rules: Rules | None = None) -> Iterator[tuple[Game, int, int]]:
    """Yield (game before the move, colour, Loc) for every move; the game object is reused and
    advanced after each yield, so copy it if you keep it. Raises ReplayError on an illegal move."""
    game = initial_game(record, rules)
    for i, mv in enumerate(record.moves):
        color, lc = record_move(mv, record.size)
        if game.to_play != color:
            game.to_play = color  # consecutive moves of one colour (free handicap written as moves)
        yield game, color, lc
        try:
            game.play(color, lc)
        except IllegalMove as e:
            raise ReplayError(f"illegal move ({e.reason})", i + 1) from e


def record_fields(game: Game) -> dict:
    """The record fields of a game (the inverse of `replay`): `size`, `komi`, `handicap`,
    `setup_black` (the handicap stones) and `moves`, as `sgf_tools.GameRecord(**fields)` takes them."""
    n = game.size

    def point(lc: int) -> tuple[int, int] | None:
        return None if lc == PASS else loc_to_rc(lc, n)

    return {"size": n, "komi": game.komi, "handicap": len(game.handicap),
            "setup_black": [point(lc) for lc in game.handicap],
            "moves": [(COLOUR_LETTERS[color], point(lc)) for color, lc in game.history]}
