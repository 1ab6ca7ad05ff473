"""The AlphaGo search against a policy playing alone: is the search a better player than the
policy it would teach? Search-guided policy targets (AlphaGo Zero's policy improvement) only lift
a policy whose search plays better than the policy itself.

    python experiments/search_vs_policy.py runs/rl9s/policy.onnx \
        runs/value9/value.onnx runs/rl9s/pool/sl.onnx --size 9 --games 200 \
        --visits 256 --lam 0

The first side is `engine.search.alphago.AlphaGoSearch` with PRIOR as its priors
and VALUE as its value network (lambda `--lam`: 0 the value alone, else mixed with the fast
rollouts of the bundled rollout policy), the most visited move after `--visits` root visits; the
second plays OPPONENT's most probable move, as `experiments/policy_match.py` greedy games do. Each
side samples its first `--sampled-moves` moves from its own policy (PRIOR for the search) so that
the games differ. Games as in `engine-train rl` (training.workers.selfplay: two passes or the move cap,
area scoring, komi 7.5), half with each colour, on `--workers` processes. Prints the search's
wins, its score with the 95% Wilson interval and how many games were distinct.
"""
from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import click
import numpy as np

from goengine.engine.colors import BLACK
from goengine.engine.coords import PASS
from goengine.engine.game import Game
from goengine.engine.rollout.policy import RolloutPolicy
from goengine.engine.search.alphago import AlphaGoSearch
from goengine.engine.search.network import NetSearchConfig
from goengine.match.stats import wilson_interval
from goengine.models.onnx_evaluator import OnnxEvaluator
from goengine.models.store import default_path
from goengine.training.workers.selfplay import move_cap, policy_moves, pos_table, selfplay_rules


def play(args) -> list[tuple[bool, float, bytes]]:
    """(search was black, area score, moves) of each game of one worker's share."""
    prior, value, opponent, size, visits, lam, sampled, colours, seed = args
    pri = OnnxEvaluator(prior, 1, symmetry="none")
    val = OnnxEvaluator(value, 1, symmetry="none")
    opp = OnnxEvaluator(opponent, 1, symmetry="none", cache_size=0)
    rollout = RolloutPolicy.load(default_path("rollout")) if lam > 0 else None
    rng = np.random.default_rng(seed)
    pos_of, buf = pos_table(size), np.zeros(size * size + 2, np.int64)
    out = []
    for search_black in colours:
        game = Game(size, selfplay_rules())
        search = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=lam), pri, val,
                               seed=int(rng.integers(2**31)), rollout=rollout)
        moves = []
        while not game.is_over() and game.move_number < move_cap(size):
            searching = (game.to_play == BLACK) == search_black
            if game.move_number < sampled:
                lc = int(policy_moves(pri if searching else opp, [game], rng, pos_of, buf,
                                      1.0).locs[0])
            elif searching:
                best = search.search(game, game.to_play, visits=visits).best
                lc = PASS if best is None or best.move < 0 else best.move
            else:
                lc = int(policy_moves(opp, [game], rng, pos_of, buf, 0.0).locs[0])
            game.play(game.to_play, lc)
            moves.append(lc)
        out.append((search_black, game.area_score(), np.asarray(moves, np.int32).tobytes()))
    return out


@click.command()
@click.argument("prior", type=click.Path(dir_okay=False, exists=True))
@click.argument("value", type=click.Path(dir_okay=False, exists=True))
@click.argument("opponent", type=click.Path(dir_okay=False, exists=True))
@click.option("--size", default=9, show_default=True, type=int)
@click.option("--games", default=200, show_default=True, type=click.IntRange(2))
@click.option("--visits", default=256, show_default=True, type=click.IntRange(1))
@click.option("--lam", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="weight of the rollouts in the leaf value (0: the value network alone)")
@click.option("--sampled-moves", default=6, show_default=True, type=click.IntRange(0))
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, type=int)
def main(prior, value, opponent, size, games, visits, lam, sampled_moves, workers, seed):
    colours = [i % 2 == 0 for i in range(games)]
    seeds = np.random.SeedSequence(seed).generate_state(workers)
    shares = [(prior, value, opponent, size, visits, lam, sampled_moves, colours[w::workers],
               int(seeds[w])) for w in range(workers)]
    with mp.get_context("spawn").Pool(workers) as p:
        results = [r for share in p.map(play, shares) for r in share]
    won = [(s > 0) == black for black, s, _ in results]
    wins = int(sum(won))
    low, high = wilson_interval(wins, len(results))
    as_black = sum(w for w, (black, _, _) in zip(won, results) if black)
    distinct = len({m for _, _, m in results})
    print(f"search ({Path(prior).name} priors, {Path(value).name}, lambda {lam}, {visits} visits) "
          f"against {Path(opponent).name} greedy, {size}x{size}, {sampled_moves} sampled moves: "
          f"{wins} / {len(results)} = {wins / len(results):.3f} (95% {low:.3f}-{high:.3f}); "
          f"as black {as_black} / {sum(colours)}; {distinct} distinct games")


if __name__ == "__main__":
    main()
