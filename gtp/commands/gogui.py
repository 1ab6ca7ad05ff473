"""GoGui extensions (analyze.xml, interrupt.xml): the analyze menu, its commands, parameters.

    gogui-analyze_commands  the menu: `type/label/command` lines
    gogui-interrupt         listed so that GoGui writes `# interrupt` to stop a running command
    gogui-best_moves        gfx: the best moves labelled with their winrate, the PV as TEXT
    gogui-visit_heatmap     gfx: INFLUENCE squares sized by each candidate's share of the most
                            visits (0..1, drawn black), LABEL its visit count
    gogui-ownership         dboard: expected ownership, +1 black ... -1 white, top row first
    goengine-set_param      param: `[type] key value` lines, or `goengine-set_param KEY VALUE`
    goengine-get_param KEY  one value
    kata-set-param KEY VALUE, kata-get-param KEY, kata-list-params
                            the same parameters for tools written for KataGo; its names maxVisits,
                            maxPlayouts, maxTime and cpuctExploration are understood too

The search behind the three analysis commands runs for the `gogui_search_seconds` parameter, or
until any input line (GoGui's `# interrupt`).
"""
from __future__ import annotations

import sys
import threading

from goengine.gtp import moves
from goengine.gtp.protocol import GtpError, parse_colour, quote
from goengine.gtp.server import command
from goengine.gtp.session import Session

ANALYZE_COMMANDS = (
    "gfx/Best Moves/gogui-best_moves",
    "gfx/Visit Heatmap/gogui-visit_heatmap",
    "dboard/Ownership/gogui-ownership",
    "plist/Dead Stones/final_status_list dead",
    "string/Final Score/final_score",
    "param/Engine Settings/goengine-set_param",
)
TOP_MOVES = 8


@command("gogui-analyze_commands", needs=None)
def gogui_analyze_commands(s: Session, args) -> str:
    return "\n".join(ANALYZE_COMMANDS)


@command("gogui-interrupt", needs=None)
def gogui_interrupt(s: Session, args) -> str:
    return ""


def _search(s: Session, args, call, live_gfx: bool = False):
    """Analyse for gogui_search_seconds or until interrupted; the final Snapshot."""
    colour = parse_colour(args[0]) if args else s.game.to_play
    done = threading.Event()
    seconds = float(s.params["gogui_search_seconds"])

    def watch() -> None:
        call.stop.wait(seconds)
        done.set()

    threading.Thread(target=watch, name="gogui-timer", daemon=True).start()

    def report(snap) -> None:
        if live_gfx:
            labels = _labels(s, snap)
            if labels:
                print(f"gogui-gfx: LABEL {labels}", file=sys.stderr, flush=True)

    snap = moves.analyze(s, colour, done, report, 0.5)
    if live_gfx:
        print("gogui-gfx: CLEAR", file=sys.stderr, flush=True)
    return snap


def _top(snap) -> list:
    return [m for m in sorted(snap.moves, key=lambda m: m.order) if m.visits > 0 and m.move >= 0]


def _labels(s: Session, snap) -> str:
    return " ".join(f"{s.fmt(m.move)} {100 * m.winrate:.0f}%" for m in _top(snap)[:TOP_MOVES])


@command("gogui-best_moves", args=(0, 1), needs="player", long=True, usage="gogui-best_moves [COLOR]")
def gogui_best_moves(s: Session, args, call) -> str:
    snap = _search(s, args, call, live_gfx=True)
    top = _top(snap)
    if not top:
        return "TEXT no move searched"
    best = top[0]
    pv = " ".join(s.fmt(lc) for lc in ([best.move] + [x for x in best.pv if x != best.move])[:12])
    return "\n".join([
        f"LABEL {_labels(s, snap)}",
        f"MARK {s.fmt(best.move)}",
        f"TEXT best {s.fmt(best.move)} {100 * best.winrate:.1f}% ({best.visits} visits) PV {pv}",
    ])


@command("gogui-visit_heatmap", args=(0, 1), needs="player", long=True,
         usage="gogui-visit_heatmap [COLOR]")
def gogui_visit_heatmap(s: Session, args, call) -> str:
    snap = _search(s, args, call)
    top = _top(snap)
    if not top:
        return "TEXT no move searched"
    most = max(m.visits for m in top)
    return "\n".join([
        # .4g, not .3f: one visit of thousands is a small square, not a zero
        "INFLUENCE " + " ".join(f"{s.fmt(m.move)} {m.visits / most:.4g}" for m in top),
        "LABEL " + " ".join(f"{s.fmt(m.move)} {m.visits}" for m in top),
        f"TEXT {snap.root_visits} visits",
    ])


@command("gogui-ownership", args=(0, 1), needs="player", long=True, usage="gogui-ownership [COLOR]")
def gogui_ownership(s: Session, args, call) -> str:
    snap = _search(s, args, call)
    own = snap.ownership_black
    if own is None:
        own = moves.ownership_black(s)
    rows = [" ".join(f"{float(v):.2f}" for v in row) for row in own]
    return "\n" + "\n".join(rows)


def _all_params(s: Session) -> dict:
    """Every parameter, once the player is loaded; the server's own if loading failed."""
    try:
        s.wait_ready("player")
    except GtpError:
        pass
    return moves.params(s)


def _param_line(key: str, value) -> str:
    if isinstance(value, bool):
        return f"[bool] {key} {int(value)}"
    return f"[string] {key} {'none' if value is None else value}"


@command("goengine-set_param", args=(0, 2), needs=None, usage="goengine-set_param [NAME VALUE]")
def goengine_set_param(s: Session, args) -> str:
    if not args:
        return "\n".join(_param_line(k, v) for k, v in sorted(_all_params(s).items()))
    if len(args) != 2:
        raise GtpError("wrong number of arguments: usage goengine-set_param [NAME VALUE]")
    moves.set_param(s, args[0], args[1])
    return ""


@command("kata-set-param", args=2, needs=None, usage="kata-set-param NAME VALUE")
def kata_set_param(s: Session, args) -> str:
    moves.set_param(s, args[0], args[1])
    return ""


@command("kata-list-params", needs=None)
def kata_list_params(s: Session, args) -> str:
    return " ".join(sorted(_all_params(s)))


@command("kata-get-param", args=1, needs=None, usage="kata-get-param NAME")
def kata_get_param(s: Session, args) -> str:
    return goengine_get_param(s, args)


@command("goengine-get_param", args=1, needs=None, usage="goengine-get_param NAME")
def goengine_get_param(s: Session, args) -> str:
    name = moves.param_name(args[0])
    values = moves.params(s)
    if name not in values and not s.is_ready("player"):
        s.wait_ready("player")
        values = moves.params(s)
    if name not in values:
        raise GtpError(f"unknown parameter {quote(args[0])}")
    value = values[name]
    return str(int(value) if isinstance(value, bool) else ("none" if value is None else value))
