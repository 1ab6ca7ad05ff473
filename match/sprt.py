"""A sequential probability ratio test on a match's games: the Zero loop's gating of a candidate
against the best network, as Leela Zero's server gates (docs/algorithms.md §4.6), and
`engine-match --sprt`, which stops a match once its games decide between two Elo differences.

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
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Sprt:
    """`engine-match --sprt ELO0,ELO1`: after each game, H1 (A is `elo1` stronger than B) is
    accepted at LLR >= the upper bound, H0 (`elo0` stronger) at LLR <= the lower one; the match
    stops there. Draws count half a win and half a loss, games without a result not at all."""
    elo0: float = ELO0
    elo1: float = ELO1
    alpha: float = ALPHA
    beta: float = BETA

    def __post_init__(self):
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT: elo0 {self.elo0:g} must be below elo1 {self.elo1:g}")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("SPRT: alpha and beta must be within (0, 0.5)")

    def decide(self, wins: int, draws: int, losses: int) -> tuple[str, float]:
        """("H1" | "H0" | "continue", LLR) after A's wins, draws and losses."""
        ratio = llr(wins, draws, losses, self.elo0, self.elo1)
        lower, upper = bounds(self.alpha, self.beta)
        if ratio >= upper:
            return "H1", ratio
        if ratio <= lower:
            return "H0", ratio
        return "continue", ratio

    def describe(self, wins: int, draws: int, losses: int) -> str:
        """One line: the test, its LLR and bounds, and what it says."""
        decision, ratio = self.decide(wins, draws, losses)
        lower, upper = bounds(self.alpha, self.beta)
        verdict = {"H1": f"H1 accepted: A is stronger by {self.elo1:g} Elo or more",
                   "H0": f"H0 accepted: A is not stronger by more than {self.elo0:g} Elo",
                   "continue": "undecided"}[decision]
        return (f"SPRT elo0 {self.elo0:g}, elo1 {self.elo1:g} (alpha {self.alpha:g}, beta "
                f"{self.beta:g}): LLR {ratio:.2f} in [{lower:.2f}, {upper:.2f}]: {verdict}")


__all__ = ["ALPHA", "BETA", "ELO0", "ELO1", "Sprt", "bounds", "elo_score", "gate_decision", "llr"]
