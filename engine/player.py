"""The Player: a search plus the decisions around it (time, pass, resign, dead stones).

This is the object the GTP server drives. It never reads globals: `PlayerConfig` is built once by
the CLI and changed only through `set_param`.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import numpy as np

from goengine.engine.board import BLACK, EMPTY, F_COLOR, WHITE, is_eye
from goengine.engine.book import Book
from goengine.engine.coords import PASS, RESIGN
from goengine.engine.deadstones import Judgement, judge
from goengine.engine.search.base import Search
from goengine.engine.search.network import NetSearchConfig
from goengine.engine.search.result import SearchResult
from goengine.engine.search.terminal import dead_mask
from goengine.engine.timecontrol import Clock, Stopwatch, TimeConfig, TimeManager


@dataclass(frozen=True)
class PlayerConfig:
    playouts: int | None = None        # new simulations per move (Leela Zero's -p); None = by time
    visits: int | None = None          # root visits per move, counting the reused tree's (-v)
    resign_threshold: float = 0.10     # AlphaGo resigned below 10% estimated win probability
    resign_consecutive: int = 3        # ... on this many of our moves in a row
    resign_min_move: float = 0.25      # ... and not before this fraction of the board's points
    handicap_resign_min_move: float = 0.5  # handicap games: later, once the evaluation settled
    allow_resign: bool = True
    status_playouts: int = 2000        # playouts of the dead-stone judgement (engine.deadstones)
    min_playouts: int = 50             # never answer with fewer simulations than this (time allowing)
    use_book: bool = True              # play the opening book's move where it has one


def _parse(kind, value: str):
    """A GTP parameter value as the type of the field it sets ('false' is False for a bool)."""
    if kind is bool:
        v = str(value).strip().lower()
        if v in ("1", "true", "yes", "on"):
            return True
        if v in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true or false, got {value!r}")
    return kind(value)


def _scalar_fields(config) -> dict:
    """The fields of a search's config that GTP can read and set: one number, flag or word each
    (a per-size table such as `lam_by_size` is the command line's to set)."""
    values = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    return {k: v for k, v in values.items() if v is None or isinstance(v, (bool, int, float, str))}


def _optional_int(value: str) -> int | None:
    """A count limit; 'none' lifts it (the move is then limited by time)."""
    return None if str(value).strip().lower() == "none" else int(value)


# Parameters settable at run time (GTP goengine-set_param / kata-set-param).
TUNABLE = {
    "playouts": _optional_int, "visits": _optional_int,
    "resign_threshold": float, "resign_consecutive": int,
    "resign_min_move": float, "allow_resign": lambda v: _parse(bool, v),
    "status_playouts": int, "use_book": lambda v: _parse(bool, v),
}


class Player:
    def __init__(self, search: Search, config: PlayerConfig | None = None,
                 time_config: TimeConfig | None = None, books: tuple[Book, ...] = ()):
        self.search = search
        self.books = books          # opening books (engine.book), each for its size and komi
        self.config = config or PlayerConfig()
        self.time = TimeManager(time_config)
        self.last_result: SearchResult | None = None
        self._low_streak = {BLACK: 0, WHITE: 0}
        self._last_winrate = {BLACK: None, WHITE: None}
        self._judged = None         # (board, Judgement) of the last position judged
        self._planned = None        # the seconds the last genmove's search was given
        self._watch = Stopwatch()   # runs from the start of each genmove
        self.last_timing = None     # (planned, taken, lag margin now) of the last genmove, seconds
        self.last_stop = ""         # why the last timed search stopped (MoveTimer.reason; "other":
                                    # a stop request or nothing left to search); "" if not timed
        self._lock = threading.Lock()

    # ---- what the search can do (GTP asks the Player, never its search) -----------------------
    @property
    def can_ponder(self) -> bool:
        """Whether a search now leaves something for the next move (a tree to reuse)."""
        return self.search.tree is not None

    @property
    def ownership_from_playouts(self) -> bool:
        """Whether `ownership` counts the final positions of the search's simulations, fit to
        judge dead stones (the `ownership` its Search declares)."""
        return self.search.ownership

    def head_ownership(self, game) -> np.ndarray | None:
        """float[N, N], +1 black: the network's ownership head on `game` as it stands (no
        playouts); None when the search has no such head."""
        with self._lock:
            return self.search.head_ownership(game)

    # ---- parameters ---------------------------------------------------------------------------
    def set_param(self, name: str, value: str) -> None:
        if name in TUNABLE:
            self.config = dataclasses.replace(self.config, **{name: TUNABLE[name](value)})
            return
        search_cfg = self.search.config
        names = set(_scalar_fields(search_cfg))
        if name in names:
            kind = type(getattr(search_cfg, name))
            changes = {name: _parse(kind, value)}
            if isinstance(search_cfg, NetSearchConfig) and name == "lam":  # a lambda set by hand
                changes["lam_by_size"] = ()                 # is every size's, as --lambda's
            self.search.config = dataclasses.replace(search_cfg, **changes)
            return
        if name in {f.name for f in dataclasses.fields(self.time.config)}:
            cur = getattr(self.time.config, name)
            val = None if value.lower() == "none" else float(value) if cur is None else _parse(type(cur), value)
            self.time = TimeManager(dataclasses.replace(self.time.config, **{name: val}),
                                    lag=self.time.lag)
            return
        raise KeyError(f"unknown parameter {name!r}")

    def params(self) -> dict:
        out = {k: getattr(self.config, k) for k in TUNABLE}
        out.update(_scalar_fields(self.search.config))
        out.update({k: v for k, v in dataclasses.asdict(self.time.config).items()})
        return out

    def new_game(self) -> None:
        self._low_streak = {BLACK: 0, WHITE: 0}
        self._last_winrate = {BLACK: None, WHITE: None}

    # ---- move generation ----------------------------------------------------------------------
    def _run(self, game, color, clock: Clock | None, stop=None, report=None,
             report_interval: float = 1.0) -> SearchResult:
        dead = self._dead_at_terminals(game, color)
        # the limits count from the start of the move: judging dead stones first (after the
        # opponent's pass: 0.2 s on 19x19, more on a loaded machine) comes out of them
        timer = self.time.timer(clock, color, game.move_number, game.size, self._watch.elapsed())
        if self.config.playouts is not None or self.config.visits is not None:
            # count-limited, but a clock still caps the time
            seconds = timer.hard if clock is not None and clock.system != "none" else None
            res = self.search.search(game, color, playouts=self.config.playouts, seconds=seconds,
                                     stop=stop, report=report, report_interval=report_interval,
                                     visits=self.config.visits, dead_at_terminals=dead)
        else:
            # the budget, searched past while the move is unclear, or cut short once it is
            # decided (engine.timecontrol.MoveTimer)
            res = self.search.search(game, color, seconds=timer.hard, stop=stop, report=report,
                                     report_interval=report_interval, dead_at_terminals=dead,
                                     stop_rule=timer)
            seconds = timer.planned if timer.planned is not None else timer.hard
            self.last_stop = timer.reason or "other"
        self._planned = seconds           # what the move was planned to take (its overrun: lag)
        if dead is not None:
            self._count_lead(game, res)
        self.last_result = res
        return res

    def _count_lead(self, game, res: SearchResult) -> None:
        """Where our pass ends the game, the search's score estimate counted as the game is
        counted: each point to the side that owns it in most of the search's playouts (the
        mean would let a group that dies in a third of them move the lead by a third of its
        area), and the rules' difference between territory and area counting of the judged
        position. So the lead and final_score name the same winner (docs/algorithms.md §5.3)."""
        own = res.ownership_black
        if own is None:
            return
        res.score_lead_black = self._lead_by_ownership(game, own)

    def _lead_by_ownership(self, game, own) -> float:
        """Black's lead with each point counted for the side that owns it in most playouts (+1
        black), dead stones judged, under the game's rules."""
        dead = self.judgement(game).dead
        rules_diff = game.score(dead) - game.area_score(dead)
        return float(np.sum(np.sign(own)) - game.komi + rules_diff)

    def genmove(self, game, color, clock: Clock | None = None, stop=None,
                cleanup: bool = False, report=None, report_interval: float = 1.0) -> int:
        """The move to play for `color` (a Loc, PASS or RESIGN). Does not play it. `report`
        receives a SearchResult every `report_interval` seconds (genmove_analyze)."""
        with self._lock:
            watch = self._watch
            watch.start()
            self._planned = None
            self.last_stop = ""
            move = self._genmove(game, color, clock, stop, cleanup, report, report_interval)
            elapsed = watch.stop()
            if clock is not None:
                # the whole move (search, dead stones, choice) is what the clock charges
                self.time.charge(clock, color, elapsed, self._planned)
            self.last_timing = (self._planned, elapsed, self.time.lag_margin())
            return move

    def _genmove(self, game, color, clock, stop, cleanup, report, report_interval) -> int:
        self.last_result = None
        if not game.legal_moves(color):
            return PASS
        book = None if cleanup else self.book_result(game, color)
        if book is not None:        # answered at once, reported as the search that chose it
            self.last_result, self.last_stop = book, "book"
            if report is not None:
                report(book)
            return book.moves[0].move
        res = self._run(game, color, clock, stop, report, report_interval)
        if self._should_resign(game, color, res):
            return RESIGN
        return self._choose(game, color, res, cleanup)

    def book_result(self, game, color) -> SearchResult | None:
        """The opening book's answer for `color` (engine.book.Book.result), None where no book
        has the position."""
        if not self.config.use_book:
            return None
        for book in self.books:
            res = book.result(game, color)
            if res is not None:
                return res
        return None

    def cleanup_genmove(self, game, color, clock: Clock | None = None, stop=None) -> int:
        """kgs-genmove_cleanup: like genmove, but never pass while dead opponent stones remain."""
        return self.genmove(game, color, clock, stop, cleanup=True)

    def _choose(self, game, color, res: SearchResult, cleanup: bool) -> int:
        moves = [m for m in res.moves if m.visits > 0] or res.moves
        if not moves:
            return PASS
        best = moves[0]
        opponent_passed = bool(game.history) and game.history[-1] == (3 - color, PASS)
        # only asked when passing is on the table (the judgement costs its playouts)
        wins = (opponent_passed or best.move == PASS) and self._wins_if_ended(game, color, res)
        if opponent_passed and wins and not cleanup:
            return PASS  # the game ends now, and it is won
        if best.move == PASS:
            settled = self._settled(game, res)
            if cleanup:
                target = self._cleanup_move(game, color, res)
                if target is not None:
                    return target
            if (settled or opponent_passed) and wins:
                return PASS
            if not opponent_passed and settled:
                return PASS  # nothing left to play; passing does not end the game
            # passing would lose (or leave unsettled points): play the best real move
            for m in moves[1:]:
                if m.move != PASS and not self._fills_own_eye(game, color, m.move):
                    return m.move
            return PASS
        return best.move

    def _wins_if_ended(self, game, color, res: SearchResult) -> bool:
        """Whether the game, ended by our pass now, is won as it will be scored: after removing
        the dead stones (a player's stones inside the other's area are taken off by agreement, or
        by a referee, on KGS, OGS and in engine-match). Under area scoring the board as it stands
        (Tromp-Taylor) must be won too: capturing dead stones first costs nothing there, and it
        does not depend on our judgement of them. And the game played out must be won too (each
        point to the side that owns it in most of the judgement's playouts): on an open board,
        where the empty points touch both colours and count for no one as the board stands, a
        referee or a server's estimator gives the frameworks to the side around them."""
        sign = 1.0 if color == BLACK else -1.0
        tt = sign * game.area_score()
        judged = self.judgement(game)
        final = sign * game.score(judged.dead)
        played_out = sign * self._lead_by_ownership(game, judged.ownership)
        return final > 0 and played_out > 0 and (tt > 0 or game.rules.scoring == "territory")

    def judgement(self, game) -> Judgement:
        """The dead stones of the position (engine.deadstones), judged once per board: the one
        judgement behind final_status_list, final_score, the pass, cleanup and the searches'
        two-pass endings. It does not depend on the side to move, so a pass keeps it."""
        key = (game.st[F_COLOR].tobytes(), self.config.status_playouts)
        if self._judged is None or self._judged[0] != key:
            self._judged = (key, judge(game, playouts=self.config.status_playouts))
        return self._judged[1]

    def _dead_at_terminals(self, game, color) -> np.ndarray | None:
        """Where our pass ends the game (the opponent has just passed), the mask with which the
        search counts its two-pass endings with the dead stones off, judged as _wins_if_ended
        judges them, so that its win rate agrees with the count (engine.search.terminal).
        Elsewhere None, the board as it stands: those endings are deep in the tree, and judging
        every move would cost time."""
        if bool(game.history) and game.history[-1] == (3 - color, PASS):
            return dead_mask(game, self.judgement(game).dead)
        return None

    def _settled(self, game, res: SearchResult) -> bool:
        """Every point has a clear owner in the search's ownership and it agrees with the board
        as it stands (no dead stones left, no open borders)."""
        own = res.ownership_black
        if own is None:
            return False
        tt = game.ownership()
        colors = game.board_colors()
        for r in range(game.size):
            for c in range(game.size):
                o = own[r, c]
                if colors[r, c] == BLACK and o < 0.6:
                    return False
                if colors[r, c] == WHITE and o > -0.6:
                    return False
                if colors[r, c] == EMPTY:
                    if tt[r, c] == BLACK and o < 0.6:
                        return False
                    if tt[r, c] == WHITE and o > -0.6:
                        return False
        return True

    def _fills_own_eye(self, game, color, lc) -> bool:
        return bool(is_eye(game.st, game.meta, lc, color))

    def _cleanup_move(self, game, color, res) -> int | None:
        """A move that takes a liberty of a dead opponent string (capturing it in the end)."""
        dead = self.judgement(game).dead
        candidates = []
        for lc in dead:
            if game.color_at(lc) != 3 - color:
                continue
            for q in self._neighbours(game, lc):
                if game.color_at(q) == EMPTY and game.is_legal(color, q) \
                        and not self._fills_own_eye(game, color, q):
                    candidates.append(q)
        return candidates[0] if candidates else None

    @staticmethod
    def _neighbours(game, lc):
        w = game.size + 2
        return (lc - w, lc + w, lc - 1, lc + 1)

    def _should_resign(self, game, color, res: SearchResult) -> bool:
        cfg = self.config
        if res.root_visits < cfg.min_playouts:
            return False  # an interrupted or starved search says nothing about the position
        wr = res.winrate
        prev = self._last_winrate[color]
        self._last_winrate[color] = wr
        if wr < cfg.resign_threshold and (prev is None or wr <= prev + 0.02):
            self._low_streak[color] += 1
        else:
            self._low_streak[color] = 0
        if not cfg.allow_resign:
            return False
        area = game.size * game.size
        min_move = cfg.resign_min_move * area
        if game.handicap:
            min_move = max(min_move, cfg.handicap_resign_min_move * area)
        if game.move_number < min_move:
            return False
        return self._low_streak[color] >= cfg.resign_consecutive

    # ---- analysis and dead stones -------------------------------------------------------------
    def analyze(self, game, color, report, stop: threading.Event, interval_s: float = 0.5,
                playouts: int | None = None) -> SearchResult:
        """Search until `stop` is set, calling report(SearchResult) every interval."""
        with self._lock:
            res = self.search.search(game, color, playouts=playouts, stop=stop, report=report,
                                     report_interval=interval_s,
                                     dead_at_terminals=self._dead_at_terminals(game, color))
            self.last_result = res
            return res

    def ownership(self, game, playouts: int | None = None) -> np.ndarray:
        """float[N, N], +1 black, -1 white, row 0 at the top."""
        with self._lock:
            n = playouts or self.config.status_playouts
            # the judgement itself: the board as it stands at the two-pass endings
            res = self.search.search(game, game.to_play, playouts=n)
            return res.ownership_black

    def final_status(self, game) -> dict[str, list[int]]:
        """Alive, dead and seki stones (Locs) by the one judgement (engine.deadstones)."""
        with self._lock:
            return self.judgement(game).as_dict()

    def final_score(self, game) -> float:
        """Black minus white with the dead stones of final_status removed."""
        return game.score(self.final_status(game)["dead"])
