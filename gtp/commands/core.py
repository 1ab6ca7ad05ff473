"""The GTP 2 core commands: administration, setup, play, genmove, undo, showboard."""
from __future__ import annotations

from importlib import metadata

from goengine.engine.coords import GTP_COLUMNS, MAX_SIZE, MIN_SIZE, loc_to_rc
from goengine.gtp import moves
from goengine.gtp.protocol import BLACK, COLOUR_NAMES, WHITE, GtpError, parse_colour, parse_float, \
    parse_vertex
from goengine.gtp.server import command
from goengine.gtp.session import Session


@command("protocol_version", needs=None)
def protocol_version(s: Session, args) -> str:
    return "2"


@command("name", needs=None)
def name(s: Session, args) -> str:
    return s.config.name


@command("version", needs=None)
def version(s: Session, args) -> str:
    try:
        v = metadata.version("goengine")
    except metadata.PackageNotFoundError:
        v = "0"
    sized = "".join(f", zero on {n}x{n}" for n in s.config.zero_sizes)
    return f"{v} ({s.config.search}{sized})"


@command("known_command", args=1, needs=None, usage="known_command NAME")
def known_command(s: Session, args) -> str:
    return "true" if args[0].lower() in s.server.registry.names() else "false"


@command("list_commands", needs=None)
def list_commands(s: Session, args) -> str:
    return "\n".join(s.server.registry.names())


@command("quit", needs=None)
def quit_(s: Session, args) -> str:
    s.server.request_quit()
    return ""


@command("boardsize", args=1, usage="boardsize SIZE")
def boardsize(s: Session, args) -> str:
    try:
        size = int(args[0])
    except ValueError:
        raise GtpError("unacceptable size") from None
    if not MIN_SIZE <= size <= MAX_SIZE or not moves.supports_size(s, size):
        raise GtpError("unacceptable size")
    s.new_game(size=size)
    return ""


@command("clear_board", needs="player")
def clear_board(s: Session, args) -> str:
    """Waits for the player and the warm-up: controllers send it before a game and start the
    clock at the first genmove, so no compile is charged to a move."""
    s.new_game()
    return ""


@command("komi", args=1, usage="komi FLOAT")
def komi(s: Session, args) -> str:
    value = parse_float(args[0], "komi")
    if abs(value) > 1000:
        raise GtpError("syntax error: komi out of range")
    s.set_rules(s.rules.with_komi(value))
    return ""


@command("play", args=2, usage="play COLOR VERTEX")
def play(s: Session, args) -> str:
    colour = parse_colour(args[0])
    lc = parse_vertex(args[1], s.size)
    moves.play(s, colour, lc)
    return ""


@command("genmove", args=1, needs="player", long=True, pending_stops=False, usage="genmove COLOR")
def genmove(s: Session, args, call) -> str:
    colour = parse_colour(args[0])
    return s.fmt(moves.generate(s, colour, call.stop))


@command("undo")
def undo(s: Session, args) -> str:
    try:
        s.game.undo()
    except IndexError:
        raise GtpError("cannot undo") from None
    s.last_snapshot = None
    return ""


@command("showboard")
def showboard(s: Session, args) -> str:
    return "\n" + board_text(s)


def board_text(s: Session) -> str:
    """The board as text rows, A19 at the top left; X black, O white, last move in parentheses."""
    g = s.game
    n = g.size
    grid = g.board_colors()
    last = g.last_move
    last_rc = loc_to_rc(last, n) if last is not None and last >= 0 else None
    letters = "   " + " ".join(GTP_COLUMNS[:n])
    rows = [letters]
    for r in range(n):
        cells = [{BLACK: "X", WHITE: "O"}.get(int(v), ".") for v in grid[r]]
        seps = [" "] * (n + 1)
        if last_rc is not None and last_rc[0] == r:
            seps[last_rc[1]], seps[last_rc[1] + 1] = "(", ")"
        line = "".join(seps[c] + cells[c] for c in range(n)) + seps[n]
        rows.append(f"{n - r:2d}{line.rstrip()}")
    rows.append(letters)
    cap_b, cap_w = g.captures
    rows.append(f"Move {g.move_number}, {COLOUR_NAMES[g.to_play]} to play, komi {g.komi:g}")
    rows.append(f"Captures: black {cap_b}, white {cap_w}")
    if g.history:
        colour, lc = g.history[-1]
        rows.append(f"Last move: {COLOUR_NAMES[colour]} {s.fmt(lc)}")
    return "\n".join(rows)
