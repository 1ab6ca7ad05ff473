"""Were goengine's resignations right? Each game of a match record that goengine lost by resigning
is played on from the position where it resigned, with the same opponent and clock, goengine on
the same side and told not to resign: a game it then wins was resigned too early.

    python experiments/play_on_resigned.py docs/results/matches/default-vs-pachi-19-1s-h \\
        --engine 'engine-gtp --quiet --resign-threshold 0' \\
        --opponent '/tmp/pachi/pachi threads=2,pondering=0' --out runs/play-on-h

The match's board size, komi and clock (--time-per-move; a real clock's remaining time is not
in the record) come from its match.json (engine-match's record). Each
game played on is a one-game match (engine-match's runner, the record's moves as its opening) in
OUT/game-NNNN/, with the engines' stderr there: goengine's analysis lines (without --quiet in
--engine they are printed to stderr as `MALKOVICH:... Winrate W% ScoreLead S ...`) give the lowest
win rate it saw on the way, the threshold a resignation rule would have had to stay above.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from goengine.engine.timecontrol import Clock
from goengine.match.cli import split_command
from goengine.match.runner import (EngineSpec, Match, MatchConfig, MatchError, Opening,
                                   default_referee)
from goengine.match.summary import GameResult, read_results
from goengine.sgf_tools import SgfError, read_sgf_file

WINRATE = re.compile(r"Winrate ([0-9.]+)%")


@dataclass
class PlayedOn:
    index: int              # the game's number in the match record
    side: str               # goengine's colour, "B" or "W"
    resigned_at: int        # moves played when goengine resigned
    result: str             # the game played on, SGF's RE
    won: bool               # goengine won it
    moves: int              # its length, the opening's moves included
    lowest: float | None    # the lowest win rate goengine reported while playing on
    below_10: int           # its moves reported below 10%


def resigned_games(results: list[GameResult], name: str) -> list[tuple[GameResult, str]]:
    """The games `name` lost by resigning, each with its colour."""
    out = []
    for r in results:
        side = "B" if r.black_name == name else "W" if r.white_name == name else None
        if side is not None and r.end == "resign" and r.winner_color not in (None, side):
            out.append((r, side))
    return out


def winrates(stderr_path: Path) -> list[float]:
    """The win rates (0-1) an engine's analysis lines reported, in order."""
    if not stderr_path.exists():
        return []
    text = stderr_path.read_text(encoding="utf-8", errors="replace")
    return [float(m.group(1)) / 100 for m in WINRATE.finditer(text)]


def play_on(r: GameResult, side: str, sgf_path: Path, engine: list[str], opponent: list[str],
            options: dict, out: Path, referee) -> PlayedOn:
    record = read_sgf_file(sgf_path)
    opening = Opening.from_record(str(sgf_path), record)
    black, white = (engine, opponent) if side == "B" else (opponent, engine)
    per_move = options.get("time_per_move")
    clock = Clock.simple(per_move) if per_move else None
    game_dir = out / f"game-{r.index:04d}"
    cfg = MatchConfig(EngineSpec(black, "goengine" if side == "B" else "opponent"),
                      EngineSpec(white, "goengine" if side == "W" else "opponent"),
                      games=1, size=options["size"], komi=options["komi"],
                      rules=options.get("rules", "chinese"), time_control=clock,
                      move_timeout=options.get("move_timeout", 30.0),
                      sgf_dir=str(game_dir), results_jsonl=str(game_dir / "results.jsonl"),
                      referee=referee, stderr_dir=str(game_dir), openings=[opening])
    res = Match(cfg).run().results[0]
    label = "A" if side == "B" else "B"
    rates = winrates(game_dir / f"engine-{label}.stderr")
    return PlayedOn(r.index, side, len(record.moves), res.result, res.winner == label,
                    res.moves, min(rates) if rates else None, sum(w < 0.10 for w in rates))


@click.command(context_settings={"help_option_names": ["-h", "--help"], "show_default": True})
@click.argument("match_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--engine", required=True, help="goengine's command line (it should not resign).")
@click.option("--opponent", required=True, help="The opponent's command line.")
@click.option("--name", default="goengine default",
              help="goengine's name in the match record.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the games played on (one sub-folder a game).")
@click.option("--game", "games", type=int, multiple=True,
              help="Only these games of the record (repeatable). [default: every resigned one]")
def main(match_dir: Path, engine: str, opponent: str, name: str, out: Path, games) -> None:
    """Play on the games goengine resigned in MATCH_DIR and say which it then won."""
    engine_argv = split_command(engine, "'--engine'")
    opponent_argv = split_command(opponent, "'--opponent'")
    try:
        options = json.loads((match_dir / "match.json").read_text(encoding="utf-8"))["options"]
        results = read_results(str(match_dir / "results.jsonl"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise click.UsageError(f"{match_dir} is not an engine-match record: {e}") from None
    if options.get("main_time") or options.get("byoyomi"):
        raise click.UsageError(f"{match_dir} was played on a real clock: the time each side had "
                               "left is not in the record, so only --time-per-move matches are "
                               "played on")
    todo = [(r, side) for r, side in resigned_games(results, name)
            if not games or r.index in games]
    if not todo:
        raise click.UsageError(f"no game of {match_dir} that {name!r} resigned"
                               + (f" among games {list(games)}" if games else ""))
    referee = default_referee()
    played = []
    for r, side in todo:
        try:
            p = play_on(r, side, match_dir / f"game-{r.index:04d}.sgf",
                        engine_argv, opponent_argv, options, out, referee)
        except (OSError, SgfError, ValueError, MatchError) as e:
            click.echo(f"game {r.index}: cannot play on: {e}", err=True)
            continue
        played.append(p)
        low = "-" if p.lowest is None else f"{p.lowest:.1%}"
        click.echo(f"game {p.index} (goengine {p.side}, resigned at move {p.resigned_at}): "
                   f"played on to {p.result} in {p.moves} moves, "
                   f"{'won' if p.won else 'lost'}; lowest win rate {low}, "
                   f"{p.below_10} moves below 10%", nl=True)
        sys.stdout.flush()
    won = [p for p in played if p.won]
    click.echo(f"played on {len(played)} resigned games: goengine won {len(won)}"
               + (f" (games {', '.join(str(p.index) for p in won)})" if won else ""))


if __name__ == "__main__":
    main()
