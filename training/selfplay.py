"""Policy self-play: whole games between policy networks, many at once (docs/algorithms.md §4.5).

    worker = SelfPlayWorker()
    worker.load("sl", Path("policy.onnx").read_bytes())
    games = worker.play(GamesJob(pairs=[("sl", "sl")] * 16, size=9, seed=1))

A `GamesJob` names, for each game, the network that plays Black and the one that plays White. The
games advance in lockstep: at each step the games whose side to move is played by one network go to
that network in one onnxruntime batch (`models.OnnxEvaluator`, the engine's own evaluation), and
each move is sampled from the policy over the candidate moves (legal, simple ko, never filling an
own true eye, so that games end). A game ends after two passes in a row (a side passes only when it
has no candidate move) or at the move cap, and is scored by the rules core: Tromp-Taylor area with
komi (`engine.game.Game.area_score`).

For the network named `learner` the job also returns what REINFORCE needs for each of its moves:
the packed planes, the move (Pos), the packed candidate mask, the colour that moved and the
baseline (the value network's v(s) for the side to move when the job names one, else 0).

`SelfPlayWorker` is plain Python: `training.workers` runs one per Ray actor, or one in process.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from goengine.engine.colors import BLACK
from goengine.engine.coords import PASS, all_locs, area, loc_to_pos, pos_to_loc
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search.leaves import candidate_moves
from goengine.models.onnx_evaluator import OnnxEvaluator

POLICY_FEATURES = "alphago48"
VALUE_FEATURES = "alphago49"
KOMI = 7.5


def selfplay_rules(komi: float = KOMI) -> Rules:
    """Area scoring, simple ko (the candidate moves' own check), komi."""
    return Rules(superko="none").with_komi(komi)


def pos_table(n: int) -> np.ndarray:
    """int64[area(n)]: Loc -> Pos (engine.coords), N*N for the border."""
    pos_of = np.full(area(n), n * n, dtype=np.int64)
    for lc in all_locs(n):
        pos_of[lc] = loc_to_pos(lc, n)
    return pos_of


def candidates(game: Game, buf: np.ndarray) -> np.ndarray:
    """The candidate moves (Locs) of the side to move: legal, not filling an own true eye."""
    k = candidate_moves(game.st, game.meta, buf) - 1      # the list ends with -1 (pass)
    return buf[:k].copy()


def policy_moves(policy, games: list[Game], rng: np.random.Generator, pos_of: np.ndarray,
                 buf: np.ndarray, temperature=1.0):
    """One move sampled from `policy` for each of `games`, in one network batch; `temperature`
    (one for all, or one per game): 0 takes the most probable candidate.

    Returns (locs [B] (PASS where a game has no candidate), planes uint8[B, 48, N, N],
    mask bool[B, N*N+1]); the games are not changed.
    """
    n = games[0].size
    planes = np.zeros((len(games), FEATURE_SETS[POLICY_FEATURES].num_planes, n, n), dtype=np.uint8)
    mask = np.zeros((len(games), n * n + 1), dtype=bool)
    cands = []
    for i, g in enumerate(games):
        c = candidates(g, buf)
        cands.append(c)
        extract_into(g, POLICY_FEATURES, planes[i])
        mask[i, pos_of[c]] = True
        if len(c) == 0:
            mask[i, n * n] = True
    priors = policy.evaluate(planes.astype(np.float32), mask).priors
    locs = np.full(len(games), PASS, dtype=np.int64)
    temps = np.broadcast_to(np.asarray(temperature, dtype=np.float64), len(games))
    for i, c in enumerate(cands):
        if len(c) == 0:
            continue
        p = priors[i, pos_of[c]].astype(np.float64)
        if temps[i] == 0:
            locs[i] = c[int(np.argmax(p))]
            continue
        if temps[i] != 1.0:
            p = p ** (1.0 / temps[i])
        s = p.sum()
        j = int(rng.choice(len(c), p=p / s)) if s > 0 else int(rng.integers(len(c)))
        locs[i] = c[j]
    return locs, planes, mask


@dataclass
class GamesJob:
    pairs: list                      # [(black network, white network)] one per game
    size: int = 9
    komi: float = KOMI
    seed: int = 0
    move_cap: int = 0                # 0 = 2 N^2 moves
    temperature: float = 1.0         # policy sampling temperature
    sampled_moves: int = -1          # moves of a game sampled at `temperature`; the later ones
                                     # take the most probable candidate (-1: all sampled)
    learner: str | None = None       # record REINFORCE positions for this network's moves
    value: str | None = None         # the value network giving the learner's baseline

    def networks(self) -> set[str]:
        """The networks a worker must hold to play this job."""
        return {name for pair in self.pairs for name in pair} | {self.value} - {None}

    def play(self, nets: dict) -> list["GameResult"]:
        return play_games(nets, self)


@dataclass
class GameResult:
    black: str
    white: str
    size: int
    komi: float
    moves: np.ndarray                # int16[T]: Pos of each move, pass = N*N
    score: float                     # black minus white, komi included (area)
    two_passes: bool                 # ended by two passes (else by the move cap)
    # the learner's moves (empty when the job has no learner, or it did not play this game)
    x: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8))   # packed planes
    move: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))     # Pos played
    mask: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8))  # packed cands
    baseline: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    colour: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))    # +1 black, -1 white

    @property
    def winner(self) -> int:
        """+1 black won, -1 white won, 0 a draw (integer komi)."""
        return int(np.sign(self.score))

    def z_for(self, name: str) -> int:
        """The outcome for network `name` (+1 won, -1 lost, 0 draw or not a player)."""
        if name == self.black:
            return self.winner
        if name == self.white:
            return -self.winner
        return 0


def move_cap(size: int, cap: int = 0) -> int:
    return cap or 2 * size * size


class SelfPlayWorker:
    """Holds one onnxruntime session per network name and plays `GamesJob`s."""

    def __init__(self, threads: int = 1):
        self.threads = threads
        self.nets: dict[str, OnnxEvaluator] = {}
        self._dir = Path(tempfile.mkdtemp(prefix="selfplay-nets-"))

    def load(self, name: str, onnx_bytes: bytes, kind: str = "policy") -> str:
        """Load (or replace) network `name` (a policy, or the value network of the baselines)
        from the bytes of an exported ONNX file."""
        path = self._dir / f"net-{len(self.nets)}.onnx"
        path.write_bytes(onnx_bytes)
        if kind == "zero":
            # the Zero search's own evaluation: a random symmetry per position (AlphaGo Zero,
            # Methods "Search") and the cache that spares a leaf met again before its expansion
            self.nets[name] = OnnxEvaluator(path, self.threads, symmetry="random",
                                            cache_size=100_000, kind=kind)
        else:
            self.nets[name] = OnnxEvaluator(path, self.threads, symmetry="none", cache_size=0,
                                            max_batch=256, kind=kind)
        return name

    def loaded(self) -> list[str]:
        return sorted(self.nets)

    def cpu_seconds(self) -> float:
        """CPU time of this worker's process so far (what its games cost, free of waiting)."""
        return time.process_time()

    def play(self, job) -> list:
        """Play `job` (a GamesJob, or any job with `networks()` and `play(nets)`, such as the
        value-data games of `training.value_games`) with this worker's networks."""
        return job.play(self.nets)

def play_games(nets: dict, job: GamesJob) -> list[GameResult]:
    """Play the games of `job` in lockstep with the evaluators `nets` (name -> OnnxEvaluator)."""
    n = job.size
    rng = np.random.default_rng(job.seed)
    rules = selfplay_rules(job.komi)
    games = [Game(n, rules) for _ in job.pairs]
    moves: list[list[int]] = [[] for _ in job.pairs]
    rec: list[list] = [[] for _ in job.pairs]     # the learner's (x, move, mask, b)
    pos_of, buf = pos_table(n), np.zeros(n * n + 2, dtype=np.int64)
    cap = move_cap(n, job.move_cap)
    active = list(range(len(games)))
    while active:
        by_net: dict[str, list[int]] = {}
        for i in active:
            name = job.pairs[i][0 if games[i].to_play == BLACK else 1]
            by_net.setdefault(name, []).append(i)
        for name, idx in by_net.items():
            temps = [job.temperature if job.sampled_moves < 0
                     or games[i].move_number < job.sampled_moves else 0.0 for i in idx]
            locs, planes, mask = policy_moves(nets[name], [games[i] for i in idx], rng,
                                              pos_of, buf, temps)
            if name == job.learner:
                _record(nets, job, [games[i] for i in idx], locs, planes, mask, pos_of,
                        [rec[i] for i in idx])
            for i, lc in zip(idx, locs):
                games[i].play(games[i].to_play, int(lc))
                moves[i].append(n * n if lc == PASS else int(pos_of[lc]))
        active = [i for i in active
                  if not games[i].is_over() and games[i].move_number < cap]
    return [_result(job, i, games[i], moves[i], rec[i]) for i in range(len(games))]


def _record(nets, job, games, locs, planes, mask, pos_of, recs) -> None:
    played = [k for k, lc in enumerate(locs) if lc != PASS]   # a forced pass is no choice
    if not played:
        return
    b = np.zeros(len(played), dtype=np.float32)
    if job.value is not None:
        n = job.size
        vplanes = np.zeros((len(played), FEATURE_SETS[VALUE_FEATURES].num_planes, n, n),
                           dtype=np.uint8)
        for j, k in enumerate(played):
            extract_into(games[k], VALUE_FEATURES, vplanes[j])
        b = nets[job.value].evaluate(vplanes.astype(np.float32)).value_stm
    for j, k in enumerate(played):
        recs[k].append((np.packbits(planes[k].reshape(-1)), int(pos_of[locs[k]]),
                        np.packbits(mask[k, :-1]), float(b[j]),
                        1 if games[k].to_play == BLACK else -1))


def _result(job, i, game: Game, moves: list[int], rec: list) -> GameResult:
    black, white = job.pairs[i]
    r = GameResult(black, white, job.size, job.komi, np.asarray(moves, dtype=np.int16),
                   game.area_score(), game.is_over())
    if rec:
        r.x = np.stack([t[0] for t in rec])
        r.move = np.asarray([t[1] for t in rec], dtype=np.int16)
        r.mask = np.stack([t[2] for t in rec])
        r.baseline = np.asarray([t[3] for t in rec], dtype=np.float32)
        r.colour = np.asarray([t[4] for t in rec], dtype=np.int8)
    return r


def replay(result: GameResult) -> Game:
    """The game of `result` replayed by the rules core (raises IllegalMove on a bad record)."""
    g = Game(result.size, selfplay_rules(result.komi))
    n = result.size
    for p in result.moves:
        g.play(g.to_play, PASS if p == n * n else pos_to_loc(int(p), n))
    return g
