"""The opening book (engine.book): one entry per position under the 8 symmetries, its move mapped
back onto the game's board, only for the game it was made for, and clear errors for bad files."""
from __future__ import annotations

import json

import numpy as np
import pytest

from goengine.engine import symmetry
from goengine.engine.board import BLACK, WHITE
from goengine.engine.book import Book, BookError, canonical, map_move
from goengine.engine.coords import format_gtp, loc, loc_to_rc, parse_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules

N = 9


def played(moves: list[str], komi: float = 7.5, scoring: str = "area") -> Game:
    g = Game(N, Rules(komi=komi, scoring=scoring))
    for v in moves:
        g.play(g.to_play, parse_gtp(v, N))
    return g


def transformed(moves: list[str], k: int) -> list[str]:
    return [format_gtp(map_move(parse_gtp(v, N), N, k), N) for v in moves]


def test_map_move_follows_the_board_symmetry():
    board = np.zeros((N, N), dtype=np.int8)
    r, c = 2, 6                      # G7
    board[r, c] = 1
    for k in range(symmetry.N_SYMMETRIES):
        moved = map_move(loc(r, c, N), N, k)
        assert symmetry.apply(board, k)[loc_to_rc(moved, N)] == 1
        assert map_move(moved, N, symmetry.INVERSE[k]) == loc(r, c, N)
    assert map_move(-1, N, 3) == -1      # a pass stays a pass


def test_the_key_is_the_same_in_every_orientation_and_differs_by_the_side_to_move():
    line = ["C3", "G7", "D7"]
    keys = {canonical(played(transformed(line, k)).board_colors(), WHITE)[0] for k in range(8)}
    assert len(keys) == 1
    assert canonical(played(line).board_colors(), BLACK)[0] != keys.pop()


@pytest.mark.parametrize("k", range(8))
def test_a_move_recorded_in_one_orientation_is_found_in_another(k):
    book = Book(N, 7.5)
    line, reply = ["C3", "G7", "D7"], "F3"
    g = played(line)
    book.add(g, g.to_play, parse_gtp(reply, N), visits=100, winrate=0.4,
             candidates=[(parse_gtp(reply, N), 0.6)])
    rotated = played(transformed(line, k))
    assert book.lookup(rotated, rotated.to_play) == map_move(parse_gtp(reply, N), N, k)
    assert book.lookup(rotated, BLACK if rotated.to_play == WHITE else WHITE) is None


def test_the_book_answers_as_a_search_reports():
    book = Book(N, 7.5)
    g = played(["C4"])                  # on no axis of symmetry: one answer per orientation
    book.add(g, WHITE, parse_gtp("G7", N), 1000, 0.45,
             [(parse_gtp("G7", N), 0.6), (parse_gtp("C7", N), 0.2)])
    rotated = played(transformed(["C4"], 1))
    res = book.result(rotated, WHITE)
    best = res.best
    assert best.move == book.lookup(rotated, WHITE) == map_move(parse_gtp("G7", N), N, 1)
    assert (best.visits, best.winrate, best.prior, best.pv) == (600, 0.45, 0.6, [best.move])
    assert len(res.moves) == 1 and res.root_visits == 1000 and res.simulations == 0
    assert book.result(played(["C4"]), BLACK) is None


def test_only_the_game_it_was_made_for():
    book = Book(N, 7.5)
    g = played([])
    book.add(g, BLACK, parse_gtp("E5", N), 100, 0.5, [])
    assert book.lookup(played([]), BLACK) == parse_gtp("E5", N)
    assert book.lookup(played([], komi=6.5), BLACK) is None
    assert book.lookup(played([], scoring="territory"), BLACK) is None
    assert book.lookup(Game(13, Rules(komi=7.5)), BLACK) is None
    assert book.lookup(played(["E5"]), WHITE) is None           # not in the book


def test_save_and_load_keep_every_entry(tmp_path):
    book = Book(N, 7.5, made_by={"visits": 100})
    for line in ([], ["E5"], ["E5", "C3"]):
        g = played(line)
        best = g.legal_moves()[3]
        book.add(g, g.to_play, best, 100, 0.55, [(best, 0.5), (g.legal_moves()[4], 0.2)])
    path = tmp_path / "book.json"
    book.save(str(path))
    again = Book.load(str(path))
    assert again.positions.keys() == book.positions.keys()
    for key, e in book.positions.items():
        got = again.positions[key]
        assert (got.move, got.visits, [m for m, _ in got.candidates]) == \
               (e.move, e.visits, [m for m, _ in e.candidates])
        assert got.winrate == pytest.approx(e.winrate, abs=1e-4)
    assert again.made_by == {"visits": 100} and (again.size, again.komi) == (N, 7.5)


def _valid() -> dict:
    book = Book(N, 7.5)
    book.add(played([]), BLACK, parse_gtp("E5", N), 10, 0.5, [])
    return book.to_json()


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="other"), "not a goengine book"),
    (lambda d: d.update(version=9), "book version 9"),
    (lambda d: d.update(size=40), "not a board size"),
    (lambda d: d.update(komi="x"), "not a number"),
    (lambda d: d.update(scoring="stones"), "not area or territory"),
    (lambda d: d.update(positions=[]), "no \"positions\""),
    (lambda d: d["positions"].update({"xo": {"move": "A1"}}), "the key is not 81"),
    (lambda d: d["positions"].update({"." * 81 + "w": {"move": "Z9"}}), "position"),
    (lambda d: d["positions"].update({"." * 81 + "w": {}}), "no \"move\""),
    (lambda d: d["positions"].update({"x" + "." * 80 + "w": {"move": "A9"}}), "on a stone"),
], ids=["format", "version", "size", "komi", "scoring", "positions", "key", "vertex",
        "no move", "on a stone"])
def test_bad_book_files_are_clear_errors(tmp_path, change, message):
    data = _valid()
    change(data)
    path = tmp_path / "book.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BookError, match=message):
        Book.load(str(path))


def test_unreadable_files_are_clear_errors(tmp_path):
    with pytest.raises(BookError, match="cannot read"):
        Book.load(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(BookError, match="not a JSON book"):
        Book.load(str(tmp_path / "bad.json"))


def test_an_illegal_book_move_is_not_played():
    """The key holds the stones, not the ko: a book move that retakes a ko at once is left to the
    search."""
    g = played(["D6", "E6", "C5", "D5", "D4", "E4", "A1", "F5", "E5"])    # black E5 takes D5
    ko = parse_gtp("D5", N)
    assert g.ko_point == ko and not g.is_legal(WHITE, ko)
    book = Book(N, 7.5)
    book.add(g, WHITE, ko, 10, 0.5, [])
    assert book.lookup(g, WHITE) is None
