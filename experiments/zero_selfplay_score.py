"""What a Zero network's own search makes of the game: greedy self-play games (no noise, the most
visited move from the first move, no resignation) and their scores, and the network's value of the
empty board; the loop's correctness check on 5x5, where Black wins by 25 with area scoring and
komi 0 (docs/algorithms.md §4.6).

    python experiments/zero_selfplay_score.py runs/zero5/registry/gen-0012.onnx --size 5 --komi 0
        [--visits 400] [--games 4] [--sampled-moves 0] [--score-utility 0.3]

With `--sampled-moves K` the first K moves are drawn from the visits, so the games differ.
"""
from __future__ import annotations

import click
import numpy as np

from goengine.engine.features import extract
from goengine.engine.game import Game
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.training.zero.selfplay import ZeroGamesJob, play_zero_games, zero_rules


@click.command()
@click.argument("model", type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=5, show_default=True, type=int)
@click.option("--komi", default=0.0, show_default=True, type=float)
@click.option("--visits", default=400, show_default=True, type=int)
@click.option("--games", default=4, show_default=True, type=int)
@click.option("--sampled-moves", default=0, show_default=True, type=int)
@click.option("--score-utility", default=0.0, show_default=True, type=click.FloatRange(0),
              help="KataGo's static score utility in the search (a net with a score head)")
@click.option("--seed", default=0, show_default=True, type=int)
def main(model, size, komi, visits, games, sampled_moves, score_utility, seed):
    ev = OnnxEvaluator(model, kind="zero", symmetry="average", cache_size=100_000)
    g = Game(size, zero_rules(komi))
    v = ev.evaluate(extract(g, "zero17")[None]).value_stm[0]
    print(f"network value of the empty board for Black: {v:+.3f}")
    job = ZeroGamesJob(pairs=[("net", "net")] * games, size=size, komi=komi, seed=seed,
                       visits=visits, noise=False, sampled_moves=sampled_moves,
                       resign_threshold=0.0, record=False, score_utility=score_utility)
    results = play_zero_games({"net": ev}, job)
    for r in results:
        moves = " ".join("pass" if p == size * size else str(int(p)) for p in r.moves)
        print(f"score B{r.score:+.1f} in {len(r.moves)} moves: {moves}")
    scores = np.array([r.score for r in results])
    print(f"{games} games at {visits} visits: Black won {np.mean(scores > 0):.0%}, "
          f"mean score B{scores.mean():+.1f}")


if __name__ == "__main__":
    main()
