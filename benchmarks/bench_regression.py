"""Play the regression set (benchmarks/regression/positions.json) with an engine configuration
and count the positions it now plays right.

    python benchmarks/bench_regression.py [--search alphago] [--playouts 400 | --seconds 2] \
        [--engine-arg=--lambda=1 ...] [--engine 'CMD'] [--limit N] [--no-gnugo] \
        [--csv runs/regression.csv]

Each position is set up on a fresh engine-gtp (`python -m goengine.gtp.main`, this checkout's
code; `--engine` plays any GTP engine instead) move by move, and the engine's `genmove` for the
side that went wrong in the game is judged: right when it is one of the set's acceptable moves
(GNU Go's best and those it values within 90% of it); otherwise, with GNU Go at hand, right when
GNU Go's estimate after the move and GNU Go's reply lies nearer the estimate after GNU Go's best
move than after the move played in the game (benchmarks/regression_set.py). One line per
position, the total, and a CSV row per position. Resignation is off (`--resign-threshold 0`), so
that a lost-looking position still gets a move.
"""
from __future__ import annotations

import csv
import shlex
import sys
import time
from pathlib import Path

import click

from goengine.gtp.client import GtpClient, GtpClientError
from goengine.sgf_tools import read_sgf
from regression_set import (GNUGO_LEVEL, SET_PATH, GnuGoJudge, Position, judge_argv, load_set,
                            vertex)

SEARCHES = ("auto", "alphago", "zero", "heuristic", "policy")
FIELDS = ("id", "source", "move", "to_play", "played", "gnugo_move", "engine_move", "verdict",
          "score_after", "threshold", "seconds")


def engine_argv(search: str, playouts: int | None, seconds: float | None,
                extra: tuple[str, ...]) -> list[str]:
    """engine-gtp of this checkout with the search and the budget asked for."""
    argv = [sys.executable, "-m", "goengine.gtp.main", "--quiet", "--search", search,
            "--resign-threshold", "0"]
    if playouts is not None:
        argv += ["--playouts", str(playouts)]
    if seconds is not None:
        argv += ["--time-per-move", str(seconds)]
    return argv + list(extra)


def set_up(engine: GtpClient, p: Position) -> None:
    """The position on the engine's board: size, komi and the moves of the game up to it."""
    record = read_sgf(p.sgf)
    engine.boardsize(p.size)
    engine.komi(p.komi)
    engine.clear_board()
    for colour, point in record.moves:
        engine.play(colour, vertex(point, p.size))


def judge_move(p: Position, move: str, judge: GnuGoJudge | None) -> tuple[str, float | None]:
    """('right' | 'wrong' | 'not in set', GNU Go's estimate after the move or None)."""
    if move.upper() in p.acceptable:
        return "right", None
    if move.upper() == p.played:        # the move the set was made of: its score is known
        return "wrong", p.score_after_played
    if judge is None:
        return "not in set", None
    score = judge.score_after(p.sgf, p.to_play, move)
    return ("right" if score >= p.threshold else "wrong"), score


def play_set(engine: GtpClient, positions: list[Position], judge: GnuGoJudge | None,
             move_timeout: float) -> list[dict]:
    rows = []
    for p in positions:
        t0 = time.monotonic()
        set_up(engine, p)
        move = engine.genmove(p.to_play, timeout=move_timeout).upper()
        seconds = time.monotonic() - t0
        verdict, score = judge_move(p, move, judge)
        row = {"id": p.id, "source": p.source, "move": p.move_number + 1, "to_play": p.to_play,
               "played": p.played, "gnugo_move": p.gnugo_move, "engine_move": move,
               "verdict": verdict, "score_after": "" if score is None else f"{score:.1f}",
               "threshold": f"{p.threshold:.1f}", "seconds": f"{seconds:.1f}"}
        print(f"{p.id:<44} {p.to_play} played {p.played:<5} GNU Go {p.gnugo_move:<5} "
              f"now {move:<6} {verdict}"
              + (f" (estimate {score:+.1f}, needs {p.threshold:+.1f})" if score is not None else ""),
              flush=True)
        rows.append(row)
    return rows


def run_set(argv: list[str], gnugo: list[str] | None, positions: list[Position],
            move_timeout: float) -> list[dict]:
    with GtpClient(argv, name="engine", timeout=120) as eng:
        if gnugo is None:
            return play_set(eng, positions, None, move_timeout)
        with GnuGoJudge(gnugo) as judge:
            return play_set(eng, positions, judge, move_timeout)


def write_csv(path: str, rows: list[dict]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


@click.command()
@click.option("--set", "set_path", type=click.Path(exists=True, dir_okay=False),
              default=str(SET_PATH), show_default=True, help="the regression set")
@click.option("--search", type=click.Choice(SEARCHES), default="auto", show_default=True)
@click.option("--playouts", type=click.IntRange(min=1), default=None,
              help="new simulations per move (engine-gtp --playouts)")
@click.option("--seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="seconds per move (engine-gtp --time-per-move); default: --playouts 400")
@click.option("--engine-arg", "extra", multiple=True,
              help="one more engine-gtp argument (repeat: --engine-arg=--lambda=1)")
@click.option("--engine", default=None,
              help="any GTP engine's command line in place of engine-gtp (ignores the above)")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="only the first N positions")
@click.option("--gnugo/--no-gnugo", "use_gnugo", default=True, show_default=True,
              help="judge moves outside the acceptable set by GNU Go's estimate")
@click.option("--gnugo-path", default=None, help="GNU Go binary [gnugo on PATH or /usr/games]")
@click.option("--move-timeout", type=click.FloatRange(min=1), default=600, show_default=True)
@click.option("--csv", "csv_path", default="runs/regression.csv", show_default=True)
def main(set_path, search, playouts, seconds, extra, engine, limit, use_gnugo, gnugo_path,
         move_timeout, csv_path) -> None:
    if playouts is None and seconds is None:
        playouts = 400
    made, positions = load_set(set_path)
    positions = positions[:limit]
    argv = shlex.split(engine) if engine else engine_argv(search, playouts, seconds, extra)
    gg = judge_argv(gnugo_path) if use_gnugo else None
    if use_gnugo and gg is None:
        raise click.UsageError("GNU Go not found: pass --gnugo-path PATH or --no-gnugo")
    print(f"{len(positions)} positions of {set_path} (made {made[-1]['date']}); engine: "
          f"{shlex.join(argv)}; judge: {'GNU Go level %d' % GNUGO_LEVEL if gg else 'the set only'}",
          flush=True)
    t0 = time.monotonic()
    try:
        rows = run_set(argv, gg, positions, move_timeout)
    except GtpClientError as e:         # an engine that does not start, crashes or refuses
        raise click.ClickException(str(e)) from e
    right = sum(r["verdict"] == "right" for r in rows)
    in_set = sum(r["engine_move"] in p.acceptable for r, p in zip(rows, positions))
    print(f"right: {right} of {len(rows)} ({in_set} in the acceptable set, {right - in_set} by "
          f"GNU Go's estimate); played as in the game: "
          f"{sum(r['engine_move'] == r['played'] for r in rows)}; {time.monotonic() - t0:.0f} s")
    write_csv(csv_path, rows)
    print(f"per position: {csv_path}")


if __name__ == "__main__":
    main()
