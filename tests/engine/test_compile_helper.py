"""The compile helper (engine.compile_helper) as real processes: it fills numba's on-disk cache for
the engine, it never outlives its parent, and an engine whose helper dies still plays (it compiles
what the helper did not).

Each test gives the helper an empty cache (NUMBA_CACHE_DIR in tmp_path), so that it has real work
to do while the test watches it.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from goengine.engine.compile_helper import CompileHelper

COLD = 600        # seconds: compiling everything on a busy 2-core machine


def _gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _helper_pid(eng, seconds: float = 60) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for line in list(eng.stderr_lines):
            m = re.search(r"compile helper pid (\d+)", line)
            if m:
                return int(m.group(1))
        time.sleep(0.05)
    raise AssertionError("no compile helper in the log:\n" + "\n".join(eng.stderr_lines))


def test_unknown_groups_are_refused():
    with pytest.raises(ValueError, match="unknown kernel groups"):
        CompileHelper(["everything"], sizes=(9,))


def test_a_dead_helper_is_reported_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    helper = CompileHelper(["rollouts", "all"], sizes=(9,))
    helper.proc.kill()
    t0 = time.monotonic()
    assert helper.wait("rollouts", timeout=30) is False
    assert helper.wait("all", timeout=1) is False
    assert time.monotonic() - t0 < 30


def test_the_helper_exits_with_its_parent(tmp_path, repo_root):
    """The parent killed (no chance to clean up): the helper sees its stdin close and exits, in
    the middle of compiling."""
    script = ("from goengine.engine.compile_helper import CompileHelper\n"
              "h = CompileHelper(['all'], sizes=(9,))\n"
              "print(h.proc.pid, flush=True)\n"
              "import time; time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=repo_root,
                              env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    try:
        pid = int(parent.stdout.readline())
        time.sleep(2)                              # importing the engine, then compiling
        assert not _gone(pid, 0.1)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert _gone(pid, 20), "the compile helper outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.stdout.close()


@pytest.mark.slow
def test_the_first_move_on_an_empty_cache_then_a_warm_start(tmp_path, gtp_engine):
    """19x19, --search auto: the AlphaGo search, whose rollouts the helper compiles into the
    cache while the engine compiles the features and the tree; then a whole game's commands. A
    second start on that cache loads the rules kernels from it and starts no helper."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    with gtp_engine("--playouts", "16", quiet=False, env=env) as eng:
        assert eng.ask("name", timeout=5) == ("=", "goengine")
        eng.ok("boardsize 19", timeout=COLD)
        eng.ok("clear_board", timeout=COLD)
        assert re.fullmatch(r"[A-HJ-T]\d{1,2}|pass", eng.ok("genmove b", timeout=COLD), re.I)
        eng.ok("play w pass")
        eng.ok("genmove b", timeout=COLD)
        assert eng.ok("final_score", timeout=COLD)
        log = "\n".join(eng.stderr_lines)
        assert "compile helper pid" in log and "exited" not in log
    cached = [p.name for p in tmp_path.rglob("*.nbi")]
    assert any(name.startswith("alphago.rollouts-") for name in cached), cached
    assert any(name.startswith("policy._playout_impl-") for name in cached), cached
    with gtp_engine("--playouts", "16", quiet=False, env=env) as eng:
        eng.ok("boardsize 19", timeout=COLD)
        eng.ok("genmove b", timeout=COLD)
        log = "\n".join(eng.stderr_lines)
        assert "compile helper pid" not in log, log


@pytest.mark.slow
def test_the_engine_plays_on_when_its_helper_dies(tmp_path, gtp_engine):
    with gtp_engine("--size", "9", "--playouts", "16", quiet=False,
                env={"NUMBA_CACHE_DIR": str(tmp_path)}) as eng:
        os.kill(_helper_pid(eng), signal.SIGKILL)
        eng.ok("boardsize 9", timeout=COLD)
        eng.ok("clear_board", timeout=COLD)
        eng.ok("genmove b", timeout=COLD)
        eng.ok("play w pass")
        eng.ok("genmove b", timeout=COLD)
        assert eng.ok("final_score", timeout=COLD)
        eng.ok("final_status_list dead", timeout=COLD)
        assert any("compile helper exited" in line for line in eng.stderr_lines)
