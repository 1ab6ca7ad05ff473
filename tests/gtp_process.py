"""A real `engine-gtp` subprocess for the GTP tests, driven byte for byte (the `gtp_engine` and
`loaded_engine` fixtures of tests/conftest.py).

    def test_name(gtp_engine):
        with gtp_engine("--size", "9") as eng:
            assert eng.ask("name") == ("=", "goengine")
            eng.send(b"1 play b d4\r\n")
            head, body = eng.response()
"""
from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 60.0   # generous: the first launch on a machine compiles the numba kernels


class Engine:
    def __init__(self, *args: str, env: dict | None = None, quiet: bool = True):
        cmd = [sys.executable, "-m", "goengine.gtp.main", *(["--quiet"] if quiet else []), *args]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
            env={**os.environ, **(env or {})})
        self.lines: queue.Queue = queue.Queue()
        self.stderr_lines: list[str] = []
        self.raw = bytearray()
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self.raw += raw
            self.lines.put(raw.decode("utf-8", errors="replace"))
        self.lines.put(None)

    def _read_err(self) -> None:
        for raw in iter(self.proc.stderr.readline, b""):
            self.stderr_lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))

    # ---- writing ----
    def send(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    # ---- reading ----
    def line(self, timeout: float = TIMEOUT) -> str:
        """The next stdout line with its '\\n' (AssertionError on timeout or EOF)."""
        try:
            item = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout} s") from None
        if item is None:
            self.lines.put(None)
            raise AssertionError("engine closed stdout; stderr:\n" + "\n".join(self.stderr_lines[-20:]))
        return item

    def response(self, timeout: float = TIMEOUT) -> tuple[str, str]:
        """(head, body) of the next response: head like '=12' or '?', body the text after it
        (lines joined with '\\n'). Asserts the framing: first line starts with = or ?, an empty
        line ends it, no stray output before it."""
        deadline = time.monotonic() + timeout
        first = self.line(timeout).rstrip("\n")
        assert first[:1] in ("=", "?"), f"response does not start with = or ?: {first!r}"
        m = re.match(r"^([=?]\d*)(?: (.*))?$", first)
        assert m, f"bad response head {first!r}"
        # `= ` alone: the body starts on the next line (showboard, boards for GoGui)
        lines = [m.group(2)] if m.group(2) else []
        while True:
            nxt = self.line(max(0.01, deadline - time.monotonic())).rstrip("\n")
            if nxt == "":
                break
            lines.append(nxt)
        return m.group(1), "\n".join(lines)

    def ask(self, command: str, timeout: float = TIMEOUT) -> tuple[str, str]:
        self.send(command + "\n")
        return self.response(timeout)

    def ok(self, command: str, timeout: float = TIMEOUT) -> str:
        head, body = self.ask(command, timeout)
        assert head.startswith("="), f"{command!r} failed: {body}"
        return body

    def fails(self, command: str, timeout: float = TIMEOUT) -> str:
        head, body = self.ask(command, timeout)
        assert head.startswith("?"), f"{command!r} should fail, answered {body!r}"
        assert body, f"{command!r}: a failure needs a message"
        return body

    def analyze_once(self, colour: str, *extra: str, command: str = "lz-analyze",
                     timeouts: tuple[float, float, float] = (TIMEOUT, 10, 5)) -> str:
        """The first line `command colour 10 extra...` streams; then stops the analysis (any
        command does) and drains what was sent before protocol_version's answer. `timeouts`: for
        the analysis's `=` (the engine may still be loading), its first line, the drain."""
        self.send(" ".join((command, colour, "10", *extra)) + "\n")
        assert self.line(timeouts[0]) == "=\n"
        line = self.line(timeout=timeouts[1])
        self.send("protocol_version\n")
        while self.line(timeout=timeouts[2]) != "\n":
            pass
        assert self.response() == ("=", "2")
        return line

    def wait_loaded(self, timeout: float = 120) -> None:
        """Block until the search is loaded (a command that needs the player has answered)."""
        self.ok("goengine-get_param playouts", timeout)

    def no_output(self, seconds: float = 0.3) -> None:
        try:
            item = self.lines.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected output {item!r}")

    # ---- ending ----
    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit\n")
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def loaded_engine(*args: str, settings: dict | None = None):
    """An Engine on 9x9, its models loaded, with these `goengine-set_param` settings: the body of
    the module-scoped fixtures of the subprocess tests."""
    with Engine("--size", "9", *args) as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        for name, value in (settings or {}).items():
            e.ok(f"goengine-set_param {name} {value}")
        yield e
