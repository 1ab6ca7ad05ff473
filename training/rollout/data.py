"""The rollout policy's games: read, split into training and held-out files, sampled.

Step 1 of `training.rollout.train`. Games are read with `sgf_tools.archives.iter_games` and kept as
flat move arrays (`GameSet`). When no held-out files are given and the SGF paths hold archives,
the LAST archive (in name order; `tygem9d-2015-06.tar.bz2` for the Tygem set) is held out and
never used for training.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from goengine.engine.coords import PASS, loc
from goengine.sgf_tools.archives import ReadStats, is_archive, iter_games

try:
    from tqdm import tqdm
except ImportError:     # the rollout policy trains without the `train` extra: no bars then
    tqdm = None


@dataclass
class GameSet:
    """Games of one board size as flat arrays: game g's moves are loc[off[g]:off[g+1]] with
    colours col (1 black, 2 white, 3 / 4 a black / white setup stone); loc -1 is a pass."""
    size: int
    off: np.ndarray
    loc: np.ndarray
    col: np.ndarray
    sources: list

    @property
    def games(self) -> int:
        return len(self.off) - 1

    @property
    def moves(self) -> int:
        return int((self.col <= 2).sum())

    def subset(self, idx) -> "GameSet":
        idx = np.asarray(idx, dtype=np.int64)
        lens = self.off[idx + 1] - self.off[idx]
        off = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        take = np.concatenate([np.arange(self.off[g], self.off[g + 1]) for g in idx]) if len(idx) \
            else np.zeros(0, dtype=np.int64)
        return GameSet(self.size, off, self.loc[take], self.col[take],
                       [self.sources[g] for g in idx])


def expand_paths(paths) -> list[Path]:
    """Files behind the given paths: a directory gives its archives and .sgf files (sorted,
    recursive); files are kept as given."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith(".")
                           and (is_archive(f.name) or f.name.lower().endswith(".sgf")))
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(p)
    return out


def split_heldout(paths, heldout=None) -> tuple[list[Path], list[Path]]:
    """(training files, held-out files). Without `heldout`, the last archive (by name) among the
    expanded paths is held out. Held-out files are removed from the training files."""
    files = expand_paths(paths)
    if heldout:
        held = expand_paths([heldout] if isinstance(heldout, (str, os.PathLike)) else heldout)
    else:
        archives = sorted((f for f in files if is_archive(f.name)), key=lambda f: f.name)
        if len(archives) < 2:
            raise ValueError("give --heldout: no second archive to hold out among the --sgf paths")
        held = [archives[-1]]
    held_set = {f.resolve() for f in held}
    train = [f for f in files if f.resolve() not in held_set]
    if not train:
        raise ValueError("no training files left after removing the held-out ones")
    return train, held


def load_games(paths, size: int = 19, max_games: int | None = None, progress: bool = False,
               stats=None) -> GameSet:
    """Read every game of board size `size` from `paths` (files, directories or archives)."""
    stats = stats if stats is not None else ReadStats()
    locs: list[int] = []
    cols: list[int] = []
    off = [0]
    sources = []
    bar = progress_bar(progress, None, "games", "reading games")
    for path in expand_paths(paths):
        for rec in iter_games(path, stats):
            if rec.size != size:
                continue
            for r, c in rec.setup_black:
                locs.append(loc(r, c, size))
                cols.append(3)
            for r, c in rec.setup_white:
                locs.append(loc(r, c, size))
                cols.append(4)
            for colour, pt in rec.moves:
                locs.append(PASS if pt is None else loc(pt[0], pt[1], size))
                cols.append(1 if colour == "b" else 2)
            off.append(len(locs))
            sources.append(rec.source)
            if bar is not None:
                bar.update(1)
            if max_games is not None and len(off) - 1 >= max_games:
                break
        if max_games is not None and len(off) - 1 >= max_games:
            break
    if bar is not None:
        bar.close()
    return GameSet(size, np.array(off, dtype=np.int64), np.array(locs, dtype=np.int32),
                   np.array(cols, dtype=np.int8), sources)


def select_positions(gs: GameSet, count: int, rng: np.random.Generator) -> np.ndarray:
    """uint8 mask over gs's moves: about `count` non-pass moves chosen uniformly."""
    movable = (gs.col <= 2) & (gs.loc >= 0)
    total = int(movable.sum())
    rate = min(1.0, count / max(total, 1))
    return (movable & (rng.random(len(gs.loc)) < rate)).astype(np.uint8)



def progress_bar(progress: bool, total, unit: str, desc: str):
    """A tqdm bar on stderr, or None without `progress` or without tqdm (the rollout policy
    trains without the `train` extra)."""
    if not progress or tqdm is None:
        return None
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, dynamic_ncols=True,
                file=sys.stderr, smoothing=0.05)
