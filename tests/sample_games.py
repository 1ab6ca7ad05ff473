"""Where the tests find real game records: the fixtures in tests/data, and the archives of
../shared/data (the data folder beside the project) for extra coverage when it is there."""
from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GAMES = DATA / "games"                       # KGS fixtures (see its SOURCES.md)
TYGEM_GAMES = GAMES / "tygem9d-2015-05"      # five games of the Tygem archive below
KGS_DIRS = (GAMES, DATA / "kgs")

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
KGS_SAMPLES = SHARED / "kgs-samples"
TYGEM = SHARED / "tygem9d" / "tygem9d-2015-05.tar.bz2"
AI = SHARED / "ai" / "ai-games.tar.bz2"

# A real 9x9 game that White loses on the count although Tromp-Taylor, dead stones left on the
# board, says White wins: the engine must play on (tests/engine/test_player_pass.py) and the
# warm-up game plays it (tests/gtp/test_warmup.py).
OPEN_LOSS_SGF = (b"(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese];B[ee];W[dc];B[cd];W[cc];B[dd];W[ec];B[gf]"
                 b";W[gd];B[df];W[hf];B[he];W[ge];B[hg];W[ff];B[gg];W[hd];B[fe];W[ie];B[bc]"
                 b";W[bb];B[bd];W[ab];B[ig];W[if];B[fd];W[fc];B[ac];W[ca];B[ed];W[gb];B[])")


def kgs_game(name: str) -> Path:
    """A KGS game record by file name: from tests/data, else from ../shared/data/kgs-samples;
    the test is skipped when neither has it."""
    for folder in KGS_DIRS + (KGS_SAMPLES,):
        if (folder / name).is_file():
            return folder / name
    pytest.skip(f"{name} is not in tests/data and there is no ../shared/data")


def kgs_fixtures() -> list[Path]:
    """The KGS game records shipped in tests/data."""
    return sorted((p for d in KGS_DIRS for p in d.glob("*.sgf")), key=lambda p: p.name)


def kgs_files() -> list[Path]:
    """Every KGS sample: the 19 of ../shared/data when it is there, else the fixtures."""
    shared = sorted(KGS_SAMPLES.glob("*.sgf"))
    return shared or kgs_fixtures()


def present(path: Path) -> Path:
    """`path`, or a skipped test when it is absent (the archives of ../shared/data)."""
    if not path.exists():
        pytest.skip(f"{path.name}: no ../shared/data beside the project")
    return path
