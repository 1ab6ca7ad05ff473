"""Analysis output in the dialects GUIs parse (docs/gtp.md §2.1, KataGo GTP_Extensions.md).

    lz:    info move D4 visits 836 winrate 4656 prior 839 lcb 4640 order 0 pv D4 Q16 D16
    kata:  info move D4 visits 836 winrate 0.465600 scoreMean 1.2 scoreLead 1.2 prior 0.083900
           lcb 0.464000 order 0 pv D4 Q16 D16 [... ownership f f f ...]
           (the AlphaGo search adds valueWinrate and rolloutWinrate before prior)
    chat:  MALKOVICH:Visits 836 Winrate 46.56% ScoreLead 1.2 ScoreStdev 0.0 PV D4 Q16 D16   (stderr)

All `info` blocks of one report go on ONE line, joined by spaces; `pv` is the last key of each
block (Sabaki takes the trailing run of vertices as the PV). Pass candidates are left out of
`move` (Sabaki requires `[A-Za-z]\\d+`), as are 0-visit moves unless `minmoves` asks for them.
Values are from the side to move (the colour analysed).
"""
from __future__ import annotations

from dataclasses import dataclass

from goengine.engine.coords import RESIGN
from goengine.gtp.protocol import GtpError, parse_colour, quote

PV_MAX = 20


@dataclass
class AnalyzeArgs:
    colour: int | None = None       # None: the side to move
    interval: float = 0.0           # centiseconds between lines; 0: no periodic lines
    minmoves: int = 0
    maxmoves: int | None = None
    ownership: bool = False


def _number(text: str, key: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GtpError(f"syntax error: {key} needs a number, not {quote(text)}") from None
    if not value >= 0 or value == float("inf"):
        raise GtpError(f"syntax error: invalid {key} {quote(text)}")
    return value


def _bool(text: str, key: str) -> bool:
    t = text.lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    raise GtpError(f"syntax error: {key} needs true or false, not {quote(text)}")


def parse_analyze_args(args: list[str], kata: bool) -> AnalyzeArgs:
    """`[player] [interval] [interval N] [minmoves N] [maxmoves N] [ownership true]`, as LZ and
    KataGo accept them (`lz-analyze 50` and `lz-analyze W 50` both work)."""
    out = AnalyzeArgs()
    toks = list(args)
    if toks and toks[0].lower() in ("b", "w", "black", "white"):
        out.colour = parse_colour(toks.pop(0))
    if toks and _is_number(toks[0]):
        out.interval = _number(toks.pop(0), "interval")
    while toks:
        key = toks.pop(0).lower()
        if key in ("avoid", "allow"):
            if len(toks) < 3:
                raise GtpError(f"syntax error: {key} needs PLAYER VERTICES UNTILDEPTH")
            del toks[:3]      # accepted and ignored: the search has no move restrictions
            continue
        if not toks:
            raise GtpError(f"syntax error: {quote(key)} needs a value")
        value = toks.pop(0)
        if key == "interval":
            out.interval = _number(value, key)
        elif key == "minmoves":
            out.minmoves = int(_number(value, key))
        elif key == "maxmoves":
            out.maxmoves = int(_number(value, key))
        elif key == "ownership" and kata:
            out.ownership = _bool(value, key)
        elif key in ("ownershipstdev", "movesownership", "movesownershipstdev", "pvvisits",
                     "pvedgevisits", "rootinfo") and kata:
            _bool(value, key)   # accepted, not produced
        else:
            raise GtpError(f"syntax error: unknown key {quote(key)}")
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _moves_to_show(snapshot, minmoves: int, maxmoves: int | None) -> list:
    infos = sorted(snapshot.moves, key=lambda m: m.order)
    shown = [m for m in infos if m.move >= 0 and (m.visits > 0 or minmoves > 0)]
    if minmoves:
        visited = [m for m in shown if m.visits > 0]
        shown = visited + [m for m in shown if m.visits == 0][:max(0, minmoves - len(visited))]
    if maxmoves is not None:
        shown = shown[:maxmoves]
    return shown


def _pv(info, fmt) -> str:
    pv = list(info.pv or [])
    if not pv or pv[0] != info.move:
        pv.insert(0, info.move)
    return " ".join(fmt(lc) for lc in pv[:PV_MAX])


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, float(x)))


def format_lz(snapshot, fmt, minmoves: int = 0, maxmoves: int | None = None) -> str:
    blocks = []
    for order, m in enumerate(_moves_to_show(snapshot, minmoves, maxmoves)):
        blocks.append(
            f"info move {fmt(m.move)} visits {int(m.visits)} winrate {round(_clamp(m.winrate) * 10000)}"
            f" prior {round(_clamp(m.prior) * 10000)} lcb {round(_clamp(m.lcb) * 10000)}"
            f" order {order} pv {_pv(m, fmt)}")
    return " ".join(blocks)


def format_kata(snapshot, fmt, minmoves: int = 0, maxmoves: int | None = None,
                ownership: bool = False) -> str:
    blocks = []
    for order, m in enumerate(_moves_to_show(snapshot, minmoves, maxmoves)):
        score = ""
        lead = _score_lead(snapshot, m)
        if lead is not None:
            score = f" scoreMean {lead:.3f} scoreLead {lead:.3f}"
        # The AlphaGo search keeps the value network's and the rollouts' statistics apart
        # (W_v/N_v and W_r/N_r): both are shown, from the side to move like winrate.
        if m.value_winrate is not None:
            score += f" valueWinrate {_clamp(m.value_winrate):.6f}"
        if m.rollout_winrate is not None:
            score += f" rolloutWinrate {_clamp(m.rollout_winrate):.6f}"
        blocks.append(
            f"info move {fmt(m.move)} visits {int(m.visits)} winrate {_clamp(m.winrate):.6f}{score}"
            f" prior {_clamp(m.prior):.6f} lcb {_clamp(m.lcb):.6f} order {order} pv {_pv(m, fmt)}")
    line = " ".join(blocks)
    own = snapshot.ownership
    if ownership and own is not None:
        line += (" " if line else "") + "ownership " + " ".join(f"{float(v):.4f}" for v in own)
    return line


def _score_lead(snapshot, info) -> float | None:
    """Points the side to move leads by after `info`'s move: the move's own estimate where the
    search keeps one per move, else the root's (the searches' playout ownership minus komi)."""
    return snapshot.score_lead if info.score_lead is None else info.score_lead


# gtp2ogs 9 parses the analysis line as a variation only once some stderr line of the engine has
# named KataGo (PvOutputParser.detectEngine); the engine writes this before its first one. It must
# hold none of the chat prefixes gtp2ogs relays (DISCUSSION:, MALKOVICH:, MAIN:): docs/gtp.md §5.
CHAT_FORMAT_LINE = "goengine: the analysis after each move follows, in KataGo's format for gtp2ogs"


def chat_line(snapshot, fmt, move: int | None = None) -> str | None:
    """KataGo's analysis line for OGS, which gtp2ogs posts as a variation in the malkovich log
    (docs/gtp.md §2.3). The `MALKOVICH:` prefix, which gtp2ogs's KataGo pattern accepts as well as
    `CHAT:`, makes gtp2ogs relay the line as plain malkovich chat where it does not parse it.

    `move`: the move answered. Where the player chose another than the most visited (its pass
    rules) the line shows that move's own statistics, not the search's favourite; a resignation
    shows the favourite it gave up on."""
    infos = [m for m in sorted(snapshot.moves, key=lambda m: m.order) if m.visits > 0]
    if not infos:
        return None
    best = infos[0]
    if move is not None and move != best.move and move != RESIGN:
        best = next((m for m in snapshot.moves if m.move == move), None)
        if best is None:
            return None     # a move the search did not look at: nothing to show
    lead = _score_lead(snapshot, best)
    visits = snapshot.root_visits or sum(m.visits for m in infos)
    return (f"MALKOVICH:Visits {int(visits)} Winrate {100 * _clamp(best.winrate):.2f}%"
            f" ScoreLead {0.0 if lead is None else lead:.1f} ScoreStdev 0.0 PV {_pv(best, fmt)}")


def resign_line(snapshot) -> str:
    """The word to the opponent, in the game's main chat, that goes with a resignation."""
    infos = [m for m in sorted(snapshot.moves, key=lambda m: m.order) if m.visits > 0]
    if not infos:
        return "DISCUSSION:I resign. Thank you for the game."
    best = infos[0]
    lead = _score_lead(snapshot, best)
    behind = "" if lead is None else f", {-lead:.1f} points behind"
    return (f"DISCUSSION:I resign: my win rate is {100 * _clamp(best.winrate):.1f}%{behind}. "
            "Thank you for the game.")
