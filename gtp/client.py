"""A GTP client: drives one engine subprocess over its stdin/stdout.

    with GtpClient(["/usr/games/gnugo", "--mode", "gtp"], name="gnugo") as eng:
        eng.command("boardsize 9")
        move = eng.genmove("b", timeout=30)      # "C5", "pass" or "resign" (lower case for the last two)

Every command gets a wall-clock timeout. A reader thread turns the engine's stdout into lines on a
queue, so waiting never blocks past the deadline. Commands carry numeric ids; an answer with a stale
id (the late answer to a command that timed out) is discarded.

Errors, all subclasses of `GtpClientError`:
  * `GtpError`   the engine answered `? message` (the engine is still usable);
  * `GtpTimeout` no complete answer before the deadline (the engine's state is unknown: restart it);
  * `GtpCrash`   the engine exited or closed its pipes (exit code and the tail of its stderr attached).
"""
from __future__ import annotations

import collections
import os
import queue
import subprocess
import threading
import time
from typing import IO, Sequence

__all__ = [
    "GtpClient",
    "GtpClientError",
    "GtpError",
    "GtpTimeout",
    "GtpCrash",
]

DEFAULT_TIMEOUT = 30.0
_EOF = object()  # sentinel the reader thread queues when stdout closes
_STDERR_TAIL_LINES = 40


class GtpClientError(Exception):
    """Base class of everything GtpClient raises about the engine."""

    def __init__(self, message: str, *, engine: str = "", command: str = ""):
        super().__init__(message)
        self.engine = engine
        self.command = command


class GtpError(GtpClientError):
    """The engine answered the command with `?`. `.message` is the engine's text."""

    def __init__(self, message: str, *, engine: str = "", command: str = ""):
        super().__init__(f"{engine}: '{command}' failed: {message}", engine=engine, command=command)
        self.message = message


class GtpTimeout(GtpClientError):
    """No complete answer within the timeout."""

    def __init__(self, timeout: float, *, engine: str = "", command: str = ""):
        super().__init__(f"{engine}: no answer to '{command}' within {timeout:g} s",
                         engine=engine, command=command)
        self.timeout = timeout


class GtpCrash(GtpClientError):
    """The engine process exited (or closed stdout/stdin) while we needed it."""

    def __init__(self, returncode: int | None, stderr_tail: str = "", *, engine: str = "",
                 command: str = ""):
        rc = "still running, pipe closed" if returncode is None else f"exit code {returncode}"
        msg = f"{engine}: engine died ({rc})"
        if command:
            msg += f" during '{command}'"
        if stderr_tail:
            msg += f"; stderr tail:\n{stderr_tail}"
        super().__init__(msg, engine=engine, command=command)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


def _clean_line(raw: bytes) -> str:
    """GTP preprocessing of a response line: drop CR and control characters, tabs become spaces."""
    text = raw.decode("utf-8", errors="replace")
    out = []
    for ch in text:
        if ch == "\t":
            out.append(" ")
        elif ch in "\r\n" or (ord(ch) < 32) or ord(ch) == 127:
            continue
        else:
            out.append(ch)
    return "".join(out)


class GtpClient:
    """One engine subprocess speaking GTP.

    argv:        the command line (a list; split strings with shlex first).
    name:        a label used in error messages and logs.
    stderr_path: where the engine's stderr is appended (None: kept only as an in-memory tail).
    timeout:     default per-command timeout in seconds (None: wait forever).
    """

    def __init__(self, argv: Sequence[str], name: str | None = None,
                 stderr_path: str | os.PathLike | None = None, *,
                 timeout: float | None = DEFAULT_TIMEOUT, cwd: str | os.PathLike | None = None,
                 env: dict[str, str] | None = None):
        if isinstance(argv, str):
            raise TypeError("argv must be a sequence of strings; split a command line with shlex")
        self.argv = [str(a) for a in argv]
        if not self.argv:
            raise ValueError("empty engine command")
        self.name = name or os.path.basename(self.argv[0])
        self.default_timeout = timeout
        self.last_elapsed: float = 0.0   # wall-clock seconds of the last command's round trip
        self._next_id = 1
        self._lines: queue.Queue = queue.Queue()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._stderr_file: IO[bytes] | None = None
        self._eof = False
        self._closed = False
        self._known: dict[str, bool] = {}
        if stderr_path is not None:
            self._stderr_file = open(stderr_path, "ab")
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=cwd, env=env, bufsize=0)
        except OSError as e:
            if self._stderr_file is not None:
                self._stderr_file.close()
            raise GtpCrash(None, f"cannot start {self.argv!r}: {e}", engine=self.name) from e
        self._reader = threading.Thread(target=self._read_stdout, name=f"gtp-out-{self.name}",
                                        daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_stderr,
                                            name=f"gtp-err-{self.name}", daemon=True)
        self._err_reader.start()

    # ------------------------------------------------------------------ threads
    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            for raw in iter(out.readline, b""):
                self._lines.put(_clean_line(raw))
        except (OSError, ValueError):
            pass
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        try:
            for raw in iter(err.readline, b""):
                self._stderr_tail.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
                f = self._stderr_file
                if f is not None:
                    try:
                        f.write(raw)
                        f.flush()
                    except (OSError, ValueError):
                        pass
        except (OSError, ValueError):
            pass

    # ------------------------------------------------------------------ state
    @property
    def pid(self) -> int:
        return self.proc.pid

    def is_alive(self) -> bool:
        return self.proc.poll() is None and not self._eof

    def stderr_tail(self, lines: int = 20) -> str:
        return "\n".join(list(self._stderr_tail)[-lines:])

    def _crash(self, command: str) -> GtpCrash:
        # give the process a moment to finish exiting so the exit code is known
        try:
            rc = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            rc = None
        self._err_reader.join(timeout=0.5)
        return GtpCrash(rc, self.stderr_tail(), engine=self.name, command=command)

    # ------------------------------------------------------------------ protocol
    def command(self, command: str, timeout: float | None | type(...) = ...) -> str:
        """Send one command and return the answer text (without `=`, id, and surrounding space).

        timeout: seconds for the whole round trip; `...` means the client's default, None waits forever.
        Raises GtpError, GtpTimeout or GtpCrash.
        """
        if timeout is ...:
            timeout = self.default_timeout
        command = command.strip()
        if not command or "\n" in command:
            raise ValueError(f"bad GTP command {command!r}")
        if self._closed:
            raise GtpCrash(self.proc.poll(), engine=self.name, command=command)
        if self._eof or self.proc.poll() is not None:
            raise self._crash(command)
        cid = self._next_id
        self._next_id += 1
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(f"{cid} {command}\n".encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crash(command) from None
        try:
            while True:
                ok, rid, body = self._read_response(deadline, command, timeout)
                if rid is None or rid == cid:
                    break
                # an answer to an earlier command that timed out: drop it
        finally:
            self.last_elapsed = time.monotonic() - start
        if not ok:
            raise GtpError(body, engine=self.name, command=command)
        return body

    def _get_line(self, deadline: float | None, command: str, timeout: float | None) -> str:
        try:
            if deadline is None:
                item = self._lines.get()
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise queue.Empty
                item = self._lines.get(timeout=remaining)
        except queue.Empty:
            raise GtpTimeout(timeout or 0.0, engine=self.name, command=command) from None
        if item is _EOF:
            self._eof = True
            raise self._crash(command)
        return item

    def _read_response(self, deadline, command, timeout) -> tuple[bool, int | None, str]:
        # skip anything before the status character (blank lines, chatter on stdout)
        while True:
            line = self._get_line(deadline, command, timeout)
            if line[:1] in ("=", "?"):
                break
        ok = line[0] == "="
        rest = line[1:]
        digits = 0
        while digits < len(rest) and rest[digits].isdigit():
            digits += 1
        rid = int(rest[:digits]) if digits else None
        body = [rest[digits:].strip()]
        while True:
            line = self._get_line(deadline, command, timeout)
            if line.strip() == "":
                break
            body.append(line.rstrip())
        return ok, rid, "\n".join(body).strip()

    # ------------------------------------------------------------------ conveniences
    def known_command(self, cmd: str, timeout: float | None | type(...) = ...) -> bool:
        if cmd not in self._known:
            try:
                self._known[cmd] = self.command(f"known_command {cmd}", timeout).lower() == "true"
            except GtpError:
                self._known[cmd] = False
        return self._known[cmd]

    def list_commands(self, timeout=...) -> list[str]:
        return self.command("list_commands", timeout).split()

    def engine_name(self, timeout=...) -> str:
        return self.command("name", timeout)

    def engine_version(self, timeout=...) -> str:
        return self.command("version", timeout)

    def boardsize(self, size: int, timeout=...) -> None:
        self.command(f"boardsize {size}", timeout)

    def clear_board(self, timeout=...) -> None:
        self.command("clear_board", timeout)

    def komi(self, komi: float, timeout=...) -> None:
        self.command(f"komi {komi:g}", timeout)

    def play(self, color: str, vertex: str, timeout=...) -> None:
        self.command(f"play {color} {vertex}", timeout)

    def genmove(self, color: str, timeout=...) -> str:
        """The engine's move: a vertex in upper case, or 'pass' / 'resign'."""
        answer = self.command(f"genmove {color}", timeout).strip()
        low = answer.lower()
        return low if low in ("pass", "resign") else answer.upper()

    def time_settings(self, main_time: int, byo_yomi_time: int, byo_yomi_stones: int,
                      timeout=...) -> None:
        self.command(f"time_settings {main_time} {byo_yomi_time} {byo_yomi_stones}", timeout)

    def time_left(self, color: str, seconds: int, stones: int, timeout=...) -> None:
        self.command(f"time_left {color} {seconds} {stones}", timeout)

    def final_status_list(self, status: str = "dead", timeout=...) -> list[str]:
        return [v.upper() for v in self.command(f"final_status_list {status}", timeout).split()]

    def final_score(self, timeout=...) -> str:
        return self.command("final_score", timeout)

    # ------------------------------------------------------------------ shutdown
    def quit(self, grace: float = 2.0) -> int | None:
        """Send `quit`, wait up to `grace` seconds for the exit, then terminate and kill.

        Returns the exit code (None if the process could not be reaped). Idempotent.
        """
        if self._closed:
            return self.proc.returncode
        self._closed = True
        if self.proc.poll() is None and not self._eof:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(f"{self._next_id} quit\n".encode())
                self.proc.stdin.flush()
            except (OSError, ValueError):
                pass
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        rc = None
        try:
            rc = self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                rc = self.proc.wait(timeout=max(0.5, grace / 2))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                try:
                    rc = self.proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    rc = None
        self._reader.join(timeout=1.0)
        self._err_reader.join(timeout=1.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except (OSError, ValueError):
                pass
        if self._stderr_file is not None:
            try:
                self._stderr_file.close()
            except OSError:
                pass
            self._stderr_file = None
        return rc

    close = quit

    def kill(self) -> None:
        """Kill at once (after a timeout the engine may not read stdin any more)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.quit(grace=1.0)

    def __enter__(self) -> "GtpClient":
        return self

    def __exit__(self, *exc) -> None:
        self.quit()

    def __del__(self):  # best effort: never leave engines behind
        try:
            if not self._closed and self.proc.poll() is None:
                self.proc.kill()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"GtpClient({self.name!r}, pid={self.proc.pid}, alive={self.is_alive()})"
