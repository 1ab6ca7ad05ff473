"""loadsgf / printsgf on top of sgf_tools (GameRecord <-> engine.game.Game).

`load` builds a new Game and returns it; the session's game is replaced only when everything
worked, so a missing, empty, binary, truncated or illegal file leaves the position as it was.
The loader imports it and hands `load` and `dump` to the session (it loads the rules core and sgfmill).
"""
from __future__ import annotations

import os

from goengine.engine.game import IllegalMove
from goengine.engine.replay import ReplayError, initial_game, record_fields, record_move
from goengine.engine.rules import NAMED_RULES
from goengine.gtp.protocol import GtpError, quote
from goengine.gtp.session import Session
from goengine.sgf_tools import GameRecord, SgfError, read_sgf_file, sgf_rules, write_sgf


def load(s: Session, path: str, until: int | None):
    """(Game, Rules) of the file's main line, stopped before move number `until` (1 = the first)."""
    try:
        record = read_sgf_file(os.path.expanduser(path), allow_empty=True)
    except OSError as exc:
        raise GtpError(f"cannot read {quote(path)}: {exc.strerror or exc}") from None
    except SgfError as exc:
        detail = f" ({exc.detail})" if exc.detail else ""
        raise GtpError(f"cannot load {quote(path)}: {exc.reason}{detail}") from None
    rules = s.rules if record.komi is None else s.rules.with_komi(record.komi)
    try:
        game = initial_game(record, rules, default_komi=s.rules.komi)
    except ReplayError as exc:
        raise GtpError(f"cannot load: {exc}") from None
    moves = record.moves if until is None else record.moves[:until - 1]
    for i, move in enumerate(moves, start=1):
        try:
            game.play(*record_move(move, record.size))
        except IllegalMove as exc:
            raise GtpError(f"cannot load: move {i} is illegal ({exc.reason})") from None
    return game, rules


def dump(s: Session) -> bytes:
    g = s.game
    rules = next((name for name, fields in NAMED_RULES.items()
                  if all(getattr(g.rules, f) == v for f, v in fields.items())), None)
    return write_sgf(GameRecord(**record_fields(g), rules=sgf_rules(rules)), application="goengine")
