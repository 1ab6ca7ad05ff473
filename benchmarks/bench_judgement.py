"""The dead-stone judgement against recorded results and GNU Go (docs/algorithms.md §5.3).

    NUMBA_NUM_THREADS=1 python benchmarks/bench_judgement.py [--data ARCHIVE] [--gnugo PATH]

19x19: the final positions of a fixed set of counted games, the first `--games` (40) in archive
order of `--data` (default ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2, Tygem 9-dan games) that
are 19x19, without handicap, and won by at least `--min-margin` (3.5) points (RE like B+24.5: a
count, not a resignation or a loss on time). Each is counted as the record counted it: Korean
rules, territory (`kgs-rules japanese`-style: territory plus prisoners) with the record's komi
(6.5). Printed per game: the recorded result, the engine's `final_score` (the one judgement,
engine.deadstones, through `Player.final_score`), GNU Go 3.8's `final_score` on the same position
(`loadsgf`, Japanese counting, its default), whether each names the recorded winner, and the
engine's time for the judgement.

9x9: `--nine` (5) games of GNU Go against itself (level 1, seeds 1..5, komi 7, area rules, until two
passes); there is no human result, so the engine's count is set against GNU Go's, and timed.
"""
from __future__ import annotations

import os
import tempfile
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import click  # noqa: E402

from data_paths import default_data, gnugo_argv, missing  # noqa: E402
from goengine.engine.evaluator import UniformEvaluator  # noqa: E402
from goengine.engine.game import format_result  # noqa: E402
from goengine.engine.player import Player, PlayerConfig  # noqa: E402
from goengine.engine.replay import replay  # noqa: E402
from goengine.engine.rules import named_rules  # noqa: E402
from goengine.engine.search.policy import PolicyPlayer  # noqa: E402
from goengine.gtp.client import GtpClient  # noqa: E402
from goengine.sgf_tools import GameRecord, iter_games, write_sgf  # noqa: E402

ARCHIVE = "tygem9d/tygem9d-2015-06.tar.bz2"


def counted_games(path: str, games: int, min_margin: float) -> list[GameRecord]:
    """The first `games` records in archive order that are 19x19, without handicap, and won by
    at least `min_margin` points."""
    out = []
    for rec in iter_games(path):
        margin = rec.margin            # B+24.5; None for B+R, W+T, 0
        if rec.size == 19 and not rec.handicap and margin is not None and margin >= min_margin:
            out.append(rec)
            if len(out) == games:
                break
    return out


def sign(score: float) -> str:
    return "B" if score > 0 else "W" if score < 0 else "0"


def gnugo_score(gnugo: GtpClient | None, sgf: str) -> str:
    if gnugo is None:
        return "n/a"
    gnugo.command(f"loadsgf {sgf}", timeout=60)
    return gnugo.final_score(timeout=120)


def ours(player: Player, game) -> tuple[float, float]:
    """The engine's final_score and the seconds it took."""
    t0 = time.perf_counter()
    score = player.final_score(game)
    return score, time.perf_counter() - t0


def self_play_nine(gnugo_cmd: list[str], seed: int) -> list[tuple[str, str]]:
    """A 9x9 game of GNU Go (level 1) against itself to two passes: [(colour, vertex)]."""
    moves, passes, colour = [], 0, "b"
    with GtpClient(gnugo_cmd + ["--level", "1", "--seed", str(seed)], name="gnugo") as eng:
        eng.boardsize(9)
        eng.komi(7)
        while passes < 2 and len(moves) < 200:
            v = eng.genmove(colour, timeout=60)
            if v == "resign":
                break
            passes = passes + 1 if v == "pass" else 0
            moves.append((colour, v))
            colour = "w" if colour == "b" else "b"
    return moves


def nine_record(moves: list[tuple[str, str]]) -> GameRecord:
    letters = "ABCDEFGHJ"
    pts = [(c, None if v == "pass" else (9 - int(v[1:]), letters.index(v[0].upper())))
           for c, v in moves]
    return GameRecord(size=9, komi=7.0, moves=pts)


@click.command()
@click.option("--data", "data", default=None, help=f"archive of game records [../shared/data/{ARCHIVE}]")
@click.option("--games", default=40, show_default=True)
@click.option("--min-margin", default=3.5, show_default=True, help="points: a count, not a resignation")
@click.option("--gnugo", default=None, help="GNU Go binary [gnugo on PATH or /usr/games]")
@click.option("--playouts", default=PlayerConfig().status_playouts, show_default=True,
              help="playouts of the judgement")
@click.option("--nine", default=5, show_default=True, help="9x9 GNU Go self-play positions")
def main(data: str | None, games: int, min_margin: float, gnugo: str | None, playouts: int,
         nine: int) -> None:
    data = data or default_data(ARCHIVE)
    if data is None:
        raise click.UsageError(missing("--data", ARCHIVE))
    player = Player(PolicyPlayer(UniformEvaluator(), seed=1), PlayerConfig(status_playouts=playouts))
    gg_cmd = gnugo_argv(gnugo)
    records = counted_games(data, games, min_margin)
    print(f"{len(records)} counted games from {data} (19x19, no handicap, margin >= {min_margin}); "
          f"Korean rules (territory), komi from the record; {playouts} playouts")
    with tempfile.TemporaryDirectory() as tmp, \
            (GtpClient(gg_cmd, name="gnugo") if gg_cmd else open(os.devnull)) as gg:
        gg = gg if gg_cmd else None
        ours(player, replay(records[0], named_rules("korean", 6.5), upto=30))   # compile or load
        agree_ours = agree_gnugo = 0
        times = []
        print(f"{'game':>4} {'record':>8} {'ours':>8} {'GNU Go':>8} {'ours ok':>7} {'gg ok':>6} "
              f"{'time s':>7}  source")
        for i, rec in enumerate(records):
            game = replay(rec, named_rules("korean", rec.komi))
            player.new_game()
            score, dt = ours(player, game)
            times.append(dt)
            sgf = os.path.join(tmp, f"{i}.sgf")
            with open(sgf, "wb") as f:
                f.write(write_sgf(rec))
            gscore = gnugo_score(gg, sgf)
            ok_ours = sign(score) == rec.result[0]
            ok_gg = gscore[:1] == rec.result[0]
            agree_ours += ok_ours
            agree_gnugo += ok_gg
            print(f"{i:4d} {rec.result:>8} {format_result(score):>8} {gscore:>8} "
                  f"{'yes' if ok_ours else 'NO':>7} {'yes' if ok_gg else 'NO':>6} {dt:7.3f}  "
                  f"{os.path.basename(rec.source or '')}", flush=True)
        n = len(records)
        print(f"19x19: names the recorded winner: ours {agree_ours}/{n}, GNU Go "
              f"{agree_gnugo if gg else 'n/a'}/{n}; our judgement {sum(times) / n:.3f} s a position "
              f"(max {max(times):.3f} s)")
        if gg is None or nine <= 0:
            return
        times, same = [], 0
        for seed in range(1, nine + 1):
            rec = nine_record(self_play_nine(gg_cmd, seed))
            game = replay(rec, named_rules("chinese", 7.0))
            score, dt = ours(player, game)
            times.append(dt)
            sgf = os.path.join(tmp, f"nine{seed}.sgf")
            with open(sgf, "wb") as f:
                f.write(write_sgf(rec))
            gg.command("komi 7")
            gscore = gnugo_score(gg, sgf)
            same += sign(score) == gscore[:1]
            print(f"9x9 seed {seed}: {len(rec.moves)} moves, ours {format_result(score)} (area), "
                  f"GNU Go {gscore} (territory), {dt:.3f} s")
        print(f"9x9: same winner as GNU Go {same}/{nine}; our judgement {sum(times) / nine:.3f} s "
              f"a position (max {max(times):.3f} s)")


if __name__ == "__main__":
    main()
