"""A real `engine-gtp` subprocess for the GTP tests, driven byte for byte.

    with Engine("--size", "9") as eng:
        assert eng.ask("name") == ("=", "goengine")
        eng.send(b"1 play b d4\r\n")
        head, body = eng.response()

Also Sabaki's analysis parser (src/modules/analysis.js parseAnalysis, docs/gtp.md §2.1)
re-implemented, so that the tests read analysis lines exactly as Sabaki does.
The other test_gtp_*.py files import this module; its own tests check the harness.
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


# ---- Sabaki's parseAnalysis ----------------------------------------------------------------------

_PV = re.compile(r"(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$")


def loaded_engine(*args: str, settings: dict | None = None):
    """An Engine on 9x9, its models loaded, with these `goengine-set_param` settings: the body of
    the module-scoped fixtures of the subprocess tests."""
    with Engine("--size", "9", *args) as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        for name, value in (settings or {}).items():
            e.ok(f"goengine-set_param {name} {value}")
        yield e


def sabaki_parse(line: str, kata: bool) -> list[dict]:
    """One analysis line as Sabaki reads it: [{vertex, visits, winrate (percent), scoreLead, pv}].

    Rules of src/modules/analysis.js: split on /\\s*info\\s+/; the trailing run of vertices is the
    PV (cut at the first pass), the token before it (`pv`) is dropped; the rest are key/value
    pairs; blocks whose `move` is not /^[A-Za-z]\\d+$/ are dropped. Winrate dialect: kata-* floats
    in [0, 1], lz-analyze integers in ten-thousandths."""
    out = []
    for segment in re.split(r"\s*info\s+", line)[1:]:
        x = segment.strip()
        m = _PV.search(x)
        if m is None:
            continue
        pv_text = m.group(0)
        cut = pv_text.find("pass")
        pv = [t for t in re.split(r"\s+", pv_text[:cut if cut >= 0 else len(pv_text)]) if len(t) >= 2]
        tokens = x[:m.start()].strip().split()[:-1]
        fields = dict(zip(tokens[0::2], tokens[1::2]))
        fields["pv"] = pv
        move = fields.get("move", "")
        if not re.match(r"^[A-Za-z]\d+$", move):
            continue
        winrate = float(fields["winrate"]) * (100 if kata else 0.01)
        out.append({"vertex": move, "visits": int(fields.get("visits", 0)), "winrate": winrate,
                    "scoreLead": float(fields["scoreLead"]) if "scoreLead" in fields else None,
                    "pv": pv, "fields": fields})
    return out


# ---- the harness's own tests --------------------------------------------------------------------

def test_sabaki_parser_reads_the_katago_transcripts():
    lz = ("info move C4 visits 39 winrate 5811 prior 3791 lcb 5456 order 0 pv C4 E7 G6 C5 B5 D4 C3 G8 "
          "info move F7 visits 39 winrate 5811 prior 3791 lcb 5456 order 1 pv F7 C5 D3 E7 E8 F6 G7 B3")
    got = sabaki_parse(lz, kata=False)
    assert [g["vertex"] for g in got] == ["C4", "F7"]
    assert abs(got[0]["winrate"] - 58.11) < 1e-9 and got[0]["pv"][:2] == ["C4", "E7"]
    kata = ("info move C4 visits 47 edgeVisits 47 utility 0.155838 winrate 0.573411 scoreMean 0.735614 "
            "scoreStdev 12.0119 scoreLead 0.735614 scoreSelfplay 1.0948 prior 0.340396 lcb 0.540641 "
            "utilityLcb 0.0640797 weight 47 order 0 pv C4 E7 G7 C5 B5 D4 C3 info move pass visits 3 "
            "winrate 0.1 order 1 pv pass C4")
    got = sabaki_parse(kata, kata=True)
    assert [g["vertex"] for g in got] == ["C4"]
    assert got[0]["scoreLead"] == 0.735614 and abs(got[0]["winrate"] - 57.3411) < 1e-9


def test_sabaki_parser_cuts_the_pv_at_pass():
    got = sabaki_parse("info move D4 visits 3 winrate 5000 order 0 pv D4 pass Q16", kata=False)
    assert got[0]["pv"] == ["D4"]
