"""Zero self-play and gating games: whole games played by the engine's own Zero search
(docs/algorithms.md §4.6).

    games = play_zero_games({"best": evaluator}, ZeroGamesJob(pairs=[("best", "best")] * 4,
                            size=9, visits=100, noise=True, seed=1))

Every move is a `engine.search.zero.ZeroSearch` search of `job.visits` root
visits (the tree kept from the previous move counts, as Leela Zero's -v), the same PUCT code
`engine-gtp --search zero` plays with. Self-play jobs (`noise=True`) mix Dirichlet noise into the
root priors; gating jobs have none. The move is sampled in proportion to the root visits for the
first `sampled_moves` moves (temperature 1), then it is the most visited one. A job's games are
played at once, each with searches of its own, and every network call carries a batch of each
game's leaves (engine.search.lockstep): a job of 4 games evaluates 32 positions a call.

Playout cap randomisation (KataGo, `fast_visits` > 0): each move is a full search (`visits`, with
the root noise) with probability `full_fraction`, else a fast one (`fast_visits`, no noise); only
the full searches are recorded as training positions, while every move, fast or full, plays on
towards the game's outcome. More games end per second of self-play, so the value target sees more
outcomes, and the policy targets keep the full searches' quality.

Gumbel self-play (`gumbel=True`; Danihelka et al. 2022, "Policy improvement by planning with
Gumbel"): each move is the engine's Gumbel root search (`NetSearchConfig.gumbel`): Gumbel noise on
the root logits picks `gumbel_k` moves, sequential halving spends `visits` simulations on them, and
the survivor (`result.moves[0]`) is played; that sampling is the exploration, so there is no
Dirichlet noise, no forced playouts and no temperature. The target pi is the search's improved
policy, softmax(logits + sigma(completed Q)) (`result.improved_policy`), which improves on the
network's policy even at a handful of simulations where a visit count cannot. With playout cap
randomisation the fast moves are Gumbel searches of `fast_visits` simulations, not recorded.

The record of a self-play game: for each recorded move, the packed zero17 planes of the position
before it (side to move's view) and pi, the root's visit distribution normalised over its children
(Pos order, pass last; the target is the visits at temperature 1 whatever move was played, as
Leela Zero and minigo store it; a Gumbel search's improved policy instead), the search's value
there `q` (the most visited move's mean value for the side to move, in [-1, 1]: the loop's value
target can mix it with z, `ZeroConfig.q_weight`) and its move number `ply` (every move without
playout cap randomisation). z follows from the winner: the rules core's area score (Tromp-Taylor,
komi) after two passes or at the move cap, or the resignation. A game played out (two passes or
the move cap) also records the final area ownership of every point and its score, the auxiliary
heads' targets (docs/algorithms.md §4.6); a resigned game has no final position and records none.

Resignation: a side whose search gives it a win rate below `resign_threshold` resigns. A fraction of
games (`no_resign`, decided per game by the job's seed) never resigns: they record the first
colour that would have resigned, so that the loop counts the false resignations (that colour won),
and every game records each colour's lowest win rate, from which the loop sets the threshold
(`training.zero.shards.calibrated_threshold`).

This module imports the engine and onnxruntime's evaluator only: it runs on the Ray workers,
which never load torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from goengine.engine.colors import BLACK, WHITE
from goengine.engine.coords import PASS, loc_to_pos, pos_to_loc
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search.lockstep import Lockstep
from goengine.engine.search.network import ZERO_C_PUCT, NetSearchConfig
from goengine.engine.search.zero import ZeroSearch
from goengine.training.workers.selfplay import default_sampled_moves

ZERO_FEATURES = "zero17"


def zero_rules(komi: float) -> Rules:
    """Area scoring and positional superko (the search prunes superko moves at its root)."""
    return Rules(superko="positional").with_komi(komi)


def default_play_on(size: int) -> int:
    """Moves before which a self-play game neither passes nor resigns: half the board (40 on 9x9).
    Without it a young network that believes one colour lost (komi 7.5 decides its early games)
    makes that colour resign or pass within a few moves, and the games, 6-10 moves long after
    five 9x9 generations, teach nothing but the opening."""
    return size * size // 2


def default_alpha(size: int) -> float:
    """Dirichlet alpha scaled to the board: 0.03 on 19x19 (about 10 / legal moves)."""
    return 0.03 * 361 / (size * size)


@dataclass
class ZeroGamesJob:
    pairs: list                      # [(black network, white network)] one per game
    size: int = 9
    komi: float = 7.5
    seed: int = 0
    visits: int = 100                # root visits per move
    noise: bool = True               # Dirichlet noise at the root (self-play); False: gating
    alpha: float = 0.0               # 0: default_alpha(size)
    eps: float = 0.25
    sampled_moves: int = -1          # moves sampled at temperature 1; -1: default_sampled_moves
    resign_threshold: float = 0.05   # win rate of the side to move; 0 never resigns
    no_resign_fraction: float = 0.1
    move_cap: int = 0                # 0: 2 N^2
    batch_size: int = 8              # leaves per network call in the search
    score_utility: float = 0.0       # NetSearchConfig.score_utility (0: the win rate alone)
    play_on: int = 0                 # moves before which nobody passes or resigns (0: off)
    record: bool = True              # keep planes and pi (self-play); False: only the outcome
    fast_visits: int = 0             # > 0: playout cap randomisation, fast searches of this many
                                     # visits (KataGo: 100 beside 600), not recorded; 0: off
    full_fraction: float = 0.25      # the chance that a move is a full, recorded search (KataGo)
    forced_playouts: float = 0.0     # > 0: KataGo's forced playouts and policy target pruning in
                                     # the noised (full) searches, k of sqrt(k P N) (KataGo: 2)
    c_puct: float = ZERO_C_PUCT      # the searches' PUCT exploration constant
    gumbel: bool = False             # Gumbel root search: its survivor played, its improved
                                     # policy the target (no noise, no temperature); gating: off
    gumbel_k: int = 16               # moves sampled at the root (NetSearchConfig.gumbel_k)
    gumbel_c_visit: float = 50.0     # sigma(q) = (c_visit + max N) c_scale q (the paper's)
    gumbel_c_scale: float = 1.0
    settings: dict = field(default_factory=dict)  # network name -> NetSearchConfig fields its
                                     # searches play with instead (experiments/zero_match.py
                                     # compares search settings on one network)

    def networks(self) -> set[str]:
        """The networks a worker must hold to play this job (training.workers.pool)."""
        return {name for pair in self.pairs for name in pair}

    def play(self, nets: dict) -> list["ZeroGameResult"]:
        return play_zero_games(nets, self)


@dataclass
class ZeroGameResult:
    black: str
    white: str
    size: int
    komi: float
    moves: np.ndarray                # int16[T]: Pos, pass = N*N
    winner: int                      # +1 black, -1 white, 0 draw
    score: float                     # area score, black minus white with komi; nan if resigned
    resigned: bool
    no_resign: bool                  # a game where resignation was off
    would_resign: int                # in a no-resign game: +1 / -1 the first colour that would
                                     # have resigned (black / white), 0 none
    min_winrate: tuple = (1.0, 1.0)  # (black, white): each one's lowest search win rate
    evaluations: int = 0             # positions the network evaluated for this game's searches
    x: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8))  # packed planes
    ply: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))  # int16[P]: the move
                                     # number of each recorded position (Black moves at even ones)
    pi: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))  # [T, N*N+1]
    q: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))  # float32[P]: the
                                     # search's value of each recorded position, side to move
    own: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))  # int8[N*N]: the final
                                     # area owner, +1 black, -1 white, 0 neutral; empty if resigned

    @property
    def false_resignation(self) -> bool:
        """A no-resign game won by the colour that would have resigned."""
        return self.would_resign != 0 and self.would_resign == self.winner

    def z(self) -> np.ndarray:
        """float32[P]: the outcome from the view of the side to move at each recorded move."""
        sign = np.where(self.ply % 2 == 0, 1, -1)   # black moves first (no handicap)
        return (self.winner * sign).astype(np.float32)

    def z_for(self, name: str) -> int:
        """+1 if network `name` won, -1 if it lost, 0 for a draw or a game it did not play
        (in self-play it played both sides: 0)."""
        if self.black == self.white:
            return 0
        if name == self.black:
            return self.winner
        if name == self.white:
            return -self.winner
        return 0


def visit_distribution(result, n: int) -> np.ndarray:
    """float32[N*N+1]: the root children's visits (Pos order, pass last; with forced playouts,
    the pruned ones), normalised; the priors when no child has a visit."""
    pi = np.zeros(n * n + 1, dtype=np.float64)
    prior = np.zeros_like(pi)
    for s in result.moves:
        pos = loc_to_pos(s.move, n)
        pi[pos] = s.visits if s.target_visits is None else s.target_visits
        prior[pos] = s.prior
    if pi.sum() <= 0:
        pi = prior
    return (pi / pi.sum()).astype(np.float32)


def policy_target(result, n: int, gumbel: bool) -> np.ndarray:
    """float32[N*N+1]: the recorded target of a search: a Gumbel search's improved policy, else
    the root's visit distribution."""
    return result.improved_policy if gumbel else visit_distribution(result, n)


def choose_move(result, pi: np.ndarray, sampled: bool, rng: np.random.Generator, n: int) -> int:
    """Pos: drawn from pi (temperature 1), else the search's own move (temperature -> 0), the
    one engine-gtp plays: the first of `result.moves`, the Gumbel root's survivor or the most
    visited child with ties broken by the prior. An argmax over pi would break the ties, common
    at a few visits a move, by board position instead, and play the weaker move."""
    if sampled:
        return int(rng.choice(len(pi), p=pi / pi.sum()))
    return loc_to_pos(result.moves[0].move, n)


def make_search(evaluator, job: ZeroGamesJob, seed: int, name: str = "") -> ZeroSearch:
    """The search a game of `job` plays network `name` with (its `settings`, if any, over the
    job's)."""
    n = job.size
    # Gumbel's sampling of the root's moves is its exploration: no Dirichlet noise beside it
    alpha = (job.alpha or default_alpha(n)) if job.noise and not job.gumbel else 0.0
    cfg = NetSearchConfig(mode="zero", c_puct=job.c_puct, dirichlet_alpha=alpha,
                          dirichlet_eps=job.eps,
                          batch_size=job.batch_size, score_utility=job.score_utility,
                          # the komi the network learned at (its file's `komi`: the komi of
                          # its training window); a --fair-komi run plays each generation at
                          # another, and the values and scores are moved there
                          # (engine.search.komi)
                          value_komi=None,
                          no_pass_before=job.play_on,
                          forced_k=job.forced_playouts if job.noise else 0.0,
                          gumbel=job.gumbel, gumbel_k=job.gumbel_k,
                          gumbel_c_visit=job.gumbel_c_visit,
                          gumbel_c_scale=job.gumbel_c_scale,
                          # the tree a game needs, with room for the subtree kept between moves
                          tree_capacity=max(20_000, 4 * job.visits * (n * n + 2)))
    return ZeroSearch(replace(cfg, **job.settings.get(name, {})), net=evaluator, seed=seed)


def zero_game(searches: dict, job: ZeroGamesJob, black: str, white: str,
              rng: np.random.Generator):
    """One game of `job` between the searches named `black` and `white` (the same search plays
    both sides in self-play, keeping its tree across the colours), as a generator: it yields
    each search it needs, (search, game, colour, visits), is sent that search's result, and
    returns the ZeroGameResult (`play_zero_games` runs a job's games in lockstep)."""
    n = job.size
    game = Game(n, zero_rules(job.komi))
    cap = job.move_cap or 2 * n * n
    sampled_moves = job.sampled_moves if job.sampled_moves >= 0 else default_sampled_moves(n)
    no_resign = bool(rng.random() < job.no_resign_fraction)
    planes = np.zeros((FEATURE_SETS[ZERO_FEATURES].num_planes, n, n), dtype=np.uint8)
    moves, xs, pis, qs, plies = [], [], [], [], []
    would_resign, resigned_by = 0, 0
    lowest = {BLACK: 1.0, WHITE: 1.0}
    evaluations = sum(s.evaluations for s in searches.values())
    # playout cap randomisation: the full searches' settings, and the fast ones' without root
    # noise (nor forced playouts); the full ones are put back when the game ends (the next game
    # starts from them)
    configs = {id(s): (s.config, replace(s.config, dirichlet_alpha=0.0, forced_k=0.0))
               for s in searches.values()}
    try:
        while not game.is_over() and game.move_number < cap:
            color = game.to_play
            search = searches[black if color == BLACK else white]
            full = job.fast_visits <= 0 or rng.random() < job.full_fraction
            search.config = configs[id(search)][0 if full else 1]
            result = yield search, game, color, job.visits if full else job.fast_visits
            sign = 1 if color == BLACK else -1
            lowest[color] = min(lowest[color], result.winrate)
            if (job.resign_threshold > 0 and result.winrate < job.resign_threshold
                    and game.move_number >= job.play_on):
                if not no_resign:
                    resigned_by = sign
                    break
                would_resign = would_resign or sign
            pi = policy_target(result, n, job.gumbel)
            if job.record and full:
                extract_into(game, ZERO_FEATURES, planes)
                xs.append(np.packbits(planes.reshape(-1)))
                pis.append(pi)
                qs.append(2.0 * result.winrate - 1.0)
                plies.append(game.move_number)
            # the survivor of sequential halving is never sampled (Gumbel-sampled already, and
            # its visits say nothing where the halving gave every move one); also for a side
            # whose settings alone turn the Gumbel root on (experiments/zero_match.py)
            sampled = game.move_number < sampled_moves and not search.config.gumbel
            pos = choose_move(result, pi, sampled, rng, n)
            game.play(color, PASS if pos == n * n else pos_to_loc(pos, n))
            moves.append(pos)
    finally:
        for s in searches.values():
            s.config = configs[id(s)][0]
    own = np.zeros(0, np.int8)
    if resigned_by:
        winner, score = -resigned_by, float("nan")
    else:
        score = game.area_score()
        winner = int(np.sign(score))
        owner = game.ownership().reshape(-1)      # Tromp-Taylor area, as `score` counts it
        own = (owner == BLACK).astype(np.int8) - (owner == WHITE).astype(np.int8)
    r = ZeroGameResult(black, white, n, job.komi, np.asarray(moves, dtype=np.int16), winner,
                       score, bool(resigned_by), no_resign, would_resign,
                       (lowest[BLACK], lowest[WHITE]),
                       sum(s.evaluations for s in searches.values()) - evaluations, own=own)
    if job.record:      # a game resigned at its first move records no position: [0, ...]
        r.x = np.stack(xs) if xs else np.zeros((0, (planes.size + 7) // 8), np.uint8)
        r.pi = np.stack(pis) if pis else np.zeros((0, n * n + 1), np.float32)
        r.q = np.asarray(qs, dtype=np.float32)
        r.ply = np.asarray(plies, dtype=np.int16)
    return r


def play_zero_games(evaluators: dict, job: ZeroGamesJob) -> list[ZeroGameResult]:
    """The games of `job`, played at once: each game with a search per network of its own (its
    tree kept between the game's moves), every game's search advancing one batch a round and
    the batches of a round that share a network evaluated in one call (engine.search.lockstep).
    Game i's searches and moves draw from its own generator, seeded by (job.seed, i)."""
    names = sorted({name for pair in job.pairs for name in pair})
    games, searches = {}, []
    for i, (b, w) in enumerate(job.pairs):
        rng = np.random.default_rng([job.seed, i])
        mine = {name: make_search(evaluators[name], job, int(rng.integers(2**31)), name)
                for name in names}
        searches += mine.values()
        games[i] = zero_game(mine, job, b, w, rng)
    results = {}
    lock = Lockstep()

    def advance(i, sent=None):
        """Send game i its search's result; start the search it asks for next, or keep its
        ZeroGameResult when it ends."""
        try:
            request = games[i].send(sent)
        except StopIteration as end:
            results[i] = end.value
            return
        lock.start(i, *request)

    try:
        for i in games:
            advance(i)
        while lock.active:
            for i, result in lock.round():
                advance(i, result)
    finally:
        for s in searches:
            s.close()
    return [results[i] for i in range(len(job.pairs))]


__all__ = ["ZeroGameResult", "ZeroGamesJob", "choose_move", "default_alpha", "default_play_on",
           "play_zero_games", "policy_target", "visit_distribution",
           "zero_game", "zero_rules"]
