"""The noise floor of the value target: how low any value network's MSE can go on the positions
`engine-train value-data` records (docs/algorithms.md §4.3).

A recorded position's target z is one sampled ending of the game: the RL policy plays it out by
sampling its moves. With p the chance that the side to move wins from there under that play, no
predictor does better than v = 2p - 1, whose expected squared error is 4 p (1 - p): the Bayes
floor. This draws positions exactly as the generator does (U uniform, the SL policy to U - 1, move
U at random, s_{U+1}), plays each out K times with the RL policy, and prints

    floor      mean of 4 p^ (1 - p^) K / (K - 1)  (unbiased for 4 p (1 - p))
    mse        each value net's squared error against single endings, as the held-out MSE of
               training measures it (all K endings averaged: the same expectation, less noise)
    excess     mse - floor: what a better network could still remove

overall and by thirds of U (`--draw game`: positions drawn uniformly from s_{U+1} to the end of
the game, as the further positions of `value-data --positions-per-game K` are; by thirds of their
move number).
A goal below the floor asks for a sharper policy in the endings (the floor falls as the play that
decides z becomes less random), not for a better value network.

    python experiments/value_noise_floor.py --size 9 --positions 400 --continuations 16 \\
        --rl-policy runs/rl19/policy.onnx \\
        --value models/bundled/value.onnx --value runs/value-rl/value.onnx
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import click
import numpy as np
from tqdm import tqdm

from goengine.engine.colors import BLACK
from goengine.engine.coords import PASS, pos_to_loc
from goengine.engine.features import FEATURE_SETS, extract_into
from goengine.engine.game import Game
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.training.workers.selfplay import KOMI, VALUE_FEATURES, move_cap, selfplay_rules
from goengine.training.value.games import (RL, SL, Lockstep, ValueGamesJob, default_max_u,
                                           play_value_games)

BUNDLED = Path(__file__).resolve().parents[1] / "models" / "bundled"


def starting_positions(nets, job: ValueGamesJob, rng) -> tuple[list[Game], np.ndarray]:
    """job.games positions s_{U+1}, drawn as the value-data generator draws them (a game that ends
    before U gives its final position)."""
    us = rng.integers(1, (job.max_u or default_max_u(job.size)) + 1, size=job.games)
    games = [Game(job.size, selfplay_rules(job.komi)) for _ in range(job.games)]
    lockstep = Lockstep(job.size)
    active = list(range(job.games))
    while active:
        lockstep.move(nets, job, games, us, active, rng)
        active = [i for i in active if not games[i].is_over() and games[i].move_number < us[i]]
    return games, us


def uniform_positions(nets, job: ValueGamesJob, rng) -> tuple[list[Game], np.ndarray]:
    """job.games positions each drawn uniformly from the RL policy's part of a game of the
    generator, s_{U+1} to the end (what the K - 1 further positions of `--positions-per-game K`
    are); returns them and their move numbers."""
    starts, ts = [], []
    for game in play_value_games(nets, replace(job, seed=int(rng.integers(2**31)))):
        t = int(rng.integers(min(game.u, len(game.moves)), len(game.moves) + 1))
        g = Game(job.size, selfplay_rules(job.komi))
        for p in game.moves[:t]:
            g.play(g.to_play, PASS if p == job.size ** 2 else pos_to_loc(int(p), job.size))
        starts.append(g)
        ts.append(t)
    return starts, np.asarray(ts)


def endings(nets, job: ValueGamesJob, starts: list[Game], k: int, rng) -> np.ndarray:
    """float[M, K]: the outcome (+1 / -1 / 0) for the side to move in each start of K endings
    played by the RL policy."""
    games = [g.copy() for g in starts for _ in range(k)]
    us = np.zeros(len(games), dtype=np.int64)           # U = 0: the RL policy throughout
    cap = move_cap(job.size, job.move_cap)
    lockstep = Lockstep(job.size)
    active = [i for i, g in enumerate(games) if not g.is_over() and g.move_number < cap]
    while active:
        lockstep.move(nets, job, games, us, active, rng)
        active = [i for i in active if not games[i].is_over() and games[i].move_number < cap]
    z = np.array([np.sign(g.area_score()) for g in games], dtype=np.float64).reshape(len(starts), k)
    stm = np.array([1.0 if g.to_play == BLACK else -1.0 for g in starts])
    return z * stm[:, None]


def values(path: str, starts: list[Game], threads: int) -> np.ndarray:
    """The value net's v for the side to move in each start."""
    net = OnnxEvaluator(path, threads, symmetry="none", cache_size=0, kind="value")
    n = starts[0].size
    planes = np.zeros((len(starts), FEATURE_SETS[VALUE_FEATURES].num_planes, n, n), dtype=np.uint8)
    for i, g in enumerate(starts):
        extract_into(g, VALUE_FEATURES, planes[i])
    return np.concatenate([net.evaluate(planes[j:j + 256].astype(np.float32)).value_stm
                           for j in range(0, len(starts), 256)]).astype(np.float64)


def figures(z: np.ndarray, v: dict[str, np.ndarray], rows: np.ndarray) -> dict:
    k = z.shape[1]
    p = (z[rows] > 0).mean(axis=1)
    out = {"positions": int(rows.sum()), "floor": float(np.mean(4 * p * (1 - p) * k / (k - 1)))}
    for name, vals in v.items():
        out[name] = float(np.mean((vals[rows, None] - z[rows]) ** 2))
    return out


@click.command()
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--komi", default=KOMI, show_default=True, type=float)
@click.option("--positions", default=400, show_default=True, type=click.IntRange(1))
@click.option("--continuations", "k", default=16, show_default=True, type=click.IntRange(2))
@click.option("--batch", default=100, show_default=True, type=click.IntRange(1),
              help="positions played out at once (their K endings in one lockstep)")
@click.option("--sl-policy", default=str(BUNDLED / "policy.onnx"), show_default=True,
              type=click.Path(dir_okay=False, exists=True))
@click.option("--rl-policy", required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--value", "value_paths", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="value nets to score against the same endings (repeatable)")
@click.option("--draw", type=click.Choice(["u", "game"]), default="u", show_default=True,
              help="u: s_{U+1}, AlphaGo's one position a game; game: uniform over a whole game")
@click.option("--temperature", default=1.0, show_default=True, type=float,
              help="sampling temperature of both policies (the generator's default: 1)")
@click.option("--seed", default=1000, show_default=True, type=int)
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1))
def main(size, komi, positions, k, batch, draw, sl_policy, rl_policy, value_paths, temperature, seed,
         threads):
    nets = {name: OnnxEvaluator(path, threads, symmetry="none", cache_size=0, max_batch=4096,
                                kind="policy") for name, path in ((SL, sl_policy), (RL, rl_policy))}
    rng = np.random.default_rng(seed)
    starts, us, zs = [], [], []
    t0 = time.perf_counter()
    with tqdm(total=positions, unit="position") as bar:
        while len(starts) < positions:
            job = ValueGamesJob(games=min(batch, positions - len(starts)), size=size, komi=komi,
                                temperature=temperature)
            games, u = (starting_positions if draw == "u" else uniform_positions)(nets, job, rng)
            zs.append(endings(nets, job, games, k, rng))
            starts += games
            us.append(u)
            bar.update(len(games))
    z, u = np.concatenate(zs), np.concatenate(us)
    v = {Path(p).parent.name + "/" + Path(p).name: values(p, starts, threads) for p in value_paths}
    print(f"{size}x{size}, komi {komi}: {positions} positions ({'s_U+1' if draw == 'u' else 'uniform in the game'}) x {k} endings by "
          f"{Path(rl_policy).parent.name}/{Path(rl_policy).name} at temperature {temperature}, "
          f"{time.perf_counter() - t0:.0f} s")
    edges = np.quantile(u, [0, 1 / 3, 2 / 3, 1])
    parts = [("all", np.ones(len(u), dtype=bool))]
    parts += [(f"{'U' if draw == 'u' else 't'} {int(a)}-{int(b)}", (u >= a) & (u <= b if i == 2 else u < b))
              for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]
    names = list(v)
    w = max([12] + [len("excess " + n) + 2 for n in names])
    print(f"{'positions':<12}{'n':>6}{'floor':>8}" + "".join(f"{'mse ' + n:>{w}}" for n in names)
          + "".join(f"{'excess ' + n:>{w}}" for n in names))
    for label, rows in parts:
        f = figures(z, v, rows)
        print(f"{label:<12}{f['positions']:>6}{f['floor']:>8.3f}"
              + "".join(f"{f[n]:>{w}.3f}" for n in names)
              + "".join(f"{f[n] - f['floor']:>{w}.3f}" for n in names))


if __name__ == "__main__":
    main()
