"""Play a match between two GTP engines, refereed by our rules core.

    cfg = MatchConfig(EngineSpec(argv_a), EngineSpec(argv_b), games=10, size=9, komi=7)
    summary = Match(cfg).run()

Per game: colours alternate (engine A takes black in the odd-numbered games unless `a_black_first`
is False); every move an engine generates is replayed with `engine.game.Game` and forwarded to the
other engine. An engine forfeits the game on a crash, a `genmove` over the hard wall-clock limit
(`move_timeout`), a GTP error (on `genmove`, or refusing a legal `play`), an unparsable or illegal
move, and, with a real clock, on overstepping its time by more than `lag` seconds. An engine that
crashed or timed out is restarted before the next game.

A game may begin from an opening (`openings`, game i the ((i - 1) mod len)-th): its moves are
played into the referee's game and sent to both engines with `play` before the first `genmove`,
outside the clock; the SGF keeps them as the game's first moves.

The game ends after two consecutive passes, a resignation, a forfeit, or `max_moves`. Scoring uses the
rules' count (area by default) with komi; dead stones are
  1. the dead list both engines give to `final_status_list dead`, if both answer and agree; else
  2. the referee engine's (`referee`, GNU Go by default) after the game is replayed into it; else
  3. none (Tromp-Taylor).
"""
from __future__ import annotations

import copy
import csv
import datetime
import json
import math
import os
import random
import shlex
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from goengine.engine.colors import BLACK, COLOUR_LETTERS, WHITE
from goengine.engine.coords import PASS, CoordError, format_gtp, parse_gtp
from goengine.engine.game import Game, IllegalMove, format_result
from goengine.engine.replay import record_fields, record_move
from goengine.engine.rules import named_rules
from goengine.engine.timecontrol import Clock
from goengine.gtp.client import GtpClient, GtpClientError, GtpCrash, GtpError, GtpTimeout
from goengine.gtp.timekeeping import time_left_args, time_settings_args
from goengine.match.sprt import Sprt
from goengine.match.summary import GameResult, MatchSummary, summarize
from goengine.sgf_tools import GameRecord, sgf_rules, write_sgf

GNUGO_PATH = "/usr/games/gnugo"
_SGF_COLOR = {BLACK: "B", WHITE: "W"}


class MatchError(Exception):
    """The match cannot be played at all (an engine does not start, refuses the board size, ...)."""


def default_referee() -> list[str] | None:
    """GNU Go in GTP mode if it is installed, else None."""
    path = GNUGO_PATH if os.access(GNUGO_PATH, os.X_OK) else shutil.which("gnugo")
    if path is None:
        return None
    return [path, "--mode", "gtp", "--chinese-rules", "--level", "10"]


@dataclass(frozen=True)
class Opening:
    """A position a game begins from: the moves that lead to it from the empty board."""
    name: str                                  # where it came from (an SGF file), for the record
    moves: tuple[tuple[int, int], ...]         # (colour, Loc), Loc PASS for a pass

    @classmethod
    def from_record(cls, name: str, record, moves: int | None = None) -> Opening:
        """The first `moves` moves (all by default) of a game record's main line."""
        kept = record.moves if moves is None else record.moves[:moves]
        return cls(name, tuple(record_move(m, record.size) for m in kept))

    def check(self, size: int, rules: str, komi: float) -> None:
        """ValueError unless the moves are legal in turn on an empty `size` board."""
        game = Game(size, named_rules(rules, komi))
        for i, (color, lc) in enumerate(self.moves):
            try:
                game.play(color, lc)
            except IllegalMove as e:
                raise ValueError(f"opening {self.name}: move {i + 1} is illegal on "
                                 f"{size}x{size}: {e}") from None
        if game.is_over():
            raise ValueError(f"opening {self.name}: it ends the game (two passes)")


@dataclass
class EngineSpec:
    argv: list[str]
    name: str | None = None    # display name; default: the engine's GTP `name` + `version`


@dataclass
class MatchConfig:
    engine_a: EngineSpec
    engine_b: EngineSpec
    games: int = 2
    size: int = 9
    komi: float = 7.0
    handicap: int = 0
    rules: str = "chinese"
    time_control: Clock | None = None          # absolute, canadian or simple; None: no time commands
    enforce_time: bool = False                 # lose on time (real clock); per-move mode: advisory
    lag: float = 1.0                           # seconds over the clock tolerated before a time loss
    move_timeout: float = 30.0                 # hard wall-clock limit per genmove
    command_timeout: float = 30.0              # other commands (play, setup, final_status_list)
    startup_timeout: float = 120.0             # first command after start (models load, JIT)
    max_moves: int | None = None               # default: 3 * size * size
    sgf_dir: str | None = None
    results_jsonl: str | None = None
    results_csv: str | None = None
    referee: list[str] | None = field(default_factory=default_referee)
    stderr_dir: str | None = None              # engines' stderr appended to files here
    seed: int | None = None                    # seeds the colour of game 1 (coin flip)
    a_black_first: bool = True                 # without a seed: A takes black in game 1
    sprt: Sprt | None = None                   # stop once the SPRT decides (at most `games`)
    openings: Sequence[Opening] = ()           # positions the games begin from, in turn

    def __post_init__(self):
        if self.games < 1:
            raise ValueError("games must be >= 1")
        if not 2 <= self.size <= 25:
            raise ValueError("size must be within 2..25")
        if self.handicap < 0 or self.handicap == 1:
            raise ValueError("handicap must be 0 or 2..9")
        if self.handicap:
            Game(self.size).fixed_handicap_locs(self.handicap)   # ValueError when impossible
        named_rules(self.rules, self.komi)                       # ValueError for unknown rules
        if self.move_timeout <= 0 or self.command_timeout <= 0 or self.startup_timeout <= 0:
            raise ValueError("timeouts must be > 0")
        if self.max_moves is not None and self.max_moves < 1:
            raise ValueError("max_moves must be >= 1")
        if self.time_control is not None:
            time_settings_args(self.time_control)               # ValueError when GTP cannot say it
        if self.openings and self.handicap:
            raise ValueError("openings and a handicap cannot be combined")
        for op in self.openings:
            op.check(self.size, self.rules, self.komi)           # ValueError when not playable

    def opening_for(self, index: int) -> Opening | None:
        """The opening game `index` (1-based) begins from, if any."""
        return self.openings[(index - 1) % len(self.openings)] if self.openings else None

    @property
    def move_cap(self) -> int:
        return self.max_moves if self.max_moves is not None else 3 * self.size * self.size


class _Forfeit(Exception):
    def __init__(self, color: int, reason: str):
        super().__init__(reason)
        self.color = color
        self.reason = reason


class _Player:
    """One engine of the match, restartable."""

    def __init__(self, label: str, spec: EngineSpec, cfg: MatchConfig):
        self.label = label
        self.spec = spec
        self.cfg = cfg
        self.client: GtpClient | None = None
        self.name = spec.name or label
        self.restarts = 0
        self.needs_restart = False
        self.fresh = True

    def start(self) -> None:
        stderr_path = None
        if self.cfg.stderr_dir:
            Path(self.cfg.stderr_dir).mkdir(parents=True, exist_ok=True)
            stderr_path = os.path.join(self.cfg.stderr_dir, f"engine-{self.label}.stderr")
        self.client = GtpClient(self.spec.argv, name=f"{self.label}:{self.spec.argv[0]}",
                                stderr_path=stderr_path, timeout=self.cfg.command_timeout)
        gtp_name = self.client.engine_name(timeout=self.cfg.startup_timeout)
        if self.spec.name is None and self.restarts == 0:   # keep the name across restarts
            try:
                version = self.client.engine_version()
            except GtpError:
                version = ""
            version = version.split()[0] if version.split() else ""   # Pachi adds a paragraph
            self.name = f"{gtp_name} {version}".strip()
        self.needs_restart = False
        self.fresh = True      # an engine may answer `name` at once and load its models after

    def ensure(self) -> GtpClient:
        if self.client is None or self.needs_restart or not self.client.is_alive():
            if self.client is not None:
                self.client.kill()
                self.restarts += 1
            self.start()
        assert self.client is not None
        return self.client

    def close(self) -> None:
        if self.client is not None:
            if self.needs_restart or not self.client.is_alive():
                self.client.kill()
            else:
                self.client.quit()
            self.client = None


def _describe(e: GtpClientError) -> str:
    if isinstance(e, GtpTimeout):
        return f"timeout ({e.timeout:g} s) on '{e.command}'"
    if isinstance(e, GtpCrash):
        rc = "?" if e.returncode is None else e.returncode
        return f"crash (exit code {rc}) on '{e.command}'"
    if isinstance(e, GtpError):
        return f"GTP error on '{e.command}': {e.message}"
    return str(e)


class Match:
    def __init__(self, cfg: MatchConfig,
                 progress: Callable[[GameResult, "Match"], None] | None = None,
                 log: Callable[[str], None] | None = None,
                 previous: Sequence[GameResult] = ()):
        """`previous`: the games 1..k a resumed match already played (match.summary's
        read_results); this one plays on from game k + 1, its SPRT over all of them."""
        self.cfg = cfg
        self.progress = progress
        self.log = log or (lambda msg: None)
        self.players = {"A": _Player("A", cfg.engine_a, cfg), "B": _Player("B", cfg.engine_b, cfg)}
        self.results: list[GameResult] = list(previous)
        for r in previous:      # the names to report if no game is left to play
            self.players[r.black].name = r.black_name
            self.players[r.white].name = r.white_name
        # tells the matches apart when several append to the same results file
        self.match_id = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
        self._referee: GtpClient | None = None
        self._referee_failed = cfg.referee is None
        if cfg.seed is not None:
            self.a_black_first = random.Random(cfg.seed).random() < 0.5
        else:
            self.a_black_first = cfg.a_black_first

    # ------------------------------------------------------------------ match
    def run(self) -> MatchSummary:
        first = len(self.results) + 1
        if self.sprt_decision() != "continue" or first > self.cfg.games:
            self.log(f"nothing left to play after {first - 1} games"
                     + (f": {self.summary().sprt}" if self.cfg.sprt else ""))
            return self.summary()
        try:
            for lab, p in self.players.items():
                try:
                    p.start()
                except GtpClientError as e:
                    tail = e.stderr_tail if isinstance(e, GtpCrash) else ""
                    raise MatchError(f"engine {lab} ({shlex.join(p.spec.argv)}) did not start: "
                                     f"{_describe(e)}\n{tail}".rstrip()) from e
            if self.players["A"].name == self.players["B"].name:
                self.players["A"].name += " (A)"
                self.players["B"].name += " (B)"
            for i in range(first, self.cfg.games + 1):
                res = self.play_game(i)
                self.results.append(res)
                self._write_result(res)
                if self.progress:
                    self.progress(res, self)
                if self.sprt_decision() != "continue":
                    self.log(f"stopped after game {i}: {self.summary().sprt}")
                    break
        finally:
            self.close()
        return self.summary()

    def close(self) -> None:
        for p in self.players.values():
            try:
                p.close()
            except Exception:
                pass
        if self._referee is not None:
            try:
                self._referee.quit()
            except Exception:
                pass
            self._referee = None

    def colors_for(self, index: int) -> tuple[str, str]:
        """(black label, white label) of game `index` (1-based)."""
        a_black = ((index - 1) % 2 == 0) == self.a_black_first
        return ("A", "B") if a_black else ("B", "A")

    # ------------------------------------------------------------------ one game
    def play_game(self, index: int) -> GameResult:
        cfg = self.cfg
        blab, wlab = self.colors_for(index)
        by_color = {BLACK: self.players[blab], WHITE: self.players[wlab]}
        game = Game(cfg.size, named_rules(cfg.rules, cfg.komi))
        if cfg.handicap:
            game.set_handicap(game.fixed_handicap_locs(cfg.handicap))
        spent = {BLACK: [], WHITE: []}     # (seconds taken, seconds the clock allowed) per move
        start = time.monotonic()
        res = GameResult(index=index, black=blab, white=wlab,
                         black_name=by_color[BLACK].name, white_name=by_color[WHITE].name,
                         winner=None, winner_color=None, result="Void", end="")
        comments: list[str] = []
        opening = cfg.opening_for(index)
        if opening is not None:
            comments.append(f"Began from {len(opening.moves)} moves of {opening.name}.")
        try:
            for color in (BLACK, WHITE):
                self._setup(by_color[color], color, game.handicap)
            res.black_name, res.white_name = by_color[BLACK].name, by_color[WHITE].name
            if opening is not None:
                self._play_opening(game, by_color, opening)
            self._loop(game, by_color, self._new_clock(), spent, res)
        except _Forfeit as f:
            comments.append(self._forfeited(f, by_color, res))
        if res.end in ("score", "max-moves"):
            comments += self._scored(game, by_color, res)
        elif res.end == "resign":
            comments.append(f"{'White' if res.winner_color == 'B' else 'Black'} resigned.")
        res.moves = len(game.history)
        res.duration = time.monotonic() - start
        for color, p in by_color.items():
            moves = spent[color]
            total, longest = sum(e for e, _ in moves), max((e for e, _ in moves), default=0.0)
            closest = min((m for m in moves if math.isfinite(m[1])),
                          key=lambda m: m[1] - m[0], default=None)
            if p.label == "A":
                res.time_a, res.moves_a, res.longest_a, res.closest_a = total, len(moves), longest, closest
            else:
                res.time_b, res.moves_b, res.longest_b, res.closest_b = total, len(moves), longest, closest
        if cfg.sgf_dir:
            res.sgf = self._write_sgf(game, res, comments)
        return res

    def _new_clock(self) -> Clock | None:
        """The referee's clock for one game (both players), or None without a time control."""
        if self.cfg.time_control is None:
            return None
        clock = copy.deepcopy(self.cfg.time_control)
        clock.reset()
        return clock

    def _forfeited(self, f: _Forfeit, by_color, res: GameResult) -> str:
        """Record a forfeit in `res`; the SGF comment."""
        loser = by_color[f.color]
        winner_color = 3 - f.color
        res.end = "forfeit"
        res.forfeit_by = loser.label
        res.forfeit_reason = f.reason
        res.winner = by_color[winner_color].label
        res.winner_color = _SGF_COLOR[winner_color]
        res.result = f"{_SGF_COLOR[winner_color]}+F"
        self.log(f"game {res.index}: engine {loser.label} forfeits: {f.reason}")
        return (f"{'Black' if f.color == BLACK else 'White'} ({loser.name}, "
                f"engine {loser.label}) forfeits: {f.reason}")

    def _scored(self, game: Game, by_color, res: GameResult) -> list[str]:
        """Score a finished (or stopped) game into `res`; the SGF comments."""
        score, method, dead = self._score(game, by_color)
        res.score, res.scoring = score, method
        if score > 0:
            res.winner_color, res.winner = "B", res.black
        elif score < 0:
            res.winner_color, res.winner = "W", res.white
        res.result = format_result(score)
        comments = []
        if res.end == "max-moves":
            comments.append(f"Stopped at the move cap ({self.cfg.move_cap} moves).")
        dead_s = " ".join(format_gtp(d, game.size) for d in dead) if dead else "none"
        comments.append(f"Scored by {game.rules.scoring} count, komi {self.cfg.komi:g}, dead stones "
                        f"by {method}: {dead_s}; {res.result}.")
        return comments

    def _write_sgf(self, game: Game, res: GameResult, comments: list[str]) -> str:
        Path(self.cfg.sgf_dir).mkdir(parents=True, exist_ok=True)
        path = os.path.join(self.cfg.sgf_dir, f"game-{res.index:04d}.sgf")
        title = f"{res.black_name} vs {res.white_name}, game {res.index}"
        record = GameRecord(**record_fields(game), result=res.result,
                            black_player=res.black_name, white_player=res.white_name,
                            rules=sgf_rules(self.cfg.rules), date=datetime.date.today().isoformat(),
                            comments={-1: "\n".join([title] + comments)})
        with open(path, "wb") as f:
            f.write(write_sgf(record))
        return path

    def _setup(self, player: _Player, color: int, handicap: list[int]) -> None:
        cfg = self.cfg
        try:
            client = player.ensure()
        except GtpClientError as e:
            player.needs_restart = True
            raise _Forfeit(color, f"could not (re)start: {_describe(e)}") from e
        # the first setup after a start may wait for the engine to finish loading
        setup_timeout = cfg.startup_timeout if player.fresh else cfg.command_timeout
        player.fresh = False
        try:
            try:
                client.boardsize(cfg.size, timeout=setup_timeout)
            except GtpError as e:
                raise MatchError(f"engine {player.label} ({player.name}) refuses boardsize "
                                 f"{cfg.size}: {e.message}") from e
            client.clear_board(timeout=setup_timeout)
            client.komi(cfg.komi, timeout=setup_timeout)
            if cfg.time_control is not None:
                if client.known_command("time_settings"):
                    try:
                        client.time_settings(*time_settings_args(cfg.time_control))
                    except GtpError as e:
                        self.log(f"engine {player.label}: {e}")
            if handicap:
                self._send_handicap(client, handicap)
        except MatchError:
            raise
        except GtpClientError as e:
            if not isinstance(e, GtpError):
                player.needs_restart = True
            raise _Forfeit(color, f"setup failed: {_describe(e)}") from e

    def _play_opening(self, game: Game, by_color, opening: Opening) -> None:
        """The opening's moves into the referee's game and both engines (an engine that refuses
        one forfeits, as for any legal move it is sent)."""
        for color, lc in opening.moves:
            game.play(color, lc)          # legal: MatchConfig checked the opening
            for receiver_color in (BLACK, WHITE):
                self._forward(by_color[receiver_color], receiver_color, color,
                              format_gtp(lc, game.size), game_over=False)

    def _send_handicap(self, client: GtpClient, locs: list[int]) -> None:
        n = self.cfg.size
        verts = [format_gtp(lc, n) for lc in locs]
        if client.known_command("set_free_handicap"):
            client.command("set_free_handicap " + " ".join(verts))
            return
        answer = client.command(f"fixed_handicap {len(locs)}").upper().split()
        if sorted(answer) != sorted(v.upper() for v in verts):
            raise GtpError(f"fixed_handicap placed {' '.join(answer)}, expected {' '.join(verts)}",
                           engine=client.name, command=f"fixed_handicap {len(locs)}")

    def _loop(self, game: Game, by_color, clock: Clock | None, spent, res: GameResult) -> None:
        """Ask for moves in turn until the game ends; each is refereed, timed and forwarded."""
        cfg = self.cfg
        while True:
            if len(game.history) >= cfg.move_cap:
                res.end = "max-moves"
                return
            color = game.to_play
            other = 3 - color
            allowed = clock.available(color) if clock is not None else math.inf
            answer, elapsed = self._genmove(by_color[color], color, clock)
            spent[color].append((elapsed, allowed))
            if answer == "resign":
                res.end = "resign"
                res.winner = by_color[other].label
                res.winner_color = _SGF_COLOR[other]
                res.result = f"{_SGF_COLOR[other]}+R"
                return
            lc = self._referee_move(game, color, answer)
            if clock is not None:
                over = clock.spend(color, elapsed, lag=0.0,
                                   tolerance=cfg.lag if cfg.enforce_time else math.inf)
                if clock.state(color).flagged:
                    raise _Forfeit(color, f"lost on time ({over:.2f} s over) "
                                          f"at move {len(game.history)}")
            over = game.passes_in_a_row >= 2
            self._forward(by_color[other], other, color, format_gtp(lc, game.size), game_over=over)
            if over:
                res.end = "score"
                return

    def _genmove(self, mover: _Player, color: int, clock: Clock | None) -> tuple[str, float]:
        """(answer, seconds) of `genmove` (after `time_left` from the referee's clock)."""
        client = mover.client
        assert client is not None
        c = COLOUR_LETTERS[color]
        try:
            if clock is not None and client.known_command("time_left"):
                try:
                    client.time_left(c, *time_left_args(clock, color))
                except GtpError as e:      # advisory: the referee's clock is what counts
                    self.log(f"engine {mover.label}: {e}")
            answer = client.genmove(c, timeout=self.cfg.move_timeout)
        except GtpClientError as e:
            if not isinstance(e, GtpError):
                mover.needs_restart = True
            raise _Forfeit(color, _describe(e)) from e
        return answer, client.last_elapsed

    def _referee_move(self, game: Game, color: int, answer: str) -> int:
        """Play the answer in the referee's game; its Loc. A forfeit when unparsable or illegal."""
        try:
            lc = parse_gtp(answer, game.size)
            if lc < 0 and lc != PASS:
                raise CoordError(answer)
        except CoordError:
            raise _Forfeit(color, f"unparsable move {answer!r}") from None
        try:
            game.play(color, lc)
        except IllegalMove as e:
            raise _Forfeit(color, f"illegal move {answer} ({e.reason}) "
                                  f"at move {len(game.history) + 1}") from None
        return lc

    def _forward(self, receiver: _Player, receiver_color: int, color: int, vertex: str,
                 game_over: bool) -> None:
        """Play the move on the other engine: refusing a legal move forfeits, unless the game is over
        (then it is told whatever it answers)."""
        assert receiver.client is not None
        c = COLOUR_LETTERS[color]
        try:
            receiver.client.play(c, vertex)
        except GtpClientError as e:
            if not isinstance(e, GtpError):
                receiver.needs_restart = True
            if game_over:
                return
            reason = (f"rejected the legal move {c} {vertex}: {e.message}"
                      if isinstance(e, GtpError) else _describe(e))
            raise _Forfeit(receiver_color, reason) from e

    # ------------------------------------------------------------------ scoring
    def _score(self, game: Game, by_color) -> tuple[float, str, list[int]]:
        lists = []
        for color in (BLACK, WHITE):
            lists.append(self._dead_list(by_color[color].client, game))
        if lists[0] is not None and lists[1] is not None and set(lists[0]) == set(lists[1]):
            dead = sorted(set(lists[0]))
            return game.score(dead), "agreed", dead
        dead = self._referee_dead(game)
        if dead is not None:
            return game.score(dead), "referee", dead
        return game.score(None), "tromp-taylor", []

    def _dead_list(self, client: GtpClient | None, game: Game) -> list[int] | None:
        """Dead stones per the engine, or None if it cannot or will not say."""
        if client is None or not client.is_alive():
            return None
        n = game.size
        try:
            if not client.known_command("final_status_list"):
                return None
            verts = client.final_status_list("dead", timeout=self.cfg.command_timeout)
        except GtpClientError:
            return None
        out = []
        for v in verts:
            try:
                lc = parse_gtp(v, n)
            except CoordError:
                return None
            if lc < 0:
                return None
            if game.color_at(lc) in (BLACK, WHITE):   # ignore empty points named dead
                out.append(lc)
        return out

    def _referee_dead(self, game: Game) -> list[int] | None:
        """Dead stones per the referee engine after the game is replayed into it, or None."""
        ref = None if self._referee_failed else self._referee_client()
        if ref is None:
            return None
        try:
            ref.boardsize(game.size)
            ref.clear_board()
            ref.komi(self.cfg.komi)
            if game.handicap:
                self._send_handicap(ref, game.handicap)
            for color, lc in game.history:
                ref.play(COLOUR_LETTERS[color], format_gtp(lc, game.size))
            return self._dead_list(ref, game)
        except GtpError as e:
            self.log(f"referee could not replay the game: {e}")
            return None
        except GtpClientError as e:
            self.log(f"referee failed: {_describe(e)}")
            self._drop_referee()
            return None

    def _referee_client(self) -> GtpClient | None:
        """The referee engine, (re)started when needed; None when it does not start (then it is
        not tried again)."""
        if self._referee is not None and self._referee.is_alive():
            return self._referee
        self._drop_referee()
        cfg = self.cfg
        try:
            self._referee = GtpClient(cfg.referee, name="referee", timeout=cfg.command_timeout)
            self._referee.engine_name(timeout=cfg.startup_timeout)
        except GtpClientError as e:
            self.log(f"referee {shlex.join(cfg.referee)} did not start: {_describe(e)}; "
                     "scoring without it")
            self._referee_failed = True
            self._drop_referee()
            return None
        return self._referee

    def _drop_referee(self) -> None:
        if self._referee is not None:
            self._referee.kill()
            self._referee = None

    # ------------------------------------------------------------------ output
    def _write_result(self, res: GameResult) -> None:
        d = {"match_id": self.match_id, **res.as_dict()}
        d["name_a"] = self.players["A"].name
        d["name_b"] = self.players["B"].name
        if self.cfg.results_jsonl:
            Path(self.cfg.results_jsonl).parent.mkdir(parents=True, exist_ok=True)
            with open(self.cfg.results_jsonl, "a", encoding="utf-8") as f:
                f.write(json.dumps(d) + "\n")
        if self.cfg.results_csv:
            Path(self.cfg.results_csv).parent.mkdir(parents=True, exist_ok=True)
            new = not os.path.exists(self.cfg.results_csv) or os.path.getsize(self.cfg.results_csv) == 0
            with open(self.cfg.results_csv, "a", encoding="utf-8", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(d))
                if new:
                    w.writeheader()
                w.writerow(d)

    def summary(self) -> MatchSummary:
        return summarize(self.results, {k: p.name for k, p in self.players.items()},
                         self.cfg.sprt)

    def sprt_decision(self) -> str:
        """"H1", "H0" or "continue" (also without --sprt) after the games so far."""
        if self.cfg.sprt is None:
            return "continue"
        s = self.summary()
        return self.cfg.sprt.decide(s.wins["A"], s.draws, s.wins["B"])[0]
