"""Value-network data from self-play, as AlphaGo generated it (docs/algorithms.md §4.3).

Human game outcomes teach a small network almost nothing (held-out MSE stays at 1.0 on the Tygem
9-dan games: the players are even and the result turns on details). AlphaGo's value network
learned instead from games the policy networks played against themselves, one position per game:

    draw U uniformly from 1..max_u; play moves 1..U-1 with the SL policy (sampled); play move U
    uniformly at random among the legal moves; record s_{U+1}; play on to the end; z = the result
    for the side to move in s_{U+1}.

AlphaGo played on with its RL policy, as `training.value.games` does on the self-play workers
(`engine-train value-data`); this generator lets the SL policy play on up to move `finish_at`, and
the fast rollout policy the rest (the positions left by then are
settled enough that the rollout policy's endgame decides them as the networks would). The game is
scored by Tromp-Taylor area with komi.

Games run in lockstep batches so that the network evaluates one batch per move. The positions are
written as the shards of `training.data.dataset` (same planes, same packing, same `dataset.json`), with
a held-out split by game, so `engine-train value --data-dir` trains on them unchanged.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from goengine.engine import board as B
from goengine.engine.coords import PASS, area
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.game import Game
from goengine.engine.playout import seed as seed_playouts
from goengine.engine.rules import Rules
from goengine.training.data.dataset import ShardWriter, komi_key
from goengine.training.workers.selfplay import candidates, policy_moves, pos_table

FEATURES = "alphago49"


@dataclass
class SelfPlayValueConfig:
    games: int = 10_000
    size: int = 19
    komi: float = 7.5
    batch_games: int = 64            # games advanced in lockstep (one network batch per move)
    finish_at: int = 0               # SL moves until this move, then rollouts; 0 = 250 scaled
    max_u: int = 0                   # U ~ uniform 1..max_u; 0 = finish_at - 1
    positions_per_game: int = 1      # AlphaGo: 1 (s_{U+1}); more adds positions drawn uniformly
                                     # from the game, which share its outcome (cheaper, correlated)
    temperature: float = 1.0         # SL sampling temperature (1 = the network's distribution)
    heldout_fraction: float = 0.05   # games whose position goes to the held-out split
    shard_size: int = 20_000
    seed: int = 0

    def resolved(self) -> "SelfPlayValueConfig":
        finish_at = self.finish_at or max(8, round(250 * self.size * self.size / 361.0))
        return SelfPlayValueConfig(**{**asdict(self), "finish_at": finish_at,
                                      "max_u": min(self.max_u or finish_at - 1, finish_at - 1)})


class _SelfPlayGame:
    """One game of the recipe above, and the move numbers at which it records a position."""

    __slots__ = ("game", "u", "heldout", "record_at", "records", "passes")

    def __init__(self, size: int, rules: Rules, u: int, record_at: set, heldout: bool):
        self.game = Game(size, rules)
        self.u, self.heldout, self.record_at = u, heldout, record_at
        self.records = []           # (packed planes, colour to move)
        self.passes = 0

    @property
    def moves(self) -> int:
        return self.game.move_number


class SelfPlayValue:
    """Generates value positions with a policy evaluator (engine.evaluator.Evaluator) and a
    fast rollout policy (engine.rollout.RolloutPolicy)."""

    def __init__(self, config: SelfPlayValueConfig, policy, rollout):
        self.cfg = config.resolved()
        self.policy, self.rollout = policy, rollout
        self.rules = Rules(superko="none").with_komi(self.cfg.komi)
        n = self.cfg.size
        self.rng = np.random.default_rng(self.cfg.seed)
        self._split_rng = random.Random(self.cfg.seed + 1)
        self._moves = np.zeros(n * n + 2, dtype=np.int64)
        self._planes = np.zeros((FEATURE_SETS[FEATURES].num_planes, n, n), dtype=np.uint8)
        self._pos_of = pos_table(n)      # Loc -> Pos for the legal mask
        self._amaf = np.zeros(area(n), dtype=np.int8)
        self.played = {"games": 0, "sl_moves": 0, "random_moves": 0, "ended_by_passes": 0}

    def _new_game(self) -> _SelfPlayGame:
        cfg = self.cfg
        u = int(self.rng.integers(1, cfg.max_u + 1))
        record_at = {u}                                  # s_{U+1}: the position after U moves
        extra = [m for m in range(cfg.finish_at) if m != u]
        k = min(cfg.positions_per_game - 1, len(extra))
        record_at.update(int(m) for m in self.rng.choice(extra, size=k, replace=False))
        return _SelfPlayGame(cfg.size, self.rules, u, record_at,
                             self._split_rng.random() < cfg.heldout_fraction)

    def _candidates(self, g: Game) -> np.ndarray:
        return candidates(g, self._moves)

    def _play(self, sp: _SelfPlayGame, lc: int) -> None:
        if lc == PASS:
            sp.passes += 1
        else:
            sp.passes = 0
        sp.game.play(sp.game.to_play, lc)

    def _record(self, sp: _SelfPlayGame) -> None:
        extract_into(sp.game, FEATURES, self._planes)
        sp.records.append((np.packbits(self._planes.reshape(-1)), sp.game.to_play))

    def _finish(self, sp: _SelfPlayGame) -> list:
        """Rollout to the end from the current position; [(packed, z for that side to move)]."""
        g = sp.game
        st, meta = g.st.copy(), g.meta.copy()
        self._amaf[:] = 0
        score, _own = self.rollout.playout(st, meta, 3 * g.size * g.size, self._amaf)
        margin = score - self.cfg.komi                   # black's view
        black = 0 if margin == 0 else (1 if margin > 0 else -1)
        return [(packed, black if color == B.BLACK else -black) for packed, color in sp.records]

    def _sl_moves(self, games: list[_SelfPlayGame]) -> None:
        """One SL-policy move in each of `games` (one network batch)."""
        locs = policy_moves(self.policy, [sp.game for sp in games], self.rng, self._pos_of,
                            self._moves, self.cfg.temperature).locs
        for sp, lc in zip(games, locs):
            self._play(sp, int(lc))
            self.played["sl_moves"] += int(lc != PASS)

    def generate(self, out_dir, progress=None) -> dict:
        """Play `games` games and write their positions to `out_dir`; returns counts."""
        cfg = self.cfg
        seed_playouts(cfg.seed)             # the rollouts' random numbers (numba's own generator)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        n = cfg.size
        packed_len = (FEATURE_SETS[FEATURES].num_planes * n * n + 7) // 8
        writers = {split: ShardWriter(out, f"{split}-{n}", cfg.shard_size, packed_len)
                   for split in ("train", "heldout")}
        counts = {"train": 0, "heldout": 0}
        games = {"train": 0, "heldout": 0}
        started = 0
        active: list[_SelfPlayGame] = []
        t0 = time.monotonic()
        while active or started < cfg.games:
            while len(active) < cfg.batch_games and started < cfg.games:
                active.append(self._new_game())
                started += 1
            want_sl, still = [], []
            for sp in active:
                if sp.moves in sp.record_at:
                    sp.record_at.discard(sp.moves)
                    self._record(sp)
                if sp.moves >= cfg.finish_at or sp.passes >= 2:
                    split = "heldout" if sp.heldout else "train"
                    for packed, z in self._finish(sp):
                        writers[split].add(packed, 0, z, n)
                        counts[split] += 1
                    games[split] += 1
                    self.played["games"] += 1
                    self.played["ended_by_passes"] += sp.passes >= 2
                    if progress is not None:
                        progress(self.played["games"], counts)
                    continue
                still.append(sp)
                if sp.moves + 1 == sp.u:        # move U: uniformly random among the legal moves
                    c = self._candidates(sp.game)
                    self._play(sp, int(c[self.rng.integers(len(c))]) if len(c) else PASS)
                    self.played["random_moves"] += 1
                else:
                    want_sl.append(sp)
            active = still
            if want_sl:
                self._sl_moves(want_sl)
        for w in writers.values():
            w.flush()
        elapsed = time.monotonic() - t0
        meta = {"feature_set": FEATURES, "feature_version": FEATURE_SETS[FEATURES].version,
                "planes": FEATURE_SETS[FEATURES].num_planes, "sources": [f"selfplay:{cfg.seed}"],
                "selfplay": asdict(cfg), "heldout_fraction": cfg.heldout_fraction,
                "positions_per_game": cfg.positions_per_game, "sizes": [n],
                "stats": {"positions": counts, "games": dict(games),
                          "played": dict(self.played), "elapsed_s": round(elapsed, 1),
                          "komi": {komi_key(cfg.komi): sum(games.values())}}}
        meta = merge_runs(out / "dataset.json", meta)
        tmp = out / "dataset.json.tmp"
        tmp.write_text(json.dumps(meta, indent=2))
        tmp.replace(out / "dataset.json")
        return meta


def merge_runs(path: Path, meta: dict) -> dict:
    """`meta` with the counts of the runs already in `path` added: several runs of the generator
    (different seeds) fill one dataset."""
    if not path.exists():
        meta["runs"] = [meta["selfplay"]]
        return meta
    old = json.loads(path.read_text())
    if old.get("feature_set") != meta["feature_set"] or "selfplay" not in old:
        raise ValueError(f"{path.parent} holds another kind of dataset")
    for key in ("positions", "games"):
        for split in ("train", "heldout"):
            meta["stats"][key][split] += old["stats"][key][split]
    for key, v in old["stats"]["played"].items():
        meta["stats"]["played"][key] = meta["stats"]["played"].get(key, 0) + v
    meta["stats"]["elapsed_s"] = round(meta["stats"]["elapsed_s"] + old["stats"]["elapsed_s"], 1)
    for k, n in old["stats"].get("komi", {}).items():     # runs from before it: not counted
        meta["stats"]["komi"][k] = meta["stats"]["komi"].get(k, 0) + n
    # the targets every run's shards hold (the rollout generator's: z only)
    meta["targets"] = [t for t in meta.get("targets", ["z"]) if t in old.get("targets", ["z"])]
    meta["sources"] = old["sources"] + meta["sources"]
    meta["runs"] = old.get("runs", []) + [meta["selfplay"]]
    meta["sizes"] = sorted(set(old.get("sizes", [old["selfplay"]["size"]])) | set(meta["sizes"]))
    return meta
