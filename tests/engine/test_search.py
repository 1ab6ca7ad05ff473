"""Search invariants on small boards: backup signs, lambda, virtual loss, tree reuse, tactics, and
the one Search interface every search implements."""
import dataclasses
import threading

import numpy as np
import pytest

from goengine.engine import board as B
from goengine.engine.board import BLACK, WHITE
from goengine.engine.coords import PASS, format_gtp, parse_gtp
from goengine.engine.evaluator import Evaluation, UniformEvaluator
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search import tree as T
from goengine.engine.search.alphago import (AUTO_ROLLOUT_THREADS, AlphaGoSearch,
                                            rollout_threads_for)
from goengine.engine.search.mcts import MctsConfig, MctsSearch
from goengine.engine.search.network import ALPHAGO_C_PUCT, ZERO_C_PUCT, NetSearchConfig
from goengine.engine.search.policy import PolicyPlayer
from goengine.engine.search.zero import ZeroSearch
from goengine.engine.timecontrol import MoveTimer
from positions import BIG_SEKI, load_board


def play_all(game, moves):
    for color, v in moves:
        game.play(color, parse_gtp(v, game.size))
    return game


class ConstantValue(UniformEvaluator):
    """Value +v for the side to move everywhere (a stand-in network with a known answer)."""

    has_value = True

    def __init__(self, v):
        self.v = v

    def evaluate(self, planes, legal_mask=None, keys=None):
        b, n = planes.shape[0], planes.shape[-1]
        return Evaluation(priors=np.full((b, n * n + 1), 1.0 / (n * n + 1), np.float32),
                          value_stm=np.full(b, self.v, np.float32))


class BlackValue(UniformEvaluator):
    """A stand-in value network with a known answer: +v for Black in every position. Its value_stm
    is v with Black to move and -v with White, read from the player-colour plane (the last plane
    of alphago49, the value network's feature set)."""

    has_value = True

    def __init__(self, v):
        self.v = v

    def evaluate(self, planes, legal_mask=None, keys=None):
        b, n = planes.shape[0], planes.shape[-1]
        black_to_move = planes[:, -1, 0, 0] == 1
        return Evaluation(priors=np.full((b, n * n + 1), 1.0 / (n * n + 1), np.float32),
                          value_stm=np.where(black_to_move, self.v, -self.v).astype(np.float32))


def test_backup_flips_sign_per_mover():
    t = T.Tree(100)
    t.reset(BLACK)  # root: white moved into it, black to play
    moves = np.array([10, 11], dtype=np.int32)
    T.alloc_children(t.ti, t.tf, t.tm, 0, moves, np.array([0.5, 0.5]), 2)
    child = 1
    T.alloc_children(t.ti, t.tf, t.tm, child, moves, np.array([0.5, 0.5]), 2)
    grandchild = 3
    path = np.array([0, child, grandchild], dtype=np.int64)
    T.add_virtual_loss(t.ti, path, 3, 3)
    T.backup(t.ti, t.tf, path, 3, 1.0, True, 0.0, False, 3)  # black won
    assert t.ti[T.I_COLOR, child] == BLACK and t.ti[T.I_COLOR, grandchild] == WHITE
    assert t.tf[T.F_WR, child] == 1.0      # black's move: a win for its mover
    assert t.tf[T.F_WR, grandchild] == -1.0  # white's move: a loss for its mover
    assert t.tf[T.F_WR, 0] == -1.0          # root edge belongs to white
    assert (t.ti[T.I_VL, :t.used] == 0).all()  # virtual loss fully removed


def test_virtual_loss_removed_after_batches():
    s = ZeroSearch(NetSearchConfig(mode="zero", batch_size=8), net=UniformEvaluator(), seed=1)
    s.search(Game(5), BLACK, playouts=200)
    t = s.tree
    assert (t.ti[T.I_VL, :t.used] == 0).all()
    assert t.ti[T.I_N, t.root] >= 200


def lambda_search(lam, v_black):
    """The tree after 100 playouts on an empty 5x5 with lambda `lam` and a value network that says
    `v_black` everywhere, and Black's visited moves at its root whose subtrees hold no two passes
    in a row: every leaf under those was scored by the value network or a rollout, none by the
    rules (a terminal leaf backs its score up into both W_v and W_r)."""
    s = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=lam, n_thr=1), policy=None,
                      value=BlackValue(v_black), seed=2)
    s.search(Game(5), BLACK, playouts=100)
    t = s.tree

    def has_terminal(node):
        return any((t.ti[T.I_MOVE, c] == PASS and t.ti[T.I_MOVE, node] == PASS) or has_terminal(c)
                   for c in t.children(node) if t.ti[T.I_N, c] > 0)

    kids = [c for c in t.children(t.root) if t.ti[T.I_N, c] > 0 and not has_terminal(c)]
    assert len(kids) > 3
    return t, kids


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_lambda_mixes_the_value_network_in(lam):
    """lambda 0: Q is the value net alone; lambda 0.5: half value net, half rollouts. The stand-in
    says +0.3 for Black everywhere, so W_v / N_v of each of Black's moves is exactly 0.3."""
    t, kids = lambda_search(lam, 0.3)
    for c in kids:
        assert t.ti[T.I_NV, c] == t.ti[T.I_N, c]  # every visit consulted the value net
        assert t.tf[T.F_WV, c] / t.ti[T.I_NV, c] == pytest.approx(0.3, abs=1e-6)
        q = T.node_q(t.ti, t.tf, c, lam)
        if lam == 0.0:
            assert t.ti[T.I_NR, c] == 0  # no rollouts at all
            assert q == pytest.approx(0.3, abs=1e-6)
        else:
            assert t.ti[T.I_NR, c] == t.ti[T.I_N, c]
            assert q == pytest.approx(0.15 + 0.5 * t.tf[T.F_WR, c] / t.ti[T.I_NR, c], abs=1e-6)


def test_lambda_one_ignores_the_value_network():
    """lambda 1: rollouts alone; the same search with another value network gives the same tree."""
    trees = []
    for v_black in (0.3, -0.9):
        t, kids = lambda_search(1.0, v_black)
        for c in kids:
            assert t.ti[T.I_NV, c] == 0  # the value net is not consulted
            assert t.ti[T.I_NR, c] == t.ti[T.I_N, c]
            assert T.node_q(t.ti, t.tf, c, 1.0) == pytest.approx(t.tf[T.F_WR, c] / t.ti[T.I_NR, c])
        trees.append([(int(t.ti[T.I_MOVE, c]), int(t.ti[T.I_N, c]), float(t.tf[T.F_WR, c]))
                      for c in kids])
    assert trees[0] == trees[1]


def test_lambda_by_size_replaces_lambda_on_its_sizes():
    """lam_by_size: on 5x5 the value net alone (lambda 0), on 7x7 the default lambda 0.5."""
    s = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=0.5, lam_by_size=((5, 0.0),), n_thr=1),
                      policy=None, value=BlackValue(0.3), seed=2)
    for n, lam in ((5, 0.0), (7, 0.5)):
        s.search(Game(n), BLACK, playouts=60)
        t = s.tree
        visited = [c for c in t.children(t.root) if t.ti[T.I_N, c] > 0]
        rollouts = sum(int(t.ti[T.I_NR, c]) for c in visited)
        assert (rollouts == 0) == (lam == 0.0), (n, rollouts)
    with pytest.raises(ValueError, match="lambda"):
        NetSearchConfig(mode="alphago", lam_by_size=((19, 1.5),))


def test_won_terminal_position_raises_q_of_winner_on_path():
    """Black passes after white passed on a board black owns: the pass child is a won terminal."""
    g = Game(5, Rules(komi=0.5))
    play_all(g, [(BLACK, "C1"), (WHITE, "pass"), (BLACK, "C2"), (WHITE, "pass"), (BLACK, "C3"),
                 (WHITE, "pass"), (BLACK, "C4"), (WHITE, "pass"), (BLACK, "C5"), (WHITE, "pass")])
    s = MctsSearch(MctsConfig(), seed=3)
    res = s.search(g, BLACK, playouts=300)
    passes = [m for m in res.moves if m.move == PASS]
    assert passes and passes[0].winrate == 1.0  # black owns the whole board


def test_tree_reuse_keeps_opponent_reply_subtree():
    g = Game(7)
    s = MctsSearch(seed=4)
    s.search(g, BLACK, playouts=2000)
    t = s.tree
    best = max(t.children(t.root), key=lambda c: t.ti[T.I_N, c])
    bmove = int(t.ti[T.I_MOVE, best])
    reply = max(t.children(best), key=lambda c: t.ti[T.I_N, c])
    wmove, kept = int(t.ti[T.I_MOVE, reply]), int(t.ti[T.I_N, reply])
    g.play(BLACK, bmove)
    g.play(WHITE, wmove)
    s.search(g, BLACK, visits=1)  # reuses: the root already has `kept` visits, so none run
    assert int(s.tree.ti[T.I_N, s.tree.root]) >= kept > 0


def test_each_reported_line_follows_the_most_visited_children():
    g = Game(7)
    s = MctsSearch(seed=4)
    res = s.search(g, BLACK, playouts=3000)
    t = s.tree
    checked = 0
    for stat in res.moves[:10]:
        node, line = T.find_child(t.ti, t.root, stat.move), []
        while node >= 0 and len(line) < 20:
            line.append(int(t.ti[T.I_MOVE, node]))
            visited = [c for c in t.children(node) if t.ti[T.I_N, c] > 0]
            node = max(visited, key=lambda c: t.ti[T.I_N, c]) if visited else -1
        assert stat.pv == line
        checked += len(line) > 2
    assert checked >= 3          # lines that go deeper than a reply


@pytest.mark.parametrize("make", [
    lambda: MctsSearch(seed=4),
    lambda: ZeroSearch(NetSearchConfig(mode="zero", batch_size=8), net=UniformEvaluator(),
                       seed=4),
], ids=["heuristic", "zero"])
def test_playouts_count_new_simulations_and_visits_count_the_reused_tree(make):
    """Leela Zero's -p and -v: after the opponent's reply, `playouts` runs that many new
    simulations on top of the kept subtree, `visits` only tops the root up to that many."""
    g = Game(7)
    s = make()
    res = s.search(g, BLACK, playouts=400)
    assert res.simulations == 400
    best = max(s.tree.children(s.tree.root), key=lambda c: s.tree.ti[T.I_N, c])
    reply = max(s.tree.children(best), key=lambda c: s.tree.ti[T.I_N, c])
    g.play(BLACK, int(s.tree.ti[T.I_MOVE, best]))
    g.play(WHITE, int(s.tree.ti[T.I_MOVE, reply]))
    kept = int(s.tree.ti[T.I_N, reply])
    assert kept > 0
    res = s.search(g, BLACK, playouts=40)
    assert res.simulations == 40 and res.root_visits >= kept + 40 - 1
    before = res.root_visits
    res = s.search(g, BLACK, visits=before + 24)
    assert res.simulations == 24 and res.root_visits == before + 24
    res = s.search(g, BLACK, visits=before)       # already there: nothing runs
    assert res.simulations == 0


def _black_owns_left(size=7):
    """Black walls off columns A-C, white D-G is thin: black far ahead with komi 0.5."""
    g = Game(size, Rules(komi=0.5))
    for r in range(1, size + 1):
        g.play(BLACK, parse_gtp(f"D{r}", size))
        g.play(WHITE, parse_gtp(f"F{r}", size))
    return g


def test_rollout_threads_share_the_batch_deterministically():
    """Two rollout threads: a seed gives the same tree, and the ownership counts every rollout
    (the helper's too)."""
    runs = []
    for _ in range(2):
        g = _black_owns_left()
        s = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=1.0, batch_size=16,
                                          rollout_threads=2), seed=11)
        res = s.search(g, BLACK, playouts=480)
        t = s.tree
        assert int(t.ti[T.I_N, t.root]) >= 480
        assert s._leaf_own.n >= 480 and len(s._helpers) == 1
        own = res.ownership_black
        # A-C black, G white: without the helper's rollouts the sums would be halved (~0.37)
        assert own[:, :3].min() > 0.6 and own[:, 6:].max() < -0.6, own
        assert np.abs(own).max() <= 1.0 + 1e-9
        runs.append([(m.move, m.visits) for m in res.moves])
        s.close()
    assert runs[0] == runs[1]


def test_rollout_threads_by_the_cores_where_no_value_network_runs():
    """rollout_threads 0 (engine-gtp's default): the machine's cores, at most
    AUTO_ROLLOUT_THREADS, where the rollouts alone value the leaves; one thread where the value
    network takes a core beside them; a number set by hand is kept."""
    assert rollout_threads_for(3, True, cores=2) == 3
    assert rollout_threads_for(1, False, cores=8) == 1
    assert rollout_threads_for(0, True, cores=8) == 1
    assert [rollout_threads_for(0, False, cores=c) for c in (1, 2, 3, 64)] == \
        [1, 2, 3, AUTO_ROLLOUT_THREADS]
    with pytest.raises(ValueError, match="rollout_threads"):
        NetSearchConfig(mode="alphago", rollout_threads=-1)


@pytest.mark.parametrize("lam, helpers", [(1.0, 1), (0.5, 0)])
def test_auto_rollout_threads_follow_lambda(monkeypatch, lam, helpers):
    """On a 2-core machine, rollout_threads 0: a second rollout thread at lambda 1 (the value
    network unused), none at lambda 0.5 (the value network's thread needs the core); the
    search's rollouts are all counted either way."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    g = _black_owns_left()
    s = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=lam, rollout_threads=0),
                      policy=UniformEvaluator(), value=UniformEvaluator(), seed=5)
    res = s.search(g, BLACK, playouts=160)
    assert len(s._helpers) == helpers
    assert s._leaf_own.n >= 160 and res.simulations >= 160
    s.close()


@pytest.mark.parametrize("searcher", ["heuristic", "alphago-rollouts"])
def test_both_colours_capture_a_string_in_atari(searcher):
    """A 2-stone string in atari at the centre: capturing decides the game on 5x5."""
    for me in (BLACK, WHITE):
        opp = 3 - me
        g = Game(5, Rules(komi=0.5))
        moves = [(opp, "C3"), (me, "B3"), (opp, "C2"), (me, "D3"), (opp, "pass"), (me, "C4"),
                 (opp, "pass"), (me, "B2"), (opp, "pass"), (me, "D2")]
        g.to_play = opp
        play_all(g, moves)
        g.to_play = me
        if searcher == "heuristic":
            s = MctsSearch(seed=5)
        else:
            s = AlphaGoSearch(NetSearchConfig(mode="alphago", lam=1.0, n_thr=2), seed=5)
        res = s.search(g, me, playouts=3000)
        assert format_gtp(res.best.move, 5) == "C1", [(format_gtp(m.move, 5), m.visits) for m in res.moves[:3]]


# ---- one interface, one run loop ------------------------------------------------------------------

SEARCHES = {
    "heuristic": lambda: MctsSearch(MctsConfig(tree_capacity=100_000), seed=6),
    "alphago": lambda: AlphaGoSearch(NetSearchConfig(mode="alphago", tree_capacity=100_000),
                                     policy=UniformEvaluator(), value=ConstantValue(0.0), seed=6),
    "zero": lambda: ZeroSearch(NetSearchConfig(mode="zero", tree_capacity=100_000),
                               net=UniformEvaluator(), seed=6),
    "policy": lambda: PolicyPlayer(UniformEvaluator(), seed=6),
}


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_every_search_declares_what_callers_choose_by(name):
    s = SEARCHES[name]()
    assert s.name == name
    assert dataclasses.is_dataclass(s.config) and dataclasses.fields(s.config)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(s.config, dataclasses.fields(s.config)[0].name, None)
    assert isinstance(s.ownership, bool) and s.chunk >= 1
    assert (s.tree is None) == (name == "policy")
    res = s.search(Game(5), BLACK, playouts=20)
    assert (res.ownership_black is not None) == (name in ("heuristic", "alphago"))
    assert s.ownership == (name == "heuristic")


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_search_stopped_before_it_starts_still_answers_a_legal_move(name):
    """The run loop readies the root (priors) before it looks at `stop`."""
    stop = threading.Event()
    stop.set()
    g = Game(5)
    res = SEARCHES[name]().search(g, BLACK, stop=stop)
    assert res.simulations == (1 if name == "policy" else 0)
    assert res.moves and all(g.is_legal(BLACK, m.move) for m in res.moves if m.move != PASS)


@pytest.mark.timeout(60)
def test_the_policy_player_ends_at_once_without_any_limit():
    """Nothing left to step: the run loop ends although neither a count, a time nor stop is set."""
    res = SEARCHES["policy"]().search(Game(5), BLACK)
    assert res.root_visits == 1 and res.best.visits == 1


class RecordingRule:
    """A stop rule that says stop on its `calls`-th question and keeps what it was asked."""

    def __init__(self, calls: int):
        self.calls = calls
        self.asked = []

    def stop(self, elapsed, simulations, leaders):
        self.asked.append((elapsed, simulations, leaders))
        return len(self.asked) >= self.calls


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_the_run_loop_asks_the_stop_rule_after_every_chunk(name):
    """A simulated clock (each reading 10 ms later): the rule is asked before every chunk with the
    seconds and simulations so far and the root's two most visited moves, and the search ends
    the moment it says stop: the last question saw the result's own counts."""
    ticks = iter(range(10_000))
    rule = RecordingRule(calls=6)
    s = SEARCHES[name]()
    res = s.search(Game(7), BLACK, stop_rule=rule, now=lambda: 0.01 * next(ticks))
    elapsed, simulations, leaders = rule.asked[-1]
    if name == "policy":        # no tree: no leaders; one step and nothing left to do
        assert leaders is None and res.simulations == 1
        return
    assert len(rule.asked) == 6 and simulations == res.simulations
    assert [round(e, 6) for e, _, _ in rule.asked] == [0.01 * (1 + 2 * i) for i in range(6)]
    visits = sorted((m.visits for m in res.moves), reverse=True)
    assert simulations == 5 * s.chunk
    assert leaders == (visits[0], visits[1], sum(visits), len(res.moves))


def test_a_move_timer_stops_the_search_where_it_says():
    """The heuristic search under a MoveTimer with a simulated clock: a budget of 0.5 s and no
    extension stops at the first reading past it, with the planned time and the reason kept."""
    ticks = iter(range(10_000))
    timer = MoveTimer(soft=0.5, hard=0.5)
    res = SEARCHES["heuristic"]().search(Game(7), BLACK, stop_rule=timer,
                                         now=lambda: 0.01 * next(ticks))
    assert (timer.reason, timer.planned) == ("soft", 0.5)
    assert res.simulations == 25 * MctsConfig().chunk


SUPERKO_GAME = ("B D4, W C3, B B4, W B3, B C4, W D1, B C1, W A3, B A4, W D2, B A1, W A2, B B2, "
                "W C2, B D3, W C2, B A3, W D1, B B1, W C3, B A2, W B3, B D2, W C3, B D1, W C2, "
                "B B3, W C3, B C2, W C3")


@pytest.mark.parametrize("name", ["heuristic", "alphago", "zero"])
def test_the_run_loop_prunes_root_moves_that_break_superko(name):
    """4x4, positional superko: black D4 would repeat an earlier position. The kernels know only
    simple ko and offer it; the run loop prunes it for every tree search."""
    g = Game(4, Rules(superko="positional"))
    play_all(g, [({"B": BLACK, "W": WHITE}[c], v)
                 for c, v in (m.split() for m in SUPERKO_GAME.split(", "))])
    d4 = parse_gtp("D4", 4)
    assert B.legality(g.st, g.meta, d4, BLACK) == B.LEGAL
    assert g.illegal_reason(BLACK, d4) == "superko"
    res = SEARCHES[name]().search(g, BLACK, playouts=50)
    assert res.moves and d4 not in [m.move for m in res.moves]


@pytest.mark.parametrize("name", ["heuristic", "alphago", "zero"])
def test_the_run_loop_prunes_root_moves_that_give_a_big_group_away(name):
    """A seki between white's 26 stones and black's three (tests/positions.py): white's K2 and
    L1 each put the 26 in atari, capturing nothing. Every tree search prunes them at the root,
    where they are two of its five moves (the rest: T1, T2 and pass; the other empty points are
    eyes). Unpruned, the network searches with uniform priors gave them 36 and 61 of 200."""
    g = load_board(BIG_SEKI, to_play=WHITE)
    fills = {parse_gtp("K2", 19), parse_gtp("L1", 19)}
    assert all(g.is_legal(WHITE, p) for p in fills)
    res = SEARCHES[name]().search(g, WHITE, playouts=200)
    played = {m.move for m in res.moves}
    assert len(played) == 3 and not played & fills


def test_each_network_search_has_its_own_c_puct_unless_one_is_given():
    assert NetSearchConfig(mode="alphago").c_puct == ALPHAGO_C_PUCT == 5.0
    assert NetSearchConfig(mode="zero").c_puct == ZERO_C_PUCT
    assert NetSearchConfig(mode="zero", c_puct=3.0).c_puct == 3.0


def test_a_network_search_runs_in_its_own_mode():
    """AlphaGoSearch and ZeroSearch are the two modes of NetSearchConfig: a config of the other
    mode is refused, when the search is made and when its settings are replaced."""
    with pytest.raises(ValueError, match="mode"):
        ZeroSearch(NetSearchConfig(mode="alphago"), net=UniformEvaluator())
    s = AlphaGoSearch(NetSearchConfig(mode="alphago"), seed=1)
    zero = ZeroSearch(NetSearchConfig(mode="zero"), UniformEvaluator())
    assert (s.name, zero.name) == ("alphago", "zero")
    with pytest.raises(ValueError, match="mode"):
        s.config = dataclasses.replace(s.config, mode="zero")
    s.config = dataclasses.replace(s.config, lam=0.25)
    assert s.config.lam == 0.25 and s.config.mode == "alphago"
