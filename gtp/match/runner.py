"""Play a match between two GTP engines, refereed by our rules core.

    cfg = MatchConfig(EngineSpec(argv_a), EngineSpec(argv_b), games=10, size=9, komi=7)
    summary = Match(cfg).run()

Per game: colours alternate (engine A takes black in the odd-numbered games unless `a_black_first`
is False); every move an engine generates is replayed with `engine.game.Game` and forwarded to the
other engine. An engine forfeits the game on a crash, a `genmove` over the hard wall-clock limit
(`move_timeout`), a GTP error (on `genmove`, or refusing a legal `play`), an unparsable or illegal
move, and, with a real clock, on overstepping its time by more than `lag` seconds. An engine that
crashed or timed out is restarted before the next game.

The game ends after two consecutive passes, a resignation, a forfeit, or `max_moves`. Scoring uses the
rules' count (area by default) with komi; dead stones are
  1. the dead list both engines give to `final_status_list dead`, if both answer and agree; else
  2. the referee engine's (`referee`, GNU Go by default) after the game is replayed into it; else
  3. none (Tromp-Taylor).
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import random
import shlex
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from engine.board import BLACK, WHITE
from engine.coords import PASS, CoordError, format_gtp, parse_gtp
from engine.game import Game, IllegalMove
from engine.rules import named_rules

from gtp.client import GtpClient, GtpClientError, GtpCrash, GtpError, GtpTimeout
from gtp.match.clock import PlayerClock, TimeControl
from gtp.match.sgfout import write_game_sgf
from gtp.match.stats import elo_difference, wilson_interval

GNUGO_PATH = "/usr/games/gnugo"
_GTP_COLOR = {BLACK: "b", WHITE: "w"}
_SGF_COLOR = {BLACK: "B", WHITE: "W"}


class MatchError(Exception):
    """The match cannot be played at all (an engine does not start, refuses the board size, ...)."""


def default_referee() -> list[str] | None:
    """GNU Go in GTP mode if it is installed, else None."""
    path = GNUGO_PATH if os.access(GNUGO_PATH, os.X_OK) else shutil.which("gnugo")
    if path is None:
        return None
    return [path, "--mode", "gtp", "--chinese-rules", "--level", "10"]


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
    time_control: TimeControl | None = None   # None: no time commands sent
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

    @property
    def move_cap(self) -> int:
        return self.max_moves if self.max_moves is not None else 3 * self.size * self.size


@dataclass
class GameResult:
    index: int                     # 1-based
    black: str                     # "A" or "B"
    white: str
    black_name: str
    white_name: str
    winner: str | None             # "A", "B" or None (draw / no result)
    winner_color: str | None       # "B", "W" or None
    result: str                    # SGF RE: "B+3.5", "W+R", "B+F", "0", "Void"
    end: str                       # "score", "resign", "forfeit", "max-moves"
    forfeit_by: str | None = None  # "A" / "B"
    forfeit_reason: str | None = None
    score: float | None = None     # black minus white, komi included
    scoring: str | None = None     # "agreed", "referee", "tromp-taylor"
    moves: int = 0
    duration: float = 0.0
    time_a: float = 0.0            # total genmove seconds
    moves_a: int = 0
    time_b: float = 0.0
    moves_b: int = 0
    sgf: str | None = None

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class MatchSummary:
    names: dict[str, str]
    games: int
    wins: dict[str, int]
    draws: int
    no_result: int
    by_color: dict[str, dict[str, int]]       # "A" -> {"black_wins", "black_games", ...}
    black_wins: int
    white_wins: int
    forfeits: dict[str, int]                  # "A"/"B" -> count
    forfeit_reasons: dict[str, int]           # "A: timeout" -> count
    ends: dict[str, int]
    winrate_a: float
    interval_a: tuple[float, float]
    avg_move_time: dict[str, float | None]
    results: list[GameResult]

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("results")
        return d

    def format(self) -> str:
        a, b = self.names["A"], self.names["B"]
        lines = [f"Match: A = {a}  vs  B = {b}",
                 f"games {self.games}: A {self.wins['A']} wins, B {self.wins['B']} wins"
                 + (f", {self.draws} draws" if self.draws else "")
                 + (f", {self.no_result} no result" if self.no_result else "")]
        for lab in ("A", "B"):
            c = self.by_color[lab]
            lines.append(f"  {lab} as black {c['black_wins']}/{c['black_games']}, "
                         f"as white {c['white_wins']}/{c['white_games']}")
        lines.append(f"  black won {self.black_wins}, white won {self.white_wins}")
        ends = ", ".join(f"{k} {v}" for k, v in sorted(self.ends.items()))
        lines.append(f"  endings: {ends}")
        if self.forfeit_reasons:
            lines.append(f"  forfeits: A {self.forfeits.get('A', 0)}, B {self.forfeits.get('B', 0)}")
            for reason, count in sorted(self.forfeit_reasons.items()):
                lines.append(f"    {count} x {reason}")
        else:
            lines.append("  forfeits: none")
        lo, hi = self.interval_a
        elo = elo_difference(self.winrate_a)
        elo_s = f", Elo {round(elo) + 0:+d}" if elo is not None else ""
        lines.append(f"  A win rate {self.winrate_a:.3f}  95% Wilson [{lo:.3f}, {hi:.3f}]{elo_s}")
        for lab in ("A", "B"):
            t = self.avg_move_time[lab]
            lines.append(f"  {lab} average time per move: "
                         + ("n/a" if t is None else f"{t:.3f} s"))
        return "\n".join(lines)


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
                 log: Callable[[str], None] | None = None):
        self.cfg = cfg
        self.progress = progress
        self.log = log or (lambda msg: None)
        self.players = {"A": _Player("A", cfg.engine_a, cfg), "B": _Player("B", cfg.engine_b, cfg)}
        self.results: list[GameResult] = []
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
        try:
            for lab, p in self.players.items():
                try:
                    p.start()
                except GtpClientError as e:
                    raise MatchError(f"engine {lab} ({shlex.join(p.spec.argv)}) did not start: "
                                     f"{_describe(e)}\n{getattr(e, 'stderr_tail', '')}".rstrip()) from e
            if self.players["A"].name == self.players["B"].name:
                self.players["A"].name += " (A)"
                self.players["B"].name += " (B)"
            for i in range(1, self.cfg.games + 1):
                res = self.play_game(i)
                self.results.append(res)
                self._write_result(res)
                if self.progress:
                    self.progress(res, self)
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
        n = cfg.size
        blab, wlab = self.colors_for(index)
        by_color = {BLACK: self.players[blab], WHITE: self.players[wlab]}
        rules = named_rules(cfg.rules, cfg.komi)
        game = Game(n, rules)
        handicap_locs = game.fixed_handicap_locs(cfg.handicap) if cfg.handicap else []
        if handicap_locs:
            game.set_handicap(handicap_locs)
        clocks = ({c: PlayerClock(cfg.time_control) for c in (BLACK, WHITE)}
                  if cfg.time_control else None)
        spent = {BLACK: [], WHITE: []}
        start = time.monotonic()
        res = GameResult(index=index, black=blab, white=wlab,
                         black_name=by_color[BLACK].name, white_name=by_color[WHITE].name,
                         winner=None, winner_color=None, result="Void", end="")
        comments: list[str] = []
        try:
            for color in (BLACK, WHITE):
                self._setup(by_color[color], color, handicap_locs)
            res.black_name, res.white_name = by_color[BLACK].name, by_color[WHITE].name
            self._loop(game, by_color, clocks, spent, res)
        except _Forfeit as f:
            loser = by_color[f.color]
            winner_color = 3 - f.color
            res.end = "forfeit"
            res.forfeit_by = loser.label
            res.forfeit_reason = f.reason
            res.winner = by_color[winner_color].label
            res.winner_color = _SGF_COLOR[winner_color]
            res.result = f"{_SGF_COLOR[winner_color]}+F"
            comments.append(f"{'Black' if f.color == BLACK else 'White'} ({loser.name}, "
                            f"engine {loser.label}) forfeits: {f.reason}")
            self.log(f"game {index}: engine {loser.label} forfeits: {f.reason}")
        if res.end in ("score", "max-moves"):
            score, method, dead = self._score(game, by_color, handicap_locs)
            res.score, res.scoring = score, method
            if score > 0:
                res.winner_color, res.winner = "B", blab
            elif score < 0:
                res.winner_color, res.winner = "W", wlab
            res.result = _format_score(score)
            if res.end == "max-moves":
                comments.append(f"Stopped at the move cap ({cfg.move_cap} moves).")
            comments.append(f"Scored by {rules.scoring} count, komi {cfg.komi:g}, dead stones "
                            f"by {method}" + (f": {' '.join(format_gtp(d, n) for d in dead)}"
                                              if dead else ": none") + f"; {res.result}.")
        elif res.end == "resign":
            comments.append(f"{'White' if res.winner_color == 'B' else 'Black'} resigned.")
        res.moves = len(game.history)
        res.duration = time.monotonic() - start
        for color, p in by_color.items():
            if p.label == "A":
                res.time_a, res.moves_a = sum(spent[color]), len(spent[color])
            else:
                res.time_b, res.moves_b = sum(spent[color]), len(spent[color])
        if cfg.sgf_dir:
            Path(cfg.sgf_dir).mkdir(parents=True, exist_ok=True)
            path = os.path.join(cfg.sgf_dir, f"game-{index:04d}.sgf")
            write_game_sgf(path, size=n, komi=cfg.komi, handicap=handicap_locs,
                           moves=list(game.history), black_name=res.black_name,
                           white_name=res.white_name, result=res.result,
                           comment="\n".join(comments), rules=cfg.rules,
                           game_name=f"{res.black_name} vs {res.white_name}, game {index}")
            res.sgf = path
        return res

    def _setup(self, player: _Player, color: int, handicap_locs: list[int]) -> None:
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
                        client.time_settings(*cfg.time_control.gtp_time_settings())
                    except GtpError as e:
                        self.log(f"engine {player.label}: {e}")
            if handicap_locs:
                self._send_handicap(client, handicap_locs)
        except MatchError:
            raise
        except GtpClientError as e:
            if not isinstance(e, GtpError):
                player.needs_restart = True
            raise _Forfeit(color, f"setup failed: {_describe(e)}") from e

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

    def _loop(self, game: Game, by_color, clocks, spent, res: GameResult) -> None:
        cfg = self.cfg
        n = cfg.size
        while True:
            if len(game.history) >= cfg.move_cap:
                res.end = "max-moves"
                return
            color = game.to_play
            other = 3 - color
            mover, receiver = by_color[color], by_color[other]
            client = mover.client
            assert client is not None and receiver.client is not None
            c = _GTP_COLOR[color]
            try:
                if clocks is not None and client.known_command("time_left"):
                    try:
                        client.time_left(c, *clocks[color].gtp_time_left())
                    except GtpError as e:      # advisory: the referee's clock is what counts
                        self.log(f"engine {mover.label}: {e}")
                answer = client.genmove(c, timeout=cfg.move_timeout)
            except GtpClientError as e:
                if not isinstance(e, GtpError):
                    mover.needs_restart = True
                raise _Forfeit(color, _describe(e)) from e
            elapsed = client.last_elapsed
            spent[color].append(elapsed)
            if answer == "resign":
                res.end = "resign"
                res.winner = receiver.label
                res.winner_color = _SGF_COLOR[other]
                res.result = f"{_SGF_COLOR[other]}+R"
                return
            try:
                lc = parse_gtp(answer, n)
                if lc < 0 and lc != PASS:
                    raise CoordError(answer)
            except CoordError:
                raise _Forfeit(color, f"unparsable move {answer!r}") from None
            try:
                game.play(color, lc)
            except IllegalMove as e:
                raise _Forfeit(color, f"illegal move {answer} ({getattr(e, 'reason', e)}) "
                                      f"at move {len(game.history) + 1}") from None
            if clocks is not None and not clocks[color].charge(elapsed, cfg.lag if cfg.enforce_time
                                                               else float("inf")):
                raise _Forfeit(color, f"lost on time ({clocks[color].overrun:.2f} s over) "
                                      f"at move {len(game.history)}")
            vertex = format_gtp(lc, n)
            if game.passes_in_a_row >= 2:
                res.end = "score"
                try:        # the game is over: tell the other engine, whatever it answers
                    receiver.client.play(c, vertex)
                except GtpClientError as e:
                    if not isinstance(e, GtpError):
                        receiver.needs_restart = True
                return
            try:
                receiver.client.play(c, vertex)
            except GtpClientError as e:
                if not isinstance(e, GtpError):
                    receiver.needs_restart = True
                reason = (f"rejected the legal move {c} {vertex}: {e.message}"
                          if isinstance(e, GtpError) else _describe(e))
                raise _Forfeit(other, reason) from e

    # ------------------------------------------------------------------ scoring
    def _score(self, game: Game, by_color, handicap_locs) -> tuple[float, str, list[int]]:
        lists = []
        for color in (BLACK, WHITE):
            lists.append(self._dead_list(by_color[color].client, game))
        if lists[0] is not None and lists[1] is not None and set(lists[0]) == set(lists[1]):
            dead = sorted(set(lists[0]))
            return game.score(dead), "agreed", dead
        dead = self._referee_dead(game, handicap_locs)
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

    def _referee_dead(self, game: Game, handicap_locs: list[int]) -> list[int] | None:
        if self._referee_failed:
            return None
        cfg = self.cfg
        try:
            if self._referee is None or not self._referee.is_alive():
                if self._referee is not None:
                    self._referee.kill()
                    self._referee = None
                try:
                    self._referee = GtpClient(cfg.referee, name="referee",
                                              timeout=cfg.command_timeout)
                    self._referee.engine_name(timeout=cfg.startup_timeout)
                except GtpClientError as e:
                    self.log(f"referee {shlex.join(cfg.referee)} did not start: {_describe(e)}; "
                             "scoring without it")
                    self._referee_failed = True
                    if self._referee is not None:
                        self._referee.kill()
                        self._referee = None
                    return None
            ref = self._referee
            ref.boardsize(game.size)
            ref.clear_board()
            ref.komi(cfg.komi)
            if handicap_locs:
                self._send_handicap(ref, handicap_locs)
            for color, lc in game.history:
                ref.play(_GTP_COLOR[color], format_gtp(lc, game.size))
            return self._dead_list(ref, game)
        except GtpError as e:
            self.log(f"referee could not replay the game: {e}")
            return None
        except GtpClientError as e:
            self.log(f"referee failed: {_describe(e)}")
            if self._referee is not None:
                self._referee.kill()
                self._referee = None
            return None

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
        return summarize(self.results, {k: p.name for k, p in self.players.items()})


def summarize(results: Sequence[GameResult], names: dict[str, str]) -> MatchSummary:
    wins = {"A": 0, "B": 0}
    draws = no_result = 0
    by_color = {lab: {"black_wins": 0, "black_games": 0, "white_wins": 0, "white_games": 0}
                for lab in ("A", "B")}
    black_wins = white_wins = 0
    forfeits: Counter = Counter()
    reasons: Counter = Counter()
    ends: Counter = Counter()
    t = {"A": 0.0, "B": 0.0}
    m = {"A": 0, "B": 0}
    for r in results:
        ends[r.end] += 1
        by_color[r.black]["black_games"] += 1
        by_color[r.white]["white_games"] += 1
        if r.winner is not None:
            wins[r.winner] += 1
            if r.winner_color == "B":
                black_wins += 1
                by_color[r.winner]["black_wins"] += 1
            else:
                white_wins += 1
                by_color[r.winner]["white_wins"] += 1
        elif r.result == "0":
            draws += 1
        else:
            no_result += 1
        if r.forfeit_by:
            forfeits[r.forfeit_by] += 1
            reasons[f"{r.forfeit_by}: {_reason_kind(r.forfeit_reason or '')}"] += 1
        t["A"] += r.time_a
        m["A"] += r.moves_a
        t["B"] += r.time_b
        m["B"] += r.moves_b
    decided = wins["A"] + wins["B"] + draws
    score_a = wins["A"] + 0.5 * draws
    winrate = score_a / decided if decided else 0.0
    return MatchSummary(
        names=dict(names), games=len(results), wins=wins, draws=draws, no_result=no_result,
        by_color=by_color, black_wins=black_wins, white_wins=white_wins,
        forfeits=dict(forfeits), forfeit_reasons=dict(reasons), ends=dict(ends),
        winrate_a=winrate, interval_a=wilson_interval(score_a, decided),
        avg_move_time={k: (t[k] / m[k] if m[k] else None) for k in ("A", "B")},
        results=list(results))


def _reason_kind(reason: str) -> str:
    """Group forfeit reasons for the summary: drop the move-specific tail."""
    for kind in ("timeout", "crash", "illegal move", "unparsable move", "lost on time",
                 "rejected the legal move", "GTP error", "setup failed", "could not (re)start"):
        if reason.startswith(kind):
            if kind == "illegal move":
                # keep the rule broken: "illegal move C3 (occupied) ..." -> "illegal move (occupied)"
                i, j = reason.find("("), reason.find(")")
                return f"illegal move {reason[i:j + 1]}" if 0 <= i < j else kind
            if kind == "GTP error":
                return reason.split(":")[0]
            return kind
    return reason


def _format_score(score: float) -> str:
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"
