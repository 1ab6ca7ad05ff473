"""GTP 2 tournament and regression commands: handicap, time, scoring, SGF, reg_genmove, cputime."""
from __future__ import annotations

import os
import time

from goengine.engine.coords import all_locs, loc, loc_to_rc
from goengine.gtp import moves, timekeeping
from goengine.gtp.protocol import COLOUR_NAMES, GtpError, parse_colour, parse_float, parse_int, \
    parse_vertex, quote
from goengine.gtp.server import command
from goengine.gtp.session import Session


# ---- handicap ---------------------------------------------------------------------------------

def _require_empty(s: Session) -> None:
    g = s.game
    if g.history or g.handicap or g.board_colors().any():
        raise GtpError("board not empty")


def _place(s: Session, locs: list[int]) -> str:
    try:
        s.game.set_handicap(locs)
    except ValueError as exc:
        raise GtpError(str(exc)) from None
    return " ".join(s.fmt(lc) for lc in locs)


@command("fixed_handicap", args=1, usage="fixed_handicap NUMBER")
def fixed_handicap(s: Session, args) -> str:
    n = parse_int(args[0], "number of stones")
    _require_empty(s)
    try:
        locs = s.game.fixed_handicap_locs(n)
    except ValueError:
        raise GtpError("invalid number of stones") from None
    return _place(s, locs)


@command("place_free_handicap", args=1, usage="place_free_handicap NUMBER")
def place_free_handicap(s: Session, args) -> str:
    n = parse_int(args[0], "number of stones")
    _require_empty(s)
    if not 2 <= n < s.size * s.size:
        raise GtpError("invalid number of stones")
    return _place(s, free_handicap_locs(s, n))


def free_handicap_locs(s: Session, n: int) -> list[int]:
    """The fixed placement when it exists, then the points nearest the star points and centre."""
    g, size = s.game, s.size
    chosen: list[int] = []
    for k in range(min(n, 9), 1, -1):
        try:
            chosen = g.fixed_handicap_locs(k)
            break
        except ValueError:
            continue
    if len(chosen) >= n:
        return chosen[:n]
    edge = 3 if size >= 13 else 2
    lines = {edge, size - 1 - edge, size // 2}

    def rank(lc: int) -> tuple:
        r, c = loc_to_rc(lc, size)
        dist = min(abs(r - a) for a in lines) + min(abs(c - b) for b in lines)
        return dist, abs(r - size // 2) + abs(c - size // 2), r, c

    rest = sorted((lc for lc in all_locs(size) if lc not in chosen), key=rank)
    return chosen + rest[:n - len(chosen)]


@command("set_free_handicap", args=(1, None), usage="set_free_handicap VERTEX...")
def set_free_handicap(s: Session, args) -> str:
    locs = [parse_vertex(a, s.size, allow_pass=False) for a in args]
    _require_empty(s)
    if len(set(locs)) != len(locs):
        raise GtpError("repeated vertex")
    if not 2 <= len(locs) < s.size * s.size:
        raise GtpError("invalid number of stones")
    _place(s, locs)
    return ""


# ---- time -------------------------------------------------------------------------------------

@command("time_settings", args=3, needs=None, usage="time_settings MAIN BYO_YOMI STONES")
def time_settings(s: Session, args) -> str:
    try:
        s.set_clock(timekeeping.time_settings(args))
    except ValueError as exc:
        raise GtpError(f"syntax error: {exc}") from None
    return ""


@command("time_left", args=3, needs=None, usage="time_left COLOR TIME STONES")
def time_left(s: Session, args) -> str:
    colour = parse_colour(args[0])
    seconds = parse_float(args[1], "time")
    stones = parse_int(args[2], "stones")
    try:
        s.clock = timekeeping.time_left(s.clock, colour, seconds, stones)
    except ValueError as exc:
        raise GtpError(f"syntax error: {exc}") from None
    if s.is_ready("player"):
        s.playing_player().time.reported(s.clock, colour)   # measures our last move's lag
    return ""


# ---- scoring ----------------------------------------------------------------------------------

@command("final_score", needs="player")
def final_score(s: Session, args) -> str:
    dead = moves.final_status(s)["dead"]
    return s.loader.format_result(s.game.score(dead))


@command("final_status_list", args=1, needs="player", usage="final_status_list dead|alive|seki")
def final_status_list(s: Session, args) -> str:
    status = args[0].lower()
    if status not in ("dead", "alive", "seki"):
        raise GtpError(f"syntax error: status must be dead, alive or seki, not {quote(args[0])}")
    stones = set(moves.final_status(s).get(status, []))
    return "\n".join(" ".join(s.fmt(lc) for lc in chain) for chain in strings_of(s, stones))


def strings_of(s: Session, stones: set[int]) -> list[list[int]]:
    """The given stones grouped into strings (connected same-colour stones), in board order."""
    g, n = s.game, s.size
    seen: set[int] = set()
    out = []
    for start in sorted(stones, key=lambda lc: loc_to_rc(lc, n)):
        if start in seen:
            continue
        colour = g.color_at(start)
        chain, todo = [], [start]
        seen.add(start)
        while todo:
            lc = todo.pop()
            chain.append(lc)
            r, c = loc_to_rc(lc, n)
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < n and 0 <= cc < n:
                    nb = loc(rr, cc, n)
                    if nb in stones and nb not in seen and g.color_at(nb) == colour:
                        seen.add(nb)
                        todo.append(nb)
        out.append(sorted(chain, key=lambda lc: loc_to_rc(lc, n)))
    return out


# ---- SGF ----------------------------------------------------------------------------------------

@command("loadsgf", args=(1, 2), usage="loadsgf FILE [MOVE_NUMBER]")
def loadsgf(s: Session, args) -> str:
    until = parse_int(args[1], "move number") if len(args) > 1 else None
    if until is not None and until < 1:
        raise GtpError("syntax error: move number must be at least 1")
    game, rules = s.loader.load_sgf(s, args[0], until)
    s.game, s.size, s.rules = game, game.size, rules
    s.last_snapshot = None
    moves.game_over(s)
    return COLOUR_NAMES[game.to_play]


@command("printsgf", args=(0, 1), usage="printsgf [FILE]")
def printsgf(s: Session, args) -> str:
    data = s.loader.dump_sgf(s)
    if args:
        try:
            with open(os.path.expanduser(args[0]), "wb") as f:
                f.write(data)
        except OSError as exc:
            raise GtpError(f"cannot write {quote(args[0])}: {exc.strerror}") from None
        return ""
    return "\n" + data.decode("utf-8")


# ---- regression -------------------------------------------------------------------------------

@command("reg_genmove", args=1, needs="player", long=True, pending_stops=False, usage="reg_genmove COLOR")
def reg_genmove(s: Session, args, call) -> str:
    colour = parse_colour(args[0])
    return s.fmt(moves.generate(s, colour, call.stop, play_it=False))


@command("cputime", needs=None)
def cputime(s: Session, args) -> str:
    return f"{time.process_time():.3f}"
