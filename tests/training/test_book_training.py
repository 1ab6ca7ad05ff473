"""engine-train book: searches the first positions of a 9x9 game with the bundled Zero network,
most likely first, writes a book the engine reads, resumes without searching again, and answers
bad input with usage errors."""
from __future__ import annotations

from goengine.engine.colors import BLACK, WHITE
from goengine.engine.book import Book, canonical
from goengine.engine.coords import parse_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.engine.search.result import MoveStat, SearchResult
from goengine.models.names import BUNDLED_DIR
from goengine.training.book.build import candidates

ZERO9 = str(BUNDLED_DIR / "zero-9x9.int8.onnx")


def book_args(out, *more):
    return ("book", "--network", ZERO9, "--out", out, "--visits", 64, "--depth", 3,
            "--branch", 2, "--min-share", 0.05, *more)


def test_a_book_from_the_empty_board_then_resumed(engine_train, tmp_path):
    out = tmp_path / "book.json"
    first = engine_train(*book_args(out, "--positions", 3))
    assert "3 positions (3 searched now)" in first.stdout
    assert "ETA" in first.stdout                                  # progress, a line a position
    book = Book.load(str(out))
    empty = Game(9, Rules(komi=7.5))
    key, _ = canonical(empty.board_colors(), BLACK)
    root = book.positions[key]                                   # the empty board came first
    assert root.visits >= 64 and root.candidates[0][0] == root.move
    assert book.lookup(empty, BLACK) == root.move
    # black's line goes on with the book's move; no line leaves the book on both sides, and
    # none is deeper than the two moves the book has had time for
    after = empty.copy()
    after.play(BLACK, root.move)
    assert canonical(after.board_colors(), after.to_play)[0] in book.positions
    assert all(k[:81].count(".") >= 79 for k in book.positions)

    again = engine_train(*book_args(out, "--positions", 2, "--resume"))
    assert "resuming" in again.stdout and "5 positions (2 searched now)" in again.stdout
    assert set(book.positions) < set(Book.load(str(out)).positions)


def test_candidates_merge_the_moves_that_are_one_position():
    """On the empty board E4, F5, E6 and D5 lead to one position: one candidate with their
    visits; the search's own move comes first all the same."""
    stats = [MoveStat(parse_gtp(v, 9), n, 0.5, 0.1, 0.5)
             for v, n in (("E5", 30), ("E4", 20), ("F5", 20), ("E6", 15), ("D5", 15), ("C3", 0))]
    res = SearchResult(BLACK, stats, 100, 100, 0.0)
    got = candidates(Game(9), res, min_share=0.1, branch=3)
    assert got == [(parse_gtp("E5", 9), 0.3), (parse_gtp("E4", 9), 0.7)]
    assert candidates(Game(9), res, min_share=0.8, branch=3) == [(parse_gtp("E5", 9), 0.3)]


def test_by_the_policy_a_family_counts_by_its_best_move():
    """E7 (prior 5%) is followed before the eight first-line points B9, H9, ... (1% each, 8% in
    all): an opponent plays one move, not a family."""
    ones = ("B9", "H9", "A8", "J8", "A2", "J2", "B1", "H1")
    stats = [MoveStat(parse_gtp("E5", 9), 10, 0.5, 0.5, 0.5), MoveStat(parse_gtp("E7", 9), 0, 0.5,
             0.05, 0.5)] + [MoveStat(parse_gtp(v, 9), 0, 0.5, 0.01, 0.5) for v in ones]
    res = SearchResult(BLACK, stats, 10, 10, 0.0)
    got = candidates(Game(9), res, min_share=0.001, branch=2, by_prior=True)
    assert [lc for lc, _ in got] == [parse_gtp("E5", 9), parse_gtp("E7", 9)]
    assert candidates(Game(9), res, min_share=0.001, branch=2) == [(parse_gtp("E5", 9), 1.0)]


def test_the_first_moves_can_follow_the_policy_widely(engine_train, tmp_path):
    """--wide-depth 1: from the empty board, where black is the book's opponent, every first
    move with 2% of the policy (a symmetric family counted once) is searched, each as likely as
    another; the search alone (64 visits) follows fewer."""
    def first_moves(out, *wide):
        engine_train(*book_args(out, "--positions", 4, "--depth", 1, *wide))
        book = Book.load(str(out))
        return sum(1 for key in book.positions if key[:81].count(".") == 80)
    narrow = first_moves(tmp_path / "narrow.json")
    wide = first_moves(tmp_path / "wide.json", "--wide-depth", 1, "--wide-share", 0.02,
                       "--wide-branch", 8)
    assert wide == 3 and narrow < wide
    made = Book.load(str(tmp_path / "wide.json")).made_by
    assert (made["wide_depth"], made["wide_share"], made["wide_branch"]) == (1, 0.02, 8)


def test_bad_book_commands_are_usage_errors(engine_train, tmp_path):
    out = tmp_path / "book.json"
    engine_train(*book_args(out, "--positions", 1))
    exists = engine_train(*book_args(out, "--positions", 1), ok=False)
    assert exists.returncode == 2 and "--resume" in exists.stderr
    other = engine_train(*book_args(out, "--positions", 1, "--resume", "--komi", 6.5), ok=False)
    assert other.returncode == 2 and "komi 7.5" in other.stderr
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    broken = engine_train("book", "--network", bad, "--out", tmp_path / "b2.json", ok=False)
    assert broken.returncode == 1 and "Traceback" not in broken.stderr
    assert engine_train(*book_args(tmp_path / "b3.json", "--visits", 0), ok=False).returncode == 2


def test_every_line_keeps_one_side_in_the_book(engine_train, tmp_path):
    """Each position the builder searches can be reached by a game in which one colour plays the
    book's moves and the other anything: a line where both leave the book is never searched."""
    out = tmp_path / "book.json"
    engine_train(*book_args(out, "--positions", 8))
    book = Book.load(str(out))
    reached = set()

    def walk(g, ours, ply):
        key = canonical(g.board_colors(), g.to_play)[0]
        if key not in book.positions:
            return
        reached.add(key)
        if ply == 3:
            return
        replies = [book.lookup(g, g.to_play)] if g.to_play == ours else g.legal_moves()
        for lc in replies:
            child = g.copy()
            child.play(g.to_play, lc)
            walk(child, ours, ply + 1)

    for ours in (BLACK, WHITE):
        walk(Game(9, Rules(komi=7.5)), ours, 0)
    assert len(book) == 8 and reached == set(book.positions)
