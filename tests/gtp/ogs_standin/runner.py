"""Play games through the real gtp2ogs against the stand-in: start the stand-in, write gtp2ogs's
config (engine-gtp as the bot, with --log-file), run `node dist/gtp2ogs.js`, wait for the games,
and read back every command gtp2ogs sent to the engine with the engine's answer.

    cd tests && python -m ogs_standin.runner --gtp2ogs /path/to/gtp2ogs --games all
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ogs_standin.server import GameRecord, GameSpec, OgsStandin

# The games the README reports (docs/gtp.md §2.3): each names what it shows.
GAMES = {
    "9x9-byoyomi": GameSpec("9x9 byo-yomi", size=9, bot_colour="black", time_control={
        "system": "byoyomi", "main_time": 30, "period_time": 5, "periods": 3}),
    "9x9-opponent-passes": GameSpec("9x9, the opponent passes from move 12", size=9,
                                    bot_colour="white", opponent_passes_after=12, time_control={
                                        "system": "byoyomi", "main_time": 20, "period_time": 5,
                                        "periods": 3}),
    "9x9-resign": GameSpec("9x9 fork of a lost position: the engine resigns", size=9,
                           bot_colour="white", opponent_level=10,
                           initial_black=["C3", "C5", "C7", "E3", "E5", "E7", "G3", "G5", "G7"],
                           time_control={"system": "fischer", "initial_time": 60,
                                         "time_increment": 5, "max_time": 120}),
    "19x19-fischer": GameSpec("19x19 Fischer", size=19, bot_colour="black", time_control={
        "system": "fischer", "initial_time": 120, "time_increment": 3, "max_time": 180}),
    "19x19-handicap": GameSpec("19x19, 4 stones fixed handicap", size=19, komi=0.5,
                               bot_colour="white", handicap=4, time_control={
                                   "system": "byoyomi", "main_time": 60, "period_time": 5,
                                   "periods": 3}),
    "19x19-free-handicap": GameSpec("19x19, 3 stones free handicap placed by the engine", size=19,
                                    komi=0.5, bot_colour="black", handicap=3, free_handicap=True,
                                    time_control={"system": "fischer", "initial_time": 120,
                                                  "time_increment": 3, "max_time": 180}),
}


def gtp2ogs_script(folder: str | os.PathLike | None) -> Path | None:
    """gtp2ogs's built script (dist/gtp2ogs.js) in `folder`, where node can run it; else None."""
    if not folder or not shutil.which("node"):
        return None
    script = Path(folder) / "dist" / "gtp2ogs.js"
    return script if script.is_file() else None


@dataclass
class Run:
    records: list[GameRecord]
    exchanges: list[tuple[str, str]]   # (command, answer) as the engine logged them
    gtp2ogs_log: str
    engine_log: str
    finished: bool


_CMD = re.compile(r" DEBUG << (.*)$")
_ANSWER = re.compile(r" DEBUG >> (.*)$")


def exchanges(engine_log: str) -> list[tuple[str, str]]:
    """Pair each `<< command` of the engine's --log-file with its `>> answer` (in order)."""
    out, pending = [], []
    for line in engine_log.splitlines():
        m = _CMD.search(line)
        if m:
            pending.append(m.group(1))
            continue
        m = _ANSWER.search(line)
        if m and pending:
            out.append((pending.pop(0), m.group(1)))
    out.extend((cmd, "") for cmd in pending)      # never answered
    return out


def play(script: Path, specs: list[GameSpec], workdir: Path, engine_args: list[str],
         timeout: float, echo=None) -> Run:
    workdir.mkdir(parents=True, exist_ok=True)
    engine_log = workdir / "engine.log"
    gtp2ogs_log = workdir / "gtp2ogs.log"
    standin = OgsStandin(specs)
    config = {
        "apikey": "stand-in", "server": standin.url, "engine": "goengine",
        "status_update_frequency": 0, "min_move_time": 0, "farewellscore": True,
        "allowed_board_sizes": [9, 13, 19],
        "bot": {"command": [sys.executable, "-m", "goengine.gtp.main", "--log-file",
                            str(engine_log), *engine_args],
                "manager": "persistent", "enable_clock": True, "send_chats": True,
                # gtp2ogs removes the bot's chat listener release_delay ms after each move (100
                # by default): an opponent who answers sooner loses our next move's chat lines
                "release_delay": 0},
    }
    cfg = workdir / "gtp2ogs.json5"
    cfg.write_text(json.dumps(config, indent=2))
    server = threading.Thread(target=standin.run, daemon=True)
    server.start()
    with open(gtp2ogs_log, "wb") as log:
        proc = subprocess.Popen(["node", str(script), "--config", str(cfg)], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        reported = 0
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                if standin.all_done.wait(1.0):
                    break
                done = [r for r in standin.records if r.done.is_set()]
                if echo is not None and len(done) > reported:
                    for r in done[reported:]:
                        echo(r)
                    reported = len(done)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            standin.stop()
    time.sleep(0.5)      # the engine's quit (gtp2ogs stops it at each game's end)
    text = engine_log.read_text(errors="replace") if engine_log.exists() else ""
    return Run(standin.records, exchanges(text), gtp2ogs_log.read_text(errors="replace"), text,
               standin.all_done.is_set())


def summary(r: GameRecord) -> str:
    tc = r.spec.time_control
    clock = (f"byo-yomi {tc['main_time']} s + {tc['periods']} x {tc['period_time']} s"
             if tc["system"] == "byoyomi" else
             f"Fischer {tc['initial_time']} s + {tc['time_increment']} s, max {tc['max_time']} s")
    longest = max(r.bot_move_seconds, default=(0.0, 0.0))
    analyses = sum(1 for c in r.chats if isinstance(c.get("body"), dict)
                   and c["body"].get("type") == "analysis")
    plain = sum(1 for c in r.chats if isinstance(c.get("body"), str))
    return (f"{r.spec.name}: {clock}; engine {r.spec.bot_colour}; {len(r.moves)} moves; "
            f"result {r.result} ({'engine won' if r.bot_won else 'engine lost'}); longest engine "
            f"move {longest[0]:.1f} s of {longest[1]:.1f} s left; {analyses} analysis "
            f"variations, {plain} plain chat lines; errors {r.errors or 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gtp2ogs", default=os.environ.get("GTP2OGS_DIR"),
                    help="folder of a built gtp2ogs 9.x (dist/gtp2ogs.js); default $GTP2OGS_DIR")
    ap.add_argument("--games", default="all", help=f"comma-separated, of: {', '.join(GAMES)}")
    ap.add_argument("--workdir", default="ogs_standin_run")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("engine_args", nargs="*", help="more engine-gtp options (after --)")
    args = ap.parse_args()
    script = gtp2ogs_script(args.gtp2ogs)
    if script is None:
        sys.exit("no node, or no dist/gtp2ogs.js under --gtp2ogs / GTP2OGS_DIR")
    names = list(GAMES) if args.games == "all" else args.games.split(",")
    run = play(script, [GAMES[n] for n in names], Path(args.workdir), args.engine_args,
               args.timeout, echo=lambda r: print(summary(r), flush=True))
    bad = [(c, a) for c, a in run.exchanges if not a.startswith("=")]
    print(f"{len(run.exchanges)} commands from gtp2ogs, {len(bad)} not answered '=': {bad[:5]}")
    print(f"all games finished: {run.finished}")


if __name__ == "__main__":
    main()
