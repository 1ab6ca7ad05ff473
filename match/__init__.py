"""`engine-match`: matches between GTP engines, refereed by engine.game (see runner.py)."""
from goengine.match.runner import EngineSpec, Match, MatchConfig, MatchError
from goengine.match.stats import wilson_interval
from goengine.match.summary import GameResult, MatchSummary, summarize

__all__ = ["EngineSpec", "GameResult", "Match", "MatchConfig", "MatchError", "MatchSummary",
           "summarize", "wilson_interval"]
