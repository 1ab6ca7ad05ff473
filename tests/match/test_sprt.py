"""The sequential probability ratio test (match.sprt): the Zero loop's gating decisions, and
`engine-match --sprt` stopping a real match of subprocesses once the test decides."""
from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from goengine.match.cli import main as cli_main
from goengine.match.sprt import Sprt, bounds, gate_decision, llr


def test_gate_decisions():
    assert gate_decision(70, 0, 30)[0] == "pass"
    assert gate_decision(30, 0, 70)[0] == "fail"
    assert gate_decision(52, 0, 48)[0] == "continue"
    assert gate_decision(30, 0, 0)[0] == "continue"               # under --gate-min
    assert gate_decision(40, 0, 0, min_games=20)[0] == "pass"
    assert gate_decision(220, 0, 180)[0] == "pass"                # at --gate-max: 55%
    assert gate_decision(219, 0, 181)[0] == "fail"
    assert gate_decision(50, 100, 50)[1] == pytest.approx(gate_decision(100, 0, 100)[1])


def test_the_match_test_decides_at_its_bounds():
    t = Sprt(0, 35)
    win, loss = llr(1, 0, 0), llr(0, 0, 1)
    assert win == pytest.approx(math.log((1 / (1 + 10 ** (-35 / 400))) / 0.5))
    lower, upper = bounds()
    n_win, n_loss = math.ceil(upper / win), math.ceil(lower / loss)   # 31 and 28
    assert t.decide(n_win - 1, 0, 0)[0] == "continue" and t.decide(n_win, 0, 0)[0] == "H1"
    assert t.decide(0, 0, n_loss - 1)[0] == "continue" and t.decide(0, 0, n_loss)[0] == "H0"
    assert t.decide(20, 0, 20)[0] == "continue"
    assert "H1 accepted: A is stronger by 35 Elo" in t.describe(n_win, 0, 0)
    assert "LLR 0.00" in t.describe(0, 0, 0) and "undecided" in t.describe(0, 0, 0)
    with pytest.raises(ValueError):
        Sprt(35, 0)


def test_engine_match_stops_when_the_test_decides(script, tmp_path):
    """A wins every game (B crashes at its first genmove): H1 after 31 games of at most 100."""
    a, b = " ".join(script + ["normal"]), " ".join(script + ["crash"])
    r = CliRunner().invoke(cli_main, ["--a", a, "--b", b, "--games", "100", "--referee", "none",
                                      "--sprt", "0,35", "--sgf-dir", str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert "game 31/100" in r.output and "game 32/100" not in r.output
    assert "LLR 2.97 in [-2.94, 2.94]: H1 accepted" in r.output
    assert "games 31: A 31 wins" in r.output


@pytest.mark.parametrize("value", ["35", "35,0", "a,b", "0,35,70"])
def test_bad_sprt_values_are_usage_errors(value):
    r = CliRunner().invoke(cli_main, ["--a", "true", "--b", "true", "--sprt", value])
    assert r.exit_code == 2 and "--sprt" in r.output
