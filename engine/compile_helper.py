"""A second process that compiles kernel groups into numba's on-disk cache while this one compiles
others: numba compiles in the thread that first calls a kernel, holding the GIL, so one process
uses one core however many threads it has.

    helper = CompileHelper(["rollouts", "all"], sizes=(9, 19))   # starts `python -m` this module
    ...                                  # compile what the helper does not, in this process
    helper.wait("rollouts")              # True once the group is in the cache; False if it died
    step()                               # the group's kernels now load from the cache (or compile
                                         # here, where the helper failed)

The helper runs engine.warmup's GROUPS in the order given and prints `compiled GROUP` after each;
the cache it fills is this process's (it inherits NUMBA_CACHE_DIR, engine/jit_cache.py). It exits
when its stdin closes, so it never outlives the engine. A helper that dies or fails costs only
time: `wait` answers False and the caller's own warm-up step compiles what was missing. With a
warm cache (`compiled_here` is False for the first kernels) the engine starts none.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from typing import Callable, Iterable

from goengine.engine.board import play as board_play
from goengine.engine.warmup import GROUPS, STEPS, warm_up

log = logging.getLogger(__name__)

DONE = "compiled "      # the line the helper prints after each group


class CompileHelper:
    """The helper process and what it has reported."""

    def __init__(self, groups: Iterable[str], sizes: Iterable[int]):
        self.groups = list(groups)
        unknown = set(self.groups) - set(GROUPS)
        if unknown:
            raise ValueError(f"unknown kernel groups {sorted(unknown)}; known: {sorted(GROUPS)}")
        self._done = {group: threading.Event() for group in self.groups}
        self._compiled: set[str] = set()
        cmd = [sys.executable, "-m", __name__, "--sizes", ",".join(map(str, sorted(set(sizes)))),
               *self.groups]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        log.info("compile helper pid %d: %s", self.proc.pid, " ".join(self.groups))
        threading.Thread(target=self._read, name="compile-helper", daemon=True).start()

    def _read(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode(errors="replace").strip()
            if line.startswith(DONE) and line[len(DONE):] in self._done:
                self._compiled.add(line[len(DONE):])
                self._done[line[len(DONE):]].set()
        code = self.proc.wait()
        missing = [g for g in self.groups if g not in self._compiled]
        if missing:
            log.warning("compile helper exited (status %s) before %s; compiling here",
                        code, ", ".join(missing))
        for event in self._done.values():      # nobody waits for a group that will never come
            event.set()

    def wait(self, group: str, timeout: float | None = None) -> bool:
        """Block until the helper has compiled `group` (True) or has died without it (False)."""
        self._done[group].wait(timeout)
        return group in self._compiled

    def close(self) -> None:
        """Stop the helper (it exits on its own once its groups are done)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def compiled_here(*kernels) -> bool:
    """Whether this process compiled any of these numba kernels, rather than loading it from the
    on-disk cache: the cache is cold, and a helper would fill it (a warm one needs no helper)."""
    return any(kernel.stats.cache_misses for kernel in kernels)


def compile_all(sizes: Iterable[int] = (9, 19),
                progress: Callable[[str], None] | None = None) -> float:
    """Every kernel into numba's cache, on two cores where it is cold (the package build,
    build_hooks/kernels.py, and `engine-gtp --warmup`): a helper compiles the rollouts and the
    heuristic search while this process compiles the features and the network searches; then
    `warm_up` loads them all, compiling only what a failed helper left. `progress` gets warm_up's
    lines. Seconds taken."""
    sizes = tuple(sorted(set(sizes)))
    start = time.monotonic()
    dict(STEPS)["rules"](sizes[0])             # compiled here, or loaded from the cache
    if compiled_here(board_play):
        helper = CompileHelper(["rollouts", "heuristic"], sizes)
        try:
            GROUPS["network"](sizes)
            helper.wait("heuristic")
        finally:
            helper.close()
    warm_up(sizes, progress)
    return time.monotonic() - start


def _exit_with_parent() -> None:
    """The parent holds our stdin open while it lives: at EOF, exit at once (mid-compile)."""
    sys.stdin.buffer.read()
    sys.stdout.flush()
    # os._exit, not sys.exit: the main thread may be inside a compile that holds the GIL for long
    os._exit(0)


def main(argv: list[str]) -> None:
    sizes = tuple(int(n) for n in argv[1].split(","))
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    for group in argv[2:]:
        GROUPS[group](sizes)
        print(DONE + group, flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--sizes":
        sys.exit("usage: python -m goengine.engine.compile_helper --sizes 9,19 GROUP...")
    main(sys.argv[1:])
