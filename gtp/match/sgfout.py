"""SGF output of a refereed game, through `sgf_tools` (GameRecord + write_sgf)."""
from __future__ import annotations

import datetime as _dt
import os
from typing import Sequence

from engine.board import BLACK
from engine.coords import PASS, loc_to_rc
from sgf_tools.record import GameRecord
from sgf_tools.writer import write_sgf

_RULES_SGF = {"chinese": "Chinese", "tromp-taylor": "Tromp-Taylor", "aga": "AGA",
              "new_zealand": "NZ", "japanese": "Japanese", "korean": "Korean"}


def build_record(*, size: int, komi: float, handicap: Sequence[int],
                 moves: Sequence[tuple[int, int]], black_name: str, white_name: str,
                 result: str, comment: str = "", rules: str | None = None,
                 game_name: str | None = None, date: str | None = None):
    """A `sgf_tools.record.GameRecord` from Locs (engine.coords) and engine colours."""
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
    data = write_sgf(build_record(**kwargs))
    with open(path, "wb") as f:
        f.write(data)
