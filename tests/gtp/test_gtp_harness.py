"""The GTP test harness's own tests: Sabaki's analysis parser (tests/sabaki_analysis.py) on
KataGo's transcripts."""
from __future__ import annotations

def test_sabaki_parser_reads_the_katago_transcripts(sabaki_parse):
    lz = ("info move C4 visits 39 winrate 5811 prior 3791 lcb 5456 order 0 pv C4 E7 G6 C5 B5 D4 C3 G8 "
          "info move F7 visits 39 winrate 5811 prior 3791 lcb 5456 order 1 pv F7 C5 D3 E7 E8 F6 G7 B3")
    got = sabaki_parse(lz, kata=False)
    assert [g["vertex"] for g in got] == ["C4", "F7"]
    assert abs(got[0]["winrate"] - 58.11) < 1e-9 and got[0]["pv"][:2] == ["C4", "E7"]
    kata = ("info move C4 visits 47 edgeVisits 47 utility 0.155838 winrate 0.573411 scoreMean 0.735614 "
            "scoreStdev 12.0119 scoreLead 0.735614 scoreSelfplay 1.0948 prior 0.340396 lcb 0.540641 "
            "utilityLcb 0.0640797 weight 47 order 0 pv C4 E7 G7 C5 B5 D4 C3 info move pass visits 3 "
            "winrate 0.1 order 1 pv pass C4")
    got = sabaki_parse(kata, kata=True)
    assert [g["vertex"] for g in got] == ["C4"]
    assert got[0]["scoreLead"] == 0.735614 and abs(got[0]["winrate"] - 57.3411) < 1e-9


def test_sabaki_parser_cuts_the_pv_at_pass(sabaki_parse):
    got = sabaki_parse("info move D4 visits 3 winrate 5000 order 0 pv D4 pass Q16", kata=False)
    assert got[0]["pv"] == ["D4"]
