"""What the GTP handlers share: the game, the rules, the clock, the player, and how they load.

The heavy modules (numba kernels behind `engine.game`, the search and onnxruntime behind the Player)
are imported by a background thread started at launch, so that `name`, `version`,
`protocol_version` and `list_commands` answer at once. `gtp.main` hands the session a function
that imports the `Loader` (gtp.loader); the session runs it in that thread and then asks the loader
for everything that needs the engine. Handlers that need it wait:

  * stage "game":   engine.game (numba rules core) is imported and warmed up;
  * stage "player": the Players (search + evaluator + models) are built, and the one for the
                    board size at hand is warmed up: its first genmove compiles nothing;
  * stage "kernels": every other kernel a command can reach is compiled (or loaded from numba's
                    cache, which a compile helper process fills meanwhile: engine.compile_helper).
                    The engine is ready: from here on nothing compiles (tests/gtp/test_warmup.py).

Only `engine.coords` and `engine.rules` (pure Python) are imported at module level here.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Protocol

from goengine.engine.rules import Rules, named_rules
from goengine.gtp.config import EngineConfig
from goengine.gtp.protocol import GtpError, format_vertex

log = logging.getLogger("gtp")

STAGES = ("game", "player", "kernels")     # loaded in this order by the loading thread


class Loader(Protocol):
    """The engine behind the server (gtp.loader), as the session and the handlers use it."""

    def load_game(self, s: "Session") -> None: ...         # stage "game": sets s.game
    def load_player(self, s: "Session") -> None: ...       # stage "player": sets s.player
    def load_kernels(self, s: "Session") -> None: ...      # stage "kernels": compiles the rest
    def is_bad_file(self, exc: BaseException) -> bool: ...  # a model file's fault, not a bug
    def new_game(self, size: int, rules: Rules): ...       # an empty engine.game.Game
    def replay(self, game, rules: Rules): ...              # the game under other rules, or GtpError
    def play(self, game, colour: int, lc: int) -> None: ...  # GtpError when illegal
    def status_player(self, s: "Session"): ...             # a heuristic MCTS Player (dead stones)
    def format_result(self, score: float) -> str: ...      # B+3.5 / W+0.5 / 0
    def load_sgf(self, s: "Session", path: str, until: int | None): ...  # (Game, Rules)
    def dump_sgf(self, s: "Session") -> bytes: ...


class Session:
    def __init__(self, config: EngineConfig, import_loader: Callable[[], Loader]):
        self.config = config
        self.server = None                 # set by gtp.server.Server
        self.size = config.size
        self.rules: Rules = named_rules(config.rules, config.komi)
        self.loader: Loader | None = None  # set by the loading thread, before stage "game"
        self.game = None                   # engine.game.Game once stage "game" is ready
        self.player = None                 # engine.player.Player once stage "player" is ready
        self.sized_players: dict = {}      # size -> the Player that plays it instead (--search
                                           # auto: the Zero search with its 9x9 network)
        self.compile_helper = None         # engine.compile_helper.CompileHelper until "kernels"
        self.warm_later: list = []         # (size, make a Player) stage "kernels" warms up
        self.clock = None                  # engine.timecontrol.Clock, made on the first time command
        self.last_snapshot = None          # gtp.moves.Snapshot of the last genmove
        self.model_sizes: set[int] | None = None   # board sizes the models are made for (None: any)
        self.params: dict[str, object] = {"gogui_search_seconds": 2.0, "chat": True,
                                          "ponder": bool(config.ponder)}
        self.ponder_pending = False        # our move was just played: think on the opponent's time
        self.chat_announced = False        # analysis.CHAT_FORMAT_LINE written (gtp.moves._chat)
        self._import_loader = import_loader
        self._status_player = None         # see status_player()
        self._ready = {stage: threading.Event() for stage in STAGES}
        self._errors: dict[str, BaseException] = {}
        self.started = time.monotonic()

    # ---- loading ----
    def start_loading(self) -> None:
        threading.Thread(target=self._load, name="engine-load", daemon=True).start()

    def _load(self) -> None:
        for stage in STAGES:
            t0 = time.monotonic()
            try:
                if self.loader is None:
                    self.loader = self._import_loader()    # imports the engine, in this thread
                load = {"game": self.loader.load_game, "player": self.loader.load_player,
                        "kernels": self.loader.load_kernels}[stage]
                load(self)
                log.info("%s ready in %.1f s", stage, time.monotonic() - t0)
            except BaseException as exc:   # noqa: BLE001 - reported to every command that waits
                if self.loader is not None and self.loader.is_bad_file(exc):
                    log.error("loading the %s failed: %s", stage, exc)   # a bad file, not a bug
                else:
                    log.exception("loading the %s failed", stage)
                self._errors[stage] = exc
                for later in STAGES[STAGES.index(stage) + 1:]:
                    self._errors[later] = exc
                    self._ready[later].set()
                return
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

    def set_clock(self, clock) -> None:
        """New time settings. The same settings again keep the clock as it runs: gtp2ogs sends
        them before every move (with time_left after them), and the lag the engine measures
        between two reports (engine.timecontrol.LagEstimator) must not be lost with the clock."""
        if self.clock is None or self.clock.settings() != clock.settings():
            self.clock = clock

    # ---- game helpers (called only once stage "game" is ready) ----
    def new_game(self, size: int | None = None, rules: Rules | None = None) -> None:
        self.size = size or self.size
        self.rules = rules or self.rules
        self.game = self.loader.new_game(self.size, self.rules)
        self.last_snapshot = None
        if self.clock is not None:
            self.clock.reset()
        if self.player is not None:
            for player in self.players():
                player.new_game()

    def set_rules(self, rules: Rules) -> None:
        """New rules for the game being played: replays it, so superko history follows the rules."""
        old = self.game
        if rules.superko == old.rules.superko and rules.suicide == old.rules.suicide:
            old.rules = rules          # komi or scoring: nothing the history depends on
            self.rules = rules
            return
        self.game, self.rules = self.loader.replay(old, rules), rules

    def fmt(self, lc: int) -> str:
        return format_vertex(lc, self.size)

    # ---- players (called only once stage "player" is ready) ----
    def models_cover(self, size: int) -> bool:
        """True when a search's models are made for this size (their `board_sizes` metadata)."""
        if self.config.search == "heuristic" and not self.config.zero_sizes:
            return True
        self.wait_ready("player")
        # the heuristic MCTS leaves model_sizes None: it plays every size
        return size in self.sized_players or self.model_sizes is None or size in self.model_sizes

    def players(self) -> list:
        """Every Player the session plays with (the parameters and the game's end reach each)."""
        return [self.player] + list(self.sized_players.values())

    def size_player(self):
        """The Player of the current size: the one made for it (--search auto), else the
        configured one."""
        return self.sized_players.get(self.size, self.player)

    def playing_player(self):
        """The Player for the current size: `size_player`, or the heuristic MCTS one where
        no model covers the size (--search auto)."""
        if self.models_cover(self.size):
            return self.size_player()
        return self.status_player()

    def status_player(self):
        """The Player that judges dead stones: the size's own when its search's ownership can
        (`Player.ownership_from_playouts`), else a heuristic MCTS one made on first use."""
        player = self.size_player()
        if player.ownership_from_playouts:
            return player
        if self._status_player is None:
            self._status_player = self.loader.status_player(self)
        return self._status_player

    def ponder_job(self):
        """(player, game) to think about on the opponent's time, or None. Asked by the server
        when it waits for input; a copy of the game, since the next command may change it."""
        if not (self.ponder_pending and self.params.get("ponder")):
            return None
        self.ponder_pending = False
        if not self.is_ready("player") or self.player is None or self.game is None:
            return None
        player = self.playing_player()
        if not player.can_ponder:
            return None        # nothing a search keeps for the next move (the policy player)
        return player, self.game.copy()
