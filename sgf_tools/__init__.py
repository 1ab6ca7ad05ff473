"""Game records in and out: SGF reading (tolerant, main line), archives, filters, writing.

A leaf package: it depends on sgfmill only and imports nothing else of goengine.
Coordinates are ``(row, col)`` with row 0 the TOP row (SGF ``aa`` = ``(0, 0)``); a pass is
``None``; colours are ``'b'`` / ``'w'``.
"""

from .record import (GameRecord, Move, Point, is_draw_result, parse_margin, parse_rank,
                     parse_winner)
from .reader import (MAX_SIZE, REASONS, SgfError, parse_komi, read_sgf, read_sgf_collection,
                     read_sgf_file)
from .archives import ReadStats, is_archive, iter_games, iter_sgf_bytes
from .filters import (Deduplicator, Filter, FilterConfig, FilterStats, KGS_MIN_RANK,
                      apply_filters, build_filters)
from .writer import format_komi, sgf_rules, write_sgf

__all__ = [
    "GameRecord", "Move", "Point", "parse_rank", "parse_winner", "parse_margin", "is_draw_result",
    "SgfError", "REASONS", "MAX_SIZE", "read_sgf", "read_sgf_file", "read_sgf_collection",
    "parse_komi",
    "ReadStats", "iter_games", "iter_sgf_bytes", "is_archive",
    "FilterConfig", "FilterStats", "Filter", "Deduplicator", "build_filters", "apply_filters",
    "KGS_MIN_RANK",
    "write_sgf", "format_komi", "sgf_rules",
]
