"""The engine starts where numba can cache its kernels neither beside the sources nor in the
user's home (a system-wide install run by a service account): engine/jit_cache.py."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from numba.core import config as numba_config

from goengine.engine import jit_cache

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")


@pytest.fixture
def no_cache_dir(monkeypatch):
    """No NUMBA_CACHE_DIR, and whatever ensure_cache_dir sets undone afterwards: the variable
    (monkeypatch.delenv of an absent one records nothing to undo) and numba's config, which would
    otherwise send every later kernel and engine subprocess of this test process to an empty
    cache."""
    monkeypatch.setenv(jit_cache.ENV, "")
    monkeypatch.delenv(jit_cache.ENV)
    monkeypatch.setattr(numba_config, "CACHE_DIR", numba_config.CACHE_DIR)

# Compiles and runs a cache=True kernel of a module directly in engine/ (the rules core's board).
USE_THE_BOARD = """
import os, goengine
from goengine.engine.board import new_board, play
st, meta = new_board(9)
play(st, meta, 23, 1)
print(goengine.__file__)
print(os.environ.get("NUMBA_CACHE_DIR"))
"""


def _copy_package(site: Path) -> Path:
    """goengine's root module and engine/ copied under `site`, with engine/__pycache__ a plain file:
    numba cannot cache beside those sources, whoever runs it (root included)."""
    pkg = site / "goengine"
    pkg.mkdir(parents=True)
    shutil.copy(ROOT / "__init__.py", pkg / "__init__.py")
    shutil.copytree(ROOT / "engine", pkg / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "engine" / "__pycache__").write_text("not a directory")
    return pkg


def _env(tmp_path: Path, site: Path) -> dict:
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(HOME=str(home), PYTHONPATH=str(site), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return env


def test_the_engine_loads_where_numba_could_cache_nowhere(tmp_path):
    site = tmp_path / "site"
    pkg = _copy_package(site)
    env = _env(tmp_path, site)
    p = subprocess.run([sys.executable, "-c", USE_THE_BOARD], capture_output=True, text=True,
                       env=env, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    module, cache = p.stdout.split()
    assert Path(module) == pkg / "__init__.py"          # the copy, not the checkout
    assert Path(cache) == tmp_path / "tmp" / f"goengine-numba-{os.getuid()}"
    assert stat.S_IMODE(Path(cache).stat().st_mode) == 0o700
    assert any(Path(cache).rglob("*.nbi")), "numba cached nothing there"

    # without the fallback, numba refuses the module: the condition is real
    (pkg / "__init__.py").write_text("")
    p = subprocess.run([sys.executable, "-c", USE_THE_BOARD], capture_output=True, text=True,
                       env=env, timeout=600, cwd=tmp_path)
    assert p.returncode != 0 and "no locator available" in p.stderr, p.stderr[-3000:]


def test_numba_places_that_serve_are_left_alone(monkeypatch, tmp_path, no_cache_dir):
    monkeypatch.setattr(jit_cache, "PACKAGE", tmp_path / "pkg")
    assert jit_cache.ensure_cache_dir() is None           # the in-tree __pycache__ is writable
    assert (tmp_path / "pkg" / "engine" / "__pycache__").is_dir()

    (tmp_path / "file").write_text("")
    monkeypatch.setattr(jit_cache, "PACKAGE", tmp_path / "file")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert jit_cache.ensure_cache_dir() is None           # the user's cache directory is
    assert (tmp_path / "cache" / "numba").is_dir()
    assert "NUMBA_CACHE_DIR" not in os.environ

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file" / "cache"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "chosen"))
    assert jit_cache.ensure_cache_dir() is None           # the user's own choice stands
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "chosen")


def test_a_temp_dir_open_to_others_is_not_used(monkeypatch, tmp_path, no_cache_dir):
    """Cached kernels are code this process loads: never from a directory others can write."""
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(jit_cache, "PACKAGE", tmp_path / "file")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file" / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"goengine-numba-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    path = Path(jit_cache.ensure_cache_dir())
    assert path != shared and path.parent == tmp_path
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    assert os.environ["NUMBA_CACHE_DIR"] == str(path)
