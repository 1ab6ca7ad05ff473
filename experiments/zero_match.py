"""Two Zero networks head to head through the Zero search at a fixed number of visits, as in the
loop's gating games (no noise, the first `--sampled-moves` drawn from the visits so the games
differ, then the most visited move, no resignation): the first network's score, half the games
with each colour, on the self-play workers. Compares runs of equal self-play cost, e.g. a run with
playout cap randomisation or forced playouts against one without (docs/algorithms.md §4.6).

    python experiments/zero_match.py runs/pcr7/registry/gen-0040.onnx \
        runs/base7/registry/gen-0040.onnx --size 7 --komi 9 --games 200 --visits 100

With `--first-setting KEY=VALUE` (and `--second-setting`) a network's searches play with other
NetSearchConfig fields than the job's, so that one network against itself compares search
settings at equal visits:

    python experiments/zero_match.py gen-0206.int8.onnx gen-0206.int8.onnx \
        --first-setting c_puct=2 --games 200 --visits 400

Prints wins, draws and losses of the first network, its score (a draw counts half) with the
95% Wilson interval, and how many of the games were distinct.
"""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import click
import numpy as np

from goengine.engine.search.network import NetSearchConfig
from goengine.match.stats import wilson_interval
from goengine.training.workers.pool import WorkerPool, make_jobs, worker_options
from goengine.training.zero.selfplay import ZeroGamesJob
from match_games import play_games  # experiments/match_games.py, beside this script


@click.command()
@click.argument("first", type=click.Path(dir_okay=False, exists=True))
@click.argument("second", type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=9, show_default=True, type=int)
@click.option("--komi", default=7.5, show_default=True, type=float)
@click.option("--games", default=200, show_default=True, type=click.IntRange(2))
@click.option("--visits", default=100, show_default=True, type=click.IntRange(2))
@click.option("--sampled-moves", default=4, show_default=True, type=click.IntRange(0),
              help="opening moves drawn from the root visits, the rest greedy")
@click.option("--score-utility", default=0.0, show_default=True, type=click.FloatRange(0),
              help="KataGo's static score utility in both searches (nets with a score head)")
@click.option("--first-setting", multiple=True, metavar="KEY=VALUE",
              help="a NetSearchConfig field for the first network's searches (repeatable)")
@click.option("--second-setting", multiple=True, metavar="KEY=VALUE",
              help="the same for the second network's")
@click.option("--games-per-job", default=10, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, type=int)
@worker_options
def main(first, second, size, komi, games, visits, sampled_moves, score_utility, first_setting,
         second_setting, games_per_job, seed, workers, ray_address):
    settings = {"a": parse_settings(first_setting), "b": parse_settings(second_setting)}
    pool = WorkerPool(workers, ray_address)
    try:
        pool.publish("a", Path(first).read_bytes(), kind="zero")
        pool.publish("b", Path(second).read_bytes(), kind="zero")
        h = games // 2
        jobs = make_jobs([("a", "b")] * h + [("b", "a")] * (games - h),
                         -(-games // games_per_job), np.random.SeedSequence(seed),
                         job_type=ZeroGamesJob, size=size, komi=komi, visits=visits,
                         noise=False, sampled_moves=sampled_moves, resign_threshold=0.0,
                         no_resign_fraction=0.0, record=False, score_utility=score_utility,
                         settings=settings)
        results = play_games(pool, jobs, games)
    finally:
        pool.close()
    z = np.array([r.z_for("a") for r in results])
    wins, draws, losses = int((z > 0).sum()), int((z == 0).sum()), int((z < 0).sum())
    points = wins + 0.5 * draws
    low, high = wilson_interval(points, len(results))
    as_black = sum(r.z_for("a") > 0 for r in results if r.black == "a")
    black_wins = sum(r.winner > 0 for r in results)
    distinct = len({r.moves.tobytes() for r in results})
    said = "".join(f", {who} {k}={v}" for who, name in (("first", "a"), ("second", "b"))
                   for k, v in settings[name].items())
    print(f"{first} against {second}{said}, {size}x{size} komi {komi}, {visits} visits, "
          f"{sampled_moves} sampled opening moves: +{wins} ={draws} -{losses}, score "
          f"{points / len(results):.3f} [{low:.3f}, {high:.3f}]; as black {as_black} / {h}; "
          f"black won {black_wins} of {len(results)}; {distinct} distinct games")


def parse_settings(pairs) -> dict:
    """{field: value} from KEY=VALUE strings, each value of its NetSearchConfig field's type."""
    types = {f.name: type(getattr(NetSearchConfig, f.name)) for f in fields(NetSearchConfig)
             if hasattr(NetSearchConfig, f.name)}
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in types or not value:
            raise click.BadParameter(f"{pair!r}: expected KEY=VALUE with KEY a NetSearchConfig "
                                     f"field ({', '.join(sorted(types))})")
        kind = float if types[key] is type(None) else types[key]     # value_komi: None
        try:
            out[key] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
        except ValueError:
            raise click.BadParameter(f"{pair!r}: {value!r} is not a {kind.__name__}") from None
    return out


if __name__ == "__main__":
    main()
