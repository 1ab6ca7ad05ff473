"""The value networks' win rate at a komi other than the one they learned (docs/algorithms.md §2.3).

The value networks have no komi input: each learned the outcome of games played at one komi, 7.5
for the bundled ones, the self-play komi for a Zero run's (the file's `komi` metadata says which).
Until a network takes the komi as an input, a score model moves their value to the komi set:
Black's final margin on the board (before komi) is taken as logistic around a mean mu with scale
s = `komi_scale` * N points (a wider spread on a larger board), so that

    P(Black wins at komi k) = 1 / (1 + exp(-(mu - k) / s)),   v = 2P - 1 = tanh((mu - k) / 2s)

and the value at the learned komi k0 gives mu; at komi k

    v_k = tanh(atanh(v_k0) + (k0 - k) / 2s).

A komi 40 points against a side turns an even position into a sure loss on 9x9 and 19x19 alike,
and the win rate and the resignation rule follow the komi actually set.

The same model read backwards gives the fair komi of a set of games: Black winning a share p of
them at komi k puts mu at k + s logit(p), the komi at which Black would have won half
(`fair_komi`; the Zero loop's `--fair-komi` self-play, docs/algorithms.md §4.6).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from goengine.engine.evaluator import Evaluator

VALUE_LIMIT = 1.0 - 1e-9      # atanh(+-1) is infinite: a sure result stays (almost) sure
DEFAULT_VALUE_KOMI = 7.5      # what a network that does not say learned at (every one before
                              # the `komi` metadata key)
KOMI_SCALE = 0.45             # s / N: the logistic scale of the final margin, points per board
                              # line (4 points on 9x9, 8.6 on 19x19)
SHARE_LIMIT = 0.02            # a share of 0 or 1 says the komi is far off, not how far


def learned_komi(evaluator: Evaluator | None, setting: float | None) -> float:
    """The komi the value of `evaluator` (the one network that answers the game's size; None:
    there is no value network) learned at: `setting` when given (the command line's), else what
    the network says (`learned_komi`, from its file), else DEFAULT_VALUE_KOMI."""
    if setting is not None:
        return setting
    said = None if evaluator is None else evaluator.learned_komi
    return DEFAULT_VALUE_KOMI if said is None else float(said)


def komi_shift(komi: float, value_komi: float, size: int, komi_scale: float) -> float:
    """The shift of atanh(v) (Black's view) from the learned komi to `komi`; 0 when they agree."""
    if komi == value_komi or komi_scale <= 0:
        return 0.0
    return (value_komi - komi) / (2.0 * komi_scale * size)


@njit(cache=True)
def value_at_komi(v_black, shift: float):
    """float64[B]: Black's values v_black (float64[B]) learned at the networks' komi, moved by
    `komi_shift` (numba: one call on a search's batch, where numpy's four cost a fifth of what
    the search does besides the network on 9x9)."""
    out = v_black.copy()
    if shift != 0.0:
        for j in range(out.shape[0]):
            out[j] = np.tanh(np.arctanh(min(max(out[j], -VALUE_LIMIT), VALUE_LIMIT)) + shift)
    return out


def fair_komi(komi: float, black_share: float, size: int, komi_scale: float = KOMI_SCALE) -> float:
    """The komi at which Black would win half of a set of games that Black won a share
    `black_share` of at `komi` (the score model above; the share is held within SHARE_LIMIT of
    0 and 1)."""
    p = min(max(black_share, SHARE_LIMIT), 1.0 - SHARE_LIMIT)
    return komi + komi_scale * size * float(np.log(p / (1.0 - p)))
