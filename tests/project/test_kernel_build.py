"""The numba kernels a package build compiles (build_hooks/kernels.py) load in the installed copy:
numba keys its in-tree cache by the module's content, so cache files compiled beside one copy of
the modules serve another copy at another path with other file times, as pip's install makes."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import goengine

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = Path(goengine.__file__).resolve().parent

# a few rules kernels, compiled (or loaded) by playing two moves; prints hits and misses
PLAY = ("from goengine.engine.board import play; from goengine.engine.game import Game; "
        "g = Game(9); g.play(g.to_play, g.legal_moves()[0]); g.play(g.to_play, g.legal_moves()[0]); "
        "print(sum(play.stats.cache_hits.values()), sum(play.stats.cache_misses.values()))")


def _run(code: str, site: Path, home: Path) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(site), HOME=str(home))
    out = subprocess.run([sys.executable, "-c", code], cwd=home, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    hits, misses = out.stdout.split()[-2:]
    return int(hits), int(misses)


def _package_copy(dest: Path) -> Path:
    """goengine's engine layer alone (what the rules kernels import), without any cache files."""
    pkg = dest / "goengine"
    pkg.mkdir(parents=True)
    shutil.copy(ROOT / "__init__.py", pkg / "__init__.py")
    shutil.copytree(ROOT / "engine", pkg / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_kernels_compiled_beside_one_copy_load_in_another(tmp_path):
    built = _package_copy(tmp_path / "build")
    (tmp_path / "home").mkdir()
    hits, misses = _run(PLAY, built, tmp_path / "home")
    assert misses >= 1 and hits == 0                      # compiled beside the "built" modules
    assert list((built / "goengine" / "engine" / "__pycache__").glob("board.play-*.nbi"))
    installed = tmp_path / "site"
    shutil.copytree(built, installed, copy_function=shutil.copy)   # new paths and file times
    hits, misses = _run(PLAY, installed, tmp_path / "home")
    assert hits >= 1 and misses == 0


@pytest.mark.skipif(INSTALLED == ROOT, reason="an editable install: its kernels compile on first "
                    "use (only a built package carries them)")
def test_the_installed_package_carries_its_kernels(tmp_path):
    """`pip install .` (CI's install) compiled the kernels into the package: a user with no numba
    cache of their own loads them."""
    assert list((INSTALLED / "engine" / "__pycache__").glob("*.nbi"))
    hits, misses = _run(PLAY, INSTALLED.parent, tmp_path)
    assert hits >= 1 and misses == 0
