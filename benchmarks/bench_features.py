"""Feature extractions per second on one core: 19x19 middle-game positions of real games.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_features.py
    python benchmarks/bench_features.py --games 100 --sets alphago48 alphago49 zero17
    python benchmarks/bench_features.py --archive tests/data/games/tygem9d-2015-05 --games 5

Positions are those after moves 80..150 of the first `--games` 19x19 games of at least 150 moves
in `--archive` (default: ../shared/data/tygem9d/tygem9d-2015-05.tar.bz2 beside the project; any
.sgf file, folder or archive of them), replayed through engine.game.Game. Timed:
`engine.features.extract_into` into a preallocated uint8 batch (the dataset path) and `extract`
(float32, what play uses), after a warm-up pass that compiles the kernels. Also reported: the share of the time spent in ladder reading (the same pass with the
ladder groups switched off). Goal: 20,000 full 48-plane extractions per second.
"""
from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from data_paths import default_data, missing  # noqa: E402
from goengine.engine import board as B  # noqa: E402
from goengine.engine.coords import PASS, loc  # noqa: E402
from goengine.engine.features import FeatureSet, extract, extract_into, get  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.rules import Rules  # noqa: E402
from goengine.sgf_tools.archives import iter_games  # noqa: E402

ARCHIVE = "tygem9d/tygem9d-2015-05.tar.bz2"  # under ../shared/data
GOAL = 20_000.0


def positions(archive: str, games: int, first: int = 80, last: int = 150) -> list[Game]:
    out: list[Game] = []
    used = 0
    for record in iter_games(archive):
        if used >= games:
            break
        n = record.size
        if n != 19 or len(record.moves) < last or record.setup_black or record.setup_white:
            continue
        g = Game(n, Rules(komi=6.5, superko="none"))
        for i, (colour, point) in enumerate(record.moves[:last], 1):
            lc = PASS if point is None else loc(point[0], point[1], n)
            g.play(B.BLACK if colour == "b" else B.WHITE, lc)
            if i >= first:
                out.append(g.copy())
        used += 1
    return out


def rate(fn, items, min_seconds: float) -> tuple[float, float]:
    """Calls per second of fn over items, repeated until min_seconds have passed: (per wall-clock
    second, per second of this thread's CPU time). The second is what one core delivers when the
    machine is shared; on an idle machine the two agree."""
    count = 0
    start, cpu = time.perf_counter(), time.thread_time()
    while True:
        for it in items:
            fn(it)
        count += len(items)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return count / elapsed, count / (time.thread_time() - cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", default=default_data(ARCHIVE),
                    help=f"game records (default: ../shared/data/{ARCHIVE} beside the project)")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=3.0, help="minimum timing per measurement")
    ap.add_argument("--sets", nargs="+", default=["alphago48"])
    args = ap.parse_args()
    if args.archive is None:
        ap.error(missing("--archive", ARCHIVE))

    t0 = time.perf_counter()
    games = positions(args.archive, args.games)
    print(f"{len(games)} positions (moves 80-150 of {args.games} games) loaded in "
          f"{time.perf_counter() - t0:.1f} s; NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}")

    for name in args.sets:
        fs = get(name)
        buf = np.empty((len(games), fs.num_planes, 19, 19), dtype=np.uint8)
        t0 = time.perf_counter()
        extract_into(games[0], fs, buf[0])
        print(f"{name}: first call (compile or cache load) {time.perf_counter() - t0:.2f} s")
        for i, g in enumerate(games):  # warm-up, and the batch is kept for the checks below
            extract_into(g, fs, buf[i])

        idx = list(range(len(games)))
        wall, cpu = rate(lambda i: extract_into(games[i], fs, buf[i]), idx, args.seconds)
        wall_f, cpu_f = rate(lambda g: extract(g, fs), games, args.seconds)
        print(f"{name}: extract_into (uint8) {wall:,.0f} positions/s wall, {cpu:,.0f}/s CPU "
              f"({1e6 / cpu:.1f} us each); extract (float32) {wall_f:,.0f}/s wall, {cpu_f:,.0f}/s CPU")
        if name.startswith("alphago"):
            off = fs.offsets
            print(f"  per position: {buf[:, off['ladder_capture']].sum() / len(games):.2f} ladder "
                  f"captures, {buf[:, off['ladder_escape']].sum() / len(games):.2f} ladder escapes")
            no_ladder = FeatureSet(name + "-noladder", fs.version,
                                   tuple((g, w) for g, w in fs.planes
                                         if g not in ("ladder_capture", "ladder_escape")))
            out = np.empty((no_ladder.num_planes, 19, 19), dtype=np.uint8)
            _, cpu_nl = rate(lambda g: extract_into(g, no_ladder, out), games, args.seconds)
            print(f"  without the ladder planes {cpu_nl:,.0f}/s CPU: ladders take "
                  f"{100 * (1 - cpu / cpu_nl):.0f}% of the time")
            if name == "alphago48":
                print(f"GOAL alphago48 (one core): {cpu:,.0f} per CPU second = {cpu / GOAL:.2f} x "
                      f"{GOAL:,.0f}; wall-clock {wall:,.0f}/s = {wall / GOAL:.2f} x")


if __name__ == "__main__":
    main()
