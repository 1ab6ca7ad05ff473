"""Zero self-play records on disk: (planes, pi, z) shards and a manifest, both written atomically
(as `training.data.game_shards` writes the policy games), and the window of recent positions the Zero
loop trains on.

    shards = ZeroShards(run_dir / "games")
    shards.write(results, "g0003-00002.npz", generation=3)   # training.zero.selfplay results
    window = load_window(run_dir / "games", games=5000)     # the newest 5,000 games' positions

Layout of a shard (np.savez_compressed; P positions, G games):
| array        | dtype   | shape      | meaning                                                 |
|--------------|---------|------------|---------------------------------------------------------|
| x            | uint8   | [P, L]     | packed zero17 planes before each recorded move          |
| pi           | float16 | [P, N*N+1] | root visit distribution, or the Gumbel search's improved policy (Pos order, pass last) |
| z            | int8    | [P]        | outcome for the side to move: +1, -1, 0 (draw)          |
| q            | float16 | [P]        | the search's value for the side to move, in [-1, 1]     |
| ply          | int16   | [P]        | the move number of each position in its game            |
| poffsets     | int64   | [G+1]      | game g's positions are [poffsets[g], poffsets[g+1])     |
| moves        | int16   | [M]        | every game's moves, concatenated (Pos, pass = N*N)      |
| offsets      | int64   | [G+1]      | game g's moves are [offsets[g], offsets[g+1])           |
| winner       | int8    | [G]        | +1 black, -1 white, 0 draw                              |
| score        | float32 | [G]        | area score with komi, nan for a resignation             |
| komi         | float32 | [G]        | the game's komi (the manifest's `info` komi before it)   |
| own          | int8    | [G, N*N]   | final area owner: +1 black, -1 white, 0 neutral (or resigned) |
| resigned, no_resign | bool | [G]   |                                                         |
| would_resign | int8    | [G]        | in no-resign games, the colour that would have resigned |
| min_winrate  | float32 | [G, 2]     | black's and white's lowest search win rate in the game  |

Without playout cap randomisation every move is a position (ply 0, 1, 2, ... and poffsets equal
to offsets); with it only the full searches are (training.zero.selfplay). Shards written before
`ply` existed recorded every move. The auxiliary heads' targets are stored once per game (`own`,
`score`, Black's view) and turned to each position's side to move when read (`stm_targets`); a
resigned game's positions, and those of shards written before `own` existed, carry mask 0. A killed run
loses at most the shard being written: the manifest lists only shards written whole, and a file
missing from it is written again under the same name.

A run with `--fair-komi` plays each generation at its own komi; the manifest gives each shard's
komi, and the window's (`window_komi`, the games' mean) is the komi its networks learn at: the
score targets are moved there (a game's margin on the board does not depend on the komi), the
outcomes cannot be and stay those of each game's komi.

The value target: z, or with `q_weight` w > 0, (1 - w) z + w q where the shard has q (written
before it existed: z): a search's value is a far less noisy target than one game's outcome, whose
early positions between equal players are close to coin flips, so a small window's values are
memorised less (docs/algorithms.md §4.6, "Memorised values").
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from goengine.engine.search.komi import DEFAULT_VALUE_KOMI
from goengine.training.data.atomic import write_atomic
from goengine.training.data.game_shards import MANIFEST, read_manifest


class ZeroShards:
    def __init__(self, out_dir, info: dict | None = None):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.manifest = read_manifest(self.dir)
        self.manifest.setdefault("positions", 0)
        if info:
            self.manifest.setdefault("info", {}).update(info)

    @property
    def games(self) -> int:
        return self.manifest["games"]

    def games_of(self, generation: int) -> int:
        return sum(s["games"] for s in self.manifest["shards"] if s["generation"] == generation)

    def shards_of(self, generation: int) -> int:
        return sum(1 for s in self.manifest["shards"] if s["generation"] == generation)

    def write(self, results: list, name: str, generation: int) -> None:
        """Write `results` (ZeroGameResult, recorded) as shard `name`, then the manifest."""
        if not results:
            return
        lengths = [len(r.moves) for r in results]
        recorded = [len(r.ply) for r in results]
        arrays = dict(
            x=np.concatenate([r.x for r in results]),
            pi=np.concatenate([r.pi for r in results]).astype(np.float16),
            z=np.concatenate([r.z() for r in results]).astype(np.int8),
            q=np.concatenate([r.q for r in results]).astype(np.float16),
            ply=np.concatenate([r.ply for r in results]).astype(np.int16),
            poffsets=np.concatenate([[0], np.cumsum(recorded)]).astype(np.int64),
            moves=np.concatenate([r.moves for r in results]).astype(np.int16),
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            winner=np.asarray([r.winner for r in results], dtype=np.int8),
            score=np.asarray([r.score for r in results], dtype=np.float32),
            own=np.stack([r.own if len(r.own) else np.zeros(r.size * r.size, np.int8)
                          for r in results]).astype(np.int8),
            komi=np.asarray([r.komi for r in results], dtype=np.float32),
            resigned=np.asarray([r.resigned for r in results], dtype=bool),
            no_resign=np.asarray([r.no_resign for r in results], dtype=bool),
            would_resign=np.asarray([r.would_resign for r in results], dtype=np.int8),
            min_winrate=np.asarray([r.min_winrate for r in results], dtype=np.float32))

        def write_shard(tmp):
            with open(tmp, "wb") as f:
                np.savez_compressed(f, **arrays)

        write_atomic(self.dir / name, write_shard)
        shards = [s for s in self.manifest["shards"] if s["file"] != name]
        shards.append({"file": name, "games": len(results), "positions": int(sum(recorded)),
                       "generation": generation,
                       "komi": float(np.mean([r.komi for r in results]))})
        self.manifest["shards"] = shards
        self._write_manifest()

    def count_earlier(self, games: int) -> None:
        """Count `games` played before this directory's shards whose records are gone (a run
        resumed from a snapshot without its games); their positions are not known."""
        earlier = self.manifest.setdefault("earlier", {})
        earlier["games"] = earlier.get("games", 0) + games
        self._write_manifest()

    def _write_manifest(self) -> None:
        # `earlier`: games played before the shards listed, whose shards a snapshot left behind
        # (training.zero.snapshot) or a resume found gone (`count_earlier`), still counted
        earlier, shards = self.manifest.get("earlier", {}), self.manifest["shards"]
        self.manifest["games"] = earlier.get("games", 0) + sum(s["games"] for s in shards)
        self.manifest["positions"] = (earlier.get("positions", 0)
                                      + sum(s["positions"] for s in shards))
        write_atomic(self.dir / MANIFEST,
                     lambda tmp: Path(tmp).write_text(json.dumps(self.manifest, indent=1)))


@dataclass
class Window:
    x: np.ndarray       # uint8[P, L] packed planes
    pi: np.ndarray      # float32[P, N*N+1], rows sum to 1
    z: np.ndarray       # float32[P]
    games: int
    own: np.ndarray     # int8[P, N*N]: final area owner, +1 = the side to move
    score: np.ndarray   # float32[P]: final area score for the side to move at the window's komi
    mask: np.ndarray    # float32[P]: 1 where the game was played out (own and score are known)
    komi: float = DEFAULT_VALUE_KOMI    # the window's komi (window_komi)
    q: np.ndarray | None = None     # float32[P]: the search's value, side to move; nan where
                                    # the shard has none (None: no position has one)

    def with_q_targets(self, weight: float) -> "Window":
        """The window whose value target z is (1 - weight) z + weight q where q is known."""
        if weight <= 0 or self.q is None:
            return self
        z = np.where(np.isnan(self.q), self.z, (1.0 - weight) * self.z + weight * self.q)
        return replace(self, z=z.astype(np.float32))


def positions_of(shard) -> tuple[np.ndarray, np.ndarray]:
    """(game int64[P], ply int64[P]): each position's game in the shard and its move number there;
    shards from before `ply` recorded every move."""
    if "ply" in shard.files:
        offsets, ply = shard["poffsets"], shard["ply"].astype(np.int64)
    else:
        offsets = shard["offsets"]
        ply = None
    lengths = np.diff(offsets)
    game = np.repeat(np.arange(len(lengths)), lengths)
    if ply is None:
        ply = np.arange(offsets[-1]) - offsets[game]
    return game, ply


def stm_targets(own_black: np.ndarray, score: np.ndarray, resigned: np.ndarray,
                game: np.ndarray, ply: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each position's auxiliary targets from its game's final ownership int8[G, N*N] and score
    float32[G] (Black's view): (own int8[P, N*N], score float32[P], mask float32[P]) for the side
    to move, Black moving at even plies (the games have no handicap), mask 0 in resigned games."""
    sign = np.where(ply % 2 == 0, 1, -1)
    played = ~resigned[game]
    own = (own_black[game] * (sign * played)[:, None]).astype(np.int8)
    return own, np.where(played, sign * score[game], 0.0).astype(np.float32), \
        played.astype(np.float32)


def run_komi(manifest: dict) -> float:
    """The run's komi as the manifest's `info` gives it (7.5 where it says none): the komi of
    shards written before shards had their own."""
    return float(manifest.get("info", {}).get("komi", DEFAULT_VALUE_KOMI))


def shards_with_komi(out_dir) -> tuple[list[dict], float]:
    """The manifest's shard entries, each with its `komi` (`run_komi` for shards written before
    shards had one), and the run's komi."""
    manifest = read_manifest(Path(out_dir))
    default = run_komi(manifest)
    return [dict(s, komi=float(s.get("komi", default))) for s in manifest["shards"]], default


def newest_shards(out_dir, games: int, through: int | None = None) -> tuple[list[dict], float]:
    """The manifest entries (`shards_with_komi`) of the newest shards (whole, oldest first; of
    generations up to `through` when given) that hold at least `games` games, and the komi of
    those games together (their mean; the run's komi when there are none)."""
    shards, default = shards_with_komi(out_dir)
    chosen, count = [], 0
    for shard in reversed([s for s in shards if through is None or s["generation"] <= through]):
        if count >= games:
            break
        chosen.append(shard)
        count += shard["games"]
    chosen.reverse()
    if not count:
        return chosen, default
    return chosen, sum(s["komi"] * s["games"] for s in chosen) / count


def window_komi(out_dir, games: int) -> float:
    """The komi the networks trained on the newest `games` games learn at: the games' mean."""
    return newest_shards(out_dir, games)[1]


def load_window(out_dir, games: int, through: int | None = None,
                q_weight: float = 0.0) -> Window | None:
    """The positions of the newest `games` games (whole shards, newest first, until they hold
    at least `games`; of generations up to `through` when given), value targets mixed with the
    searches' values by `q_weight` (Window.with_q_targets); None when there are none."""
    chosen, komi = newest_shards(out_dir, games, through)
    return load_shards(out_dir, chosen, komi).with_q_targets(q_weight) if chosen else None


def load_generation(out_dir, generation: int, komi: float) -> Window | None:
    """The positions of one generation's games, score targets at `komi`; None when it has
    none."""
    chosen = [s for s in shards_with_komi(out_dir)[0] if s["generation"] == generation]
    return load_shards(out_dir, chosen, komi) if chosen else None


def load_shards(out_dir, chosen: list[dict], komi: float) -> Window:
    """The positions of the shards `chosen` (manifest entries with their `komi`, as
    newest_shards gives them), score targets moved to `komi`."""
    out_dir = Path(out_dir)
    xs, pis, zs, qs, aux = [], [], [], [], []
    for shard in chosen:
        with np.load(out_dir / shard["file"]) as a:
            xs.append(a["x"])
            pis.append(a["pi"].astype(np.float32))
            zs.append(a["z"].astype(np.float32))
            qs.append(a["q"].astype(np.float32) if "q" in a.files
                      else np.full(len(a["z"]), np.nan, np.float32))
            npts = a["pi"].shape[1] - 1
            if "own" in a.files:
                game_komi = a["komi"] if "komi" in a.files else shard["komi"]
                # Black's margin on the board less the window's komi
                score = a["score"] + game_komi - komi
                aux.append(stm_targets(a["own"], score, a["resigned"], *positions_of(a)))
            else:       # written before the auxiliary targets: none to train on
                p = len(a["z"])
                aux.append((np.zeros((p, npts), np.int8), np.zeros(p, np.float32),
                            np.zeros(p, np.float32)))
    pi = np.concatenate(pis)
    pi /= pi.sum(axis=1, keepdims=True)        # float16 storage: renormalised
    own, score, mask = (np.concatenate(parts) for parts in zip(*aux))
    q = np.concatenate(qs)
    return Window(np.concatenate(xs), pi, np.concatenate(zs), sum(s["games"] for s in chosen),
                  own, score.astype(np.float32), mask, komi,
                  None if np.isnan(q).all() else q)


def black_share(out_dir, generation: int) -> tuple[float, int, float]:
    """(Black's share of the points, games, their komi) in the self-play games of `generation`:
    a win counts 1, a draw 1/2."""
    manifest = read_manifest(Path(out_dir))
    default = run_komi(manifest)
    points = games = komi = 0.0
    for shard in manifest["shards"]:
        if shard["generation"] != generation:
            continue
        with np.load(Path(out_dir) / shard["file"]) as a:
            winner = a["winner"]
        points += float((winner > 0).sum()) + 0.5 * float((winner == 0).sum())
        games += len(winner)
        komi += shard.get("komi", default) * len(winner)
    if not games:
        return 0.5, 0, default
    return points / games, int(games), komi / games


def resignation_stats(out_dir, generation: int | None = None) -> tuple[int, int]:
    """(false resignations, no-resign games that would have resigned) in the shards of
    `generation` (all when None): the false-resignation rate is their ratio."""
    out_dir = Path(out_dir)
    false = would = 0
    for shard in read_manifest(out_dir)["shards"]:
        if generation is not None and shard["generation"] != generation:
            continue
        with np.load(out_dir / shard["file"]) as a:
            w, win = a["would_resign"], a["winner"]
        would += int((w != 0).sum())
        false += int(((w != 0) & (w == win)).sum())
    return false, would


def calibrated_threshold(out_dir, games: int, target: float, cap: float,
                         least: int = 20) -> float | None:
    """The resignation threshold that would have resigned at most `target` of the newest
    `games` games' no-resign games that their winner went on to win: the `target` quantile of
    the winners' lowest win rates, never above `cap`; None with fewer than `least` such games."""
    out_dir = Path(out_dir)
    lows = []
    for shard in newest_shards(out_dir, games)[0]:
        with np.load(out_dir / shard["file"]) as a:
            if "min_winrate" not in a.files:
                continue
            keep = a["no_resign"] & (a["winner"] != 0)
            col = (a["winner"][keep] < 0).astype(int)         # 0: black won, 1: white won
            lows.append(a["min_winrate"][keep][np.arange(len(col)), col])
    lows = np.concatenate(lows) if lows else np.zeros(0)
    if len(lows) < least:
        return None
    # resigning strictly below the quantile: at most `target` of the winners dipped below it
    return float(min(cap, np.quantile(lows, target)))


__all__ = ["Window", "ZeroShards", "black_share", "calibrated_threshold", "load_generation",
           "load_shards", "load_window", "newest_shards", "positions_of", "resignation_stats",
           "stm_targets", "window_komi"]
