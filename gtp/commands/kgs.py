"""KGS (kgsGtp) and KataGo extensions for servers: rules, time systems, cleanup, game over."""
from __future__ import annotations

from goengine.engine.rules import named_rules
from goengine.gtp import moves, timekeeping
from goengine.gtp.protocol import GtpError, parse_colour, quote
from goengine.gtp.server import command
from goengine.gtp.session import Session

# kgsGtp's four names (KataGo GTP_Extensions.md `kgs-rules`), plus the other names engine.rules knows.
KGS_RULES = ("chinese", "japanese", "aga", "new_zealand")


@command("kgs-rules", args=1, usage="kgs-rules chinese|japanese|aga|new_zealand")
def kgs_rules(s: Session, args) -> str:
    try:
        rules = named_rules(args[0], s.rules.komi)
    except ValueError:
        raise GtpError(f"unknown rules {quote(args[0])}") from None
    s.set_rules(rules)
    return ""


@command("kgs-time_settings", args=(1, 4), needs=None,
         usage="kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN PERIOD STONES")
def kgs_time_settings(s: Session, args) -> str:
    try:
        s.set_clock(timekeeping.kgs_time_settings(args))
    except ValueError as exc:
        raise GtpError(f"syntax error: {exc}") from None
    return ""


@command("kata-list_time_settings", needs=None)
def kata_list_time_settings(s: Session, args) -> str:
    return " ".join(timekeeping.KATA_KINDS)


@command("kata-time_settings", args=(1, 5), needs=None,
         usage="kata-time_settings KIND [MAIN [PERIOD|INCREMENT [PERIODS|STONES|CAP [MAXMOVE]]]]")
def kata_time_settings(s: Session, args) -> str:
    try:
        s.set_clock(timekeeping.kata_time_settings(args))
    except ValueError as exc:
        raise GtpError(f"syntax error: {exc}") from None
    return ""


@command("kgs-genmove_cleanup", args=1, needs="player", long=True, pending_stops=False, usage="kgs-genmove_cleanup COLOR")
def kgs_genmove_cleanup(s: Session, args, call) -> str:
    colour = parse_colour(args[0])
    return s.fmt(moves.generate(s, colour, call.stop, cleanup=True))


@command("kgs-game_over", needs=None)
def kgs_game_over(s: Session, args) -> str:
    moves.game_over(s)
    return ""
