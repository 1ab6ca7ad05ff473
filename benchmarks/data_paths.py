"""Where the benchmarks find game records by default: ../shared/data, the data folder beside the
project (its Tygem archives). Each benchmark takes the path as an option; without the option and
without that folder it stops with a message naming the option. And where they find GNU Go."""
from __future__ import annotations

import os
import shutil
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


def gnugo_argv(path: str | None) -> list[str] | None:
    """GNU Go's command line: `path`, or gnugo on PATH or in Debian's games folder."""
    exe = path or shutil.which("gnugo") or shutil.which("gnugo", path=os.path.join(os.sep, "usr", "games"))
    return None if exe is None else [exe, "--mode", "gtp"]
