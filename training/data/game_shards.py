"""Self-play game records on disk: compressed shards and a manifest, both written atomically.

    shards = GameShards(out_dir, shard_games=256)
    shards.add(result)          # training.workers.selfplay.GameResult
    shards.flush()              # write what is buffered as the next shard
    for game in read_games(out_dir): ...

Layout of `<dir>/games-NNNNN.npz` (np.savez_compressed; one row per game unless noted):
| array   | dtype   | shape    | meaning                                                   |
|---------|---------|----------|-----------------------------------------------------------|
| moves   | int16   | [M]      | every game's moves, concatenated: Pos, pass = N*N          |
| offsets | int64   | [G+1]    | game g's moves are moves[offsets[g]:offsets[g+1]]          |
| score   | float32 | [G]      | black minus white, komi included (area)                   |
| size    | int8    | [G]      | board size N                                              |
| komi    | float32 | [G]      |                                                           |
| black   | str     | [G]      | the network that played Black                             |
| white   | str     | [G]      | the network that played White                             |
| two_passes | bool | [G]      | ended by two passes (else by the move cap)                |

`manifest.json` lists the shards and their game counts. A shard is written to a temporary file and
renamed, then the manifest is rewritten the same way, so a killed run leaves only complete shards
in the manifest and loses at most the games buffered since the last flush; a file that is not in
the manifest (killed between the two renames) is overwritten by the next shard of that name.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from goengine.training.data.atomic import write_atomic
from goengine.training.workers.selfplay import GameResult

MANIFEST = "manifest.json"


def read_manifest(out_dir) -> dict:
    path = Path(out_dir) / MANIFEST
    if not path.exists():
        return {"format": 1, "shards": [], "games": 0}
    return json.loads(path.read_text())


class GameShards:
    def __init__(self, out_dir, shard_games: int = 256, info: dict | None = None):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.shard_games = shard_games
        self.manifest = read_manifest(self.dir)
        if info:
            self.manifest.setdefault("info", {}).update(info)
        self.buffer: list[GameResult] = []

    @property
    def games(self) -> int:
        """Games in the shards of the manifest (written and kept)."""
        return self.manifest["games"]

    def add(self, result: GameResult) -> None:
        self.buffer.append(result)
        if len(self.buffer) >= self.shard_games:
            self.flush()

    def flush(self, name: str | None = None) -> None:
        """Write the buffered games as shard `name` (default: the next games-NNNNN.npz); a shard
        of the same name already in the manifest is replaced."""
        if not self.buffer:
            return
        games, self.buffer = self.buffer, []
        name = name or f"games-{len(self.manifest['shards']):05d}.npz"
        lengths = [len(g.moves) for g in games]
        arrays = dict(
            moves=np.concatenate([g.moves for g in games]).astype(np.int16),
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            score=np.asarray([g.score for g in games], dtype=np.float32),
            size=np.asarray([g.size for g in games], dtype=np.int8),
            komi=np.asarray([g.komi for g in games], dtype=np.float32),
            black=np.asarray([g.black for g in games], dtype=str),
            white=np.asarray([g.white for g in games], dtype=str),
            two_passes=np.asarray([g.two_passes for g in games], dtype=bool))

        def write_shard(tmp):
            with open(tmp, "wb") as f:
                np.savez_compressed(f, **arrays)

        write_atomic(self.dir / name, write_shard)
        shards = [s for s in self.manifest["shards"] if s["file"] != name]
        shards.append({"file": name, "games": len(games)})
        self.manifest["shards"] = shards
        self.manifest["games"] = sum(s["games"] for s in shards)
        write_atomic(self.dir / MANIFEST,
                      lambda tmp: Path(tmp).write_text(json.dumps(self.manifest, indent=1)))


def read_games(out_dir):
    """Yield the GameResult of every game in the manifest's shards, in order."""
    out_dir = Path(out_dir)
    for shard in read_manifest(out_dir)["shards"]:
        with np.load(out_dir / shard["file"]) as z:
            a = {k: z[k] for k in z.files}
        for g in range(len(a["score"])):
            yield GameResult(str(a["black"][g]), str(a["white"][g]), int(a["size"][g]),
                             float(a["komi"][g]), a["moves"][a["offsets"][g]:a["offsets"][g + 1]],
                             float(a["score"][g]), bool(a["two_passes"][g]))
