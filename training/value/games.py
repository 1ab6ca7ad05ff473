"""Value-network games on the self-play workers: AlphaGo's recipe with the RL policy finishing the
game, and the targets of the auxiliary heads (docs/algorithms.md §4.3).

    job = ValueGamesJob(games=32, size=9, seed=1)       # networks "sl" and "rl" on the workers
    for _, games in pool.run([job]): ...                # training.workers.pool.WorkerPool
    games = ValueGamesJob(games=4, size=9).play(nets)   # or in process: {"sl": ev, "rl": ev}

Per game: U ~ uniform 1..max_u; moves 1..U-1 sampled from the SL policy, move U uniformly at
random among the candidate moves, then the RL policy (sampled) until two passes or the move cap.
A side passes only when it has no candidate move (legal, simple ko, never filling an own true
eye), so games end with the territory settled and the area ownership of the final position is
what the game decided. The recorded position is s_{U+1} (after U moves), plus K - 1 more drawn
uniformly from the rest of the game when `positions_per_game` = K > 1 (cheaper per position,
correlated). Only positions from s_{U+1} on: the RL policy plays every move of their ending, so
each z is a sample of the RL policy's value as s_{U+1}'s is; an earlier position's ending would
hold SL moves and the random move U, a target no value of the RL policy predicts.

Each recorded position carries, for the side to move in it:
  z       +1 / -1 / 0: the sign of the final area score (Tromp-Taylor, komi included);
  score   the final area score difference in points, komi included;
  own     int8[N*N]: the final area owner of every point, +1 / -1 / 0 (neutral).
So sum(own) - komi (black to move) or sum(own) + komi (white to move) equals `score`.

The game is replayed by the rules core at its end to extract the planes of the recorded positions:
a game need not keep planes for positions that are chosen only once its length is known.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from goengine.engine.colors import BLACK, WHITE
from goengine.engine.coords import PASS, pos_to_loc
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.game import Game
from goengine.training.workers.selfplay import (KOMI, VALUE_FEATURES, candidates, move_cap, policy_moves,
                                                pos_table, selfplay_rules)

SL, RL = "sl", "rl"


def default_max_u(size: int) -> int:
    """U's upper bound: 249 on 19x19 scaled by the board's area (AlphaGo drew U up to 450 from
    games that last longer; the late positions of games that never pass are rarely reached)."""
    return max(8, round(250 * size * size / 361.0)) - 1


@dataclass
class ValuePosition:
    x: np.ndarray                    # uint8: np.packbits of the alphago49 planes [49, N, N]
    move_number: int                 # moves played before this position
    colour: int                      # +1 black to move, -1 white
    z: int                           # outcome for the side to move
    score: float                     # final area score for the side to move, komi included
    own: np.ndarray                  # int8[N*N]: final owner, +1 side to move, -1 other, 0 none


@dataclass
class ValueGame:
    size: int
    komi: float
    u: int
    moves: np.ndarray                # int16[T]: Pos of each move, pass = N*N
    score: float                     # black minus white, komi included (area)
    two_passes: bool                 # ended by two passes (else by the move cap)
    positions: list = field(default_factory=list)    # [ValuePosition]


@dataclass
class ValueGamesJob:
    games: int
    size: int = 9
    komi: float = KOMI
    seed: int = 0
    max_u: int = 0                   # 0 = default_max_u(size)
    positions_per_game: int = 1      # AlphaGo: 1 (s_{U+1})
    temperature: float = 1.0         # sampling temperature of both policies
    move_cap: int = 0                # 0 = 2 N^2 moves
    sl: str = SL                     # the network names on the workers
    rl: str = RL

    def networks(self) -> set[str]:
        return {self.sl, self.rl}

    def play(self, nets: dict) -> list[ValueGame]:
        return play_value_games(nets, self)


def play_value_games(nets: dict, job: ValueGamesJob) -> list[ValueGame]:
    """The games of `job`, in lockstep: one network batch per network per move."""
    n = job.size
    rng = np.random.default_rng(job.seed)
    rules = selfplay_rules(job.komi)
    max_u = job.max_u or default_max_u(n)
    us = rng.integers(1, max_u + 1, size=job.games)
    games = [Game(n, rules) for _ in range(job.games)]
    moves: list[list[int]] = [[] for _ in games]
    cap = move_cap(n, job.move_cap)
    lockstep = Lockstep(n)
    active = list(range(job.games))
    while active:
        lockstep.move(nets, job, games, us, active, rng, moves)
        active = [i for i in active if not games[i].is_over() and games[i].move_number < cap]
    return [_finished(job, games[i], int(us[i]), moves[i], rng) for i in range(job.games)]


class Lockstep:
    """One move of many value games at once: the SL policy before move U, a uniformly random
    candidate at move U, the RL policy after it (U = 0: the RL policy throughout)."""

    def __init__(self, size: int):
        self.size = size
        self.pos_of = pos_table(size)
        self.buf = np.zeros(size * size + 2, dtype=np.int64)

    def move(self, nets: dict, job: ValueGamesJob, games: list[Game], us, active: list[int],
             rng: np.random.Generator, moves: list[list[int]] | None = None) -> None:
        """Play the next move of games[i] for every i in `active`, appending its Pos (pass =
        N*N) to moves[i] when `moves` is given."""
        n, pos_of, buf = self.size, self.pos_of, self.buf
        stage: dict[str, list[int]] = {job.sl: [], "random": [], job.rl: []}
        for i in active:
            t = games[i].move_number + 1                 # the move about to be played
            stage[job.sl if t < us[i] else "random" if t == us[i] else job.rl].append(i)
        locs_of: dict[int, int] = {}
        for i in stage.pop("random"):
            c = candidates(games[i], buf)
            locs_of[i] = int(c[rng.integers(len(c))]) if len(c) else PASS
        for name, idx in stage.items():
            if idx:
                locs = policy_moves(nets[name], [games[i] for i in idx], rng, pos_of, buf,
                                    job.temperature).locs
                locs_of.update(zip(idx, map(int, locs)))
        for i, lc in locs_of.items():
            games[i].play(games[i].to_play, lc)
            if moves is not None:
                moves[i].append(n * n if lc == PASS else int(pos_of[lc]))


def _finished(job: ValueGamesJob, game: Game, u: int, moves: list[int], rng) -> ValueGame:
    n, total = job.size, len(moves)
    score = game.area_score()
    owner = game.ownership().reshape(-1)
    own_black = (owner == BLACK).astype(np.int8) - (owner == WHITE).astype(np.int8)
    start = min(u, total)                                # s_{U+1}, or the end of a short game
    at = {start}
    extra = list(range(start + 1, total + 1))            # the RL policy's part of the game
    k = min(job.positions_per_game - 1, len(extra))
    if k > 0:
        at.update(int(t) for t in rng.choice(extra, size=k, replace=False))
    out = ValueGame(n, job.komi, u, np.asarray(moves, dtype=np.int16), score, game.is_over())
    planes = np.zeros((FEATURE_SETS[VALUE_FEATURES].num_planes, n, n), dtype=np.uint8)
    replayed = Game(n, selfplay_rules(job.komi))
    for t in range(total + 1):
        if t in at:
            colour = 1 if replayed.to_play == BLACK else -1
            extract_into(replayed, VALUE_FEATURES, planes)
            s = colour * score
            out.positions.append(ValuePosition(np.packbits(planes.reshape(-1)), t, colour,
                                               int(np.sign(s)), float(s),
                                               (colour * own_black).astype(np.int8)))
        if t < total:
            p = moves[t]
            replayed.play(replayed.to_play, PASS if p == n * n else pos_to_loc(p, n))
    return out
