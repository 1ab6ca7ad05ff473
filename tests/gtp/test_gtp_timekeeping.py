"""gtp.timekeeping: the GTP time commands read into a Clock, and a Clock written back as
`time_settings` / `time_left` arguments (what engine-match sends)."""
from __future__ import annotations

import pytest

from goengine.engine.timecontrol import BLACK, WHITE, Clock
from goengine.gtp import timekeeping


def test_time_settings_gtp_semantics():
    assert timekeeping.time_settings(["0", "1", "0"]).system == "none"  # byo time > 0, stones 0: no limit
    assert timekeeping.time_settings(["600", "0", "0"]).system == "absolute"
    c = timekeeping.time_settings(["600", "300", "25"])
    assert c.system == "canadian" and c.stones == 25
    assert timekeeping.time_settings(["0", "30", "1"]).system == "simple"
    for bad in [("-1", "0", "0"), ("1", "-1", "0"), ("1", "1", "-1"), ("1", "1", "1.5"), ("x", "1", "1"),
                ("inf", "0", "0"), ("nan", "1", "1")]:
        with pytest.raises(ValueError):
            timekeeping.time_settings(list(bad))


def test_kgs_and_kata_parsing():
    assert timekeeping.kgs_time_settings(["none"]).system == "none"
    assert timekeeping.kgs_time_settings(["absolute", "600"]).main_time == 600
    assert timekeeping.kgs_time_settings("byoyomi 600 30 0".split()).system == "absolute"  # no periods
    assert timekeeping.kgs_time_settings("byoyomi 0 30 1".split()).system == "simple"
    assert timekeeping.kgs_time_settings("canadian 600 30 0".split()).system == "none"  # as time_settings
    assert timekeeping.kgs_time_settings("BYOYOMI 600 30 5".split()).periods == 5
    for bad in ["", "fischer 300 10", "byoyomi 600 30", "canadian 600 30 x", "absolute -5", "blitz 5"]:
        with pytest.raises(ValueError):
            timekeeping.kgs_time_settings(bad.split())
    assert timekeeping.KATA_KINDS == ("none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped",
                                      "byo-yomi")
    for kind in timekeeping.KATA_KINDS:
        args = {"none": "", "absolute": " 60", "byoyomi": " 60 5 3", "byo-yomi": " 60 5 3",
                "canadian": " 60 30 5", "fischer": " 60 2.5", "fischer-capped": " 60 2.5 120 -1"}[kind]
        timekeeping.kata_time_settings((kind + args).split())
    assert timekeeping.kata_time_settings("Byo-Yomi 10 5 3".split()).periods == 3
    c = timekeeping.kata_time_settings("fischer 60.5 2.5".split())
    assert (c.system, c.main_time, c.increment, c.main_time_cap) == ("fischer", 60.5, 2.5, None)
    c = timekeeping.kata_time_settings("fischer-capped 300 10 -1 8".split())
    assert c.main_time_cap is None and c.max_time_per_move == 8
    with pytest.raises(ValueError):
        timekeeping.kata_time_settings("fischer-capped 300 10 200 -1".split())  # cap below the main time
    with pytest.raises(ValueError):
        timekeeping.kata_time_settings("fischer 300".split())


def test_time_left():
    c = timekeeping.time_left(None, BLACK, 100, 0)  # no settings: read as absolute time
    assert c.system == "absolute" and c.state(BLACK).main_left == 100 and c.state(BLACK).reported
    c = timekeeping.kgs_time_settings("byoyomi 600 30 5".split())
    assert timekeeping.time_left(c, WHITE, 27, 3) is c
    st = c.state(WHITE)
    assert st.in_overtime and st.periods_left == 3 and st.period_left == 27
    with pytest.raises(ValueError):
        timekeeping.time_left(c, WHITE, -11, 0)


@pytest.mark.parametrize("clock,args", [
    (Clock.simple(2), (0, 2, 1)),
    (Clock.absolute(3), (3, 0, 0)),
    (Clock.canadian(600, 30.5, 5), (600, 30, 5)),
    (Clock.canadian(0.4, 0.2, 2), (1, 1, 2)),   # a positive time is never sent as 0
])
def test_time_settings_args_read_back(clock, args):
    assert timekeeping.time_settings_args(clock) == args
    back = timekeeping.time_settings([str(a) for a in args])
    assert back.system == clock.system


def test_time_settings_args_refuse_what_gtp_cannot_say():
    for clock in (Clock.byoyomi(60, 10, 3), Clock.fischer(60, 2), Clock.none()):
        with pytest.raises(ValueError):
            timekeeping.time_settings_args(clock)


def test_time_left_args_are_the_inverse_of_update():
    c = Clock.canadian(10, 5, 2)
    assert timekeeping.time_left_args(c, BLACK) == (10, 0)
    c.spend(BLACK, 3.5, lag=0)
    assert timekeeping.time_left_args(c, BLACK) == (6, 0)
    c.spend(BLACK, 7, lag=0)  # 6.5 s of main time, then 0.5 s of the first period
    assert timekeeping.time_left_args(c, BLACK) == (4, 1)
    c.spend(BLACK, 1, lag=0)  # the period's last stone: a new period
    assert timekeeping.time_left_args(c, BLACK) == (5, 2)
    c = Clock.byoyomi(0, 10, 3)
    c.spend(WHITE, 12, lag=0)
    assert timekeeping.time_left_args(c, WHITE) == (10, 2)
    for clock in (Clock.canadian(10, 5, 2), c):
        for colour in (BLACK, WHITE):
            seconds, n = timekeeping.time_left_args(clock, colour)
            before = clock.state(colour)
            clock.update(colour, seconds, n)
            after = clock.state(colour)
            assert (after.in_overtime, after.stones_left, after.periods_left) == (
                before.in_overtime, before.stones_left, before.periods_left)
