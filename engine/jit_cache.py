"""Where numba keeps the compiled kernels, for an install that cannot write beside its sources.

numba caches each `cache=True` kernel in the `__pycache__` beside its module, else in the user's
cache directory (`$XDG_CACHE_HOME/numba` or `~/.cache/numba`); where neither can be written, it
refuses to load the module at all ("cannot cache function ...: no locator available"). That is the
case of a system-wide install run by a service account without a home (a gtp2ogs bot under
systemd, a GUI started as another user). Then the kernels go to a directory of this user's own
under the temp dir, so the engine starts (and compiles once per boot, not once per start).
`goengine/__init__.py` calls `ensure_cache_dir` before any module that compiles is imported.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]       # the installed goengine folder
ENV = "NUMBA_CACHE_DIR"


def ensure_cache_dir() -> str | None:
    """Point numba at a private temp directory where it could cache nowhere else; returns that
    directory, or None where numba's own places serve (or the user chose one with NUMBA_CACHE_DIR)."""
    if os.environ.get(ENV) or _in_tree_writable() or _user_cache_writable():
        return None
    path = _private_temp_dir()
    os.environ[ENV] = path
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:                # numba imported already: it read the env then
        numba_config.CACHE_DIR = path
    return path


def _in_tree_writable() -> bool:
    """numba's first place: `__pycache__` beside the modules (the engine's, as a sample)."""
    return _usable(PACKAGE / "engine" / "__pycache__")


def _user_cache_writable() -> bool:
    """numba's second place: the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return _usable(Path(base) / "numba")


def _usable(path: Path) -> bool:
    """As numba tries a place: make the directory if missing, then write a file in it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            return True
    except OSError:
        return False


def _private_temp_dir() -> str:
    """`<tmp>/goengine-numba-<uid>`, this user's alone (mode 0700); a fresh one where that name is
    taken by another user or open to others, whose cached code this process must not load."""
    uid = os.getuid() if hasattr(os, "getuid") else None      # None: no owners to check
    path = os.path.join(tempfile.gettempdir(), f"goengine-numba-{uid or 0}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix="goengine-numba-")
    info = os.lstat(path)
    mine = stat.S_ISDIR(info.st_mode) and uid in (None, info.st_uid)
    if not mine or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return tempfile.mkdtemp(prefix="goengine-numba-")
    return path
