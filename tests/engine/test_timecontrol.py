"""engine.timecontrol: budgets for the clocks the GTP clock commands set (every row of the gtp2ogs
clock table in docs/gtp.md §2.3, read through gtp.timekeeping as the server reads them), the
clock's own tracking, and simulated games against a server clock."""
from __future__ import annotations

import math
import random

import pytest

from goengine.engine.timecontrol import BLACK, WHITE, Clock, LagEstimator, Leaders, MoveTimer, \
    Stopwatch, TimeConfig, TimeManager
from goengine.gtp import timekeeping

CFG = TimeConfig()
TM = TimeManager(CFG)


# --------------------------------------------------------------------------- a GTP front end in miniature
COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


def apply_gtp(commands: list[str], clock: Clock | None = None) -> Clock | None:
    """Feed clock commands to Clock the way the GTP server does."""
    for line in commands:
        cmd, *args = line.split()
        if cmd == "time_settings":
            assert len(args) == 3
            clock = timekeeping.time_settings(args)
        elif cmd == "kgs-time_settings":
            clock = timekeeping.kgs_time_settings(args)
        elif cmd == "kata-time_settings":
            clock = timekeeping.kata_time_settings(args)
        elif cmd == "time_left":
            assert clock is not None
            clock = timekeeping.time_left(clock, COLOURS[args[0]], float(args[1]), int(args[2]))
        else:
            raise AssertionError(line)
    return clock


# --------------------------------------------------------------------------- table rows (section 2.3)
def test_kgs_byoyomi_main_time_and_periods():
    clock = apply_gtp(["kgs-time_settings byoyomi 600 30 5", "time_left black 412 0"])
    assert clock.system == "byoyomi" and (clock.main_time, clock.period_time, clock.periods) == (600, 30, 5)
    st = clock.state(BLACK)
    assert not st.in_overtime and st.main_left == 412 and st.periods_left == 5
    b, hard = TM.limits(clock, BLACK, 40, 19)
    # main time plus at most one period minus the lag: never loses a period
    assert 5 < b <= hard <= 412 + 30 - 1
    # overtime: the N of time_left is PERIODS left
    apply_gtp(["time_left black 27 3"], clock)
    st = clock.state(BLACK)
    assert st.in_overtime and st.periods_left == 3 and st.period_left == 27 and st.stones_left == 1
    b, hard = TM.limits(clock, BLACK, 200, 19)
    assert 20 < b <= hard <= 27 - CFG.lag_initial


def test_plain_byoyomi_fallback_is_canadian_one_stone():
    clock = apply_gtp(["time_settings 720 30 1", "time_left black 412 0"])
    assert clock.system == "canadian" and (clock.main_time, clock.period_time, clock.stones) == (720, 30, 1)
    b, hard = TM.limits(clock, BLACK, 40, 19)
    assert 5 < b <= hard <= 412 + 30 - 1
    # the last period: the N of plain time_left is STONES left
    apply_gtp(["time_left black 27 1"], clock)
    st = clock.state(BLACK)
    assert st.in_overtime and st.stones_left == 1 and st.period_left == 27
    b, hard = TM.limits(clock, BLACK, 200, 19)
    assert 20 < b <= hard <= 27 - CFG.lag_initial


@pytest.mark.parametrize("settings", ["kgs-time_settings canadian 600 300 25", "time_settings 600 300 25"])
def test_canadian(settings):
    clock = apply_gtp([settings, "time_left black 580 0", "time_left white 600 0"])
    assert clock.system == "canadian" and (clock.main_time, clock.period_time, clock.stones) == (600, 300, 25)
    assert clock.state(WHITE).main_left == 600
    b = TM.budget(clock, BLACK, 20, 19)
    assert 3 < b < 580
    apply_gtp(["time_left black 240 12"], clock)
    st = clock.state(BLACK)
    assert st.in_overtime and st.stones_left == 12 and st.period_left == 240
    b, hard = TM.limits(clock, BLACK, 150, 19)
    # the period divided by the stones left, lag kept on EVERY stone (LZ#2296)
    assert b == pytest.approx(240 / 12 - CFG.lag_initial)
    assert b <= hard <= 240 - 12 * CFG.lag_initial
    # one stone left in the period: (almost) all of it
    apply_gtp(["time_left black 17 1"], clock)
    assert TM.budget(clock, BLACK, 150, 19) == pytest.approx(16)


def test_fischer_capped_kata():
    clock = apply_gtp(["kata-time_settings fischer-capped 300 10 600 -1", "time_left black 290 0"])
    assert clock.system == "fischer"
    assert (clock.main_time, clock.increment, clock.main_time_cap, clock.max_time_per_move) == (300, 10, 600, None)
    b, hard = TM.limits(clock, BLACK, 30, 19)
    # about remaining / moves left + most of the increment
    assert 9 < b < 20 and b <= hard <= 290 - 1
    # time that the cap would throw away is spent
    apply_gtp(["time_left black 598 0"], clock)
    assert TM.budget(clock, BLACK, 240, 19) >= 598 + 10 - 600
    # max time per move is honoured
    clock = apply_gtp(["kata-time_settings fischer-capped 300 10 -1 8", "time_left black 290 0"])
    assert clock.main_time_cap is None and clock.max_time_per_move == 8
    b, hard = TM.limits(clock, BLACK, 100, 19)
    assert b <= hard <= 8 - CFG.lag_initial


def test_fischer_plain_fallback_fake_canadian():
    # gtp2ogs: time_settings <initial - inc> <inc> 1, then time_left <left - inc> 0
    clock = apply_gtp(["time_settings 290 10 1", "time_left black 280 0"])
    assert clock.system == "canadian" and clock.stones == 1
    b, hard = TM.limits(clock, BLACK, 30, 19)
    assert 5 < b <= hard <= 290 - CFG.lag_initial  # 290 s are really on the clock
    # left <= inc: time_left <left> 1
    apply_gtp(["time_left black 7 1"], clock)
    assert TM.hard_limit(clock, BLACK, 100, 19) <= 7 - CFG.lag_initial


def test_simple():
    clock = apply_gtp(["time_settings 0 30 1", "time_left black 30 1"])
    assert clock.system == "simple" and clock.period_time == 30
    b, hard = TM.limits(clock, BLACK, 100, 19)
    assert b == hard == pytest.approx(30 - max(CFG.lag_initial, CFG.lag_fraction * 30))
    apply_gtp(["time_left black 10 1"], clock)  # the server says less than the full period is left
    assert TM.budget(clock, BLACK, 100, 19) == pytest.approx(10 - max(CFG.lag_initial, 1.5))


def test_absolute():
    clock = apply_gtp(["time_settings 1200 0 0", "time_left black 1100 0"])
    assert clock.system == "absolute" and clock.main_time == 1200
    b, hard = TM.limits(clock, BLACK, 60, 19)
    assert 4 < b < 20 and b <= hard <= 1100
    apply_gtp(["time_left black 3 0"], clock)
    assert TM.hard_limit(clock, BLACK, 300, 19) < 3


def test_gtp2ogs_6x_transcript_canadian():
    clock = apply_gtp(["kgs-time_settings canadian 300 6 7", "time_left black 298 0", "time_left white 290 0"])
    b, hard = TM.limits(clock, WHITE, 3, 9)
    assert 1 < b <= hard < 290


# --------------------------------------------------------------------------- the model
def test_constructors_normalise_and_validate():
    assert Clock.byoyomi(600, 30, 0).system == "absolute"  # no periods
    assert Clock.byoyomi(0, 30, 1).system == "simple"
    assert Clock.canadian(0, 30, 1).system == "simple"
    assert Clock.canadian(600, 300, 25).stones == 25
    for bad in [lambda: Clock.canadian(600, 30, 0), lambda: Clock.absolute(-1), lambda: Clock.absolute("600"),
                lambda: Clock.byoyomi(600, 30, 1.5), lambda: Clock.absolute(math.inf),
                lambda: Clock.fischer(300, 10, main_time_cap=200)]:
        with pytest.raises(ValueError):
            bad()


def test_update_validation():
    c = Clock.byoyomi(600, 30, 5)
    c.update(WHITE, -2, 0)  # slightly negative is tolerated (drift corrections)
    assert c.state(WHITE).main_left == 0
    c.update(WHITE, 20, 9)  # more periods than the settings: clamped
    assert c.state(WHITE).periods_left == 5
    for bad in [(WHITE, -11, 0), (WHITE, 10, -1), ("w", 10, 0), (3, 10, 0), (BLACK, math.nan, 0), (BLACK, "10", 0)]:
        with pytest.raises(ValueError):
            c.update(*bad)


def test_no_clock_and_overrides():
    assert TM.budget(None, BLACK, 0, 19) == CFG.default_time_per_move
    assert TM.budget(Clock.none(), WHITE, 50, 9) == CFG.default_time_per_move
    tm = TimeManager(TimeConfig(fixed_time_per_move=3.0))
    assert tm.budget(None, BLACK, 0, 19) == 3.0
    clock = apply_gtp(["time_settings 0 30 1", "time_left black 2 1"])
    assert tm.budget(clock, BLACK, 0, 19) < 2  # the fixed time never beats the clock
    tm = TimeManager(TimeConfig(max_time_per_move=4.0))
    clock = Clock.absolute(100000)
    b, hard = tm.limits(clock, BLACK, 100, 19)
    assert b <= hard <= 4.0
    tm = TimeManager(TimeConfig(default_time_per_move=math.inf))
    assert tm.budget(None, BLACK, 0, 19) == math.inf
    with pytest.raises(ValueError):
        TimeConfig(lag_margin=-1)


def test_bell_and_moves_left():
    w = [TM.weight(m, 19) for m in range(0, 300)]
    peak = max(range(300), key=lambda m: w[m])
    assert 80 <= peak <= 130
    assert w[100] > 1.5 * w[5]
    assert TM.moves_left(0, 19) > TM.moves_left(100, 19) >= TM.moves_left(400, 19) > 0
    assert TM.moves_left(0, 9) < TM.moves_left(0, 19)


# --------------------------------------------------------------------------- own tracking (spend)
def test_spend_byoyomi_periods():
    c = Clock.byoyomi(10, 30, 3)
    c.spend(BLACK, 8, lag=0)
    assert c.state(BLACK).main_left == 2 and not c.state(BLACK).in_overtime
    c.spend(BLACK, 20, lag=0)  # 2 s main, 18 s into the first period: period kept
    st = c.state(BLACK)
    assert st.in_overtime and st.periods_left == 3 and st.period_left == 30
    c.spend(BLACK, 45, lag=0)  # one period lost
    assert c.state(BLACK).periods_left == 2 and not c.state(BLACK).flagged
    c.spend(BLACK, 60, lag=0)  # both remaining periods used up
    assert c.state(BLACK).flagged
    assert not c.state(WHITE).flagged


def test_spend_canadian_stones_reset():
    c = Clock.canadian(5, 60, 3)
    c.spend(WHITE, 10, lag=0)  # 5 s main, then 5 s of the first stone's period
    st = c.state(WHITE)
    assert st.in_overtime and st.stones_left == 2 and st.period_left == pytest.approx(55)
    c.spend(WHITE, 20, lag=0)
    c.spend(WHITE, 20, lag=0)  # third stone: a new period
    st = c.state(WHITE)
    assert st.stones_left == 3 and st.period_left == 60 and not st.flagged
    c.spend(WHITE, 30, lag=0)
    c.spend(WHITE, 31, lag=0)
    assert c.state(WHITE).flagged


def test_spend_fischer_and_simple_and_absolute():
    c = Clock.fischer(20, 5, main_time_cap=22)
    c.spend(BLACK, 1, lag=0)
    assert c.state(BLACK).main_left == 22
    c = Clock.fischer(20, 5, max_time_per_move=3)
    c.spend(BLACK, 4, lag=0)
    assert c.state(BLACK).flagged
    c = Clock.simple(10)
    c.spend(BLACK, 9.9, lag=0)
    assert c.state(BLACK).period_left == 10 and not c.state(BLACK).flagged
    c.spend(BLACK, 10.1, lag=0)
    assert c.state(BLACK).flagged
    c = Clock.absolute(10)
    c.spend(BLACK, 4, lag=0)
    assert c.state(BLACK).main_left == 6
    c.update(BLACK, 8, 0)  # time_left is authoritative
    assert c.state(BLACK).main_left == 8 and c.state(BLACK).reported
    c.reset()
    assert c.state(BLACK).main_left == 10


def test_spend_returns_the_overrun_and_forgives_up_to_the_tolerance():
    # what the engine-match referee does: measured time, no lag added, a tolerance for the pipe
    c = Clock.canadian(3, 5, 2)
    assert c.spend(BLACK, 2, lag=0, tolerance=1) == 0.0
    assert c.spend(BLACK, 6.5, lag=0, tolerance=1) == pytest.approx(0.5)  # 1 s main + 5 s period + 0.5
    st = c.state(BLACK)
    assert not st.flagged and st.in_overtime and st.period_left == 0 and st.stones_left == 1
    assert c.spend(BLACK, 1.5, lag=0, tolerance=1) == pytest.approx(1.5)  # nothing was left
    assert c.state(BLACK).flagged
    assert c.spend(BLACK, 100, lag=0) == 0.0  # a flagged clock stays as it fell
    c = Clock.absolute(3)
    assert c.spend(WHITE, 3.5, lag=0, tolerance=1) == pytest.approx(0.5) and not c.state(WHITE).flagged
    assert c.spend(WHITE, 0.9, lag=0, tolerance=1) == pytest.approx(0.9) and not c.state(WHITE).flagged
    assert c.spend(WHITE, 1.1, lag=0, tolerance=1) == pytest.approx(1.1) and c.state(WHITE).flagged
    c = Clock.byoyomi(0, 10, 2)
    assert c.spend(BLACK, 15, lag=0, tolerance=1) == 0.0  # the first period is lost, the game is not
    assert c.spend(BLACK, 10.5, lag=0, tolerance=1) == pytest.approx(0.5)
    st = c.state(BLACK)
    assert not st.flagged and st.periods_left == 1 and st.period_left == 10
    c = Clock.simple(2)
    assert c.spend(BLACK, 50, lag=0, tolerance=math.inf) == pytest.approx(48)  # advisory clock
    assert not c.state(BLACK).flagged and c.state(BLACK).period_left == 2


def test_spend_charges_assumed_lag():
    c = Clock.absolute(100)
    c.spend(BLACK, 4)
    assert c.state(BLACK).main_left == pytest.approx(100 - 4 - Clock.assumed_lag)
    TimeManager(TimeConfig(lag_margin=0.5)).charge(c, BLACK, 4)
    assert c.state(BLACK).main_left == pytest.approx(100 - 8 - Clock.assumed_lag - 0.5)
    TM.charge(None, BLACK, 4)  # no clock: nothing to do


def test_stopwatch():
    t = iter([1.0, 3.5])
    sw = Stopwatch(now=lambda: next(t))
    sw.start()
    assert sw.stop() == 2.5
    assert sw.stop() == 0.0


# --------------------------------------------------------------------------- simulated games
class OGSClock:
    """A server clock for one player, advanced like OGS: `thinking_time` is main time."""

    def __init__(self, system: str, **tc):
        self.system = system
        self.tc = tc
        self.flagged = False
        self.spent = 0.0
        if system == "byoyomi":
            self.thinking, self.periods = tc["main_time"], tc["periods"]
        elif system == "canadian":
            self.thinking, self.moves_left, self.block = tc["main_time"], 0, 0.0
        elif system == "fischer":
            self.thinking = tc["initial_time"]
        elif system == "simple":
            self.thinking = 0.0
        elif system == "absolute":
            self.thinking = tc["total_time"]

    def move(self, t: float) -> None:
        self.spent += t
        tc = self.tc
        if self.system == "byoyomi":
            if t <= self.thinking:
                self.thinking -= t
                return
            t -= self.thinking
            self.thinking = 0.0
            while t >= tc["period_time"]:
                t -= tc["period_time"]
                self.periods -= 1
                if self.periods <= 0:
                    self.flagged = True
                    return
        elif self.system == "canadian":
            if self.moves_left == 0:  # main time
                if t <= self.thinking:
                    self.thinking -= t
                    return
                t -= self.thinking
                self.thinking = 0.0
                self.moves_left, self.block = tc["stones_per_period"], tc["period_time"]
            self.block -= t
            if self.block < 0:
                self.flagged = True
                return
            self.moves_left -= 1
            if self.moves_left == 0:
                self.moves_left, self.block = tc["stones_per_period"], tc["period_time"]
        elif self.system == "fischer":
            self.thinking -= t
            if self.thinking < 0:
                self.flagged = True
                return
            self.thinking = min(self.thinking + tc["time_increment"], tc["max_time"])
        elif self.system == "simple":
            if t > tc["per_move"]:
                self.flagged = True
        elif self.system == "absolute":
            self.thinking -= t
            if self.thinking < 0:
                self.flagged = True

    def main_used(self) -> float:
        start = self.tc.get("main_time", self.tc.get("total_time", self.tc.get("initial_time", 0.0)))
        return start - max(self.thinking, 0.0)


def load_clock(c: OGSClock, color: str, mode: str) -> list[str]:
    """What gtp2ogs `Bot.loadClock` sends for one colour (clock offsets 0): mode "kgs" for a bot that lists
    kgs-time_settings and kata-list_time_settings with fischer-capped (ours), "plain" otherwise."""
    tc = c.tc
    fl = lambda x: str(math.floor(max(x, 0)))  # noqa: E731
    if c.system == "byoyomi":
        if mode == "kgs":
            tl = c.thinking if c.thinking > 0 else tc["period_time"]
            n = "0" if c.thinking > 0 else str(c.periods)
            return [f"kgs-time_settings byoyomi {tc['main_time']} {tc['period_time']} {tc['periods']}",
                    f"time_left {color} {fl(tl)} {n}"]
        if c.thinking > 0:
            tl = c.thinking + tc["period_time"] * c.periods
        else:
            tl = tc["period_time"] + tc["period_time"] * (c.periods - 1)
        cmds = [f"time_settings {tc['main_time'] + (tc['periods'] - 1) * tc['period_time']} {tc['period_time']} 1"]
        if tl <= tc["period_time"]:
            return cmds + [f"time_left {color} {fl(tl)} 1"]
        return cmds + [f"time_left {color} {math.floor(tl - tc['period_time'])} 0"]
    if c.system == "canadian":
        tl, stones = c.thinking, 0
        if tl <= 0:
            stones, tl = c.moves_left, tl + c.block
        cmd = "kgs-time_settings canadian" if mode == "kgs" else "time_settings"
        return [f"{cmd} {tc['main_time']} {tc['period_time']} {tc['stones_per_period']}",
                f"time_left {color} {fl(tl)} {stones}"]
    if c.system == "fischer":
        if mode == "kgs":
            return [f"kata-time_settings fischer-capped {tc['initial_time']} {tc['time_increment']} {tc['max_time']} -1",
                    f"time_left {color} {fl(c.thinking)} 0"]
        tl, periods = c.thinking - tc["time_increment"], 0
        if tl <= 0:
            periods, tl = 1, tl + tc["time_increment"]
        cmd = "kgs-time_settings canadian" if mode == "kgs-nokata" else "time_settings"
        return [f"{cmd} {tc['initial_time'] - tc['time_increment']} {tc['time_increment']} 1",
                f"time_left {color} {fl(tl)} {periods}"]
    if c.system == "simple":
        return [f"time_settings 0 {tc['per_move']} 1", f"time_left {color} {fl(tc['per_move'])} 1"]
    assert c.system == "absolute"
    return [f"time_settings {tc['total_time']} 0 0", f"time_left {color} {fl(c.thinking)} 0"]


SYSTEMS_19 = {
    "byoyomi": dict(main_time=600, period_time=30, periods=5),
    "canadian": dict(main_time=600, period_time=300, stones_per_period=25),
    "fischer": dict(initial_time=300, time_increment=10, max_time=600),
    "simple": dict(per_move=30),
    "absolute": dict(total_time=1200),
}
CASES = [(s, m) for s in SYSTEMS_19 for m in ("kgs", "plain")] + [("fischer", "kgs-nokata")]


def play_game(system, tc, mode, size=19, plies=250, seed=0, extend_every=0, self_tracking=False,
              max_lag=CFG.lag_initial, tm=None, searcher=None):
    """The engine plays both colours for `plies` moves. Before each genmove the clock commands are
    sent as gtp2ogs does (or, self-tracking, only the settings once and then Clock.spend). The engine
    spends exactly the budget (or the hard limit every `extend_every` moves, or what
    `searcher(MoveTimer, rng)` takes) and the server charges that plus a random lag below `max_lag`
    (the margin: 1 s before any lag is measured). A time manager of its own unless `tm` is given:
    what it learns of the controller stays in this game."""
    tm = tm if tm is not None else TimeManager(CFG)
    rng = random.Random(seed)
    server = {"black": OGSClock(system, **tc), "white": OGSClock(system, **tc)}
    spent = []
    own_clock = apply_gtp(load_clock(server["black"], "black", mode)[:1]) if self_tracking else None
    for ply in range(plies):
        color = "black" if ply % 2 == 0 else "white"
        if self_tracking:
            clock = own_clock
        else:
            clock = apply_gtp(load_clock(server["black"], "black", mode) + load_clock(server["white"], "white", mode)[1:])
        budget, hard = tm.limits(clock, COLOURS[color], ply, size)
        assert 0 < budget <= hard
        think = hard if extend_every and ply % extend_every == extend_every - 1 else budget
        if searcher is not None:
            think = searcher(tm.timer(clock, COLOURS[color], ply, size), rng)
        if self_tracking:
            if ply % 4 < 2:
                clock.spend(COLOURS[color], think)  # what engine.player does: the measured time (+ assumed lag)
            else:
                tm.charge(clock, COLOURS[color], think)
        server[color].move(think + rng.uniform(0, 0.95 * max_lag))
        assert not server[color].flagged, (system, mode, ply, think, clock)
        spent.append(think)
    return server, spent


@pytest.mark.parametrize("system,mode", CASES)
def test_simulated_game_never_loses_on_time(system, mode):
    tc = SYSTEMS_19[system]
    for seed in range(3):
        server, spent = play_game(system, tc, mode, seed=seed)
        for color in ("black", "white"):
            s = server[color]
            if system in ("byoyomi", "canadian", "absolute"):
                assert s.main_used() > 0.5 * s.tc.get("main_time", s.tc.get("total_time")), (system, mode)
            elif system == "fischer":
                # at least half of the time the clock ever gave (initial + increments) is used
                assert s.spent > 0.5 * (tc["initial_time"] + 125 * tc["time_increment"]), (system, mode)
            else:
                assert s.spent > 0.9 * 125 * (tc["per_move"] - 2)
        if system != "simple":
            opening = sum(spent[1:11]) / 10
            middle = sum(spent[30:151]) / 121
            assert middle > opening, (system, mode, opening, middle)


@pytest.mark.parametrize("system,mode", CASES)
def test_simulated_game_with_extensions(system, mode):
    # the search running to the hard limit on every third move must not lose on time either
    play_game(system, SYSTEMS_19[system], mode, extend_every=3, seed=7)


@pytest.mark.parametrize("system", list(SYSTEMS_19))
def test_simulated_game_without_time_left(system):
    """A controller that sends the settings once and never time_left (GoGui, gogui-twogtp): the
    engine's own tracking, with the lag of a local program, against the engine's margin for one."""
    mode = "plain" if system != "fischer" else "kgs"
    play_game(system, SYSTEMS_19[system], mode, self_tracking=True, seed=3,
              max_lag=CFG.lag_unreported)


@pytest.mark.parametrize("system", list(SYSTEMS_19))
def test_a_silent_controller_with_a_servers_lag_needs_a_fixed_margin(system):
    """One that never reports and yet adds up to 1 s a move (no known server does): --lag-margin 1
    keeps the engine on time."""
    mode = "plain" if system != "fischer" else "kgs"
    play_game(system, SYSTEMS_19[system], mode, self_tracking=True, seed=3,
              tm=TimeManager(TimeConfig(lag_margin=1.0)))


def test_the_margin_of_a_controller_that_never_reports():
    """lag_initial until our first move; then, no time_left having come, lag_unreported plus our
    overrun; any report at all puts the 1 s back until the lag is measured."""
    lag = LagEstimator()
    clock = Clock.absolute(60)
    assert lag.margin(CFG) == CFG.lag_initial
    lag.moved(clock, BLACK, 1.05, 1.0, CFG.lag_window)
    assert lag.margin(CFG) == pytest.approx(CFG.lag_unreported + 0.05)
    clock.update(WHITE, 58, 0)
    lag.reported(clock, WHITE, CFG.lag_window)
    assert lag.margin(CFG) == CFG.lag_initial
    assert LagEstimator().margin(TimeConfig(lag_margin=0.7)) == 0.7


def test_sudden_death_on_9x9_without_reports_uses_the_clock():
    """gogui-twogtp's `-time 1m` on 9x9: time_settings 60 0 0 and no time_left. Keeping back 1 s
    for each of the 28 expected moves and 30 more left 0.1 s a move; a local controller's margin
    leaves most of the minute to think, and the game stays on time at twice the expected length."""
    tm = TimeManager(TimeConfig())
    clock = Clock.absolute(60)
    first = tm.budget(clock, BLACK, 0, 9)
    tm.charge(clock, BLACK, first + 0.01, first)
    assert tm.budget(clock, BLACK, 2, 9) > 10 * first
    rng = random.Random(5)
    server = Clock.absolute(60)
    used = 0.0
    for ply in range(2, 120, 2):                    # 59 more own moves
        think = tm.budget(clock, BLACK, ply, 9)
        took = think + rng.uniform(0, 0.03)
        tm.charge(clock, BLACK, took, think)
        server.spend(BLACK, took + rng.uniform(0, 0.95 * CFG.lag_unreported), lag=0.0)
        assert not server.state(BLACK).flagged, ply
        used += took
    assert used > 0.6 * 60


@pytest.mark.parametrize("system,tc", [
    ("byoyomi", dict(main_time=60, period_time=10, periods=3)),
    ("canadian", dict(main_time=60, period_time=60, stones_per_period=10)),
    ("fischer", dict(initial_time=60, time_increment=2, max_time=120)),
    ("absolute", dict(total_time=300)),
    ("simple", dict(per_move=5)),
])
@pytest.mark.parametrize("mode", ["kgs", "plain"])
def test_simulated_blitz_9x9_long_game(system, tc, mode):
    # a 9x9 blitz game three times longer than expected (160 plies), the search often extending
    play_game(system, tc, mode, size=9, plies=160, seed=11, extend_every=4)


# --------------------------------------------------------------------------- the lag, measured
def _server_game(tm: TimeManager, server: Clock, lag, think, moves: int, whole=True,
                 overrun=lambda: 0.0) -> Clock:
    """`moves` moves of Black against a server that keeps `server` and charges each move our
    time plus `lag()`; before every move it reports Black's clock (whole seconds, truncated, as
    GTP controllers send them) to the engine's own clock, which the engine reads through
    `TimeManager.reported` and advances through `charge`. A move takes what `think` plans plus
    `overrun()` (the last batch, the answer: more when other processes share the CPU)."""
    ours = Clock(server.system, server.main_time, server.period_time, server.periods, server.stones,
                 server.increment)
    for _ in range(moves):
        s = server.state(BLACK)
        left, n = (s.period_left, s.stones_left) if s.in_overtime else (s.main_left, 0)
        ours.update(BLACK, math.floor(left) if whole else left, n)
        tm.reported(ours, BLACK)
        planned = think(tm, ours)
        t = planned + overrun()
        tm.charge(ours, BLACK, t, planned)
        server.spend(BLACK, t + lag(), lag=0.0)
        assert not server.state(BLACK).flagged
    return ours


def _planned(tm, clock):
    return tm.budget(clock, BLACK, 60, 19)


@pytest.mark.parametrize("whole", [True, False])
def test_a_small_lag_is_measured_and_the_time_is_used(whole):
    """time_settings 60 10 10 on 19x19 (10 stones in 10 s after a minute): with 1 s kept back per
    move nothing is left of 1 s a stone; with a measured lag of 0.02-0.08 s most of it is used."""
    rng = random.Random(1)
    tm = TimeManager(TimeConfig())
    server = Clock.canadian(60, 10, 10)
    assert tm.lag_margin() == CFG.lag_initial
    _server_game(tm, server, lambda: rng.uniform(0.02, 0.08), _planned, 60, whole)
    assert len(tm.lag.samples) >= 40
    assert CFG.lag_min <= tm.lag_margin() < 0.45
    overtime = Clock.canadian(60, 10, 10)
    overtime.update(BLACK, 10, 10)
    assert _planned(tm, overtime) > 0.5          # was lag_fraction's floor with the fixed 1 s
    assert _planned(TimeManager(TimeConfig(lag_margin=1.0)), overtime) < 0.2


def test_a_large_lag_is_kept_back():
    """A controller 0.6-1.4 s slow: the margin covers the slow moves, and never losing on time in
    a long Canadian game (the server's clock flags the colour otherwise) shows it."""
    rng = random.Random(2)
    tm = TimeManager(TimeConfig())
    _server_game(tm, Clock.canadian(30, 30, 10), lambda: rng.uniform(0.6, 1.4), _planned, 150)
    assert 1.2 <= tm.lag_margin() <= 2.5


def test_the_margin_starts_at_one_second_and_a_fixed_margin_stays():
    tm = TimeManager(TimeConfig())
    _server_game(tm, Clock.absolute(600), lambda: 0.05, _planned, CFG.lag_min_samples)
    assert tm.lag_margin() == CFG.lag_initial     # the first report measures nothing
    fixed = TimeManager(TimeConfig(lag_margin=0.7))
    _server_game(fixed, Clock.absolute(600), lambda: 0.05, _planned, 30)
    assert fixed.lag_margin() == 0.7 and len(fixed.lag.samples) == 29


def test_no_lag_sample_across_a_new_game_or_new_settings():
    lag = LagEstimator()
    clock = Clock.absolute(300)
    clock.update(BLACK, 250, 0)
    lag.moved(clock, BLACK, 2.0, None, 50)
    clock.reset()
    clock.update(BLACK, 300, 0)
    lag.reported(clock, BLACK, 50)
    lag.moved(clock, BLACK, 2.0, None, 50)
    lag.reported(Clock.absolute(300), BLACK, 50)     # another clock (time_settings)
    assert lag.samples == []
    clock.update(BLACK, 300, 0)
    lag.moved(clock, BLACK, 2.0, None, 50)
    clock.update(BLACK, 297, 0)
    lag.reported(clock, BLACK, 50)
    assert lag.samples == [1.0]


@pytest.mark.parametrize("clock, before, after, charged", [
    (Clock.absolute(300), (250, 0), (247, 0), 3.0),
    (Clock.fischer(300, 10), (250, 0), (257, 0), 3.0),
    (Clock.fischer(200, 10, main_time_cap=260), (255, 0), (260, 0), None),   # capped: unknown
    (Clock.byoyomi(60, 30, 5), (50, 0), (44, 0), 6.0),
    (Clock.byoyomi(60, 30, 5), (30, 5), (30, 5), None),        # a period starts afresh
    (Clock.byoyomi(60, 30, 5), (5, 0), (30, 5), None),         # main time into overtime
    (Clock.canadian(60, 100, 10), (80, 7), (71, 6), 9.0),
    (Clock.canadian(60, 100, 10), (8, 1), (100, 10), None),    # the period's last stone
    (Clock.simple(10), (10, 1), (10, 1), None),
])
def test_what_the_controller_charged_for_a_move(clock, before, after, charged):
    clock.update(BLACK, *before)
    b = clock.state(BLACK)
    clock.update(BLACK, *after)
    assert clock.charged(b, clock.state(BLACK)) == charged


def test_our_own_overrun_is_kept_back_too():
    """A loaded machine: every move ends 0.2-0.5 s after its planned time. The reports show only
    a small lag, but the margin covers the overrun, and 10 stones in 10 s are never lost."""
    rng = random.Random(3)
    tm = TimeManager(TimeConfig())
    _server_game(tm, Clock.canadian(60, 10, 10), lambda: rng.uniform(0.02, 0.08), _planned, 150,
                 overrun=lambda: rng.uniform(0.2, 0.5))
    assert len(tm.lag.overruns) == CFG.lag_window
    assert 0.55 <= tm.lag_margin() <= 1.2


def test_what_the_clock_allows_the_next_move():
    c = Clock.byoyomi(60, 30, 3)
    assert c.available(BLACK) == 60 + 3 * 30            # main time, then every period in turn
    c.update(BLACK, 20, 2)
    assert c.available(BLACK) == 20 + 30                 # this period and one more
    c = Clock.canadian(20, 2, 1)
    c.update(WHITE, 1.5, 0)
    assert c.available(WHITE) == 3.5 and c.available(BLACK) == 22
    c.update(WHITE, 2, 1)
    assert c.available(WHITE) == 2
    c = Clock.fischer(300, 10, 600, 30)
    assert c.available(BLACK) == 30                       # the cap per move
    assert Clock.absolute(100).available(BLACK) == 100
    assert Clock.simple(5).available(WHITE) == 5 and Clock.none().available(BLACK) == math.inf


# --------------------------------------------------------------------------- within a move: MoveTimer
CLEAR = Leaders(best=600, second=100, visits=800, moves=30)
CLOSE = Leaders(best=300, second=280, visits=800, moves=30)       # the second has 93% of the best
SPREAD = Leaders(best=150, second=60, visits=800, moves=30)       # the best has 19% of the visits


def test_a_clear_move_stops_at_the_budget_and_an_unclear_one_at_the_hard_limit():
    t = MoveTimer(soft=2.0, hard=4.0)
    assert not t.stop(1.99, 1000, CLEAR)
    assert t.stop(2.0, 1000, CLEAR) and (t.reason, t.planned) == ("soft", 2.0)
    for unclear in (CLOSE, SPREAD):
        t = MoveTimer(soft=2.0, hard=4.0)
        assert t.unclear(unclear) and not t.unclear(CLEAR)
        assert not t.stop(2.0, 1000, unclear) and not t.stop(3.99, 2000, unclear)
        assert t.stop(4.0, 2000, unclear) and (t.reason, t.planned) == ("hard", 4.0)


def test_an_extended_search_stops_once_the_move_is_clear():
    t = MoveTimer(soft=2.0, hard=4.0)
    assert not t.stop(2.5, 1000, CLOSE)
    assert t.stop(3.0, 1200, CLEAR) and (t.reason, t.planned) == ("clear", 3.0)


def test_no_extension_without_room_or_without_a_tree():
    t = MoveTimer(soft=2.0, hard=2.0)            # a byo-yomi period, simple time, no clock
    assert t.stop(2.0, 1000, CLOSE) and t.reason == "soft"
    t = MoveTimer(soft=2.0, hard=4.0, save=True)  # the policy player: no root statistics
    assert not t.stop(1.0, 1000, None) and t.stop(2.0, 1000, None) and t.reason == "soft"


def test_it_stops_early_once_the_second_cannot_overtake_the_best():
    """1000 simulations in 0.5 s: 2000 a second, 1000 more before the 1 s budget. A lead of
    1100 visits cannot be caught up; one of 900 can."""
    ahead = Leaders(best=1500, second=400, visits=2000, moves=30)
    catchable = Leaders(best=1300, second=400, visits=2000, moves=30)
    t = MoveTimer(soft=1.0, hard=2.0, save=True)
    assert not t.stop(0.5, 1000, catchable)
    assert t.stop(0.5, 1000, ahead) and (t.reason, t.planned) == ("decided", 0.5)
    # where the unused time is lost (a byo-yomi period), it searches on
    assert not MoveTimer(soft=1.0, hard=2.0, save=False).stop(0.5, 1000, ahead)


def test_an_unclear_move_may_be_overtaken_up_to_the_hard_limit():
    """Best 2000 against 1500 (less than 1.5 times: unclear): the rule counts the simulations
    left to the hard limit, not to the budget."""
    close_but_ahead = Leaders(best=2000, second=1500, visits=4000, moves=30)
    t = MoveTimer(soft=1.0, hard=2.0, save=True)
    assert t.unclear(close_but_ahead)
    # 2000 a second: 1000 left to the budget (the lead, 500, is below), 3000 to the hard limit
    assert not t.stop(0.5, 1000, close_but_ahead)
    assert t.stop(1.9, 3800, close_but_ahead) and t.reason == "decided"


def test_the_rate_is_trusted_only_after_enough_simulations_and_time():
    ahead = Leaders(best=5000, second=0, visits=5000, moves=30)    # a reused tree's visits
    assert not MoveTimer(1.0, 2.0, save=True).stop(0.5, 99, ahead)       # too few simulations
    assert not MoveTimer(10.0, 20.0, save=True).stop(0.5, 100, ahead)    # too early in the budget
    assert MoveTimer(10.0, 20.0, save=True).stop(1.0, 100, ahead)


def test_a_single_move_is_played_as_soon_as_the_rate_is_known():
    only = Leaders(best=200, second=0, visits=200, moves=1)
    t = MoveTimer(5.0, 10.0, save=True)
    assert not t.stop(0.4, 200, only) and t.stop(0.5, 200, only) and t.reason == "decided"


@pytest.mark.parametrize("commands, can_save", [
    (["time_settings 600 0 0"], True),                                   # absolute
    (["kgs-time_settings byoyomi 600 30 5"], True),                      # main time
    (["kgs-time_settings byoyomi 600 30 5", "time_left b 25 3"], False),  # a byo-yomi period
    (["time_settings 600 300 25"], True),
    (["time_settings 600 300 25", "time_left b 200 12"], True),          # stones to come
    (["time_settings 600 300 25", "time_left b 20 1"], False),           # the period's last stone
    (["time_settings 0 30 1"], False),                                   # simple
    (["time_settings 0 1 0"], False),                                    # no limit
    (["kata-time_settings fischer 300 10"], True),
    (["kata-time_settings fischer-capped 300 10 600 -1", "time_left b 300 0"], True),
    (["kata-time_settings fischer-capped 300 10 600 -1", "time_left b 595 0"], False),  # at the cap
])
def test_time_left_unused_is_saved_only_where_the_clock_keeps_it(commands, can_save):
    clock = apply_gtp(commands)
    assert TM.can_save(clock, BLACK) == can_save
    timer = TM.timer(clock, BLACK, 60, 19)
    budget, hard = TM.limits(clock, BLACK, 60, 19)
    assert (timer.soft, timer.hard, timer.save) == (budget, hard, can_save)
    assert timer.hard <= clock.available(BLACK)
    assert TM.can_save(None, BLACK) is False


def test_the_simple_time_manager_and_a_fixed_time_search_the_budget():
    clock = Clock.absolute(600)
    for cfg in (TimeConfig(time_manager="simple"), TimeConfig(fixed_time_per_move=2.0)):
        tm = TimeManager(cfg)
        t = tm.timer(clock, BLACK, 60, 19)
        assert t.soft == t.hard == tm.budget(clock, BLACK, 60, 19) and not t.save
    full = TM.timer(clock, BLACK, 60, 19)
    assert full.hard > full.soft and full.save
    # the move's time already gone (judging dead stones) comes off both limits
    used = TM.timer(clock, BLACK, 60, 19, used=1.0)
    assert (used.soft, used.hard) == pytest.approx((full.soft - 1.0, full.hard - 1.0))
    assert TM.timer(clock, BLACK, 60, 19, used=100.0).hard == CFG.min_move_time
    t = TM.timer(None, BLACK, 0, 19)             # no clock: the default time per move
    assert t.soft == t.hard == CFG.default_time_per_move and not t.save
    with pytest.raises(ValueError, match="time_manager"):
        TimeConfig(time_manager="fast")


def synthetic_search(reasons: list, rate: float = 2000.0):
    """A search as its stop rule sees it, for `play_game`: `rate` simulations a second, and root
    visits shared out by a kind of position drawn for each move: obvious (the best takes 85%),
    close (45% against 40%: unclear to the end), resolving (close until 1.3 budgets, then the
    best pulls away), spread (the best has 15%). Returns the seconds the search took; appends
    the timer's reason and the seconds over the budget to `reasons`."""
    shares = {"obvious": (0.85, 0.05), "close": (0.45, 0.40), "spread": (0.15, 0.10)}

    def search(timer: MoveTimer, rng: random.Random) -> float:
        kind = rng.choice(("obvious", "close", "resolving", "spread"))
        t, sims = 0.0, 0
        while True:
            if kind == "resolving":
                best, second = (0.45, 0.40) if t < 1.3 * timer.soft else (0.75, 0.15)
            else:
                best, second = shares[kind]
            leaders = Leaders(int(best * sims), int(second * sims), sims, 30)
            if timer.stop(t, sims, leaders):
                break
            # the rule is asked after every chunk (milliseconds): long strides, but one chunk
            # past the limit that applies now
            t = min(t + timer.soft / 40, timer.limit(leaders) + 0.005)
            sims = int(rate * t)
        reasons.append((timer.reason, t / timer.soft))
        return t
    return search


@pytest.mark.parametrize("system,mode", CASES)
def test_a_simulated_game_with_the_dynamic_rules_never_loses_on_time(system, mode):
    """Every clock, read as gtp2ogs sends it: the search extends unclear moves to the hard limit
    and cuts decided ones short, and the game of 250 plies stays on time; early stops happen only
    where the clock keeps the time saved."""
    reasons = []
    server, spent = play_game(system, SYSTEMS_19[system], mode, seed=4,
                              searcher=synthetic_search(reasons))
    assert {r for r, _ in reasons} <= {"soft", "hard", "clear", "decided"}
    # simple time (30 s a move) leaves no room to extend and keeps no time saved
    assert any(f > 1.2 for _, f in reasons) == (system != "simple")     # past the budget
    assert any(r == "decided" and f < 1 for r, f in reasons) == (system != "simple")  # short of it
    if system == "absolute":
        assert all(s.spent <= SYSTEMS_19["absolute"]["total_time"] for s in server.values())


@pytest.mark.parametrize("system,tc", [
    ("byoyomi", dict(main_time=60, period_time=10, periods=3)),
    ("canadian", dict(main_time=60, period_time=60, stones_per_period=10)),
    ("absolute", dict(total_time=60)),
])
def test_a_simulated_9x9_sudden_death_or_overtime_game_with_the_dynamic_rules(system, tc):
    """9x9 blitz three times longer than expected, with the dynamic rules: on time, and most of
    the main time used."""
    reasons = []
    server, _ = play_game(system, tc, "kgs", size=9, plies=160, seed=12,
                          searcher=synthetic_search(reasons))
    for s in server.values():
        assert s.main_used() > 0.5 * tc.get("main_time", tc.get("total_time"))
