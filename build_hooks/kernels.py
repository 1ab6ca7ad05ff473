"""The package build compiles goengine's numba kernels into the wheel, so that a fresh install
plays its first move at once instead of compiling for about 40 s (docs/DESIGN.md, start-up).

numba caches a kernel in the `__pycache__` beside its module, keyed by the module's content (not
its path or file times), the numba version and the CPU. Compiled beside the built modules
(build/lib), the cache files travel in the wheel and are found again beside the installed modules:
`pip install .` on this machine gives an engine that loads every kernel instead of compiling it.
A wheel built elsewhere (another CPU or numba version) simply misses the cache and compiles as
before. A failed compile only warns: the wheel is then the plain package.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from setuptools.command.build_py import build_py

COMPILE = "from goengine.engine.compile_helper import compile_all; compile_all((9, 19))"


class BuildPy(build_py):
    """build_py, then every kernel compiled beside the built modules (not for editable installs,
    whose modules are the source tree's: those compile on first use as before)."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode and os.environ.get("GOENGINE_BUILD_KERNELS", "1") != "0":
            compile_kernels(Path(self.build_lib))


def compile_kernels(build_lib: Path) -> bool:
    """Run compile_all on the built package in a child process (its imports stay out of the
    build's); True when it succeeded."""
    for stale in (*build_lib.rglob("*.nbi"), *build_lib.rglob("*.nbc")):   # an earlier build's
        stale.unlink()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}   # beside the modules
    env["PYTHONPATH"] = str(build_lib.resolve())
    start = time.monotonic()
    print("goengine: compiling the numba kernels into the package (about a minute on 2 cores)",
          flush=True)
    done = subprocess.run([sys.executable, "-c", COMPILE], cwd=build_lib, env=env)
    if done.returncode != 0:
        print(f"goengine: compiling the kernels failed (status {done.returncode}); they will "
              "compile on first use instead", file=sys.stderr, flush=True)
        return False
    print(f"goengine: kernels compiled in {time.monotonic() - start:.0f} s", flush=True)
    return True
