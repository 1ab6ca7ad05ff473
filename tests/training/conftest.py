"""Fixtures of the training tests."""
from __future__ import annotations

import subprocess
import traceback

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from goengine.training.cli import cli, register_commands  # noqa: E402


@pytest.fixture(scope="session")
def engine_train():
    """`engine_train(*args, ok=True)`: `engine-train ARGS` run in this test process by click's
    CliRunner, as a subprocess.CompletedProcess (returncode, stdout, stderr; an exception other
    than click's exit is in stderr as its traceback, as a process would print it). With `ok` it
    asserts exit status 0. A test process imports torch and the stages once, where each
    `python -m goengine.training.cli` spends about 3 s on them; what only a separate process
    shows (a kill and a resume, Ray and torchrun processes, the console script itself) the
    tests still run as one."""
    register_commands()

    def run(*args, ok: bool = True) -> subprocess.CompletedProcess:
        argv = [str(a) for a in args]
        result = CliRunner().invoke(cli, argv, prog_name="engine-train")
        stderr = result.stderr
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            stderr += "".join(traceback.format_exception(result.exception))
        done = subprocess.CompletedProcess(["engine-train", *argv], result.exit_code,
                                           result.stdout, stderr)
        if ok:
            assert done.returncode == 0, done.stderr[-3000:]
        return done

    return run
