"""Sabaki's analysis parser (src/modules/analysis.js parseAnalysis, docs/gtp.md §2.1)
re-implemented, so that the tests read analysis lines exactly as Sabaki does (the `sabaki_parse`
fixture of tests/conftest.py)."""
from __future__ import annotations

import re

_PV = re.compile(r"(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$")


def sabaki_parse(line: str, kata: bool) -> list[dict]:
    """One analysis line as Sabaki reads it: [{vertex, visits, winrate (percent), scoreLead, pv}].

    Rules of src/modules/analysis.js: split on /\\s*info\\s+/; the trailing run of vertices is the
    PV (cut at the first pass), the token before it (`pv`) is dropped; the rest are key/value
    pairs; blocks whose `move` is not /^[A-Za-z]\\d+$/ are dropped. Winrate dialect: kata-* floats
    in [0, 1], lz-analyze integers in ten-thousandths."""
    out = []
    for segment in re.split(r"\s*info\s+", line)[1:]:
        x = segment.strip()
        m = _PV.search(x)
        if m is None:
            continue
        pv_text = m.group(0)
        cut = pv_text.find("pass")
        pv = [t for t in re.split(r"\s+", pv_text[:cut if cut >= 0 else len(pv_text)]) if len(t) >= 2]
        tokens = x[:m.start()].strip().split()[:-1]
        fields = dict(zip(tokens[0::2], tokens[1::2]))
        fields["pv"] = pv
        move = fields.get("move", "")
        if not re.match(r"^[A-Za-z]\d+$", move):
            continue
        winrate = float(fields["winrate"]) * (100 if kata else 0.01)
        out.append({"vertex": move, "visits": int(fields.get("visits", 0)), "winrate": winrate,
                    "scoreLead": float(fields["scoreLead"]) if "scoreLead" in fields else None,
                    "pv": pv, "fields": fields})
    return out
