"""SGF output of a refereed game, through `sgf_tools` (GameRecord + write_sgf)."""
from __future__ import annotations

import datetime as _dt
import os
from typing import Sequence

from engine.board import BLACK
from engine.coords import PASS, loc_to_rc

_RULES_SGF = {"chinese": "Chinese", "tromp-taylor": "Tromp-Taylor", "aga": "AGA",
              "new_zealand": "NZ", "japanese": "Japanese", "korean": "Korean"}


def build_record(*, size: int, komi: float, handicap: Sequence[int],
                 moves: Sequence[tuple[int, int]], black_name: str, white_name: str,
                 result: str, comment: str = "", rules: str | None = None,
                 game_name: str | None = None, date: str | None = None):
    """A `sgf_tools.record.GameRecord` from Locs (engine.coords) and engine colours."""
    from sgf_tools.record import GameRecord

    rec = GameRecord(
        size=size,
        komi=float(komi),
        handicap=len(handicap),
        setup_black=[loc_to_rc(lc, size) for lc in handicap],
        moves=[("b" if color == BLACK else "w", None if lc == PASS else loc_to_rc(lc, size))
               for color, lc in moves],
        result=result,
        black_player=black_name,
        white_player=white_name,
        rules=_RULES_SGF.get((rules or "").lower(), rules),
        date=date or _dt.date.today().isoformat(),
    )
    root = "\n".join(t for t in (game_name, comment) if t)
    if root:
        rec.comments[-1] = root
    return rec


def write_game_sgf(path: str | os.PathLike, **kwargs) -> None:
    """Write one game (see `build_record` for the arguments) to `path`."""
    rec = build_record(**kwargs)
    try:
        from sgf_tools.writer import write_sgf
    except ImportError:          # sgf_tools.writer not there: write the record with sgfmill
        _write_with_sgfmill(rec, path)
        return
    data = write_sgf(rec)
    with open(path, "wb") as f:
        f.write(data)


def _write_with_sgfmill(rec, path) -> None:
    from sgfmill import sgf

    g = sgf.Sgf_game(size=rec.size)
    root = g.get_root()
    root.set("KM", rec.komi)
    if rec.handicap:
        root.set("HA", rec.handicap)
        root.set_setup_stones(rec.setup_black, [])
    for prop, value in (("PB", rec.black_player), ("PW", rec.white_player),
                        ("RE", rec.result), ("RU", rec.rules), ("DT", rec.date),
                        ("C", rec.comments.get(-1))):
        if value:
            root.set(prop, value)
    n = rec.size
    for i, (color, point) in enumerate(rec.moves):
        node = g.extend_main_sequence()
        node.set_move(color, None if point is None else (n - 1 - point[0], point[1]))
        if i in rec.comments:
            node.set("C", rec.comments[i])
    with open(path, "wb") as f:
        f.write(g.serialise())
