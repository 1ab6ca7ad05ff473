"""loadsgf / printsgf on top of sgf_tools (GameRecord <-> engine.game.Game); the handlers reach
it through the session's loader (it imports the rules core and sgfmill).

`load` builds a new Game and returns it; the session's game is replaced only when everything
worked, so a missing, empty, binary, truncated or illegal file leaves the position as it was.
"""
from __future__ import annotations

import os

from engine.coords import PASS, loc, loc_to_rc
from engine.game import IllegalMove
from engine.replay import ReplayError, initial_game
from engine.rules import NAMED_RULES
from gtp.protocol import BLACK, WHITE, GtpError, quote
from gtp.session import Session
from sgf_tools import GameRecord, SgfError, read_sgf_file, write_sgf

_COLOUR = {"b": BLACK, "w": WHITE}
_LETTER = {BLACK: "b", WHITE: "w"}


def load(s: Session, path: str, until: int | None):
    """(Game, Rules) of the file's main line, stopped before move number `until` (1 = the first)."""
    try:
        record = read_sgf_file(os.path.expanduser(path), allow_empty=True)
    except OSError as exc:
        raise GtpError(f"cannot read {quote(path)}: {exc.strerror or exc}") from None
    except SgfError as exc:
        detail = f" ({exc.detail})" if exc.detail else ""
        raise GtpError(f"cannot load {quote(path)}: {exc.reason}{detail}") from None
    n = record.size
    rules = s.rules if record.komi is None else s.rules.with_komi(record.komi)
    try:
        game = initial_game(record, rules, default_komi=s.rules.komi)
    except ReplayError as exc:
        raise GtpError(f"cannot load: {exc}") from None
    moves = record.moves if until is None else record.moves[:until - 1]
    for i, (colour, point) in enumerate(moves, start=1):
        lc = PASS if point is None else loc(point[0], point[1], n)
        try:
            game.play(_COLOUR[colour], lc)
        except IllegalMove as exc:
            raise GtpError(f"cannot load: move {i} is illegal ({exc.reason})") from None
    return game, rules


def dump(s: Session) -> bytes:
    g = s.game
    n = g.size

    def rc(lc: int):
        return None if lc == PASS else loc_to_rc(lc, n)

    rules = next((name for name, fields in NAMED_RULES.items()
                  if all(getattr(g.rules, f) == v for f, v in fields.items())), None)
    record = GameRecord(
        size=n, komi=g.komi, handicap=len(g.handicap),
        setup_black=[rc(lc) for lc in g.handicap],
        moves=[(_LETTER[c], rc(lc)) for c, lc in g.history],
        rules=rules,
    )
    return write_sgf(record, application="goengine")
