"""The scripted GTP engine the client and match tests run as a real subprocess (the
`script_engine` fixture of tests/conftest.py writes it and returns the argv prefix)."""
from __future__ import annotations

import sys
from pathlib import Path

SCRIPT_ENGINE = r'''"""A tiny scripted GTP engine for the client and match tests (run as a real subprocess).

    python gtp_script_engine.py MODE [ARG] [--log FILE]

MODE:
  normal        plays the first free point (top-left onwards); passes when its list runs out
  pass          always passes
  sleep S       genmove sleeps S seconds before answering (name/others answer at once)
  slow S        every genmove takes S seconds, then plays normally (for clock tests)
  crash         exits with code 3 on genmove, after writing a message to stderr
  illegal       genmove answers the opponent's last move (an occupied point)
  reject        answers `? illegal move` to every `play`
  junk          genmove answers "ZZ99"
  deafquit      hangs on `quit` (never exits) - to test the kill after the grace period
It never knows final_status_list. --log FILE appends every command received.
Captures are ignored: the engine only tracks points it has seen played, which is enough for the
short games the tests play (and the referee checks legality anyway).
"""
import sys
import time

COLS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def main() -> None:
    args = sys.argv[1:]
    log = None
    if "--log" in args:
        i = args.index("--log")
        log = open(args[i + 1], "a")
        del args[i:i + 2]
    mode = args[0] if args else "normal"
    arg = float(args[1]) if len(args) > 1 else 0.0
    size = 19
    occupied: set[str] = set()
    last_opponent = None

    def answer(cid, text="", ok=True):
        sys.stdout.write(("=" if ok else "?") + cid + (" " + text if text else " ") + "\n\n")
        sys.stdout.flush()

    for line in sys.stdin:
        line = line.split("#")[0].strip()
        if not line:
            continue
        if log:
            log.write(line + "\n")
            log.flush()
        parts = line.split()
        cid = ""
        if parts[0].isdigit():
            cid = parts.pop(0)
        cmd, rest = parts[0].lower(), parts[1:]
        if cmd == "name":
            answer(cid, f"Script-{mode}")
        elif cmd == "version":
            answer(cid, "1.0")
        elif cmd == "protocol_version":
            answer(cid, "2")
        elif cmd == "known_command":
            known = rest and rest[0] in ("name", "version", "boardsize", "clear_board", "komi",
                                         "play", "genmove", "quit", "time_settings", "time_left")
            answer(cid, "true" if known else "false")
        elif cmd == "boardsize":
            size = int(rest[0])
            occupied.clear()
            answer(cid)
        elif cmd == "clear_board":
            occupied.clear()
            last_opponent = None
            answer(cid)
        elif cmd in ("komi", "time_settings", "time_left"):
            answer(cid)
        elif cmd == "play":
            if mode == "reject":
                answer(cid, "illegal move", ok=False)
                continue
            v = rest[1].upper()
            if v != "PASS":
                occupied.add(v)
                last_opponent = v
            answer(cid)
        elif cmd == "genmove":
            if mode == "sleep":
                time.sleep(arg)
            elif mode == "slow":
                time.sleep(arg)
            elif mode == "crash":
                sys.stderr.write("script engine: simulated crash\n")
                sys.stderr.flush()
                sys.exit(3)
            if mode == "pass":
                answer(cid, "pass")
                continue
            if mode == "junk":
                answer(cid, "ZZ99")
                continue
            if mode == "illegal" and last_opponent:
                answer(cid, last_opponent)
                continue
            move = "pass"
            for r in range(size, 0, -1):
                for c in range(size):
                    v = f"{COLS[c]}{r}"
                    if v not in occupied:
                        move = v
                        break
                if move != "pass":
                    break
            if move != "pass":
                occupied.add(move)
            answer(cid, move)
        elif cmd == "quit":
            if mode == "deafquit":
                time.sleep(3600)   # hangs instead of exiting (stdin closing does not help)
            answer(cid)
            return
        else:
            answer(cid, "unknown command", ok=False)


if __name__ == "__main__":
    main()
'''


def write_script_engine(directory) -> list[str]:
    """Write the script into `directory`; returns [python, script] to which MODE args are added."""
    path = Path(directory) / "script_engine.py"
    path.write_text(SCRIPT_ENGINE)
    return [sys.executable, str(path)]
