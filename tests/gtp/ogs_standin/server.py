"""A local stand-in for the OGS server, as gtp2ogs 9.x talks to it (docs/gtp.md §2.3).

gtp2ogs (goban's GobanSocket) speaks JSON arrays over one WebSocket: `[command, data]` or
`[command, data, id]` from the bot, `[event, data]` or `[id, reply]` from the server. The stand-in
answers `authenticate` (the bot's id and name), `net/ping` (`net/pong`), takes `bot/config`,
`bot/status`, `game/connect` (answered with `game/ID/gamedata`), `game/move`, `game/resign`,
`game/chat` and `game/disconnect`, and offers games by pushing `active_game` (the way OGS announces
a game the bot plays in; challenges go through OGS's REST API, which is not stood in for).

The opponent is GNU Go over GTP; it also judges legality and counts finished games
(`final_score`, as OGS scores bot games itself). The stand-in keeps OGS's clocks (byo-yomi,
Fischer) and sends `game/ID/clock` before every `game/ID/move`; the bot loses on time when a move
arrives after its clock ran out, or when none arrives by then.
"""
from __future__ import annotations

import json
import queue
import shutil
import threading
import time
from dataclasses import dataclass, field

from goengine.gtp.client import GtpClient, GtpError

from ogs_standin import ws

GNUGO = shutil.which("gnugo") or "/usr/games/gnugo"      # Debian puts it in /usr/games
BOT_ID, BOT_NAME = 1001, "goengine-bot"
OPPONENT_ID, OPPONENT_NAME = 2002, "gnugo-standin"
LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def vertex_to_xy(vertex: str, size: int) -> tuple[int, int]:
    v = vertex.strip().upper()
    if v == "PASS":
        return -1, -1
    return LETTERS.index(v[0]), size - int(v[1:])


def xy_to_vertex(x: int, y: int, size: int) -> str:
    return "pass" if x < 0 else f"{LETTERS[x]}{size - y}"


def encode_stones(vertices: list[str], size: int) -> str:
    """OGS's string of stones: two letters a.. per stone, column then row from the top."""
    out = ""
    for v in vertices:
        x, y = vertex_to_xy(v, size)
        out += "abcdefghijklmnopqrstuvwxyz"[x] + "abcdefghijklmnopqrstuvwxyz"[y]
    return out


@dataclass
class GameSpec:
    name: str
    size: int = 9
    komi: float = 7.5
    bot_colour: str = "black"
    # {"system": "byoyomi", "main_time", "period_time", "periods"} or
    # {"system": "fischer", "initial_time", "time_increment", "max_time"} (seconds)
    time_control: dict = field(default_factory=lambda: {
        "system": "byoyomi", "main_time": 30, "period_time": 5, "periods": 3})
    handicap: int = 0
    free_handicap: bool = False
    initial_black: list[str] = field(default_factory=list)   # a forked position's stones
    opponent_level: int = 1
    opponent_passes_after: int | None = None   # the opponent passes from this move number on
    max_moves: int = 600


@dataclass
class GameRecord:
    spec: GameSpec
    game_id: int
    moves: list = field(default_factory=list)    # (colour, vertex, seconds on the server's clock)
    chats: list = field(default_factory=list)    # the game/chat payloads
    outcome: str = ""
    winner: int | None = None
    result: str = ""                             # "B+R", "W+3.5", "B+Time", ...
    errors: list = field(default_factory=list)   # illegal moves, moves out of turn
    bot_move_seconds: list = field(default_factory=list)   # (seconds taken, seconds it had)
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def bot_won(self) -> bool:
        return self.winner == BOT_ID


class Clock:
    """OGS's clock of one player (seconds), charged when a move arrives."""

    def __init__(self, tc: dict):
        self.tc = tc
        if tc["system"] == "byoyomi":
            self.thinking_time = float(tc["main_time"])
            self.periods = int(tc["periods"])
        else:
            self.thinking_time = float(tc["initial_time"])
            self.periods = 0

    def available(self) -> float:
        if self.tc["system"] == "byoyomi":
            return self.thinking_time + self.periods * self.tc["period_time"]
        return self.thinking_time

    def charge(self, seconds: float) -> bool:
        """Charge a move that took `seconds`; False when the clock ran out."""
        if self.tc["system"] == "fischer":
            self.thinking_time -= seconds
            if self.thinking_time < 0:
                return False
            self.thinking_time = min(self.thinking_time + self.tc["time_increment"],
                                     self.tc["max_time"])
            return True
        left = self.thinking_time - seconds
        if left >= 0:
            self.thinking_time = left
            return True
        over, self.thinking_time = -left, 0.0
        while over > self.tc["period_time"]:
            over -= self.tc["period_time"]
            self.periods -= 1
            if self.periods <= 0:
                return False
        return True

    def json(self) -> dict:
        if self.tc["system"] == "byoyomi":
            return {"thinking_time": self.thinking_time, "periods": self.periods,
                    "period_time": self.tc["period_time"]}
        return {"thinking_time": self.thinking_time, "skip_bonus": False}


class _Game:
    """One game in progress: the position (GNU Go's), the clocks, what the server has sent."""

    def __init__(self, server: "OgsStandin", spec: GameSpec, game_id: int):
        self.server, self.spec, self.id = server, spec, game_id
        self.record = GameRecord(spec, game_id)
        self.bot_colour = spec.bot_colour
        self.opp_colour = "white" if spec.bot_colour == "black" else "black"
        self.ids = {spec.bot_colour: BOT_ID, self.opp_colour: OPPONENT_ID}
        tc = dict(spec.time_control)
        tc.setdefault("speed", "live")
        tc.setdefault("pause_on_weekends", False)
        self.tc = tc
        self.clocks = {"black": Clock(tc), "white": Clock(tc)}
        self.moves: list[list] = []     # OGS's [x, y, ms]
        self.fixed = spec.handicap > 1 and not spec.free_handicap
        self.stones = list(spec.initial_black)
        self.to_move = "white" if self.fixed or self.stones else "black"
        self.last_move_ms = time.time() * 1000
        self.passes = 0
        self.finished = False
        self.gnugo = GtpClient([GNUGO, "--mode", "gtp", "--chinese-rules",
                                "--level", str(spec.opponent_level)], name="gnugo")
        self.gnugo.command(f"boardsize {spec.size}")
        self.gnugo.command("clear_board")
        self.gnugo.command(f"komi {spec.komi}")
        if self.fixed:
            self.stones = self.gnugo.command(f"fixed_handicap {spec.handicap}").split()
        else:
            for v in self.stones:
                self.gnugo.command(f"play black {v}")

    # ---- what the server sends ----
    def clock_json(self) -> dict:
        now = time.time() * 1000
        current = self.ids[self.to_move]
        return {"game_id": self.id, "current_player": current, "black_player_id": self.ids["black"],
                "white_player_id": self.ids["white"], "title": self.spec.name,
                "last_move": self.last_move_ms, "now": now,
                "expiration": self.last_move_ms + 1000 * self.clocks[self.to_move].available(),
                "black_time": self.clocks["black"].json(), "white_time": self.clocks["white"].json()}

    def gamedata(self) -> dict:
        s = self.spec
        rec = self.record
        return {
            "game_id": self.id, "game_name": s.name, "phase": "finished" if self.finished else "play",
            "width": s.size, "height": s.size, "komi": s.komi, "handicap": s.handicap,
            "free_handicap_placement": s.free_handicap, "rules": "chinese", "ranked": False,
            "initial_player": "white" if self.fixed or s.initial_black else "black",
            "initial_state": {"black": encode_stones(self.stones, s.size), "white": ""},
            "moves": [list(m) for m in self.moves],
            "players": {c: {"id": self.ids[c], "username": BOT_NAME if self.ids[c] == BOT_ID
                            else OPPONENT_NAME, "rank": 20} for c in ("black", "white")},
            "black_player_id": self.ids["black"], "white_player_id": self.ids["white"],
            "time_control": self.tc, "clock": self.clock_json(),
            "outcome": rec.outcome, "winner": rec.winner,
        }

    # ---- moves ----
    def handicap_placing(self) -> bool:
        return self.spec.free_handicap and len(self.moves) < self.spec.handicap

    def play(self, colour: str, vertex: str) -> bool:
        """Record a move made by `colour`, charge its clock and tell the bot; False ends the game."""
        now = time.time() * 1000
        took = (now - self.last_move_ms) / 1000
        before = self.clocks[colour].available()
        in_time = self.clocks[colour].charge(took)
        if colour == self.bot_colour:
            self.record.bot_move_seconds.append((took, before))
            try:
                self.gnugo.command(f"play {colour} {vertex}")
            except GtpError as exc:
                self.record.errors.append(f"move {len(self.moves) + 1}: {colour} {vertex}: {exc.message}")
                self.finish(self.opp_colour, "Illegal move")
                return False
        if not in_time:
            self.finish("white" if colour == "black" else "black", "Timeout")
            return False
        x, y = vertex_to_xy(vertex, self.spec.size)
        self.moves.append([x, y, int(took * 1000)])
        self.record.moves.append((colour, vertex, round(took, 3)))
        self.passes = self.passes + 1 if x < 0 else 0
        self.last_move_ms = now
        if not self.handicap_placing():
            self.to_move = "white" if colour == "black" else "black"
        self.server.emit(f"game/{self.id}/clock", self.clock_json())
        self.server.emit(f"game/{self.id}/move",
                         {"game_id": self.id, "move_number": len(self.moves), "move": self.moves[-1]})
        if self.passes >= 2:
            self.count()
            return False
        if len(self.moves) >= self.spec.max_moves:
            self.finish(None, "Cancellation")
            return False
        return True

    def opponent_moves(self) -> None:
        while not self.finished and self.to_move == self.opp_colour:
            n = len(self.moves) + 1
            after = self.spec.opponent_passes_after
            if after is not None and n >= after:
                vertex = "pass"
                self.gnugo.command(f"play {self.opp_colour} pass")
            else:
                vertex = self.gnugo.command(f"genmove {self.opp_colour}", timeout=120)
            if vertex.lower() == "resign":
                self.finish(self.bot_colour, "Resignation")
                return
            if not self.play(self.opp_colour, vertex):
                return

    def count(self) -> None:
        score = self.gnugo.command("final_score", timeout=120)      # "B+12.5", "W+0.5", "0"
        if score == "0":
            self.finish(None, "0 points")
            return
        winner = "black" if score.startswith("B") else "white"
        self.finish(winner, f"{score[2:]} points")

    def finish(self, winner: str | None, outcome: str) -> None:
        rec = self.record
        self.finished = True
        rec.outcome = outcome
        rec.winner = None if winner is None else self.ids[winner]
        short = {"Resignation": "R", "Timeout": "Time", "Illegal move": "Illegal"}.get(
            outcome, outcome.replace(" points", ""))
        rec.result = f"{winner[0].upper()}+{short}" if winner else outcome
        self.server.emit(f"game/{self.id}/gamedata", self.gamedata())
        self.server.emit("active_game", {"id": self.id, "phase": "finished"})
        self.gnugo.quit()
        rec.done.set()

    def watch_clock(self) -> None:
        """The bot loses on time when its clock runs out before its move arrives."""
        if self.finished or self.to_move != self.bot_colour:
            return
        waited = time.time() - self.last_move_ms / 1000
        if waited > self.clocks[self.bot_colour].available() + 2.0:
            self.finish(self.opp_colour, "Timeout")


class OgsStandin:
    """Listens on 127.0.0.1:`port` (0: any free port) for one gtp2ogs and plays `specs` with it,
    one game after the other. `run()` in a thread; `records` fill as games end."""

    def __init__(self, specs: list[GameSpec], port: int = 0, first_game_id: int = 1):
        self.specs = list(specs)
        self.listener = ws.listen(port)
        self.port = self.listener.getsockname()[1]
        self.records: list[GameRecord] = []
        self.messages: list = []         # every [command, data] the bot sent
        self.authenticated = threading.Event()
        self.all_done = threading.Event()
        self._conn: ws.Connection | None = None
        self._inbox: queue.Queue = queue.Queue()
        self._game: _Game | None = None
        self._next_id = first_game_id
        self._stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def emit(self, event, data) -> None:
        if self._conn is not None:
            try:
                self._conn.send(json.dumps([event, data]))
            except OSError:
                pass

    def stop(self) -> None:
        self._stop.set()
        self.listener.close()
        if self._conn is not None:
            self._conn.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            try:
                conn = ws.Connection(sock)
            except (ws.Closed, OSError):
                sock.close()
                continue
            self._conn = conn
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: ws.Connection) -> None:
        try:
            while True:
                self._inbox.put(json.loads(conn.receive()))
        except (ws.Closed, OSError, ValueError):
            return

    def run(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()
        idle_since = None
        while not self._stop.is_set():
            try:
                msg = self._inbox.get(timeout=0.2)
            except queue.Empty:
                msg = None
            if msg is not None:
                self._handle(msg)
            g = self._game
            if g is not None:
                g.watch_clock()
                if g.finished:
                    idle_since = idle_since or time.monotonic()
                    # let gtp2ogs say goodbye and stop the engine before the next game
                    if time.monotonic() - idle_since > 3.0:
                        self._game, idle_since = None, None
                        self._start_next()

    def _start_next(self) -> None:
        if not self.specs:
            self.all_done.set()
            return
        spec = self.specs.pop(0)
        game = _Game(self, spec, self._next_id)
        self._next_id += 1
        self.records.append(game.record)
        self._game = game
        self.emit("active_game", {"id": game.id, "phase": "play", "width": spec.size,
                                  "height": spec.size, "name": spec.name})

    def _handle(self, msg: list) -> None:
        command, data = msg[0], (msg[1] if len(msg) > 1 else None)
        req_id = msg[2] if len(msg) > 2 else None
        self.messages.append([command, data])
        g = self._game
        if command == "authenticate":
            self._conn.send(json.dumps([req_id, {"id": BOT_ID, "username": BOT_NAME}]))
            if not self.authenticated.is_set():
                self.authenticated.set()
                self._start_next()
            return
        if command == "net/ping":
            self.emit("net/pong", {"client": data["client"], "server": time.time() * 1000})
        elif command == "game/chat":
            for rec in self.records:
                if rec.game_id == data.get("game_id"):
                    rec.chats.append(data)
        elif command == "game/connect" and g is not None and data["game_id"] == g.id:
            self.emit(f"game/{g.id}/gamedata", g.gamedata())
            g.opponent_moves()
        elif command == "game/move" and g is not None and data["game_id"] == g.id:
            self._bot_move(g, data["move"])
        elif command == "game/resign" and g is not None and data["game_id"] == g.id:
            if not g.finished:
                g.finish(g.opp_colour, "Resignation")
        if req_id is not None:
            self._conn.send(json.dumps([req_id, {}]))

    def _bot_move(self, g: _Game, encoded: str) -> None:
        if g.finished:
            return
        if g.to_move != g.bot_colour:
            g.record.errors.append(f"move {encoded} out of turn")
            return
        x, y = (-1, -1) if encoded == ".." else ("abcdefghijklmnopqrstuvwxyz".index(encoded[0]),
                                                 "abcdefghijklmnopqrstuvwxyz".index(encoded[1]))
        if g.play(g.bot_colour, xy_to_vertex(x, y, g.spec.size)):
            g.opponent_moves()
