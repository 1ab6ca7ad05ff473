"""Building a dataset of positions from SGF collections, in one process or several.

This process reads, filters and deduplicates the games (sgf_tools) in their order and hands each
kept one to a `training.data.dataset.GameWriter`, which replays it and writes its positions: here
(`workers=1`), or in one of `workers` processes, each writing its own shards in `out/.part-K/`,
moved into `out` and numbered on when every process is done. Reading and parsing a game costs
about 0.6 ms here against about 9 ms to replay it and compute its planes, so one reader keeps
about 15 processes busy (`benchmarks/bench_build.py`: 1.94x with 2 processes here). The positions a build keeps do not depend on the number of processes (each
game's sample is seeded by the game, `GameWriter.sampled`); which shard holds them does.
`dataset.json` is written last: a directory without it holds a build that did not finish.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import shutil
import traceback
from itertools import islice
from pathlib import Path

from goengine.engine.deadstones import PLAYOUTS
from goengine.sgf_tools import FilterConfig, apply_filters, iter_games
from goengine.training.data.dataset import BuildStats, GameWriter, write_index

PART_PREFIX = ".part-"
CHUNK = 16          # games per message to a process: few messages, a fair share at the end
POLL_S = 0.2        # how often a waiting reader checks that its processes are alive


def build_shards(sources, out_dir, feature_set: str = "alphago48", filters: FilterConfig | None = None,
                 heldout_fraction: float = 0.02, positions_per_game: int | None = None,
                 max_games: int | None = None, shard_size: int = 20000, seed: int = 0,
                 progress=None, aux_targets: bool = False, judge_playouts: int = PLAYOUTS,
                 workers: int = 1) -> BuildStats:
    """Replay every kept game of `sources` and write bit-packed shards to `out_dir`.

    positions_per_game: None keeps every move; k samples k positions per game (the value net's
    guard against overfitting neighbouring positions of one game, docs/algorithms.md §4.3).
    max_games: at most this many kept games go to replay (one that fails to replay counts).
    aux_targets: also write `own`, `score` and `aux_mask` (`counted_targets`, judged with
    `judge_playouts` playouts: about 0.2 s per 19x19 game).
    progress(games_done, stats): called as games are written (per chunk with `workers` > 1).
    workers: processes that replay the games (1: this one).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    filters = filters or FilterConfig.kgs()
    stats = BuildStats()
    settings = dict(feature_set=feature_set, heldout_fraction=heldout_fraction,
                    positions_per_game=positions_per_game, seed=seed, shard_size=shard_size,
                    aux_targets=aux_targets, judge_playouts=judge_playouts)
    games = kept_games(sources, filters, stats, max_games)
    if workers <= 1:
        writer = GameWriter(out, stats=stats, **settings)
        for done, record in enumerate(games, 1):
            writer.add(record)
            if progress is not None:
                progress(done, stats)
        writer.close()
    else:
        _build_in_processes(games, out, settings, workers, stats, progress)
    write_index(out, sources, feature_set, heldout_fraction, positions_per_game, filters, stats,
                aux_targets)
    return stats


def kept_games(sources, filters: FilterConfig, stats: BuildStats, max_games: int | None):
    """The games of `sources` that pass `filters`, in order, at most `max_games`; what was read
    and rejected is counted in `stats.read` and `stats.filtered`."""
    n = 0
    for src in sources:
        for record in apply_filters(iter_games(src, stats.read), filters, stats.filtered):
            if max_games is not None and n >= max_games:
                return
            n += 1
            yield record


def _write_games(part: Path, settings: dict, todo, results) -> None:
    """One process of a parallel build: write the chunks of games from `todo` to `part`,
    reporting each chunk's counts, then ("done", part) at the end or ("error", traceback)."""
    try:
        part.mkdir(parents=True, exist_ok=True)
        writer = GameWriter(part, stats=BuildStats(), **settings)
        while (chunk := todo.get()) is not None:
            writer.stats = BuildStats()
            for record in chunk:
                writer.add(record)
            results.put(("games", (writer.stats, len(chunk))))
        writer.close()
        results.put(("done", str(part)))
    except BaseException:       # the reader must hear of it, not wait for a process that is gone
        results.put(("error", traceback.format_exc()))


class _Processes:
    """The writing processes of one build and what they report."""

    def __init__(self, out: Path, settings: dict, workers: int, stats: BuildStats, progress):
        ctx = mp.get_context("spawn")        # no inherited threads or onnxruntime/torch state
        self.todo = ctx.Queue(maxsize=4 * workers)
        self.results = ctx.Queue()
        self.parts = [out / f"{PART_PREFIX}{k}" for k in range(workers)]
        self.procs = [ctx.Process(target=_write_games, args=(part, settings, self.todo, self.results),
                                  daemon=True) for part in self.parts]
        self.stats, self.progress = stats, progress
        self.games = 0
        self.finished: set[str] = set()
        for p in self.procs:
            p.start()

    def send(self, item) -> None:
        """Queue a chunk (None: the end) for whichever process is free, hearing reports meanwhile."""
        while True:
            try:
                self.todo.put(item, timeout=POLL_S)
                return
            except queue.Full:
                self.hear(wait=False)

    def hear(self, wait: bool) -> None:
        """Take in the reports there are (with `wait`, at least one, or a poll's worth of time)."""
        try:
            kind, payload = self.results.get(timeout=POLL_S) if wait else self.results.get_nowait()
        except queue.Empty:
            self.check_alive()
            return
        while True:
            if kind == "error":
                raise RuntimeError(f"a dataset-building process failed:\n{payload}")
            if kind == "done":
                self.finished.add(payload)
            else:
                written, games = payload
                self.stats.merge_written(written)
                self.games += games
                if self.progress is not None:
                    self.progress(self.games, self.stats)
            try:
                kind, payload = self.results.get_nowait()
            except queue.Empty:
                return

    def check_alive(self) -> None:
        for part, p in zip(self.parts, self.procs):
            if not p.is_alive() and str(part) not in self.finished and self.results.empty():
                raise RuntimeError(f"a dataset-building process ended without finishing "
                                   f"(exit code {p.exitcode}; out of memory?)")

    def close(self) -> None:
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()


def _build_in_processes(games, out: Path, settings: dict, workers: int, stats: BuildStats,
                        progress) -> None:
    for stale in out.glob(PART_PREFIX + "*"):       # a build that was killed
        shutil.rmtree(stale)
    procs = _Processes(out, settings, workers, stats, progress)
    try:
        games = iter(games)
        while chunk := list(islice(games, CHUNK)):
            procs.send(chunk)
            procs.hear(wait=False)
        for _ in range(workers):
            procs.send(None)
        while len(procs.finished) < workers:
            procs.hear(wait=True)
    finally:
        procs.close()
    for part in procs.parts:
        _move_shards(part, out)


def _move_shards(part: Path, out: Path) -> None:
    """Move a process's shards into `out`, numbered after those already there."""
    for f in sorted(part.glob("*.npz")):
        prefix = f.name.rsplit("-", 1)[0]               # e.g. train-19
        index = len(list(out.glob(f"{prefix}-*.npz")))
        os.replace(f, out / f"{prefix}-{index:05d}.npz")
    shutil.rmtree(part)
