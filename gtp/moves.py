"""Driving engine.player.Player for the handlers: generate and play, analyse, dead stones.

The Player reports `engine.search.result.SearchResult` (winrates from the side to move, ownership
from BLACK's view, [N, N]); `Snapshot` turns it into what the analysis formats need
(ownership from the side to move, N*N row-major from A19, as KataGo reports it).
"""
from __future__ import annotations

import logging
import sys
import threading
from dataclasses import dataclass

from goengine.engine.coords import PASS, RESIGN
from goengine.gtp import analysis
from goengine.gtp.protocol import BLACK, COLOUR_NAMES, GtpError, quote
from goengine.gtp.session import Session

log = logging.getLogger("gtp")


@dataclass
class Snapshot:
    colour: int                         # the side the values are for (to move at the root)
    moves: list                         # MoveStat-like: move, visits, winrate, prior, lcb, order, pv
    root_visits: int
    ownership: list[float] | None       # N*N, +1 = owned by `colour`, row-major from A19
    ownership_black: object = None      # float[N, N] as the search gave it
    score_lead: float | None = None     # points `colour` leads by


def snapshot(result, colour: int) -> Snapshot:
    """The engine.search.result.SearchResult `result` as the handlers show it, for `colour`."""
    sign = 1.0 if colour == BLACK else -1.0
    own_b = result.ownership_black
    own = None if own_b is None else [sign * float(v) for v in own_b.reshape(-1)]
    lead_b = result.score_lead_black
    return Snapshot(colour=colour, moves=list(result.moves), root_visits=int(result.root_visits),
                    ownership=own, ownership_black=own_b,
                    score_lead=None if lead_b is None else sign * lead_b)


# ---- play -------------------------------------------------------------------------------------

def play(s: Session, colour: int, lc: int) -> None:
    s.loader.play(s.game, colour, lc)
    s.last_snapshot = None


def supports_size(s: Session, size: int) -> bool:
    """Never play a network's moves on a size it was not made for (docs/gtp.md §3):
    with --search auto the heuristic MCTS plays those sizes instead; a search asked for by name
    refuses them."""
    return s.models_cover(size) or s.config.auto_search


def require_size(s: Session) -> None:
    if not supports_size(s, s.size):
        raise GtpError(f"the models are not made for {s.size}x{s.size} "
                       f"(they play {', '.join(map(str, sorted(s.model_sizes)))})")


def generate(s: Session, colour: int, stop: threading.Event, *, play_it: bool = True,
             cleanup: bool = False, report=None, interval_s: float = 1.0) -> int:
    """Search, play the move for `colour` unless play_it is False, and return it (Loc, PASS or
    RESIGN). `stop` ends the search early: the best move found so far is answered."""
    require_size(s)
    p, g = (s.status_player() if cleanup else s.playing_player()), s.game
    rep = (lambda res: report(snapshot(res, colour))) if report is not None else None
    move = p.genmove(g, colour, s.clock, stop=stop, cleanup=cleanup, report=rep,
                     report_interval=interval_s)
    result = p.last_result
    s.last_snapshot = snapshot(result, colour) if result is not None else None
    if s.last_snapshot is not None and s.params.get("chat"):
        _chat(s, s.last_snapshot, move)
    if play_it and move != RESIGN:
        try:
            s.loader.play(g, colour, move)
        except GtpError as exc:
            log.error("the player chose an illegal move %s (%s); passing", s.fmt(move), exc)
            move = PASS
            g.play(colour, PASS)
    planned, took, margin = p.last_timing
    log.info("%s %s (%.2f s; planned %s%s, lag margin %.2f s)", COLOUR_NAMES[colour], s.fmt(move),
             took, "-" if planned is None else f"{planned:.2f} s",
             f" ({p.last_stop})" if p.last_stop else "", margin)
    s.ponder_pending = play_it and move != RESIGN
    return move


def _chat(s: Session, snap: Snapshot, move: int) -> None:
    """The stderr lines gtp2ogs relays to the game (docs/gtp.md §5), written before the answer, while
    gtp2ogs still reads them for this game."""
    lines = [analysis.chat_line(snap, s.fmt, move)]
    if lines[0] and not s.chat_announced:
        lines.insert(0, analysis.CHAT_FORMAT_LINE)
        s.chat_announced = True
    if move == RESIGN:
        lines.append(analysis.resign_line(snap))
    text = "\n".join(line for line in lines if line)
    if text:
        print(text, file=sys.stderr, flush=True)


def analyze(s: Session, colour: int, stop: threading.Event, report, interval_s: float) -> Snapshot:
    require_size(s)
    result = s.playing_player().analyze(s.game, colour, lambda res: report(snapshot(res, colour)),
                                       stop, interval_s)
    return snapshot(result, colour)


def final_status(s: Session) -> dict[str, list[int]]:
    """The one dead-stone judgement (engine.deadstones), whatever the search."""
    return s.player.final_status(s.game)


def ownership_black(s: Session):
    """float[N, N], +1 black, row 0 at the top: from the value network's ownership head when the
    playing search has one (no playouts), else from the playouts of the status player."""
    own = s.playing_player().head_ownership(s.game)
    return s.status_player().ownership(s.game) if own is None else own


def game_over(s: Session) -> None:
    if s.player is not None:
        for player in s.players():
            player.new_game()


# Other names clients use for our parameters: KataGo's (kata-set-param is written for them) and
# the command line's --lambda.
PARAM_ALIASES = {
    "maxVisits": "visits",
    "maxPlayouts": "playouts",
    "maxTime": "fixed_time_per_move",
    "cpuctExploration": "c_puct",
    "staticScoreUtilityFactor": "score_utility",
    "dynamicScoreUtilityFactor": "dynamic_score_utility",
    "dynamicScoreCenterScale": "dynamic_score_scale",
    "dynamicScoreCenterZeroWeight": "dynamic_score_zero_weight",
    "lambda": "lam",
}


def param_name(name: str) -> str:
    return PARAM_ALIASES.get(name, name)


def set_param(s: Session, name: str, value: str) -> None:
    name = param_name(name)
    if name in s.params:
        old = s.params[name]
        try:
            s.params[name] = _convert(old, value)
        except ValueError:
            raise GtpError(f"invalid value {quote(value)} for {name}") from None
        return
    s.wait_ready("player")
    known = False
    for player in s.players():      # each size's search takes the setting it knows
        try:
            player.set_param(name, value)
            known = True
        except KeyError:
            pass
        except (ValueError, TypeError) as exc:
            raise GtpError(f"invalid value {quote(value)} for {name}: {exc}") from None
    if not known:
        raise GtpError(f"unknown parameter {quote(name)}")


def params(s: Session) -> dict:
    out = dict(s.params)
    if s.is_ready("player"):
        out.update(s.size_player().params())
    return out


def _convert(old, value: str):
    if isinstance(old, bool):
        v = value.lower()
        if v in ("1", "true", "yes", "on"):
            return True
        if v in ("0", "false", "no", "off"):
            return False
        raise ValueError(value)
    if isinstance(old, int):
        return int(value)
    if isinstance(old, float):
        x = float(value)
        if x != x or x in (float("inf"), float("-inf")):
            raise ValueError(value)
        return x
    return value
