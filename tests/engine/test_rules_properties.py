"""Property tests of the rules core over random games.

After every move of random legal games (sizes 2..19, with and without suicide, every superko
kind, sometimes a free handicap first):

* every kept field of the board agrees with a from-scratch recomputation (`positions.check_board`:
  liberties per string = `board.libs_from_scratch`, F_SIZE, the circular F_NEXT lists, F_HEAD, the
  empty list and F_EIDX, the Zobrist hash, no string without liberties);
* the board, the prisoners and the legality verdicts equal those of `RefGo`, a deliberately naive
  pure-Python implementation of the rules written from their definitions;
* undo restores everything exactly, and replaying the move gives the same arrays.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from positions import assert_same, check_board, load_board, snapshot

from goengine.engine import board as B
from goengine.engine.board import BLACK, EMPTY, WHITE
from goengine.engine.coords import PASS, loc, loc_to_rc
from goengine.engine.game import Game
from goengine.engine.rules import Rules


class RefGo:
    """Go by the book: a tuple of N*N colours, groups found by flood fill on every question."""

    def __init__(self, n: int, rules: Rules, stones=(), to_play: int = BLACK):
        self.n = n
        self.rules = rules
        board = [EMPTY] * (n * n)
        for i in stones:
            board[i] = BLACK
        self.board = tuple(board)
        self.to_play = to_play
        self.prev = None            # the board before the last move
        self.last_captured = 0      # stones the last move captured (0 for a pass)
        self.last_color = None
        self.caps = {BLACK: 0, WHITE: 0}
        self.nbrs = []
        for i in range(n * n):
            r, c = divmod(i, n)
            self.nbrs.append([(r + dr) * n + c + dc for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                              if 0 <= r + dr < n and 0 <= c + dc < n])
        self.seen = {self.key(self.board, to_play)}

    def key(self, board, to_play):
        return (board, to_play) if self.rules.superko == "situational" else board

    def group(self, board, i):
        color = board[i]
        stones, libs, todo = {i}, set(), [i]
        while todo:
            x = todo.pop()
            for q in self.nbrs[x]:
                if board[q] == color and q not in stones:
                    stones.add(q)
                    todo.append(q)
                elif board[q] == EMPTY:
                    libs.add(q)
        return stones, libs

    def apply(self, c, i):
        """(new board, stones captured, own stones lost) for colour c playing at i."""
        board = list(self.board)
        board[i] = c
        captured = 0
        for q in self.nbrs[i]:
            if board[q] == 3 - c:
                stones, libs = self.group(board, q)
                if not libs:
                    for s in stones:
                        board[s] = EMPTY
                    captured += len(stones)
        lost = 0
        stones, libs = self.group(board, i)
        if not libs:
            for s in stones:
                board[s] = EMPTY
            lost = len(stones)
        return tuple(board), captured, lost

    def reason(self, c, i):
        if i is None:
            return None
        if self.board[i] != EMPTY:
            return "occupied"
        new, captured, lost = self.apply(c, i)
        if self.last_captured and self.last_color == 3 - c and new == self.prev:
            return "ko"
        if lost:
            if not self.rules.suicide:
                return "suicide"
            if self.rules.superko == "none" and new == self.board:
                return "suicide"
        if self.rules.superko != "none" and self.key(new, 3 - c) in self.seen:
            return "superko"
        return None

    def play(self, c, i):
        assert self.reason(c, i) is None
        self.prev = self.board
        self.last_color = c
        if i is None:
            self.last_captured = 0
        else:
            self.board, self.last_captured, lost = self.apply(c, i)
            self.caps[c] += self.last_captured
            self.caps[3 - c] += lost
        self.to_play = 3 - c
        self.seen.add(self.key(self.board, self.to_play))


def _lc(i: int, n: int) -> int:
    return loc(i // n, i % n, n)


def run_random_game(size: int, seed: int, rules: Rules, max_moves: int, handicap: bool,
                    suicide_bias: float = 0.0) -> dict:
    rng = random.Random(seed)
    n = size
    g = Game(n, rules)
    stones = []
    if handicap and n >= 3:
        stones = rng.sample(range(n * n), rng.randint(2, min(4, n * n - 1)))
        g.set_handicap([_lc(i, n) for i in stones])
    ref = RefGo(n, rules, stones, g.to_play)
    check_board(g)
    stats = dict(moves=0, captures=0, suicides=0, ko=0, superko=0, undos=0)
    placed = {BLACK: len(stones), WHITE: 0}
    everything = list(range(n * n))
    for _ in range(max_moves):
        c = g.to_play
        assert c == ref.to_play
        # legality verdicts agree: every point on small boards, a sample on large ones
        probe = everything if n <= 7 else rng.sample(everything, 10)
        for i in probe:
            want = ref.reason(c, i)
            got = g.illegal_reason(c, _lc(i, n))
            assert got == want, (i, got, want)
            stats["ko"] += got == "ko"
            stats["superko"] += got == "superko"
        # choose a move: sometimes a suicide on purpose, else a random legal point, rarely a pass
        empties = [i for i in everything if ref.board[i] == EMPTY]
        rng.shuffle(empties)
        move = None
        if rng.random() >= 0.03:
            if suicide_bias and rng.random() < suicide_bias:
                for i in empties[:40]:
                    if ref.apply(c, i)[2] and ref.reason(c, i) is None:
                        move = i
                        break
            if move is None:
                for i in empties[:40]:
                    if ref.reason(c, i) is None:
                        move = i
                        break
        lc = PASS if move is None else _lc(move, n)
        if rng.random() < 0.1:  # undo restores exactly; replaying is deterministic
            before = snapshot(g)
            g.play(c, lc)
            after = snapshot(g)
            g.undo()
            assert_same(before, snapshot(g))
            g.play(c, lc)
            assert_same(after, snapshot(g))
            stats["undos"] += 1
        else:
            g.play(c, lc)
        lost_before = ref.caps[3 - c]
        ref.play(c, move)
        if move is not None:
            placed[c] += 1
            stats["captures"] += ref.last_captured
            stats["suicides"] += ref.caps[3 - c] > lost_before
        stats["moves"] += 1
        # same board, prisoners, side to move, history
        assert tuple(int(x) for x in g.board_colors().ravel()) == ref.board
        assert g.captures == (ref.caps[BLACK], ref.caps[WHITE])
        assert g.to_play == ref.to_play == 3 - c
        assert g.history[-1] == (c, lc) and g.move_number == stats["moves"]
        # every stone placed is on the board or was taken off
        colors = g.board_colors()
        assert (colors == BLACK).sum() == placed[BLACK] - g.captures[1]
        assert (colors == WHITE).sum() == placed[WHITE] - g.captures[0]
        check_board(g)
    # the legal-move list agrees too
    assert sorted(g.legal_moves(g.to_play)) == sorted(
        _lc(i, n) for i in everything if ref.reason(g.to_play, i) is None)
    return stats


RULES_NO_SUICIDE = [Rules(), Rules(superko="situational"), Rules(superko="none")]
RULES_SUICIDE = [Rules(suicide=True), Rules(suicide=True, superko="situational"),
                 Rules(suicide=True, superko="none")]
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])


def _max_moves(size: int) -> int:
    return min(int(2.5 * size * size), 260)


@PROPERTY_SETTINGS
@given(size=st.integers(2, 19), seed=st.integers(0, 2**32 - 1),
       rules=st.sampled_from(RULES_NO_SUICIDE), handicap=st.booleans())
def test_random_games_keep_every_invariant(size, seed, rules, handicap):
    run_random_game(size, seed, rules, _max_moves(size), handicap)


@PROPERTY_SETTINGS
@given(size=st.integers(2, 19), seed=st.integers(0, 2**32 - 1),
       rules=st.sampled_from(RULES_SUICIDE), handicap=st.booleans())
def test_random_games_with_suicide_keep_every_invariant(size, seed, rules, handicap):
    run_random_game(size, seed, rules, _max_moves(size), handicap, suicide_bias=0.3)


def test_random_games_reach_the_interesting_cases():
    """The generator really produces captures, kos, superko refusals and suicides."""
    total = dict(moves=0, captures=0, suicides=0, ko=0, superko=0, undos=0)
    for seed, (size, rules) in enumerate([(3, Rules()), (4, Rules(superko="situational")),
                                          (5, Rules(suicide=True)), (9, Rules(suicide=True)),
                                          (4, Rules(suicide=True, superko="none"))]):
        stats = run_random_game(size, seed, rules, 150, handicap=False, suicide_bias=0.3)
        for k, v in stats.items():
            total[k] += v
    assert total["captures"] > 50
    assert total["ko"] > 0 and total["superko"] > 0
    assert total["suicides"] > 5
    assert total["undos"] > 20


def test_kernels_on_copied_arrays_match_the_game():
    """Playouts and search copy (st, meta) and call the kernels directly: same result as Game."""
    rng = random.Random(5)
    for n in (5, 9, 13):
        g = Game(n, Rules(superko="none"))
        st_, meta = g.st.copy(), g.meta.copy()
        for _ in range(n * n * 2):
            c = g.to_play
            k = int(meta[B.M_NEMPTY])
            empties = [int(x) for x in st_[B.F_ELIST, :k]]
            rng.shuffle(empties)
            move = PASS
            for lc in empties:
                if B.legality(st_, meta, lc, c) == B.LEGAL:
                    move = lc
                    break
            assert (move == PASS) == all(not g.is_legal(c, lc) for lc in empties)
            if move == PASS:
                B.play_pass(meta, c)
            else:
                r, cc = loc_to_rc(move, n)
                assert 0 <= r < n and 0 <= cc < n
                B.play(st_, meta, move, c)
            g.play(c, move)
            assert np.array_equal(st_[B.F_COLOR], g.st[B.F_COLOR])
            assert np.array_equal(meta[[B.M_HASH, B.M_KO, B.M_CAPB, B.M_CAPW, B.M_TOPLAY]],
                                  g.meta[[B.M_HASH, B.M_KO, B.M_CAPB, B.M_CAPW, B.M_TOPLAY]])


def test_check_board_detects_corruption():
    """The checker itself: each kind of damage to the kept fields is caught."""
    base = load_board("""
        . X X . .
        . O X . .
        . O . . .
        . . . X .
        . . . . .""")
    check_board(base)
    a = loc(0, 1, 5)   # a black stone of the 3-stone string B5 C5 C4
    e = loc(4, 4, 5)   # an empty point

    def damaged(field, p, delta):
        g = base.copy()
        g.st[field, p] += delta
        return g

    cases = [
        damaged(B.F_LIBS, base.st[B.F_HEAD, a], 1),
        damaged(B.F_SIZE, base.st[B.F_HEAD, a], -1),
        damaged(B.F_HEAD, a, 1),
        damaged(B.F_EIDX, e, 1),
    ]
    g = base.copy()
    g.st[B.F_NEXT, a] = a  # cut the circular list
    cases.append(g)
    g = base.copy()
    g.meta[B.M_NEMPTY] -= 1  # lose an empty point
    cases.append(g)
    g = base.copy()
    g.meta[B.M_HASH] ^= 1
    cases.append(g)
    for g in cases:
        with pytest.raises(AssertionError):
            check_board(g)
