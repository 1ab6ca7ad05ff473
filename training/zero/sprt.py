"""The gating test: a sequential probability ratio test on the candidate's games against the best
network, as Leela Zero's server gates (docs/algorithms.md §4.6).

    decision, llr = gate_decision(wins=130, draws=0, losses=70)   # "pass", "fail" or "continue"

H0: the candidate is `elo0` stronger, H1: `elo1` stronger; a score s (a draw is half a win) of
elo e is `1 / (1 + 10^(-e / 400))`. Every game adds to the log-likelihood ratio of the binomial,
a draw counting half a win and half a loss:

    LLR = W' ln(s1 / s0) + L' ln((1 - s1) / (1 - s0)),   W' = W + D/2, L' = L + D/2

and the test stops at LLR >= ln((1 - beta) / alpha) (pass) or LLR <= ln(beta / (1 - alpha))
(fail), once at least `min_games` are played. At `max_games` without a decision the candidate
passes when its score reaches `pass_score` (0.55: 220 of 400).
"""
from __future__ import annotations

import math

ELO0, ELO1 = 0.0, 35.0
ALPHA = BETA = 0.05


def elo_score(elo: float) -> float:
    """The expected score of a player `elo` points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def llr(wins: int, draws: int, losses: int, elo0: float = ELO0, elo1: float = ELO1) -> float:
    """The binomial log-likelihood ratio of H1 (elo1) against H0 (elo0)."""
    s0, s1 = elo_score(elo0), elo_score(elo1)
    w, l_ = wins + draws / 2, losses + draws / 2
    return w * math.log(s1 / s0) + l_ * math.log((1 - s1) / (1 - s0))


def bounds(alpha: float = ALPHA, beta: float = BETA) -> tuple[float, float]:
    """(lower, upper): fail at or below the first, pass at or above the second."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def gate_decision(wins: int, draws: int, losses: int, min_games: int = 100,
                  max_games: int = 400, elo0: float = ELO0, elo1: float = ELO1,
                  alpha: float = ALPHA, beta: float = BETA,
                  pass_score: float = 0.55) -> tuple[str, float]:
    """("pass" | "fail" | "continue", LLR) after these games."""
    games = wins + draws + losses
    ratio = llr(wins, draws, losses, elo0, elo1)
    lower, upper = bounds(alpha, beta)
    if games >= min_games:
        if ratio >= upper:
            return "pass", ratio
        if ratio <= lower:
            return "fail", ratio
    if games >= max_games:
        score = (wins + draws / 2) / games
        return ("pass" if score >= pass_score else "fail"), ratio
    return "continue", ratio


__all__ = ["ALPHA", "BETA", "ELO0", "ELO1", "bounds", "elo_score", "gate_decision", "llr"]
