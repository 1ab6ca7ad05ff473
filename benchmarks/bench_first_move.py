"""The first game after installing: seconds from `clear_board` to the first answered `genmove` of a
real `engine-gtp`, with numba's cache empty (a fresh install) and, as the baseline of the same run,
with the cache that first start filled (every later start).

    python benchmarks/bench_first_move.py                  # 19x19 (AlphaGo search) and 9x9 (Zero)
    python benchmarks/bench_first_move.py --sizes 9 --repeats 3 -- --time-per-move 1

Each cold start gets a fresh NUMBA_CACHE_DIR in a temp dir: with it set, numba reads and writes
kernels there only, never the `__pycache__/*.nbi|*.nbc` beside the sources. The engine runs with
its defaults (`--search auto`, the bundled models, 5 s a move without a clock) plus the options
after `--`. Goal: at most 10 s from clear_board to the first answered genmove on a fresh install
of a 2-core machine (5 s of it the move's own thinking time).

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

    def __init__(self, args: list[str], cache_dir: str):
        env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
        self.proc = subprocess.Popen([sys.executable, "-m", "goengine.gtp.main", "--quiet", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=ROOT, env=env)

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


def first_move(size: int, args: list[str], cache_dir: str) -> tuple[float, float, float, str]:
    """(start to `name` answered, boardsize/clear_board sent to genmove answered, start to
    genmove, the move). A GUI sends them as soon as `name` answers, as here."""
    start = time.monotonic()
    gtp = Gtp(["--size", str(size), *args], cache_dir)
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
@click.argument("engine_args", nargs=-1, type=click.UNPROCESSED)
def main(sizes, repeats, engine_args):
    print(f"load before the run: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    for size in (int(s) for s in sizes.split(",")):
        cold, warm = [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="bench-numba-") as cache:
                name_s, first_s, total_s, move = first_move(size, list(engine_args), cache)
                cold.append(first_s)
                print(f"{size}x{size} cold cache: name {name_s:4.2f} s, clear_board -> genmove "
                      f"{first_s:5.1f} s (start -> genmove {total_s:5.1f} s, {move})", flush=True)
                name_s, first_s, total_s, move = first_move(size, list(engine_args), cache)
                warm.append(first_s)
                print(f"{size}x{size} warm cache: name {name_s:4.2f} s, clear_board -> genmove "
                      f"{first_s:5.1f} s (start -> genmove {total_s:5.1f} s, {move})", flush=True)
        print(f"{size}x{size}: cold {spread(cold)}, warm {spread(warm)}, "
              f"cold / warm {median(cold) / median(warm):.2f}")


if __name__ == "__main__":
    main()
