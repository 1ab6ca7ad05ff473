"""`engine-match`: matches between GTP engines, refereed by engine.game (see runner.py)."""
from gtp.match.runner import (EngineSpec, GameResult, Match, MatchConfig, MatchError,
                              MatchSummary, summarize)
from gtp.match.stats import wilson_interval

__all__ = ["EngineSpec", "GameResult", "Match", "MatchConfig", "MatchError", "MatchSummary",
           "summarize", "wilson_interval"]
