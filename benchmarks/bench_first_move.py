"""The first game after installing: seconds from `clear_board` to the first answered `genmove` of a
real `engine-gtp`, three ways in one run:

  * fresh install: the package built as `pip install .` builds it (a wheel whose build compiles
    the numba kernels into it, build_hooks/kernels.py; the build's seconds are printed), installed
    into an empty folder and started with an empty home (no user-wide numba cache);
  * empty cache: the source tree's engine with an empty NUMBA_CACHE_DIR (with it set, numba reads
    and writes kernels there only): what an editable install, or a wheel built on another CPU or
    numba version, meets on its first start;
  * warm: the source tree's engine again on the cache that start filled (every later start), the
    baseline.

    python benchmarks/bench_first_move.py                  # 19x19 (AlphaGo search) and 9x9 (Zero)
    python benchmarks/bench_first_move.py --sizes 9 --repeats 3 --no-install -- --time-per-move 1

The engine runs with its defaults (`--search auto`, the bundled models, 5 s a move without a
clock) plus the options after `--`. Goal: at most 10 s from clear_board to the first answered
genmove on a fresh install of a 2-core machine (5 s of it the move's own thinking time).

Figures: docs/results/speed.md (the first move on a fresh install).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]


class Gtp:
    """engine-gtp on pipes; `ask` returns the answer's first line and the seconds it took."""

    def __init__(self, args: list[str], env: dict[str, str]):
        self.proc = subprocess.Popen([sys.executable, "-m", "goengine.gtp.main", "--quiet", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir(),
                                     env=env)

    def ask(self, command: str) -> str:
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"engine-gtp exited on {command!r}")
            if line.strip() == b"" and lines:
                break
            if line.strip():
                lines.append(line.decode().strip())
        if not lines[0].startswith("="):
            raise RuntimeError(f"{command!r}: {lines[0]}")
        return lines[0]

    def close(self) -> None:
        self.ask("quit")
        self.proc.wait(30)


def cache_env(cache_dir: str) -> dict[str, str]:
    """The source tree's engine with its kernels in `cache_dir`."""
    return {**os.environ, "NUMBA_CACHE_DIR": cache_dir}


def installed_env(site: Path, home: Path) -> dict[str, str]:
    """The engine installed in `site`, for a user whose home has no numba cache."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    return {**env, "PYTHONPATH": str(site), "HOME": str(home)}


def install_wheel(target: Path) -> float:
    """Build the wheel as `pip install .` does (kernels compiled in) and install it into
    `target`/site without dependencies (they are this interpreter's); seconds the build took."""
    start = time.monotonic()
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(target / "wheel"), str(ROOT)],
                   check=True)
    built = time.monotonic() - start
    wheel = next((target / "wheel").glob("goengine-*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target / "site"), str(wheel)],
                   check=True)
    return built


def first_move(size: int, args: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(start to `name` answered, boardsize/clear_board sent to genmove answered, start to
    genmove, the move). A GUI sends them as soon as `name` answers, as here."""
    start = time.monotonic()
    gtp = Gtp(["--size", str(size), *args], env)
    try:
        gtp.ask("name")
        named = cleared = time.monotonic()
        gtp.ask(f"boardsize {size}")     # answered once the rules kernels are loaded
        gtp.ask("clear_board")
        move = gtp.ask("genmove b")
        done = time.monotonic()
    finally:
        gtp.close()
    return named - start, done - cleared, done - start, move


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def spread(values: list[float]) -> str:
    return f"{min(values):5.1f}-{max(values):5.1f} s (median {median(values):.1f})"


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--sizes", default="19,9", show_default=True, help="board sizes, comma-separated")
@click.option("--repeats", default=1, show_default=True, type=click.IntRange(1),
              help="cold starts (each with a fresh cache) and warm starts per size")
@click.option("--install/--no-install", default=True, show_default=True,
              help="also time a fresh install of the wheel `pip install .` builds")
@click.argument("engine_args", nargs=-1, type=click.UNPROCESSED)
def main(sizes, repeats, install, engine_args):
    print(f"load before the run: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        site = None
        if install:
            built = install_wheel(Path(tmp))
            site = Path(tmp) / "site"
            print(f"wheel built, its kernels compiled in: {built:.1f} s", flush=True)
        for size in (int(s) for s in sizes.split(",")):
            times = {"fresh install": [], "empty cache": [], "warm": []}
            for repeat in range(repeats):
                runs = []
                if site is not None:
                    home = Path(tmp) / f"home-{size}-{repeat}"
                    home.mkdir()
                    runs.append(("fresh install", installed_env(site, home)))
                cache = tempfile.mkdtemp(prefix="bench-numba-", dir=tmp)
                runs += [("empty cache", cache_env(cache)), ("warm", cache_env(cache))]
                for label, env in runs:
                    name_s, first_s, total_s, move = first_move(size, list(engine_args), env)
                    times[label].append(first_s)
                    print(f"{size}x{size} {label}: name {name_s:4.2f} s, clear_board -> genmove "
                          f"{first_s:5.1f} s (start -> genmove {total_s:5.1f} s, {move})",
                          flush=True)
            warm = median(times["warm"])
            print(f"{size}x{size}: " + ", ".join(f"{label} {spread(v)} ({median(v) / warm:.2f}x warm)"
                                                 for label, v in times.items() if v))


if __name__ == "__main__":
    main()
