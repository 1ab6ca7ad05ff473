"""`engine-match`: matches between GTP engines, refereed by engine.game (see runner.py)."""
from match.runner import EngineSpec, Match, MatchConfig, MatchError
from match.stats import wilson_interval
from match.summary import GameResult, MatchSummary, summarize

__all__ = ["EngineSpec", "GameResult", "Match", "MatchConfig", "MatchError", "MatchSummary",
           "summarize", "wilson_interval"]
