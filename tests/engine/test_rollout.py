"""The fast rollout policy: pattern keys, incremental playout, model files (its training:
tests/training/test_rollout_training.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from goengine.engine import board as B
from goengine.engine.board import BLACK, EMPTY, WHITE, new_board
from goengine.engine.coords import loc
from goengine.engine.game import Game
from goengine.engine.playout import seed as nb_seed
from goengine.engine.rollout import patterns as P
from goengine.engine.rollout.policy import (PlayoutRules, RolloutModelError, RolloutPolicy,
                                   checked_playout, incremental_weights, policy_playout,
                                   scratch_weights)
from goengine.models.names import BUNDLED_DIR, MODEL_FILES
from positions import BIG_SEKI, check_board, load_board, pt

BUNDLED_PATH = BUNDLED_DIR / MODEL_FILES["rollout"]


# ---- helpers ---------------------------------------------------------------------------------
def random_history(n: int, moves: int, seed: int) -> list[tuple[int, int, int]]:
    """(colour, row, col) of a random legal game of `moves` moves (no own-eye fills)."""
    rng = np.random.default_rng(seed)
    st, meta = new_board(n)
    out = []
    c = BLACK
    for _ in range(moves):
        cands = [loc(r, cc, n) for r in range(n) for cc in range(n)
                 if P.is_candidate(st, meta, loc(r, cc, n), c)]
        if not cands:
            break
        p = int(rng.choice(cands))
        B.play(st, meta, p, c)
        out.append((c, p // (n + 2) - 1, p % (n + 2) - 1))
        c = 3 - c
    return out


def transform_rc(r: int, c: int, n: int, k: int) -> tuple[int, int]:
    """Symmetry k of the square applied to (r, c) about the board centre."""
    x, y = 2 * r - (n - 1), 2 * c - (n - 1)
    m = P.SYM[k]
    x, y = m[0, 0] * x + m[0, 1] * y, m[1, 0] * x + m[1, 1] * y
    return (x + n - 1) // 2, (y + n - 1) // 2


def replay(history, n, k=0, swap=False):
    """Board after the history moved by symmetry k (and with colours swapped); also returns the
    stones the last move captured."""
    st, meta = new_board(n)
    caps = np.empty(st.shape[1], dtype=np.int64)
    ncaps = 0
    for c, r, cc in history:
        r2, c2 = transform_rc(r, cc, n, k)
        col = 3 - c if swap else c
        ncaps = P.play_record(st, meta, loc(r2, c2, n), col, caps)
    return st, meta, caps[:ncaps].copy()


def keys_by_rc(st, meta, c, caps):
    n = int(meta[B.M_N])
    a = st.shape[1]
    cand = np.empty(a, dtype=np.int64)
    keys = np.empty((a, P.NK), dtype=np.int64)
    k = P.position_keys(st, meta, c, caps, len(caps), cand, keys)
    return {(int(p) // (n + 2) - 1, int(p) % (n + 2) - 1): keys[j].copy()
            for j, p in enumerate(cand[:k])}


def harvested_policy(n=19, games=6, seed=0) -> RolloutPolicy:
    """A policy with random weights on every pattern key met in some random games, so that the
    playout's table lookups hit."""
    rng = np.random.default_rng(seed)
    found = set()
    for g in range(games):
        hist = random_history(n, int(rng.integers(20, 3 * n * n // 2)), seed + g)
        for cut in range(0, len(hist), 7):
            st, meta, caps = replay(hist[:cut], n)
            c = WHITE if cut % 2 else BLACK
            for v in keys_by_rc(st, meta, c, caps).values():
                found.update(int(x) for x in v if x >= 0)
    found.update(P.make_key(P.FAM_SCALAR, i) for i in range(P.N_SCALARS))
    keys = np.array(sorted(found), dtype=np.int64)
    return RolloutPolicy(keys, rng.normal(0, 1.0, len(keys)))


@pytest.fixture(scope="module")
def policy():
    return harvested_policy()


# ---- pattern keys ----------------------------------------------------------------------------
@pytest.mark.parametrize("n,moves,seed", [(19, 60, 1), (19, 200, 2), (9, 45, 3), (13, 90, 4)])
def test_keys_are_symmetry_and_colour_invariant(n, moves, seed):
    hist = random_history(n, moves, seed)
    c = WHITE if len(hist) % 2 else BLACK
    st, meta, caps = replay(hist, n)
    base = keys_by_rc(st, meta, c, caps)
    assert base
    cols = [P.K_3X3, P.K_DIAMOND, P.K_SAVE, P.K_NAKADE]
    for k in range(8):
        for swap in (False, True):
            st2, meta2, caps2 = replay(hist, n, k, swap)
            other = keys_by_rc(st2, meta2, 3 - c if swap else c, caps2)
            assert len(other) == len(base)
            for (r, cc), v in base.items():
                v2 = other[transform_rc(r, cc, n, k)]
                assert np.array_equal(v[cols], v2[cols]), (k, swap, r, cc)
                # the neighbour feature is keyed by raw relative position: present in both
                assert (v[P.K_NEIGHBOUR] >= 0) == (v2[P.K_NEIGHBOUR] >= 0)
                if k == 0:
                    assert v[P.K_NEIGHBOUR] == v2[P.K_NEIGHBOUR]


def test_canonical_3x3_is_minimal_over_symmetries_and_distinguishes_colours():
    rng = np.random.default_rng(5)
    for _ in range(300):
        states = rng.integers(0, 8, 8)
        code = int(sum(int(s) << (3 * i) for i, s in enumerate(states)))
        can = P.canon3(code)
        assert can <= code
        for k in range(8):
            moved = int(sum(int(states[i]) << (3 * P.P3[k, i]) for i in range(8)))
            assert P.canon3(moved) == can
        # colour swap for black equals no swap for white
        assert P.key3(code, WHITE) == P.make_key(P.FAM_3X3, P.canon3(P.swap_code(code, 8)))


def test_response_key_depends_on_candidate_slot():
    g = load_board("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    g.play(BLACK, pt(g, "D4"))
    keys = keys_by_rc(g.st, g.meta, WHITE, np.zeros(0, dtype=np.int64))
    # on the empty board around the centre, the 4 orthogonal neighbours are one key,
    # the 4 diagonal ones another, the distance-2 points a third
    d = {rc: v[P.K_DIAMOND] for rc, v in keys.items() if v[P.K_DIAMOND] >= 0}
    assert len(d) == 12
    orth = {d[(2, 3)], d[(4, 3)], d[(3, 2)], d[(3, 4)]}
    diag = {d[(2, 2)], d[(2, 4)], d[(4, 2)], d[(4, 4)]}
    far = {d[(1, 3)], d[(5, 3)], d[(3, 1)], d[(3, 5)]}
    assert len(orth) == len(diag) == len(far) == 1
    assert len(orth | diag | far) == 3


def test_save_atari_and_nakade_features():
    g = load_board("""
        . . . . . . .
        . . O . . . .
        . O X O . . .
        . . X O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    g.play(WHITE, pt(g, "B4"))  # black C5-C4 is now in atari, its liberty is C3
    n = g.size
    keys = keys_by_rc(g.st, g.meta, BLACK, np.zeros(0, dtype=np.int64))
    # the liberty C3 (row 4, col 2) extends to >= 2 liberties
    rc = (4, 2)
    assert keys[rc][P.K_SAVE] == P.make_key(P.FAM_SCALAR, P.SCALAR_SAVE_ATARI)
    assert sum(v[P.K_SAVE] >= 0 for v in keys.values()) == 1

    # black captures a white three-stone string: nakade keys on the captured points
    g = load_board("""
        . X X X X X .
        X O O O . X .
        X X X X X X .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, to_play=BLACK)
    g.play(BLACK, pt(g, "E6"))
    st, meta = g.st.copy(), g.meta.copy()
    caps = np.array([loc(1, c, n) for c in (1, 2, 3)], dtype=np.int64)
    assert all(g.st[B.F_COLOR, x] == EMPTY for x in caps)
    keys = keys_by_rc(st, meta, WHITE, caps)
    nk = {rc: v[P.K_NAKADE] for rc, v in keys.items() if v[P.K_NAKADE] >= 0}
    assert set(nk) == {(1, 1), (1, 2), (1, 3)}
    assert nk[(1, 1)] == nk[(1, 3)] != nk[(1, 2)]  # the ends are symmetric, the middle is vital


# ---- incremental playout -----------------------------------------------------------------------
@pytest.mark.parametrize("n", [9, 13, 19])
def test_incremental_state_equals_scratch_during_playouts(policy, n):
    rng = np.random.default_rng(n)
    for trial in range(4 if n == 19 else 8):
        st, meta = new_board(n)
        stop = int(rng.integers(0, 2 * n * n))
        _score, _moves, errors, caps = checked_playout(st, meta, 3 * n * n, policy.tables, stop)
        assert errors[:3].tolist() == [0, 0, 0]
        a = st.shape[1]
        inc = np.zeros(a)
        scr = np.zeros(a)
        incremental_weights(st, meta, caps, len(caps), policy.tables, inc)
        k = scratch_weights(st, meta, caps, len(caps), policy.tables, scr)
        assert k == int((scr > 0).sum())
        np.testing.assert_allclose(inc, scr, rtol=1e-9, atol=0)


def test_incremental_weights_equal_scratch_after_captures(policy):
    g = load_board("""
        . X X X X X .
        X O O O . X .
        X X X X X X .
        . . . . . . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
    """, to_play=BLACK)
    g.play(BLACK, pt(g, "E6"))
    caps = np.array([loc(1, c, 7) for c in (1, 2, 3)], dtype=np.int64)
    keys = np.arange(P.N_SCALARS, dtype=np.int64)  # family 0
    extra = [v[P.K_NAKADE] for v in keys_by_rc(g.st, g.meta, WHITE, caps).values()
             if v[P.K_NAKADE] >= 0]
    allk = np.unique(np.concatenate([policy.keys, np.array(extra), keys]))
    pol = RolloutPolicy(allk, np.random.default_rng(1).normal(size=len(allk)))
    inc = np.zeros(g.st.shape[1])
    scr = np.zeros(g.st.shape[1])
    incremental_weights(g.st, g.meta, caps, len(caps), pol.tables, inc)
    scratch_weights(g.st, g.meta, caps, len(caps), pol.tables, scr)
    np.testing.assert_allclose(inc, scr, rtol=1e-9, atol=0)
    assert scr[caps].min() > 0


@pytest.mark.parametrize("n", [9, 19])
def test_policy_playout_ends_legal_scored_and_keeps_eyes(policy, n):
    for seed in range(5 if n == 19 else 20):
        np.random.seed(seed)
        nb_seed(seed)
        st, meta = new_board(n)
        score, moves, errors, _caps = checked_playout(st, meta, 3 * n * n, policy.tables, -1)
        assert errors[0] == 0, "illegal move played"
        assert errors[1] == 0, "own true eye filled"
        assert errors[2] == 0, "kept values differ from scratch"
        g = Game(n)
        g.st, g.meta = st, meta
        check_board(g)
        own = np.empty(st.shape[1], dtype=np.int8)
        assert B.area_ownership(st.copy(), meta.copy(), own) == score
        if moves < 3 * n * n:
            # ended by two passes: neither side had a move left
            assert meta[B.M_PASSES] >= 2
            for c in (BLACK, WHITE):
                assert not any(P.is_candidate(st, meta, p, c) for p in range(st.shape[1])
                               if st[B.F_COLOR, p] == EMPTY)
    # the plain entry point has the engine.playout.playout contract
    st, meta = new_board(n)
    amaf = np.zeros(st.shape[1], dtype=np.int8)
    score, own = policy_playout(st, meta, 3 * n * n, amaf, policy.tables)
    assert own.dtype == np.int8 and own.shape == (st.shape[1],)
    assert int(score) == int((own == BLACK).sum()) - int((own == WHITE).sum())
    assert set(np.unique(amaf)) <= {0, 1, 2} and (amaf > 0).sum() > 0


def rule_errors(policy, n, rules, index):
    """(errors[index] summed, moves) over 12 checked playouts from the empty n x n board with
    these rules; every move legal, no own eye filled, the kept weights those of scratch."""
    tables = policy.with_rules(rules).tables
    count = moves_total = 0
    for seed in range(12):
        nb_seed(seed)
        st, meta = new_board(n)
        _score, moves, errors, _caps = checked_playout(st, meta, 3 * n * n, tables, -1)
        assert errors[:3].tolist() == [0, 0, 0]
        count += int(errors[index])
        moves_total += moves
    return count, moves_total


@pytest.mark.parametrize("n", [9, 13])
def test_self_atari_rule_redraws_self_ataris(policy, n):
    """With the rule on, a drawn self-atari of two or more stones is drawn again: far fewer are
    played than by the softmax alone, and the kept weights stay those of the position (the
    temporary zero is undone)."""
    played = {}
    for rate in (0.0, 1.0):
        self_ataris, moves_total = rule_errors(policy, n, PlayoutRules(self_atari=rate), 3)
        played[rate] = self_ataris / moves_total
    assert played[0.0] > 0.005, played       # the random weights do play them
    assert played[1.0] < 0.2 * played[0.0], played


@pytest.mark.parametrize("n", [9, 13])
def test_capture_rule_takes_strings_left_in_atari(policy, n):
    """With the capture rule always on, no move leaves uncaptured a string of two or more
    opponent stones that a recent move left in atari; the softmax alone leaves some."""
    missed = {rate: rule_errors(policy, n, PlayoutRules(capture=rate), 4)[0]
              for rate in (0.0, 1.0)}
    assert missed[0.0] > 0 and missed[1.0] == 0, missed


def test_rules_out_of_range_are_refused(policy):
    for rules in ({"self_atari": 1.5}, {"capture": -0.1}, {"big_self_atari": 2.0}):
        with pytest.raises(RolloutModelError, match="rule's chance"):
            policy.with_rules(PlayoutRules(**rules))


def test_own_true_eyes_get_no_weight():
    g = load_board("""
        . X . X O
        X X X X O
        O O O O O
        . . . . .
        . . . . .
    """)
    keys = np.arange(P.N_SCALARS, dtype=np.int64)  # family 0
    pol = RolloutPolicy(keys, np.zeros(len(keys)))
    a = g.st.shape[1]
    w = np.zeros(a)
    incremental_weights(g.st, g.meta, np.zeros(0, dtype=np.int64), 0, pol.tables, w)
    assert B.legality(g.st, g.meta, pt(g, "A5"), BLACK) == B.LEGAL
    assert w[pt(g, "A5")] == 0.0 and w[pt(g, "C5")] == 0.0  # black's own true eyes
    assert w[pt(g, "E1")] > 0.0


# ---- model files -----------------------------------------------------------------------------
def test_save_load_round_trip(tmp_path, policy):
    path = tmp_path / "r.npz"
    policy.save(path, heldout_top1=0.5)
    back = RolloutPolicy.load(path)
    assert np.array_equal(back.keys, policy.keys)
    assert np.array_equal(back.weights, policy.weights)
    assert back.meta["heldout_top1"] == 0.5
    assert np.array_equal(back.hkeys, policy.hkeys)  # same table, values interleaved


def test_missing_or_corrupt_file_gives_clear_error(tmp_path, policy):
    with pytest.raises(RolloutModelError, match="no such rollout policy file"):
        RolloutPolicy.load(tmp_path / "nope.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"this is not a zip file at all")
    with pytest.raises(RolloutModelError, match="corrupt or unreadable"):
        RolloutPolicy.load(bad)
    good = tmp_path / "good.npz"
    policy.save(good)
    trunc = tmp_path / "trunc.npz"
    trunc.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(RolloutModelError):
        RolloutPolicy.load(trunc)
    other = tmp_path / "other.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(RolloutModelError, match="missing"):
        RolloutPolicy.load(other)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, keys=policy.keys, weights=policy.weights, meta=np.array('{"format": "x"}'))
    with pytest.raises(RolloutModelError, match="format"):
        RolloutPolicy.load(wrong)
    unsorted = tmp_path / "unsorted.npz"
    np.savez(unsorted, keys=policy.keys[::-1], weights=policy.weights,
             meta=np.array(json.dumps({"format": "goengine-rollout-v1"})))
    with pytest.raises(RolloutModelError, match="sorted"):
        RolloutPolicy.load(unsorted)
    with pytest.raises(RolloutModelError):
        RolloutPolicy(policy.keys, policy.weights[:-1])


def test_bundled_model_if_present():
    if not BUNDLED_PATH.is_file():
        pytest.skip("no bundled rollout.npz")
    pol = RolloutPolicy.load(BUNDLED_PATH)
    assert BUNDLED_PATH.stat().st_size < 8 * 2**20
    assert pol.meta["heldout_top1"] >= 0.24
    assert pol.meta["heldout_files"] == ["tygem9d-2015-06.tar.bz2"]
    assert "tygem9d-2015-06.tar.bz2" not in pol.meta["training_files"]
    g = Game(19)
    g.play(BLACK, pt(g, "Q16"))
    probs = pol.move_probabilities(g)
    assert abs(sum(probs.values()) - 1.0) < 1e-9
    assert pol.best_move(g) in probs
    for n in (9, 19):
        st, meta = new_board(n)
        _score, _moves, errors, _caps = checked_playout(st, meta, 3 * n * n, pol.tables, -1)
        assert errors[:3].tolist() == [0, 0, 0]


def test_uniform_policy_plays_to_the_end():
    pol = RolloutPolicy.uniform()
    st, meta = new_board(9)
    amaf = np.zeros(st.shape[1], dtype=np.int8)
    score, own = policy_playout(st, meta, 3 * 81, amaf, pol.tables)
    assert -81 <= score <= 81 and (own > 0).sum() > 40


def test_big_self_atari_rule_keeps_a_seki_between_big_groups():
    """With the rule on, white never fills K2 or L1, and the 26 stones end most rollouts white
    (163 of 200 when written; black may still fill a liberty itself, a self-atari of four, and
    the rollout go wrong after it). With the softmax alone white gives the seki up in nearly
    every rollout (1 of 200 kept), which is how the game was lost: the search saw every move as
    lost and played K2."""
    if not BUNDLED_PATH.is_file():
        pytest.skip("no bundled rollout.npz")
    pol = RolloutPolicy.load(BUNDLED_PATH)
    g = load_board(BIG_SEKI, to_play=WHITE)
    big_string = [pt(g, v) for v in ("L7", "K5", "H3", "J2", "H1", "O1")]
    kept = {}
    for rate in (0.0, 1.0):
        tables = pol.with_rules(PlayoutRules(big_self_atari=rate)).tables
        kept[rate] = 0
        for seed in range(60):
            nb_seed(seed)
            st, meta = g.st.copy(), g.meta.copy()
            amaf = np.zeros(st.shape[1], dtype=np.int8)
            _score, own = policy_playout(st, meta, 400, amaf, tables)
            kept[rate] += all(own[p] == WHITE for p in big_string)
    assert kept[1.0] >= 36 and kept[0.0] <= 3, kept


@pytest.mark.parametrize("n", [9, 13])
def test_big_self_atari_rule_redraws_every_big_self_atari(policy, n):
    """With the rule always on, no playout puts a string of seven or more stones in atari
    (capturing nothing); with the softmax alone random weights do."""
    played = {rate: rule_errors(policy, n, PlayoutRules(big_self_atari=rate), 5)[0]
              for rate in (0.0, 1.0)}
    assert played[0.0] > 0 and played[1.0] == 0, played
