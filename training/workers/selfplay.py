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
baseline (the value network's v(s) for the side to move when the job names one, else 0). A `fork`
job instead plays greedily after the opening and explores one learner move per game against a
twin that plays the most probable move there (`play_forked_games`).

`SelfPlayWorker` is plain Python: `training.workers.pool` runs one per Ray actor, or one in process.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from goengine.engine.colors import BLACK
from goengine.engine.coords import PASS, all_locs, area, loc_to_pos, pos_to_loc
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search.leaves import candidate_moves
from goengine.engine.symmetry import (N_SYMMETRIES, apply_each, apply_policy_each,
                                      invert_policy_each, permutations)
from goengine.models.metadata import ROLE_KINDS
from goengine.models.onnx_evaluator import SYMMETRY_MODES, OnnxEvaluator

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


class Moves(NamedTuple):
    """The moves `policy_moves` chose, and what REINFORCE and the forked games need of them."""
    locs: np.ndarray                 # int64[B]: the moves (PASS where a game has no candidate)
    planes: np.ndarray               # uint8[B, 48, N, N]: the positions' policy planes
    mask: np.ndarray                 # bool[B, N*N+1]: the candidate moves (pass where none)
    best: np.ndarray                 # int64[B]: the most probable candidate (PASS where none)
    p_best: np.ndarray               # float64[B]: its probability at the game's temperature
    sym: np.ndarray                  # int64[B]: the board symmetry `planes` and `mask` are in
                                     # (engine.symmetry; 0: the board as played)

    def frame_pos(self, i: int, pos: int) -> int:
        """Pos `pos` of the board as played, in the frame of row i's planes and mask (where
        the network saw the position, so that log p of the recorded move is the one it was
        sampled with)."""
        n = self.planes.shape[-1]
        if pos == n * n or self.sym[i] == 0:
            return pos
        # the frame's point q holds the played board's point permutations(n)[k][q]
        return int(np.flatnonzero(permutations(n)[self.sym[i]] == pos)[0])


def policy_moves(policy, games: list[Game], rng: np.random.Generator, pos_of: np.ndarray,
                 buf: np.ndarray, temperature=1.0, avoid_best=None,
                 symmetry: str = "none") -> Moves:
    """One move sampled from `policy` for each of `games`, in one network batch; `temperature`
    (one for all, or one per game): 0 takes the most probable candidate. Where `avoid_best` (one
    flag per game) is set and the game has another candidate, the move is drawn from the
    candidates other than the most probable one, in proportion to their probabilities.
    `symmetry` (SYMMETRY_MODES) is how the network sees the board (it is not symmetric: a
    policy trained on one orientation learns lines that hold in that orientation only):
    "none" as played; "random" on a random one of the 8 board symmetries per position, as the
    engine's searches evaluate, the planes and mask returned in that frame (`Moves.frame_pos`);
    "average" the mean of the policies of all 8 (the evaluator's own "average": its most
    probable move does not depend on a draw; the planes and mask returned are the board as
    played). The games are not changed."""
    n = games[0].size
    features = policy.meta.feature_set   # a Zero network's policy head reads its own planes
    planes = np.zeros((len(games), FEATURE_SETS[features].num_planes, n, n), dtype=np.uint8)
    mask = np.zeros((len(games), n * n + 1), dtype=bool)
    cands = []
    for i, g in enumerate(games):
        c = candidates(g, buf)
        cands.append(c)
        extract_into(g, features, planes[i])
        mask[i, pos_of[c]] = True
        if len(c) == 0:
            mask[i, n * n] = True
    if symmetry not in SYMMETRY_MODES:
        raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {symmetry!r}")
    sym = np.zeros(len(games), dtype=np.int64)
    if symmetry == "random":
        sym = rng.integers(0, N_SYMMETRIES, size=len(games))
        planes = np.ascontiguousarray(apply_each(planes, sym))
        mask = apply_policy_each(mask.astype(np.float32), sym, n) > 0.5
    if symmetry == "average":     # the evaluator's own mean over the 8 (models.OnnxEvaluator)
        priors = policy.evaluate(planes.astype(np.float32), mask, symmetry="average").priors
    else:
        priors = policy.evaluate(planes.astype(np.float32), mask).priors
    if symmetry == "random":
        priors = invert_policy_each(priors, sym, n)
    locs = np.full(len(games), PASS, dtype=np.int64)
    best = np.full(len(games), PASS, dtype=np.int64)
    p_best = np.ones(len(games))
    temps = np.broadcast_to(np.asarray(temperature, dtype=np.float64), len(games))
    avoid = np.zeros(len(games), bool) if avoid_best is None else np.asarray(avoid_best, bool)
    for i, c in enumerate(cands):
        if len(c) == 0:
            continue
        p = priors[i, pos_of[c]].astype(np.float64)
        b = int(np.argmax(p))
        best[i] = locs[i] = c[b]
        if temps[i] == 0:
            continue
        if temps[i] != 1.0:
            p = p ** (1.0 / temps[i])
        s = p.sum()
        p = p / s if s > 0 else np.full(len(c), 1.0 / len(c))
        p_best[i] = p[b]
        if avoid[i] and len(c) > 1:
            p[b] = 0.0
            s = p.sum()
            p = p / s if s > 0 else np.where(np.arange(len(c)) == b, 0.0, 1.0 / (len(c) - 1))
        locs[i] = c[int(rng.choice(len(c), p=p))]
    return Moves(locs, planes, mask, best, p_best, sym)


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
    fork: bool = False               # one explored learner move per game, the greedy move's
                                     # branch its baseline (play_games; needs sampled_moves >= 0)
    greedy_opponent: bool = False    # only the learner's opponents turn greedy after
                                     # sampled_moves; the learner samples every move
    symmetry: str | dict = "none"    # how the networks see the board (policy_moves), one mode
                                     # or {network: mode} (missing: "none"): "none",
                                     # "random" (recorded in that frame) or "average"; the
                                     # learner of an "average" job plays on a random symmetry:
                                     # sampling at temperature 1, the same distribution (the
                                     # mixture of the 8 policies), with one frame to record

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
    # each position's weight in the update (a forked game's 1 - p(most probable)); empty: all 1
    weight: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

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


def default_sampled_moves(size: int) -> int:
    """Moves played at temperature 1: AlphaGo Zero's 30 on 19x19 is about N^2 / 12; minigo's
    `(N^2 // 12) // 2 * 2` keeps it even so that both colours get the same count (6 on 9x9,
    2 on 5x5)."""
    return (size * size // 12) // 2 * 2


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
                                            max_batch=256, kind=ROLE_KINDS.get(kind, kind))
        return name

    def loaded(self) -> list[str]:
        return sorted(self.nets)

    def cpu_seconds(self) -> float:
        """CPU time of this worker's process so far (what its games cost, free of waiting)."""
        return time.process_time()

    def play(self, job) -> list:
        """Play `job` (a GamesJob, or any job with `networks()` and `play(nets)`, such as the
        value-data games of `training.value.games`) with this worker's networks."""
        return job.play(self.nets)

def play_games(nets: dict, job: GamesJob) -> list[GameResult]:
    """Play the games of `job` in lockstep with the evaluators `nets` (name -> OnnxEvaluator)."""
    if job.fork:
        return play_forked_games(nets, job)
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
        for name, idx in _by_network(job.pairs, games, active).items():
            temps = [move_temperature(job, name, games[i]) for i in idx]
            chosen = policy_moves(nets[name], [games[i] for i in idx], rng, pos_of, buf, temps,
                                  symmetry=move_symmetry(job, name))
            if name == job.learner:
                _record(nets, job, [games[i] for i in idx], chosen, pos_of,
                        [rec[i] for i in idx])
            for i, lc in zip(idx, chosen.locs):
                games[i].play(games[i].to_play, int(lc))
                moves[i].append(n * n if lc == PASS else int(pos_of[lc]))
        active = [i for i in active
                  if not games[i].is_over() and games[i].move_number < cap]
    return [_result(job, i, games[i], moves[i], rec[i]) for i in range(len(games))]


def move_temperature(job: GamesJob, name: str, game: Game) -> float:
    """The temperature network `name` plays its next move of `game` at in `job` (0: greedy)."""
    sampled = job.sampled_moves < 0 or game.move_number < job.sampled_moves
    return job.temperature if sampled or (job.greedy_opponent and name == job.learner) else 0.0


def move_symmetry(job: GamesJob, name: str) -> str:
    """How network `name` sees the board in `job` (GamesJob.symmetry)."""
    mode = job.symmetry.get(name, "none") if isinstance(job.symmetry, dict) else job.symmetry
    if mode == "average" and name == job.learner:
        return "random"
    return mode


def _by_network(pairs: list, games: list[Game], active: list[int]) -> dict[str, list[int]]:
    """{network: the games in `active` whose side to move it plays}."""
    by_net: dict[str, list[int]] = {}
    for i in active:
        by_net.setdefault(pairs[i][0 if games[i].to_play == BLACK else 1], []).append(i)
    return by_net


def play_forked_games(nets: dict, job: GamesJob) -> list[GameResult]:
    """The games of a `fork` job: both sides sample the first `sampled_moves` moves and play their
    most probable move after them, except one learner move per game, at the learner's first turn
    at or after a move number U drawn uniformly from [sampled_moves, N^2). That move is drawn
    from the policy at `temperature` without its most probable candidate, and the game forks
    there: a twin plays the most probable move instead, and both play on greedily, so each
    branch's outcome is what that one move decides against this opponent. The explored move is
    the game's only learner position; its baseline is the twin's outcome for the learner (a
    function of the position alone: SCST's greedy baseline, Rennie et al. 2017), so z - b is +2
    where the explored move wins a game the greedy one loses, -2 the other way round, 0 where they
    agree. Its weight 1 - p(most probable) makes the estimate that of REINFORCE sampling the whole
    policy: the most probable move's own term has advantage 0, so leaving it out of the draw loses
    nothing but games. A game that ends before U, or whose learner has a single candidate there,
    records nothing. Returns the games as played (the twins are not among them)."""
    n = job.size
    rng = np.random.default_rng(job.seed)
    rules = selfplay_rules(job.komi)
    games = [Game(n, rules) for _ in job.pairs]
    pairs = list(job.pairs)
    moves: list[list[int]] = [[] for _ in job.pairs]
    first = max(job.sampled_moves, 0)
    us = rng.integers(first, max(first + 1, n * n), size=len(games))
    explored = [False] * len(games)
    rec: list[tuple | None] = [None] * len(games)   # (x, move, mask, colour, weight)
    twin_of: dict[int, int] = {}                     # twin game -> the game it forked from
    pos_of, buf = pos_table(n), np.zeros(n * n + 2, dtype=np.int64)
    cap = move_cap(n, job.move_cap)
    active = list(range(len(games)))
    while active:
        for name, idx in _by_network(pairs, games, active).items():
            explore = [name == job.learner and i < len(job.pairs) and not explored[i]
                       and games[i].move_number >= us[i] for i in idx]
            temps = [job.temperature if games[i].move_number < first or e else 0.0
                     for i, e in zip(idx, explore)]
            chosen = policy_moves(nets[name], [games[i] for i in idx], rng, pos_of, buf, temps,
                                  avoid_best=explore, symmetry=move_symmetry(job, name))
            locs, planes, mask, best, p_best = chosen[:5]
            for k, (i, lc) in enumerate(zip(idx, locs)):
                if explore[k]:
                    explored[i] = True
                    if lc != best[k]:
                        twin = games[i].copy()
                        twin.play(twin.to_play, int(best[k]))
                        twin_of[len(games)] = i
                        games.append(twin)
                        pairs.append(pairs[i])
                        moves.append(moves[i] + [int(pos_of[best[k]])])   # best: no pass here
                        active.append(len(games) - 1)
                        rec[i] = (np.packbits(planes[k].reshape(-1)),
                                  chosen.frame_pos(k, int(pos_of[lc])),
                                  np.packbits(mask[k, :-1]),
                                  1 if games[i].to_play == BLACK else -1, 1.0 - p_best[k])
                games[i].play(games[i].to_play, int(lc))
                moves[i].append(n * n if lc == PASS else int(pos_of[lc]))
        active = [i for i in active
                  if not games[i].is_over() and games[i].move_number < cap]
    baseline = {i: int(np.sign(games[j].area_score())) * rec[i][3] for j, i in twin_of.items()}
    return [_result(job, i, games[i], moves[i],
                    [] if rec[i] is None else [(*rec[i][:3], float(baseline[i]), *rec[i][3:])])
            for i in range(len(job.pairs))]


def _record(nets, job, games, chosen: Moves, pos_of, recs) -> None:
    locs, planes, mask = chosen.locs, chosen.planes, chosen.mask
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
        recs[k].append((np.packbits(planes[k].reshape(-1)),
                        chosen.frame_pos(k, int(pos_of[locs[k]])),
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
        r.weight = np.asarray([t[5] if len(t) > 5 else 1.0 for t in rec], dtype=np.float32)
    return r


def replay(result: GameResult) -> Game:
    """The game of `result` replayed by the rules core (raises IllegalMove on a bad record)."""
    g = Game(result.size, selfplay_rules(result.komi))
    n = result.size
    for p in result.moves:
        g.play(g.to_play, PASS if p == n * n else pos_to_loc(int(p), n))
    return g
