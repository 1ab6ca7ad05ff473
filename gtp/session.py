"""What the GTP handlers share: the game, the rules, the clock, the player, and how they load.

The heavy modules (numba kernels behind `engine.game`, the search and onnxruntime behind the Player)
are imported by a background thread started at launch, so that `name`, `version`,
`protocol_version` and `list_commands` answer at once. Handlers that need them wait:

  * stage "game":   engine.game (numba rules core) is imported and warmed up;
  * stage "player": the Player (search + evaluator + models) is built.

Only `engine.coords` and `engine.rules` (pure Python) are imported at module level here.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass

from engine import coords
from engine.rules import Rules, named_rules
from gtp.protocol import quote
from gtp.server import GtpError

log = logging.getLogger("gtp")

# engine.board's colour constants (DESIGN.md "Colours"), repeated so that parsing a colour does not
# import numba; tests/test_gtp_units.py checks that they agree.
EMPTY, BLACK, WHITE = 0, 1, 2
_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
COLOUR_NAMES = {BLACK: "black", WHITE: "white"}


@dataclass(frozen=True)
class EngineConfig:
    """Everything the command line decides; built once by gtp.main."""
    size: int = 19                    # initial board size
    komi: float = 7.5                 # initial komi
    rules: str = "chinese"            # a name of engine.rules.NAMED_RULES
    search: str = "heuristic"         # heuristic | alphago | zero | policy
    model_dir: str | None = None      # where the ONNX files are (None: the bundled ones)
    playouts: int | None = None       # new simulations per move (None: the player's default)
    visits: int | None = None         # root visits per move, reused tree included
    time_per_move: float | None = None  # seconds per move when no clock is set
    threads: int | None = None        # search threads
    resign_threshold: float | None = None  # resign below this winrate (0 disables)
    seed: int | None = None
    name: str = "goengine"
    rollout: str = "auto"             # auto | policy | heuristic (playouts of the MCTS)
    lam: float | None = None          # AlphaGo lambda (None: NetSearchConfig's default)
    c_puct: float | None = None
    n_thr: int | None = None
    batch_size: int | None = None
    policy_temperature: float | None = None
    rollout_threads: int | None = None
    lag_margin: float | None = None   # TimeConfig.lag_margin
    ponder: bool = False              # search on the opponent's time (keeps the tree)
    auto_search: bool = False         # --search auto chose the search: other sizes fall back to
                                      # the heuristic MCTS instead of being refused


def parse_colour(text: str) -> int:
    colour = _COLOURS.get(text.lower())
    if colour is None:
        raise GtpError(f"invalid color {quote(text)}")
    return colour


def parse_int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise GtpError(f"syntax error: {what} must be an integer, not {quote(text)}") from None


def parse_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GtpError(f"syntax error: {what} must be a number, not {quote(text)}") from None
    if not math.isfinite(value):
        raise GtpError(f"syntax error: {what} must be finite")
    return value


class Session:
    def __init__(self, config: EngineConfig):
        self.config = config
        self.server = None                 # set by gtp.server.Server
        self.size = config.size
        self.rules: Rules = named_rules(config.rules, config.komi)
        self.game = None                   # engine.game.Game once stage "game" is ready
        self.player = None                 # engine.player.Player once stage "player" is ready
        self.clock = None                  # engine.timecontrol.Clock, made on the first time command
        self.last_snapshot = None          # gtp.moves.Snapshot of the last genmove
        self.model_sizes: set[int] | None = None   # board sizes the models are made for (None: any)
        self.status_player = None          # heuristic Player for dead stones (see moves.status_player)
        self.params: dict[str, object] = {"gogui_search_seconds": 2.0, "chat": True,
                                          "ponder": bool(config.ponder)}
        self.ponder_pending = False        # our move was just played: think on the opponent's time
        self._ready = {"game": threading.Event(), "player": threading.Event()}
        self._errors: dict[str, BaseException] = {}
        self.started = time.monotonic()

    # ---- loading ----
    def start_loading(self) -> None:
        threading.Thread(target=self._load, name="engine-load", daemon=True).start()

    def _load(self) -> None:
        from gtp import loader     # imports engine.game etc. inside this thread
        for stage, fn in (("game", loader.load_game), ("player", loader.load_player)):
            t0 = time.monotonic()
            try:
                fn(self)
                log.info("%s ready in %.1f s", stage, time.monotonic() - t0)
            except BaseException as exc:   # noqa: BLE001 - reported to every command that waits
                if type(exc).__name__ in ("ModelError", "RolloutModelError"):
                    log.error("loading the %s failed: %s", stage, exc)   # a bad file, not a bug
                else:
                    log.exception("loading the %s failed", stage)
                self._errors[stage] = exc
                if stage == "game":
                    self._errors["player"] = exc
                    self._ready["player"].set()
            finally:
                self._ready[stage].set()

    def wait_ready(self, stage: str) -> None:
        """Block until the stage is loaded (commands are answered in order, so a command behind a
        slow model load waits for it); GtpError if loading failed."""
        self._ready[stage].wait()
        if stage in self._errors:
            exc = self._errors[stage]
            raise GtpError(f"engine failed to load: {type(exc).__name__}: {exc}")

    def is_ready(self, stage: str) -> bool:
        return self._ready[stage].is_set() and stage not in self._errors

    # ---- game helpers (called only once stage "game" is ready) ----
    def new_game(self, size: int | None = None, rules: Rules | None = None) -> None:
        from engine.game import Game
        self.size = size or self.size
        self.rules = rules or self.rules
        self.game = Game(self.size, self.rules)
        self.last_snapshot = None
        if self.clock is not None:
            self.clock.reset()
        if self.player is not None:
            self.player.new_game()

    def set_rules(self, rules: Rules) -> None:
        """New rules for the game being played: replays it, so superko history follows the rules."""
        from engine.game import Game, IllegalMove
        old = self.game
        if rules.superko == old.rules.superko and rules.suicide == old.rules.suicide:
            old.rules = rules          # komi or scoring: nothing the history depends on
            self.rules = rules
            return
        g = Game(old.size, rules)
        try:
            if old.handicap:
                g.set_handicap(list(old.handicap))
            for colour, lc in old.history:
                g.play(colour, lc)
        except (IllegalMove, ValueError) as exc:
            raise GtpError(f"the game so far is illegal under these rules ({exc})") from None
        g.to_play = old.to_play
        self.game, self.rules = g, rules

    def vertex(self, text: str, allow_pass: bool = True) -> int:
        try:
            lc = coords.parse_gtp(text, self.size)
        except coords.CoordError:
            raise GtpError(f"invalid vertex {quote(text)} on a {self.size}x{self.size} board") from None
        if lc == coords.RESIGN or (lc == coords.PASS and not allow_pass):
            raise GtpError(f"invalid vertex {quote(text)}")
        return lc

    def fmt(self, lc: int) -> str:
        return coords.format_gtp(lc, self.size).upper() if lc >= 0 else coords.format_gtp(lc, self.size)
