"""Every command line answers a bad value with a usage error, never a traceback: each option and
argument of every console script's click commands (engine-train and its subcommands, engine-gtp,
engine-match), found by introspection, is given values its type refuses (not a number, below or
above its range, not a choice, a missing file, a folder that is no run, an unreadable rank or
list), and click must stop with its `Error: Invalid value` line and exit code 2 before the command
starts. CliRunner runs them in this process; a few real runs of the console scripts prove the
scripts do the same (one engine-train run: it imports torch, seconds each)."""
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

pytest.importorskip("torch")        # engine-train's subcommands need the `train` extra

from goengine.gtp.main import cli as gtp_cli  # noqa: E402
from goengine.match.cli import main as match_cli  # noqa: E402
from goengine.training.cli import cli as train_cli, register_commands  # noqa: E402
from goengine.training.data.params import (FloatRangePair, IntList, Rank,  # noqa: E402
                                           RunDirectory)
from goengine.training.nets.loop import Device  # noqa: E402
from goengine.training.rollout.cli import MinCount  # noqa: E402

GAMES = Path(__file__).parents[1] / "data" / "training"
MISSING = "no-such-file-or-folder"


def _commands():
    register_commands()
    commands = [(f"engine-train {name}", command) for name, command in train_cli.commands.items()]
    return sorted(commands) + [("engine-gtp", gtp_cli), ("engine-match", match_cli)]


def _outside(bound, open_: bool, step: int) -> str:
    """A number just outside a range's `bound` (the bound itself where it is excluded)."""
    return str(bound if open_ else bound + step)


def bad_values(kind: click.ParamType) -> list[str]:
    """Values that `kind` must refuse; none for a type that takes any text."""
    if isinstance(kind, (click.IntRange, click.FloatRange)):
        values = ["abc"]
        if kind.min is not None:
            values.append(_outside(kind.min, kind.min_open, -1))
        if kind.max is not None:
            values.append(_outside(kind.max, kind.max_open, 1))
        return values
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        return ["abc"]
    if isinstance(kind, click.Choice):
        return ["no-such-choice"]
    if isinstance(kind, RunDirectory):
        return [MISSING, "."]                   # the test's folder: empty, no run in it
    if isinstance(kind, click.Path):
        return [MISSING] if kind.exists else []
    if isinstance(kind, Rank):
        return ["0", "abc"]
    if isinstance(kind, IntList):
        return ["x", str(kind.low - 1)] + ([] if kind.empty else [""])
    if isinstance(kind, FloatRangePair):
        return ["1", "2,1", "a,b"]
    if isinstance(kind, MinCount):
        return ["bogus=1", "3x3=-1"]
    if isinstance(kind, Device):
        return ["gpu0"]
    assert isinstance(kind, (click.types.StringParamType, click.types.BoolParamType)), \
        f"no bad values for the type {kind!r}: add them here"
    return []


def _cases():
    for script, command in _commands():
        for param in command.params:
            if isinstance(param, click.Option) and param.is_flag:
                continue
            for value in bad_values(param.type):
                args = [param.opts[0], value] if isinstance(param, click.Option) else [value]
                yield pytest.param(command, args, id=f"{script} {' '.join(args)}")


@pytest.mark.parametrize("command, args", list(_cases()))
def test_a_bad_value_is_a_usage_error(command, args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)              # MISSING is missing here
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Error: Invalid value" in result.output and "Traceback" not in result.output


def test_every_command_has_options_to_check():
    checked = {id(command) for command, _ in (case.values for case in _cases())}
    assert checked == {id(command) for _, command in _commands()}


@pytest.mark.parametrize("script, args", [
    ("engine-train", ["sl", "--sgf", str(GAMES), "--out", "run", "--min-rank", "0"]),
    ("engine-gtp", ["--size", "0"]),
    ("engine-match", ["--a", "true", "--b", "true", "--games", "0"]),
], ids=["sl min-rank 0", "gtp size 0", "match games 0"])
def test_the_console_scripts_answer_with_a_usage_error(script, args, tmp_path):
    exe = shutil.which(script)
    if exe is None:
        pytest.skip(f"{script} is not installed")
    p = subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 2, p.stderr
    assert "Error: Invalid value" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "run").exists()       # stopped before the command started
