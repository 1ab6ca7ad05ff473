"""`engine-match`: play N games between two GTP engines and print the result.

    engine-match --a "/usr/games/gnugo --mode gtp --level 1" \\
                 --b "engine-gtp" --games 20 --size 9 --komi 7 --time-per-move 1 --sgf-dir out/
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from goengine.engine.timecontrol import Clock
from goengine.match.runner import (EngineSpec, Match, MatchConfig, MatchError, Opening,
                                   default_referee)
from goengine.match.sprt import Sprt
from goengine.match.summary import GameResult, read_results
from goengine.sgf_tools import SgfError, read_sgf_file

MATCH_FILE = "match.json"       # a match's settings in its --sgf-dir, for --resume
RESUME_OVERRIDES = ("games", "stderr_dir")    # what a resumed match may change (and --quiet)


def split_command(value: str, what: str) -> list[str]:
    """A command-line option's engine command as argv; a usage error (naming the option `what`)
    when it does not parse or its executable is not there."""
    try:
        argv = shlex.split(value)
    except ValueError as e:
        raise click.BadParameter(f"cannot parse {value!r}: {e}", param_hint=what) from None
    if not argv:
        raise click.BadParameter("empty command", param_hint=what)
    exe = argv[0]
    if shutil.which(exe) is None:
        if os.sep in exe and os.path.exists(exe):
            raise click.BadParameter(f"{exe!r} is not executable", param_hint=what)
        raise click.BadParameter(f"executable {exe!r} not found", param_hint=what)
    return argv


def _positive(ctx, param, value):
    if value is not None and value <= 0:
        raise click.BadParameter("must be > 0")
    return value


def _handicap(ctx, param, value):
    if value == 1:
        raise click.BadParameter("0 or 2..9 stones (one stone is no fixed handicap)")
    return value


def _sprt(value: str | None) -> Sprt | None:
    """--sprt ELO0,ELO1 as a Sprt (alpha = beta = 0.05)."""
    if value is None:
        return None
    try:
        elo0, elo1 = (float(x) for x in value.split(","))
        return Sprt(elo0, elo1)
    except ValueError as e:
        raise click.BadParameter(f"{value!r}: expected ELO0,ELO1 with ELO0 < ELO1, e.g. 0,35 "
                                 f"({e})", param_hint="'--sprt'") from None


def _openings(paths, moves: int | None, size: int) -> list[Opening]:
    """The openings of --opening files: each main line's first `moves` moves (all by default)."""
    openings = []
    for path in paths:
        try:
            record = read_sgf_file(path)
        except (OSError, SgfError) as e:
            raise click.BadParameter(f"cannot read {path}: {e}", param_hint="'--opening'") from None
        if record.size != size:
            raise click.BadParameter(f"{path} is a {record.size}x{record.size} game, the match "
                                     f"is {size}x{size}", param_hint="'--opening'")
        if record.setup_black or record.setup_white:
            raise click.BadParameter(f"{path} has setup stones; an opening is moves from the "
                                     "empty board", param_hint="'--opening'")
        openings.append(Opening.from_record(str(path), record, moves))
    return openings


def _clock(time_per_move, main_time, byoyomi, byoyomi_stones, time_forfeit) -> tuple[Clock | None, bool]:
    """The referee's clock from the time options, and whether overstepping it loses the game."""
    if time_per_move is not None and (main_time is not None or byoyomi is not None):
        raise click.UsageError("--time-per-move cannot be combined with --main-time/--byoyomi")
    if time_per_move is not None:
        return Clock.simple(time_per_move), bool(time_forfeit)
    if main_time is None and byoyomi is None:
        if time_forfeit:
            raise click.UsageError("--time-forfeit needs --time-per-move or --main-time/--byoyomi")
        return None, False
    main_time, byoyomi = main_time or 0.0, byoyomi or 0.0
    if main_time == 0 and byoyomi == 0:
        raise click.UsageError("a time control needs main time or byo-yomi time")
    try:
        clock = Clock.canadian(main_time, byoyomi, byoyomi_stones) if byoyomi > 0 else Clock.absolute(main_time)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    return clock, True if time_forfeit is None else time_forfeit


def prepare_sgf_dir(d: Path, overwrite: bool, jsonl_path: str | None,
                    csv_path: str | None, resume: bool = False) -> tuple[str, str]:
    """Make the SGF dir (emptied of an earlier match's games with --overwrite; a resumed match
    keeps its own); the results files, by default in it."""
    old = sorted(d.glob("game-*.sgf")) if d.is_dir() and not resume else []
    if old and not overwrite:
        raise click.UsageError(f"{d} already holds {len(old)} games of an earlier "
                               "match; pass --overwrite or choose another --sgf-dir")
    d.mkdir(parents=True, exist_ok=True)
    for f in old:
        f.unlink()
    if jsonl_path is None:
        jsonl_path = str(d / "results.jsonl")
        if overwrite:
            Path(jsonl_path).unlink(missing_ok=True)
    if csv_path is None:
        csv_path = str(d / "results.csv")
        if overwrite:
            Path(csv_path).unlink(missing_ok=True)
    return jsonl_path, csv_path


@click.command(context_settings={"help_option_names": ["-h", "--help"], "show_default": True})
@click.option("--a", "--black-cmd", "cmd_a", default=None, metavar="CMD",
              help="Command line of engine A (black in game 1), e.g. \"gnugo --mode gtp\".")
@click.option("--b", "--white-cmd", "cmd_b", default=None, metavar="CMD",
              help="Command line of engine B.")
@click.option("--name-a", default=None, help="Display name of A (default: its GTP name+version).")
@click.option("--name-b", default=None, help="Display name of B.")
@click.option("--games", "-n", type=click.IntRange(min=1), default=2, help="Number of games.")
@click.option("--size", type=click.IntRange(2, 25), default=9, help="Board size.")
@click.option("--komi", type=click.FloatRange(-1000, 1000), default=7.0, help="Komi.")
@click.option("--handicap", type=click.IntRange(0, 9), default=0, callback=_handicap,
              help="Fixed handicap stones for black (0 or 2..9), placed by the GTP spec.")
@click.option("--rules", default="chinese",
              type=click.Choice(["chinese", "tromp-taylor", "aga", "new_zealand", "japanese",
                                 "korean"], case_sensitive=False),
              help="Rules the referee applies (legality, superko, counting).")
@click.option("--time-per-move", type=float, default=None, callback=_positive, metavar="SEC",
              help="Sends 'time_settings 0 SEC 1' and time_left before each move (advisory).")
@click.option("--main-time", type=click.FloatRange(0), default=None, metavar="SEC",
              help="Real clock: main time per player.")
@click.option("--byoyomi", type=click.FloatRange(0), default=None, metavar="SEC",
              help="Real clock: byo-yomi period (Canadian, see --byoyomi-stones).")
@click.option("--byoyomi-stones", type=click.IntRange(min=1), default=1,
              help="Moves per byo-yomi period.")
@click.option("--time-forfeit/--no-time-forfeit", default=None,
              help="Lose on time when over the clock by more than --lag. "
                   "[default: on with a real clock, off with --time-per-move]")
@click.option("--lag", type=click.FloatRange(min=0), default=1.0,
              help="Seconds over the clock tolerated (pipe and start-up latency).")
@click.option("--move-timeout", type=float, default=30.0, callback=_positive,
              help="Hard wall-clock limit per genmove; over it the engine forfeits.")
@click.option("--command-timeout", type=float, default=30.0, callback=_positive,
              help="Limit for every other command.")
@click.option("--startup-timeout", type=float, default=120.0, callback=_positive,
              help="Limit for an engine's first answer after it starts.")
@click.option("--max-moves", type=click.IntRange(min=1), default=None,
              help="Stop and score a game after this many moves. [default: 3*size*size]")
@click.option("--sgf-dir", type=click.Path(file_okay=False), default=None,
              help="Write game-NNNN.sgf, results.jsonl, results.csv and summary.json here.")
@click.option("--jsonl", "jsonl_path", type=click.Path(dir_okay=False), default=None,
              help="Append one JSON line per game here. [default: SGF_DIR/results.jsonl]")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None,
              help="Append one CSV row per game here. [default: SGF_DIR/results.csv]")
@click.option("--referee", default=None, metavar="CMD",
              help="GTP engine asked for dead stones when the players disagree; 'none' to "
                   "disable. [default: GNU Go when installed]")
@click.option("--stderr-dir", type=click.Path(file_okay=False), default=None,
              help="Append each engine's stderr to engine-A.stderr / engine-B.stderr here.")
@click.option("--seed", type=int, default=None,
              help="Seed the coin flip for who takes black in game 1 (default: A does).")
@click.option("--overwrite", is_flag=True,
              help="Reuse an SGF dir that holds games of an earlier match (its files are replaced).")
@click.option("--sprt", default=None, metavar="ELO0,ELO1",
              help="Stop once a sequential probability ratio test (alpha = beta = 0.05, as the "
                   "Zero loop's gating) decides whether A is ELO1 stronger than B (H1) or only "
                   "ELO0 (H0), e.g. 0,35; --games is then the most played.")
@click.option("--opening", "openings", multiple=True, metavar="SGF",
              type=click.Path(exists=True, dir_okay=False),
              help="Begin the games from this SGF game's moves (repeat the option for several: "
                   "game i takes the i-th, in turn); outside the clock.")
@click.option("--opening-moves", type=click.IntRange(min=0), default=None,
              help="Play only this many of each opening's moves. [default: all]")
@click.option("--resume", type=click.Path(exists=True, file_okay=False), default=None,
              metavar="SGF_DIR",
              help="Play on a match begun with --sgf-dir SGF_DIR and stopped (its match.json "
                   "holds its settings; --games may raise its length): the games continue from "
                   "the next number, colours alternating, the SPRT and the summary over all.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines, only the summary.")
@click.pass_context
def main(ctx, resume, quiet, overwrite, **options):
    """Play a match between two GTP engines A and B, refereed by goengine's rules core."""
    if resume is not None:
        if overwrite:
            raise click.UsageError("--resume keeps the match's games: drop --overwrite")
        options = resumed_options(ctx, Path(resume), options)
    else:
        for key, flag in (("cmd_a", "--a"), ("cmd_b", "--b")):
            if options[key] is None:
                raise click.UsageError(f"Missing option '{flag}' (or --resume SGF_DIR)")
    play(options, quiet=quiet, overwrite=overwrite, resume=resume is not None, **options)


def resumed_options(ctx: click.Context, d: Path, given: dict) -> dict:
    """The options of the match in `d` (its MATCH_FILE), with those of RESUME_OVERRIDES that
    this command line gives; any other option given is a usage error."""
    flags = {p.name: p.opts[0] for p in ctx.command.params}
    changed = [flags[k] for k in given if k not in RESUME_OVERRIDES
               and ctx.get_parameter_source(k) is not ParameterSource.DEFAULT]
    if changed:
        raise click.UsageError(f"--resume plays on with the settings {d / MATCH_FILE} holds; "
                               f"it takes only --games, --stderr-dir and --quiet beside it, not "
                               f"{', '.join(changed)}")
    path = d / MATCH_FILE
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))["options"]
        if set(stored) - set(given):
            raise ValueError(f"options {sorted(set(stored) - set(given))} are not this "
                             "engine-match's")
    except FileNotFoundError:
        raise click.UsageError(f"{d} holds no {MATCH_FILE}: only a match begun with --sgf-dir "
                               "can be resumed") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise click.UsageError(f"{path} is not engine-match's record of a match: {e}") from None
    # an option newer than the match was not given to it: its default (not set here, as checked)
    options = {**given, **stored}
    options.update({k: given[k] for k in RESUME_OVERRIDES
                    if ctx.get_parameter_source(k) is not ParameterSource.DEFAULT})
    options["sgf_dir"] = str(d)     # the folder as named now
    return options


def write_json(path: str, obj) -> None:
    """`obj` as JSON at `path`, whole or not at all (a temporary file renamed over it)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
    os.replace(tmp, path)


def play(options: dict, quiet: bool, overwrite: bool, resume: bool, *, cmd_a, cmd_b, name_a,
         name_b, games, size, komi, handicap, rules, time_per_move, main_time, byoyomi,
         byoyomi_stones, time_forfeit, lag, move_timeout, command_timeout, startup_timeout,
         max_moves, sgf_dir, jsonl_path, csv_path, referee, stderr_dir, seed, sprt, openings,
         opening_moves) -> None:
    """Run the match `options` (the keywords) describe: a new one, or with `resume` the one in
    its SGF dir. `options` is what MATCH_FILE keeps of it."""
    sprt = _sprt(sprt)
    opening_list = _openings(openings, opening_moves, size)
    argv_a = split_command(cmd_a, "'--a'")
    argv_b = split_command(cmd_b, "'--b'")

    clock, enforce = _clock(time_per_move, main_time, byoyomi, byoyomi_stones, time_forfeit)
    if clock is not None and move_timeout < (clock.period_time if clock.main_time == 0 else 0):
        raise click.UsageError("--move-timeout is shorter than the time per move")

    if referee is None:
        referee_argv = default_referee()
    elif referee.strip().lower() in ("none", ""):
        referee_argv = None
    else:
        referee_argv = split_command(referee, "'--referee'")

    previous = []
    if sgf_dir:
        jsonl_path, csv_path = prepare_sgf_dir(Path(sgf_dir), overwrite, jsonl_path, csv_path,
                                               resume)
        if resume:
            try:
                previous = read_results(jsonl_path) if os.path.exists(jsonl_path) else []
            except (OSError, ValueError) as e:
                raise click.UsageError(f"cannot resume: {e}") from None

    try:
        cfg = MatchConfig(
            engine_a=EngineSpec(argv_a, name_a), engine_b=EngineSpec(argv_b, name_b),
            games=games, size=size, komi=komi, handicap=handicap, rules=rules.lower(),
            time_control=clock, enforce_time=enforce, lag=lag, move_timeout=move_timeout,
            command_timeout=command_timeout, startup_timeout=startup_timeout,
            max_moves=max_moves, sgf_dir=sgf_dir, results_jsonl=jsonl_path,
            results_csv=csv_path, referee=referee_argv, stderr_dir=stderr_dir, seed=seed,
            sprt=sprt, openings=opening_list)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if sgf_dir:     # what --resume plays on with (a resumed match's own: its --games)
        write_json(os.path.join(sgf_dir, MATCH_FILE), {"options": options})

    def progress(res: GameResult, match: Match) -> None:
        if quiet:
            return
        s = match.summary()
        how = res.end
        if res.end == "score":
            how = f"score, dead stones {res.scoring}"
        elif res.end == "forfeit":
            how = f"forfeit by {res.forfeit_by}: {res.forfeit_reason}"
        tally = f"A {s.wins['A']} - B {s.wins['B']}" + (f" - draws {s.draws}" if s.draws else "")
        if sprt is not None:
            tally += f" | LLR {sprt.decide(s.wins['A'], s.draws, s.wins['B'])[1]:.2f}"
        won = f"{res.winner} wins" if res.winner else ("draw" if res.result == "0" else "no result")
        click.echo(f"game {res.index}/{games}: {res.black} ({res.black_name}) black vs "
                   f"{res.white} ({res.white_name}) white: {res.result}, {won} ({how}), "
                   f"{res.moves} moves, {res.duration:.1f} s | {tally}")

    def log(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    if not quiet:
        tc_s = clock.describe() if clock else "no clock"
        if resume:
            click.echo(f"engine-match: resuming {sgf_dir} after game {len(previous)}")
        click.echo(f"engine-match: {games} games on {size}x{size}, komi {komi:g}"
                   + (f", handicap {handicap}" if handicap else "")
                   + f", {rules} rules, {tc_s}, move timeout {move_timeout:g} s"
                   + f", referee: {shlex.join(referee_argv) if referee_argv else 'none'}"
                   + (f", {len(opening_list)} openings" if opening_list else ""))
    match = Match(cfg, progress=progress, log=log, previous=previous)
    interrupted = False
    try:
        summary = match.run()
    except MatchError as e:
        raise click.ClickException(str(e)) from None
    except KeyboardInterrupt:
        interrupted = True
        click.echo("interrupted; summary of the finished games:", err=True)
        summary = match.summary()
    click.echo(summary.format())
    if sgf_dir:
        write_json(os.path.join(sgf_dir, "summary.json"), summary.as_dict())
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
