"""Files written whole or not at all: to a temporary file beside the target, then renamed over it,
so that a reader (a resumed run, a plot viewer, another worker) never sees half a file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, write) -> None:
    """Call `write(tmp)` on a temporary file in `path`'s folder, then rename it to `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
