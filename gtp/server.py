"""The GTP loop: a registry of small handlers, a stdin reader thread, and ordered responses.

    server = Server(session, REGISTRY, stdin=sys.stdin.buffer, stdout=out)
    server.serve()          # returns when `quit` is answered or stdin closes

Threads:
  * the reader thread reads stdin as bytes, decodes with errors="replace", and queues every line.
    Each line it queues also sets the stop event of the command that is running, if that command is
    a long one: "any new input stops the search" (KataGo GTP_Extensions.md, Sabaki's sendAbort,
    GoGui's `# interrupt`). The analysis commands also stop at once when input is already waiting
    (Sabaki may write its abort right behind them); genmove and its variants stop only for input
    that arrives while they think, so that `printf 'genmove b\nquit\n' | engine-gtp` gets a real
    move;
  * the main thread takes lines off the queue in order and answers each one completely (a
    streaming command writes `=id`, its lines, then the blank line) before it reads the next.
Responses go only to `stdout`, flushed after each write; logs go to stderr through `logging`.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
import traceback
from dataclasses import dataclass
from typing import IO, Callable

from goengine.gtp.protocol import INTERRUPT, Command, GtpError, clean_text, format_failure, \
    format_header, format_success, parse_line, quote

log = logging.getLogger("gtp")

MAX_LINE_BYTES = 1 << 20   # longer input lines are cut (the rest is read and dropped)
# Lines that reach us within this many seconds after a genmove line were written with it
# (pipelined), not typed to interrupt it.
PIPELINE_GRACE = 0.05
_EOF = object()


# ---- registry -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Handler:
    name: str
    fn: Callable
    min_args: int
    max_args: int | None      # None: any number
    needs: str | None         # None, "game" (rules core loaded) or "player" (search loaded too)
    long: bool                # interruptible: gets a Call with a stop event (genmove, analysis)
    pending_stops: bool       # long: input already queued when it starts stops it too (analysis)
    usage: str
    listed: bool


class Registry:
    """Command name -> Handler. Handlers are plain functions `fn(session, args) -> str`
    (or `fn(session, args, call)` when long=True)."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}

    def command(self, name: str, *, args: int | tuple[int, int | None] = 0, needs: str | None = "game",
                long: bool = False, pending_stops: bool = True, usage: str = "",
                listed: bool = True):
        lo, hi = (args, args) if isinstance(args, int) else args

        def register(fn: Callable) -> Callable:
            if name in self.handlers:
                raise ValueError(f"command {name} registered twice")
            self.handlers[name] = Handler(name, fn, lo, hi, needs, long, pending_stops,
                                           usage or name, listed)
            return fn

        return register

    def get(self, name: str) -> Handler | None:
        return self.handlers.get(name)

    def names(self) -> list[str]:
        return [h.name for h in self.handlers.values() if h.listed]


REGISTRY = Registry()
command = REGISTRY.command


# ---- one call of a long command ---------------------------------------------------------------

class Call:
    """What a long handler gets: the stop event, and a stream for commands that answer line by line.

    A streaming handler calls `begin()` (writes `=id`), then `line(text)` any number of times; the
    server writes the closing blank line. A handler that never calls `begin()` answers by returning
    its text or raising GtpError, like any other handler."""

    def __init__(self, server: "Server", cmd: Command, stop: threading.Event):
        self._server = server
        self.cmd = cmd
        self.stop = stop
        self.started = False

    def begin(self) -> None:
        if not self.started:
            self.started = True
            self._server.write(format_header(self.cmd.id) + "\n")

    def line(self, text: str) -> None:
        self.begin()
        lines = clean_text(text)
        if lines:
            self._server.write("\n".join(lines) + "\n")


# ---- the server ---------------------------------------------------------------------------------

class Server:
    def __init__(self, session, registry: Registry, stdin: IO[bytes], stdout: IO[bytes]):
        self.session = session
        self.registry = registry
        self._stdin = stdin
        self._stdout = stdout
        self._queue: queue.Queue = queue.Queue()
        self._out_lock = threading.Lock()
        self._stop_lock = threading.Lock()
        self._active_stop: threading.Event | None = None
        self._grace_until = 0.0
        self.quitting = False
        session.server = self

    # ---- output ----
    def write(self, text: str) -> None:
        with self._out_lock:
            self._stdout.write(text.encode("utf-8", errors="replace"))
            self._stdout.flush()

    # ---- input ----
    def start_reader(self) -> None:
        threading.Thread(target=self._read_stdin, name="gtp-stdin", daemon=True).start()

    def _read_stdin(self) -> None:
        try:
            while True:
                raw = self._stdin.readline(MAX_LINE_BYTES)
                if not raw:
                    break
                if len(raw) >= MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    while True:  # drop the rest of an over-long line
                        rest = self._stdin.readline(MAX_LINE_BYTES)
                        if not rest or rest.endswith(b"\n"):
                            break
                    log.warning("input line longer than %d bytes cut", MAX_LINE_BYTES)
                self._deliver(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError) as exc:   # closed or broken stdin
            log.debug("stdin reader stopped: %s", exc)
        self._deliver(_EOF)

    def _deliver(self, line) -> None:
        parsed = None if line is _EOF else parse_line(line)
        now = time.monotonic()
        self._queue.put((line, parsed, now))
        with self._stop_lock:
            if self._active_stop is not None and now >= self._grace_until:
                self._active_stop.set()

    def input_pending(self) -> bool:
        return not self._queue.empty()

    # ---- the loop ----
    def serve(self) -> None:
        """Answer commands until `quit` or the end of stdin."""
        self.start_reader()
        while not self.quitting:
            pondering = self._start_ponder()
            line, parsed, received = self._queue.get()
            if pondering is not None:
                self._stop_ponder(*pondering)
            if line is _EOF:
                log.info("stdin closed")
                break
            if parsed is None or parsed is INTERRUPT:
                continue
            self.execute(parsed, received)

    # ---- pondering: search on the opponent's time, stopped by the next input line ----
    def _start_ponder(self):
        if not self._queue.empty():
            return None
        job = self.session.ponder_job()
        if job is None:
            return None
        player, game = job
        stop = threading.Event()

        def run():
            try:
                player.analyze(game, game.to_play, report=None, stop=stop)
            except Exception:  # noqa: BLE001 - pondering is best effort
                log.exception("pondering failed")

        thread = threading.Thread(target=run, name="ponder", daemon=True)
        thread.start()
        last = game.last_move
        log.debug("pondering on %s", self.session.fmt(last) if last is not None else "-")
        return stop, thread

    @staticmethod
    def _stop_ponder(stop: threading.Event, thread: threading.Thread) -> None:
        stop.set()
        thread.join()

    def execute(self, cmd: Command, received: float = 0.0) -> None:
        log.debug("<< %s", str(cmd)[:200])
        try:
            text, streamed = self._dispatch(cmd, received)
        except GtpError as exc:
            self.write(format_failure(cmd.id, str(exc)))
            log.debug(">> ? %s", exc)
            return
        if streamed:
            self.write("\n")
        else:
            response = format_success(cmd.id, text or "")
            self.write(response)
            log.debug(">> %s", response.rstrip()[:200])

    def _dispatch(self, cmd: Command, received: float) -> tuple[str, bool]:
        if not cmd.name:
            raise GtpError("missing command")
        handler = self.registry.get(cmd.name)
        if handler is None:
            raise GtpError("unknown command")
        n = len(cmd.args)
        if n < handler.min_args or (handler.max_args is not None and n > handler.max_args):
            raise GtpError(f"wrong number of arguments: usage {handler.usage}")
        if not handler.long:
            if handler.needs:
                self.session.wait_ready(handler.needs)
            return self._guarded(handler.fn, self.session, cmd.args), False
        # A long command can be stopped from the moment it is read, even while it waits for
        # the engine to load (GoGui may send `# interrupt` then).
        stop = threading.Event()
        with self._stop_lock:
            self._active_stop = stop
            if handler.pending_stops:
                self._grace_until = 0.0
                if self.input_pending():
                    stop.set()
            else:
                self._grace_until = received + PIPELINE_GRACE
        call = Call(self, cmd, stop)
        try:
            if handler.needs:
                self.session.wait_ready(handler.needs)
            text = self._guarded(handler.fn, self.session, cmd.args, call)
        except GtpError as exc:
            if not call.started:
                raise
            log.error("%s failed after its answer started: %s", cmd.name, exc)
            text = ""
        finally:
            with self._stop_lock:
                self._active_stop = None
        if call.started:
            if text:
                call.line(text)
            return "", True
        return text, False

    @staticmethod
    def _guarded(fn: Callable, *args) -> str:
        """Run a handler; any exception other than GtpError is logged and answered as an error."""
        try:
            return fn(*args)
        except GtpError:
            raise
        except Exception as exc:  # noqa: BLE001 - bad input must never kill the engine
            log.error("internal error:\n%s", traceback.format_exc())
            raise GtpError(f"internal error: {type(exc).__name__}: {quote(str(exc))}") from exc

    def interrupt(self) -> bool:
        """Stop the running long command (SIGINT, GoGui's interrupt). True if one was running."""
        with self._stop_lock:
            if self._active_stop is None:
                return False
            self._active_stop.set()
            return True

    def request_quit(self) -> None:
        self.quitting = True
