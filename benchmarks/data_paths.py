"""Where the benchmarks find game records by default: ../shared/data, the data folder beside the
project (its Tygem archives). Each benchmark takes the path as an option; without the option and
without that folder it stops with a message naming the option."""
from __future__ import annotations

from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def default_data(relative: str) -> str | None:
    """`../shared/data/<relative>` when it exists, else None."""
    path = SHARED_DATA / relative
    return str(path) if path.exists() else None


def missing(option: str, relative: str) -> str:
    """The message for a run with no `option` given and no ../shared/data/<relative>."""
    return (f"no game records: pass {option} PATH (an .sgf file, a folder or an archive of them); "
            f"the default, ../shared/data/{relative} beside the project, is not there")
