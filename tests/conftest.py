"""Fixtures shared by every test folder (tests/<package>/ mirrors the package it tests): a real
`engine-gtp` subprocess and Sabaki's reading of its analysis, the scripted GTP engine, and the
real game records the tests replay. The plain builders behind them live in the support modules
beside this file (gtp_process, sabaki_analysis, script_engine, sample_games)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gtp_process
import sabaki_analysis
import sample_games
import script_engine


def pytest_sessionstart(session):
    """Under xdist, before the workers start: compile the engine's numba kernels once into numba's
    cache (`engine-gtp --warmup`), where the workers and their engine subprocesses would each
    compile them at the same time on a fresh checkout. With a warm cache this takes seconds."""
    if session.config.pluginmanager.hasplugin("dsession"):
        subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--warmup", "--size", "9"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=900, check=False)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under `--dist loadgroup` the tests that share a module-scoped fixture (a trained net, an
    engine process, a training run) go to one xdist worker, so that the fixture is built once;
    an explicit xdist_group (the Ray tests) stands. On a worker the groups come first, so that
    these long indivisible runs start early and the single tests fill the workers in at the end.
    Runs before xdist reads the groups."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        defs = item._fixtureinfo.name2fixturedefs.values()
        if any(chain[-1].scope == "module" for chain in defs):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)


@pytest.fixture(scope="session")
def repo_root() -> str:
    """The repository's root: the working directory of the engine subprocesses."""
    return str(Path(__file__).resolve().parents[1])


@pytest.fixture(scope="session")
def gtp_engine():
    """`gtp_engine(*args, env=None, quiet=True)`: a real engine-gtp subprocess, a context manager."""
    return gtp_process.Engine


@pytest.fixture(scope="session")
def loaded_engine():
    """`yield from loaded_engine(*args, settings=...)`: the body of a module-scoped fixture that
    holds one 9x9 engine-gtp, its models loaded, for a whole test module."""
    return gtp_process.loaded_engine


@pytest.fixture(scope="session")
def sabaki_parse():
    """`sabaki_parse(line, kata)`: an analysis line as Sabaki reads it."""
    return sabaki_analysis.sabaki_parse


@pytest.fixture(scope="session")
def write_script_engine():
    """`write_script_engine(directory)`: writes the scripted GTP engine, returns its argv prefix."""
    return script_engine.write_script_engine


@pytest.fixture
def script(tmp_path) -> list[str]:
    """The argv prefix of the scripted GTP engine, written into this test's tmp_path."""
    return script_engine.write_script_engine(tmp_path)


@pytest.fixture(scope="session")
def open_loss_sgf() -> bytes:
    """A real 9x9 game lost on the count behind a Tromp-Taylor win (sample_games.OPEN_LOSS_SGF)."""
    return sample_games.OPEN_LOSS_SGF
