"""Find the moves where goengine's matches swung against it, and write them as a regression set.

    python benchmarks/find_swings.py docs/results/matches/regression-vs-pachi-19-1s/ \
        [--player goengine] [--wins 0] [--start 60] [--end M] [--every 10] [--min-swing 15] \
        [--out benchmarks/regression/positions.json]

Each game goengine lost (and the first `--wins` it won) is replayed into GNU Go 3.8 (level 10),
which estimates the score (`estimate_score`) every `--every` moves from move `--start`, always
with goengine to move. Where the estimate fell by `--min-swing` points or more from one such
point to the next, every position between them with goengine to move is estimated too, and the
swing is pinned on the goengine move (with the reply that followed it) over which the estimate
fell most. That position goes into the set if GNU Go, asked there, disagrees with the move: it
would play another (`reg_genmove`, `top_moves`), and the estimate after its move and its own reply
beats the one after goengine's move and the same kind of reply by `--min-gain` points. The moves
GNU Go values within 90% of its best are the set's acceptable answers.

GNU Go's estimate takes 2-15 s a position on 19x19 on this machine: a 250-move game costs about
20 estimates for the scan, a few more for each swing and four GNU Go moves for each position kept.
"""
from __future__ import annotations

import datetime
import shlex
import sys
import time
from pathlib import Path

import click

from goengine.gtp.client import GtpClientError
from goengine.sgf_tools import GameRecord, SgfError, read_sgf_file
from regression_set import (SET_PATH, GnuGoJudge, Position, acceptable_moves, judge_argv,
                            load_set, position_sgf, save_set, vertex)

ROOT = Path(__file__).resolve().parents[1]


def record_files(paths: tuple[str, ...]) -> list[Path]:
    """The .sgf files named, and those in the folders named, in order."""
    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("*.sgf")) if p.is_dir() else [p]
    return files


def player_colour(record: GameRecord, player: str) -> str | None:
    """'b' or 'w': the side whose name contains `player`; None when neither or both do."""
    black = player.lower() in (record.black_player or "").lower()
    white = player.lower() in (record.white_player or "").lower()
    return None if black == white else "b" if black else "w"


def to_move(record: GameRecord, colour: str, start: int, end: int | None) -> list[int]:
    """The move numbers from `start` to `end` at which `colour` is to play."""
    last = len(record.moves) if end is None else min(end + 1, len(record.moves))
    return [m for m in range(start, last) if record.moves[m][0] == colour]


def relative(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


class SwingFinder:
    """The scan, the refinement and the check of one game at a time with one GNU Go."""

    def __init__(self, judge: GnuGoJudge, start: int, end: int | None, every: int,
                 min_swing: float, min_gain: float, max_per_game: int, log=print):
        self.judge = judge
        self.start, self.end, self.every = start, end, every
        self.min_swing, self.min_gain, self.max_per_game = min_swing, min_gain, max_per_game
        self.log = log

    def estimates(self, record: GameRecord, colour: str, moves: list[int],
                  known: dict[int, float]) -> dict[int, float]:
        for m in moves:
            if m not in known:
                known[m] = self.judge.estimate(position_sgf(record, m), colour)
        return known

    def swings(self, record: GameRecord, colour: str) -> list[tuple[int, float, float, float]]:
        """[(move number, drop over that move and the reply, drop over the scan's step, the
        estimate before the move)], the largest scan drops first."""
        mine = to_move(record, colour, self.start, self.end)
        coarse = mine[::max(1, self.every // 2)]
        scores = self.estimates(record, colour, coarse, {})
        self.log("  scan: " + " ".join(f"{m}:{scores[m]:+.0f}" for m in coarse))
        steps = sorted(((scores[a] - scores[b], a, b) for a, b in zip(coarse, coarse[1:])
                        if scores[a] - scores[b] >= self.min_swing), reverse=True)
        found = []
        for step_drop, a, b in steps[:self.max_per_game]:
            window = [m for m in mine if a <= m <= b]
            self.estimates(record, colour, window, scores)
            drop, m = max((scores[x] - scores[y], x) for x, y in zip(window, window[1:]))
            self.log(f"  swing {a}..{b} ({step_drop:+.1f}): worst at move {m + 1}, {drop:+.1f}")
            found.append((m, drop, step_drop, scores[m]))
        return found

    def position(self, record: GameRecord, source: str, colour: str, m: int, drop: float,
                 before: float) -> Position | None:
        """The position before move m as a set entry, or None where GNU Go does not hold the
        move against goengine."""
        sgf = position_sgf(record, m)
        played = vertex(record.moves[m][1], record.size)
        top = self.judge.top_moves(sgf, colour)
        accept = acceptable_moves(top)
        if played in accept:
            self.log(f"  move {m + 1} {played}: GNU Go values it too ({top[:3]}); not kept")
            return None
        after_played = self.judge.score_after(sgf, colour, played)
        after_best = self.judge.score_after(sgf, colour, top[0][0])
        if after_best - after_played < self.min_gain:
            self.log(f"  move {m + 1} {played}: GNU Go's {top[0][0]} gains only "
                     f"{after_best - after_played:+.1f}; not kept")
            return None
        self.log(f"  move {m + 1} {played}: GNU Go {top[0][0]} ({after_best:+.1f} against "
                 f"{after_played:+.1f}); kept, acceptable {accept}")
        return Position(id=f"{Path(source).parent.name}-{Path(source).stem}-m{m + 1}",
                        source=source, size=record.size, komi=record.komi, move_number=m,
                        to_play=colour, sgf=sgf, played=played, drop=round(drop, 1),
                        score_before=before, score_after_played=after_played,
                        score_after_best=after_best, gnugo_move=top[0][0], acceptable=accept,
                        top_moves=top, result=record.result or "")

    def game(self, record: GameRecord, source: str, colour: str) -> list[Position]:
        kept = []
        for m, drop, _step, before in self.swings(record, colour):
            p = self.position(record, source, colour, m, drop, before)
            if p is not None:
                kept.append(p)
        return kept


def chosen_games(files: list[Path], player: str, wins: int):
    """(file, record, colour) of every game `player` lost and of the first `wins` it won; not
    handicap games (the set's positions are replayed move by move, with no setup stones)."""
    won = 0
    for f in files:
        rec = read_sgf_file(f)
        colour = player_colour(rec, player)
        if colour is None or rec.winner is None or rec.setup_black or rec.setup_white:
            continue
        lost = rec.winner != colour
        if lost or won < wins:
            won += not lost
            yield f, rec, colour


def scan_games(finder: SwingFinder, games, player: str, positions: list[Position]) -> list[Position]:
    """`positions` with each game's swings added, in place of any of the same id."""
    with finder.judge:
        for f, rec, colour in games:
            print(f"{relative(f)}: {player} {colour}, {rec.result}, {len(rec.moves)} moves",
                  flush=True)
            new = finder.game(rec, relative(f), colour)
            positions = [p for p in positions if p.id not in {n.id for n in new}] + new
    return positions


@click.command()
@click.argument("records", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--player", default="goengine", show_default=True,
              help="name (PB/PW) of the side whose swings are wanted")
@click.option("--wins", default=0, show_default=True, type=click.IntRange(min=0),
              help="also scan the first N games it won")
@click.option("--start", default=60, show_default=True, type=click.IntRange(min=0),
              help="first move scanned")
@click.option("--end", default=None, type=click.IntRange(min=1), help="last move scanned [the game's]")
@click.option("--every", default=10, show_default=True, type=click.IntRange(min=2),
              help="moves between estimates of the scan")
@click.option("--min-swing", default=15.0, show_default=True, type=click.FloatRange(min=0),
              help="points the estimate must fall over one step of the scan")
@click.option("--min-gain", default=5.0, show_default=True, type=click.FloatRange(min=0),
              help="points GNU Go's move must gain over goengine's for the position to be kept")
@click.option("--max-per-game", default=3, show_default=True, type=click.IntRange(min=1))
@click.option("--gnugo", default=None, help="GNU Go binary [gnugo on PATH or /usr/games]")
@click.option("--out", type=click.Path(dir_okay=False), default=str(SET_PATH), show_default=True)
@click.option("--append", is_flag=True,
              help="keep the positions (and the commands that made them) already in --out")
def main(records, player, wins, start, end, every, min_swing, min_gain, max_per_game, gnugo, out,
         append) -> None:
    argv = judge_argv(gnugo)
    if argv is None:
        raise click.UsageError("GNU Go not found: pass --gnugo PATH")
    made, positions = load_set(out) if append and Path(out).is_file() else ([], [])
    t0 = time.monotonic()
    try:
        positions = scan_games(SwingFinder(GnuGoJudge(argv), start, end, every, min_swing,
                                           min_gain, max_per_game,
                                           log=lambda s: print(s, flush=True)),
                               chosen_games(record_files(records), player, wins), player,
                               positions)
    except (GtpClientError, SgfError) as e:     # GNU Go fails, or a record cannot be read
        raise click.ClickException(str(e)) from e
    made.append({"date": datetime.date.today().isoformat(),
                 "command": "python " + shlex.join(["benchmarks/find_swings.py", *sys.argv[1:]]),
                 "judge": shlex.join(argv)})
    save_set(out, made, positions)
    print(f"{len(positions)} positions in {out} ({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
