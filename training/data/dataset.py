"""Datasets of positions from SGF archives, stored bit-packed.

`GameWriter` replays games (engine.replay) and writes, per position, the feature planes of
`engine.features` packed to bits, the move played (Pos, row-major) and the game's outcome from the
side to move. A game goes to the held-out set or the training set by the hash of its move sequence
(`GameRecord.heldout`), so the split never changes between runs. Passes are not targets.

Shard layout (`<dir>/<split>-NNNNN.npz`, written atomically):
| array   | dtype | shape                      | meaning                                   |
|---------|-------|----------------------------|-------------------------------------------|
| x       | uint8 | [n, ceil(C * N * N / 8)]   | np.packbits of the [C, N, N] planes       |
| move    | int16 | [n]                        | Pos of the move played                    |
| z       | int8  | [n]                        | +1 if the side to move won, -1 lost, 0 ?  |
| size    | int8  | [n]                        | board size N                              |

Value positions add the auxiliary heads' targets:
| own      | int8    | [n, N * N]              | final area owner per point: +1 side to move, -1 other, 0 |
| score    | float32 | [n]                     | final score for the side to move, komi included          |
| aux_mask | int8    | [n]                     | 1: own and score are targets; 0: none (zeros stored)     |
Self-play value data (training.value.games) has them for every position. Human games
(`training.data.shard_build.build_shards(..., aux_targets=True)`, `engine-train value --sgf`) have them only when the game
was counted (a result like B+3.5): `counted_targets` replays the game, takes the dead stones off
the final position with the engine's judgement (engine.deadstones, docs/algorithms.md §5.3) and
takes the rules core's area ownership; the score is the recorded margin. A resigned or timed-out
game, or a counted one whose judged area count names the other winner, has aux_mask 0. Older
shards with `own` and no `aux_mask` read as mask 1.
"""
from __future__ import annotations

import json
import os
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from goengine.engine.colors import BLACK, WHITE
from goengine.engine.coords import PASS, loc_to_pos
from goengine.engine.deadstones import PLAYOUTS, judge
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.replay import ReplayError, positions
from goengine.engine.rules import Rules
from goengine.engine.symmetry import N_SYMMETRIES, apply as apply_symmetry
from goengine.sgf_tools import FilterConfig, FilterStats, ReadStats

# Human games are replayed without superko: they were legal under the rules they were played by.
REPLAY_RULES = Rules(superko="none")
UNKNOWN_KOMI = "unknown"       # BuildStats.komi's key for the games whose KM says none


@dataclass
class BuildStats:
    read: ReadStats = field(default_factory=ReadStats)
    filtered: FilterStats = field(default_factory=FilterStats)
    replay_errors: dict = field(default_factory=dict)
    games: dict = field(default_factory=lambda: {"train": 0, "heldout": 0})
    positions: dict = field(default_factory=lambda: {"train": 0, "heldout": 0})
    # the heads' targets (aux_targets): games counted and judged alike ("targets"), counted but
    # judged for the other winner ("disagreed"), not counted: resigned, timed out, no margin
    targets: dict = field(default_factory=lambda: {"targets": 0, "disagreed": 0, "not_counted": 0})
    # the games written by their komi ("6.5"; "unknown" where KM says none): the komi a value
    # network trained on their outcomes learned at (`dataset_komi`)
    komi: dict = field(default_factory=dict)

    def merge_written(self, other: "BuildStats") -> None:
        """Add what another process wrote (games, positions, replay errors, targets) to these."""
        for mine, theirs in ((self.games, other.games), (self.positions, other.positions),
                             (self.targets, other.targets), (self.replay_errors, other.replay_errors),
                             (self.komi, other.komi)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v

    def as_dict(self) -> dict:
        return {"read": self.read.as_dict(),
                "filtered": self.filtered.as_dict(), "replay_errors": self.replay_errors,
                "games": self.games, "positions": self.positions, "targets": self.targets,
                "komi": self.komi}

    def summary(self) -> str:
        skipped = sum(self.replay_errors.values())
        return (f"games read {self.filtered.seen}, kept {self.filtered.kept} "
                f"({dict(self.filtered.rejected)}), unreadable "
                f"{self.read.skipped}, illegal {skipped} {self.replay_errors}; "
                f"train {self.games['train']} games / {self.positions['train']} positions, "
                f"held-out {self.games['heldout']} games / {self.positions['heldout']} positions"
                + ("; ownership / score targets: {targets} games, {disagreed} counted games judged "
                   "for the other winner, {not_counted} not counted".format(**self.targets)
                   if sum(self.targets.values()) else ""))


def komi_key(komi: float | None) -> str:
    """`BuildStats.komi`'s key (and a self-play dataset's) for games at `komi`."""
    return UNKNOWN_KOMI if komi is None else f"{komi:g}"


def dataset_komi(stats: dict) -> float | None:
    """The komi a value network learns at on a dataset's outcomes: the mean komi of its games
    that state one, weighted by games (a mix of komis teaches roughly the mean's margin, the score
    model of engine.search.komi being near linear over a point or two); None when no game does,
    or the dataset was built before the komi was counted."""
    known = {float(k): n for k, n in stats.get("komi", {}).items() if k != UNKNOWN_KOMI}
    games = sum(known.values())
    return sum(k * n for k, n in known.items()) / games if games else None


def outcome(record, color: int) -> int:
    """+1 if `color` won the game, -1 if it lost, 0 when unknown or a draw."""
    if record.winner is None:
        return 0
    won = (record.winner == "b") == (color == 1)
    return 1 if won else -1


def counted_targets(record, final, playouts: int = PLAYOUTS) -> tuple[str, np.ndarray | None, float]:
    """The heads' targets of a human game from Black's view: (status, own int8[N*N] +1 black /
    -1 white / 0 neutral, score = Black's recorded margin, komi included). `final` is the game
    replayed to its last move. status "targets": counted, and the area count of `final` with the
    engine's dead stones off names the recorded winner; "disagreed": it names the other one (or
    a draw); "not_counted": resigned, lost on time, or no margin (own None)."""
    margin = record.margin
    if margin is None or record.winner is None or final is None:
        return "not_counted", None, 0.0
    dead = judge(final, playouts=playouts).dead
    owner = final.ownership(dead).reshape(-1)
    black_won = record.winner == "b"
    judged = final.area_score(dead)
    if judged == 0 or (judged > 0) != black_won:
        return "disagreed", None, 0.0
    own = (owner == BLACK).astype(np.int8) - (owner == WHITE).astype(np.int8)
    return "targets", own, margin if black_won else -margin


class ShardWriter:
    def __init__(self, out_dir: Path, split: str, shard_size: int, packed_len: int,
                 points: int = 0):
        """points: N * N to store the `own` and `score` targets too (0: positions only)."""
        self.out_dir, self.split, self.shard_size = out_dir, split, shard_size
        self.x = np.zeros((shard_size, packed_len), dtype=np.uint8)
        self.move = np.zeros(shard_size, dtype=np.int16)
        self.z = np.zeros(shard_size, dtype=np.int8)
        self.size = np.zeros(shard_size, dtype=np.int8)
        self.own = np.zeros((shard_size, points), dtype=np.int8) if points else None
        self.score = np.zeros(shard_size, dtype=np.float32)
        self.aux_mask = np.zeros(shard_size, dtype=np.int8)
        self.n = 0
        self.index = len(list(out_dir.glob(f"{split}-*.npz")))

    def add(self, packed, move, z, size, own=None, score: float = 0.0):
        """own None (with `points`): a position without the heads' targets (aux_mask 0)."""
        self.x[self.n] = packed
        self.move[self.n] = move
        self.z[self.n] = z
        self.size[self.n] = size
        if self.own is not None:
            self.own[self.n] = 0 if own is None else own
            self.score[self.n] = 0.0 if own is None else score
            self.aux_mask[self.n] = own is not None
        self.n += 1
        if self.n == self.shard_size:
            self.flush()

    def flush(self):
        if self.n == 0:
            return
        path = self.out_dir / f"{self.split}-{self.index:05d}.npz"
        tmp = path.with_suffix(".tmp.npz")
        aux = {} if self.own is None else {"own": self.own[:self.n], "score": self.score[:self.n],
                                           "aux_mask": self.aux_mask[:self.n]}
        np.savez(tmp, x=self.x[:self.n], move=self.move[:self.n], z=self.z[:self.n],
                 size=self.size[:self.n], **aux)
        os.replace(tmp, path)
        self.index += 1
        self.n = 0


class GameWriter:
    """Replays games one at a time and writes their positions to shards in `out`: the work of one
    process of a build (training.data.shard_build). Counts what it wrote in `stats` (games, positions,
    replay errors, the heads' targets)."""

    def __init__(self, out: Path, feature_set: str, heldout_fraction: float,
                 positions_per_game: int | None, seed: int, shard_size: int,
                 aux_targets: bool, judge_playouts: int, stats: BuildStats):
        self.out, self.feature_set = out, feature_set
        self.fs = FEATURE_SETS[feature_set]
        self.heldout_fraction, self.positions_per_game = heldout_fraction, positions_per_game
        self.seed, self.shard_size = seed, shard_size
        self.aux_targets, self.judge_playouts = aux_targets, judge_playouts
        self.stats = stats
        self.writers: dict = {}
        self.planes = None

    def sampled(self, record) -> set | None:
        """The move indices kept of `record` (None: all). Seeded by the game itself, so a build
        keeps the same positions whatever the number of processes and the order of the games."""
        if self.positions_per_game is None:
            return None
        idx = [i for i, (_c, p) in enumerate(record.moves) if p is not None]
        rng = random.Random(f"{self.seed}:{record.move_key()}")
        return set(rng.sample(idx, min(self.positions_per_game, len(idx))))

    def add(self, record) -> None:
        split = "heldout" if record.heldout(self.heldout_fraction) else "train"
        n = record.size
        if self.planes is None or self.planes.shape[1] != n:
            self.planes = np.zeros((self.fs.num_planes, n, n), dtype=np.uint8)
        key = (split, n)
        if key not in self.writers:
            self.writers[key] = ShardWriter(self.out, f"{split}-{n}", self.shard_size,
                                             (self.fs.num_planes * n * n + 7) // 8,
                                             points=n * n if self.aux_targets else 0)
        wanted = self.sampled(record)
        rows = []
        final = None           # the same Game, advanced to the last move when the loop ends
        try:
            for i, (game, color, lc) in enumerate(positions(record, REPLAY_RULES)):
                final = game
                if lc == PASS or (wanted is not None and i not in wanted):
                    continue
                extract_into(game, self.feature_set, self.planes)
                rows.append((np.packbits(self.planes.reshape(-1)), loc_to_pos(lc, n),
                             outcome(record, color), 1 if color == BLACK else -1))
        except ReplayError as e:
            self.stats.replay_errors[e.reason] = self.stats.replay_errors.get(e.reason, 0) + 1
            return
        own, score = None, 0.0
        if self.aux_targets:
            status, own, score = counted_targets(record, final, self.judge_playouts)
            self.stats.targets[status] += 1
        for packed, pos, z, sign in rows:
            self.writers[key].add(packed, pos, z, n, None if own is None else sign * own,
                                  sign * score)
        self.stats.games[split] += 1
        self.stats.positions[split] += len(rows)
        k = komi_key(record.komi)
        self.stats.komi[k] = self.stats.komi.get(k, 0) + 1

    def close(self) -> None:
        for w in self.writers.values():
            w.flush()


def write_index(out: Path, sources, feature_set: str, heldout_fraction: float,
                positions_per_game: int | None, filters: FilterConfig, stats: BuildStats,
                aux_targets: bool) -> None:
    """`dataset.json`: what the shards hold and how they were built; written last, so that a
    directory without it is a build that did not finish."""
    fs = FEATURE_SETS[feature_set]
    meta = {"feature_set": feature_set, "feature_version": fs.version, "planes": fs.num_planes,
            "heldout_fraction": heldout_fraction, "positions_per_game": positions_per_game,
            "sources": [str(s) for s in sources], "filters": asdict(filters),
            "stats": stats.as_dict(), **({"targets": ["z", "own", "score"]} if aux_targets else {})}
    tmp = out / "dataset.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2, default=str))
    os.replace(tmp, out / "dataset.json")


class PackedPositions:
    """All shards of one split and size loaded in memory, served as minibatches of float planes
    with a random one of the 8 symmetries per sample; with the ownership and score targets too
    when every shard has them (`has_aux`)."""

    def __init__(self, data_dir, split: str, size: int = 19, planes: int = 48, limit: int | None = None):
        files = sorted(Path(data_dir).glob(f"{split}-{size}-*.npz"))
        if not files:
            raise FileNotFoundError(f"no {split} shards for size {size} in {data_dir}")
        xs, moves, zs, owns, scores, masks = [], [], [], [], [], []
        total = 0
        for f in files:
            with np.load(f) as d:
                xs.append(d["x"])
                moves.append(d["move"])
                zs.append(d["z"])
                if "own" in d.files:
                    owns.append(d["own"])
                    scores.append(d["score"])
                    # shards from before aux_mask: every position has the targets
                    masks.append(d["aux_mask"] if "aux_mask" in d.files
                                 else np.ones(len(d["z"]), dtype=np.int8))
            total += len(moves[-1])
            if limit is not None and total >= limit:
                break
        self.x = np.concatenate(xs)[:limit]
        self.move = np.concatenate(moves)[:limit].astype(np.int64)
        self.z = np.concatenate(zs)[:limit].astype(np.float32)
        self.has_aux = len(owns) == len(xs)
        self.own = np.concatenate(owns)[:limit] if self.has_aux else None
        self.score = np.concatenate(scores)[:limit].astype(np.float32) if self.has_aux else None
        self.aux_mask = np.concatenate(masks)[:limit].astype(np.float32) if self.has_aux else None
        self.size = size
        self.planes = planes
        # symmetry tables: Pos -> Pos under each symmetry
        grid = np.arange(size * size).reshape(size, size)
        self._pos_map = np.stack([apply_symmetry(grid[None], k)[0].reshape(-1).argsort()
                                  for k in range(N_SYMMETRIES)])

    def __len__(self) -> int:
        return len(self.move)

    def batch(self, idx: np.ndarray, rng: np.random.Generator | None = None,
              symmetry: int | None = None, aux: bool = False):
        """(planes float32[B, C, N, N], move int64[B], z float32[B]) for rows `idx`; with `aux`
        also own float32[B, N*N] (under the same symmetry), score float32[B] and aux_mask
        float32[B] (1 where own and score are targets)."""
        if aux and not self.has_aux:
            raise ValueError("these shards have no ownership / score targets (value positions "
                             "from engine-train value-data have them)")
        n, c = self.size, self.planes
        own = self.own[idx].astype(np.float32).reshape(len(idx), 1, n, n) if aux else None
        bits = np.unpackbits(self.x[idx], axis=1, count=c * n * n)
        planes = bits.reshape(len(idx), c, n, n).astype(np.float32)
        move = self.move[idx].copy()
        if symmetry is None and rng is not None:
            ks = rng.integers(0, N_SYMMETRIES, size=len(idx))
        else:
            ks = np.full(len(idx), symmetry or 0)
        for k in np.unique(ks):
            if k == 0:
                continue
            sel = ks == k
            planes[sel] = apply_symmetry(planes[sel], int(k))
            move[sel] = self._pos_map[k][move[sel]]
            if aux:
                own[sel] = apply_symmetry(own[sel], int(k))
        if aux:
            return planes, move, self.z[idx].copy(), own.reshape(len(idx), n * n), \
                self.score[idx].copy(), self.aux_mask[idx].copy()
        return planes, move, self.z[idx].copy()


def shard_sizes(data_dir, split: str = "train") -> list[int]:
    """The board sizes that have `split` shards in `data_dir`."""
    sizes = set()
    for f in Path(data_dir).glob(f"{split}-*-*.npz"):
        try:
            sizes.add(int(f.name.split("-")[1]))
        except ValueError:
            continue
    return sorted(sizes)


class SizeMix:
    """The shards of several board sizes; each minibatch comes from one size, drawn in proportion
    to the positions of that size, so a fully convolutional network learns all of them."""

    def __init__(self, data_dir, split: str, sizes, planes: int, limit: int | None = None):
        self.parts = [PackedPositions(data_dir, split, n, planes, limit=limit) for n in sizes]
        self.sizes = list(sizes)
        counts = np.array([len(p) for p in self.parts], dtype=np.float64)
        self.weights = counts / counts.sum()
        self.has_aux = all(p.has_aux for p in self.parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def sample(self, batch_size: int, rng: np.random.Generator, aux: bool = False):
        part = self.parts[int(rng.choice(len(self.parts), p=self.weights))] if len(self.parts) > 1 \
            else self.parts[0]
        return part.batch(rng.integers(0, len(part), size=batch_size), rng, aux=aux)

