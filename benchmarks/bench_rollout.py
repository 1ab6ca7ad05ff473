"""Fast rollout policy: microseconds per move in policy playouts (19x19 and 9x9, one thread),
the rollouts' value error and the held-out top-1 accuracy of a rollout .npz, against the goals
(AlphaGo: 2 us/move, 24.2%).

    NUMBA_NUM_THREADS=1 python benchmarks/bench_rollout.py [--model models/bundled/rollout.npz]
        [--heldout PATH] [--positions 20000] [--rules 0:0:0,0.9:0.9:1]
        [--value-positions 500] [--value-playouts 16]

Speed and the value error are printed for each set of playout rules of `--rules`,
SELF_ATARI:CAPTURE[:BIG_SELF_ATARI] (engine.rollout.policy.PlayoutRules: the chance that the
playout draws again a move that puts two or more of its own stones in atari, the chance that it
captures a string of two or more opponent stones left in atari, and the chance that it draws
again a self-atari of seven or more stones, the rule's default where not given), the first the
baseline of the speed ratio
and of the value error's paired difference. The value error is AlphaGo's Figure 2b measure: at one uniformly drawn
position of each held-out game, the mean result of the rollouts against the game's winner.

The held-out games default to ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2 beside the project.

Speed is measured from the empty board (whole games, about 430 moves on 19x19) in CPU time of
this single-threaded process, alongside the heuristic playouts of engine.playout for reference
(on a loaded machine both slow down; compare the ratio). Accuracy: the policy's most likely
move equals the human move, over positions sampled uniformly from the held-out games (passes are not
positions; a human move the policy cannot play, e.g. filling an own eye, counts as a miss).
"""
from __future__ import annotations

import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import click  # noqa: E402
import numpy as np  # noqa: E402

from data_paths import default_data, missing  # noqa: E402
from goengine.engine.board import BLACK, new_board  # noqa: E402
from goengine.engine.playout import random_playouts, seed as nb_seed  # noqa: E402
from goengine.engine.replay import ReplayError, replay  # noqa: E402
from goengine.engine.rollout.policy import (PlayoutRules, RolloutPolicy,  # noqa: E402
                                            policy_playouts)
from goengine.engine.search.alphago import rollouts  # noqa: E402
from goengine.sgf_tools.archives import iter_games  # noqa: E402
from goengine.training.rollout.data import load_games, select_positions  # noqa: E402
from goengine.training.rollout.features import Dictionary, extract_all  # noqa: E402
from goengine.training.rollout.sgd import heldout_metrics  # noqa: E402
from goengine.models.names import BUNDLED_DIR, MODEL_FILES  # noqa: E402

GOAL_US = 5.0
GOAL_TOP1 = 0.24
HELDOUT = "tygem9d/tygem9d-2015-06.tar.bz2"  # under ../shared/data


def policy_speed(pol: RolloutPolicy, n: int, seconds: float) -> tuple[float, float, float]:
    """(us per move, playouts per second, moves per playout), in CPU time of this process (the
    kernels are single-threaded; CPU time is steadier than wall time on a shared machine)."""
    st, meta = new_board(n)
    nb_seed(1)
    policy_playouts(st, meta, 3, 3 * n * n, pol.tables)  # compile / warm up
    playouts = moves = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        _s, m = policy_playouts(st, meta, 10, 3 * n * n, pol.tables)
        playouts += 10
        moves += m
    dt = time.process_time() - start
    return dt / moves * 1e6, playouts / dt, moves / playouts


def heuristic_speed(n: int, seconds: float) -> float:
    """engine.playout heuristic playouts per CPU second, for reference."""
    st, meta = new_board(n)
    random_playouts(st, meta, 3, 3 * n * n)
    count, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        random_playouts(st, meta, 20, 3 * n * n)
        count += 20
    return count / (time.process_time() - start)


def heldout_value(pol: RolloutPolicy, heldout: str, positions: int, playouts: int,
                  rules: list[PlayoutRules], seed: int) -> list[tuple[float, float, float]]:
    """The rollouts as a value estimate (AlphaGo's Figure 2b): at one position a game, drawn
    uniformly from the held-out games with a winner, the mean result of `playouts` rollouts
    (+1 win, -1 loss for the side to move, at the game's komi) against the game's winner. For
    each playout rule: (MSE, its paired difference from the first rate's, that difference's
    standard error); every rule plays from the same positions."""
    rng = np.random.default_rng(seed)
    games = []
    for record in iter_games(heldout):
        if record.size != 19 or record.winner is None or len(record.moves) < 2:
            continue
        upto = int(rng.integers(0, len(record.moves)))
        try:
            games.append((replay(record, upto=upto), record.winner))
        except ReplayError:
            continue
        if len(games) >= positions:
            break
    errors = np.zeros((len(rules), len(games)))
    for r, rule in enumerate(rules):
        tab = pol.with_rules(rule).tables
        nb_seed(seed + r)
        for i, (game, winner) in enumerate(games):
            sts = np.repeat(game.st[None], playouts, axis=0)
            metas = np.repeat(game.meta[None], playouts, axis=0)
            own = np.zeros(game.st.shape[1])
            z, _margin = rollouts(sts, metas, playouts, game.komi, 3 * 19 * 19, own, own.copy(),
                                  tab, True)
            mover = 1.0 if game.to_play == BLACK else -1.0
            outcome = mover if winner == "b" else -mover
            errors[r, i] = (mover * z.mean() - outcome) ** 2
    out = []
    for r in range(len(rules)):
        diff = errors[r] - errors[0]
        out.append((float(errors[r].mean()), float(diff.mean()),
                    float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0))
    return out


def _name(rule: PlayoutRules) -> str:
    """SELF_ATARI:CAPTURE:BIG_SELF_ATARI, as --rules takes it."""
    return f"{rule.self_atari:g}:{rule.capture:g}:{rule.big_self_atari:g}"


def heldout_top1(pol: RolloutPolicy, heldout: str, positions: int, seed: int) -> tuple[float, int]:
    games = load_games([heldout], size=19)
    sel = select_positions(games, positions, np.random.default_rng(seed))
    dic = Dictionary(pol.keys)
    batch = extract_all(games, sel, dic)
    m = heldout_metrics(batch, pol.weights.astype(np.float64))
    return m["top1"], m["positions"]


@click.command()
@click.option("--model", default=str(BUNDLED_DIR / MODEL_FILES["rollout"]), show_default=True)
@click.option("--heldout", default=default_data(HELDOUT),
              help=f"held-out games ('' to skip the accuracy)  [default: ../shared/data/{HELDOUT} "
              "beside the project]")
@click.option("--positions", default=20000, show_default=True, help="held-out positions")
@click.option("--seconds", default=5.0, show_default=True, help="seconds per speed measurement")
@click.option("--sizes", default="19,9", show_default=True)
@click.option("--seed", default=12345, show_default=True)
@click.option("--value-positions", default=500, show_default=True, type=click.IntRange(0),
              help="held-out positions (one a game) for the rollouts' value MSE (0 skips it)")
@click.option("--value-playouts", default=16, show_default=True, type=click.IntRange(1),
              help="rollouts per position for the value MSE")
@click.option("--rules", "rule_text", default="0:0:0,0:0:1,0.9:0.9:1", show_default=True,
              help="playout rules to compare, SELF_ATARI:CAPTURE[:BIG_SELF_ATARI] chances each "
              "(engine.rollout.policy.PlayoutRules), the first the baseline of the ratios")
def main(model: str, heldout: str, positions: int, seconds: float, sizes: str, seed: int,
         value_positions: int, value_playouts: int, rule_text: str) -> None:
    if heldout is None:
        raise click.UsageError(missing("--heldout", HELDOUT) + " (--heldout '' skips the accuracy)")
    try:
        rules = [PlayoutRules(*(float(x) for x in item.split(":")))
                 for item in rule_text.split(",")]
        pol = RolloutPolicy.load(model)
    except (ValueError, TypeError) as e:     # RolloutModelError is a ValueError
        raise click.UsageError(f"--rules {rule_text!r}: {e}") from e
    print(f"model {model}: {len(pol)} features {pol.family_counts()}, "
          f"trained on {pol.meta.get('positions', '?')} positions")
    print(f"{'size':>4} {'rules':>11} {'us/move':>8} {'goal':>5} {'ok':>3} "
          f"{'playouts/s':>11} {'ratio':>6} {'moves/playout':>13} {'heuristic playouts/s':>21}")
    for n in [int(s) for s in sizes.split(",")]:
        h = heuristic_speed(n, min(seconds, 3.0))
        base = None
        for rule in rules:
            us, pps, mpp = policy_speed(pol.with_rules(rule), n, seconds)
            base = base or pps
            ok = "yes" if us <= GOAL_US else "NO"
            print(f"{n:>4} {_name(rule):>11} {us:8.2f} {GOAL_US:5.1f} {ok:>3} {pps:11.0f} "
                  f"{pps / base:6.2f} {mpp:13.0f} {h:21.0f}", flush=True)
    if heldout and value_positions:
        rows = heldout_value(pol, heldout, value_positions, value_playouts, rules, seed)
        print(f"rollout value on {value_positions} held-out positions of "
              f"{os.path.basename(heldout)}, {value_playouts} rollouts each (MSE, +-1 results):")
        for rule, (mse, diff, se) in zip(rules, rows):
            print(f"  rules {_name(rule)}: MSE {mse:.4f} ({diff:+.4f} +- {se:.4f} against "
                  f"{_name(rules[0])})")
    if heldout:
        top1, n = heldout_top1(pol, heldout, positions, seed)
        ok = "yes" if top1 >= GOAL_TOP1 else "NO"
        print(f"held-out top-1 {top1:.4f} on {n} positions of {os.path.basename(heldout)} "
              f"(goal {GOAL_TOP1:.2f}: {ok}; AlphaGo 0.242)")


if __name__ == "__main__":
    main()
