"""engine-gtp --book: a real engine process plays an opening book's moves, mapped onto the game's
orientation, only at the book's komi, and plays on without a book it cannot read."""
from __future__ import annotations

import subprocess
import sys

from goengine.engine.board import BLACK
from goengine.engine.book import Book
from goengine.engine.coords import parse_gtp
from goengine.engine.game import Game
from goengine.engine.rules import Rules
from goengine.models.names import BUNDLED_DIR

ZERO9 = str(BUNDLED_DIR / "zero-9x9.int8.onnx")


def write_book(path, komi: float = 7.5) -> str:
    """A book whose moves no search would choose: black A1 on the empty board, white B9 after
    black C4 (a point on no axis of symmetry, so each orientation has one answer)."""
    book = Book(9, komi)
    g = Game(9, Rules(komi=komi))
    book.add(g, BLACK, parse_gtp("A1", 9), 1, 0.5, [])
    g.play(BLACK, parse_gtp("C4", 9))
    book.add(g, g.to_play, parse_gtp("B9", 9), 1, 0.5, [])
    book.save(str(path))
    return str(path)


def test_the_book_move_is_played_in_every_orientation(gtp_engine, tmp_path):
    path = write_book(tmp_path / "book.json")
    with gtp_engine("--zero", ZERO9, "--size", "9", "--playouts", "16", "--book", path) as e:
        e.ok("boardsize 9", timeout=120)
        assert e.ok("genmove b", timeout=120) == "A1"
        e.ok("clear_board")
        e.ok("play b C4")
        assert e.ok("genmove w", timeout=60) == "B9"
        e.ok("clear_board")
        e.ok("play b G6")             # C4 rotated 180 degrees: B9 becomes H1
        assert e.ok("genmove w", timeout=60) == "H1"
        e.ok("clear_board")
        e.ok("play b C6")             # C4 reflected top to bottom: B9 becomes B1
        assert e.ok("genmove w", timeout=60) == "B1"
        e.ok("goengine-set_param use_book false")
        e.ok("clear_board")
        assert e.ok("genmove b", timeout=60) != "A1"


def test_genmove_analyze_reports_the_book_move(gtp_engine, tmp_path, sabaki_parse):
    """Sabaki's genmove_analyze gets one analysis line for a book move: the move, the visits
    and win rate of the search that chose it."""
    path = write_book(tmp_path / "book.json")
    with gtp_engine("--zero", ZERO9, "--size", "9", "--playouts", "16", "--book", path) as e:
        e.ok("boardsize 9", timeout=120)
        e.wait_loaded()
        e.send("3 kata-genmove_analyze B 10\n")
        assert e.line() == "=3\n"
        info = e.line(timeout=10).rstrip("\n")
        parsed = sabaki_parse(info, True)
        assert [(p["vertex"], p["visits"], p["pv"]) for p in parsed] == [("A1", 1, ["A1"])]
        assert e.line(timeout=10) == "play A1\n"


def test_no_book_move_at_another_komi(gtp_engine, tmp_path):
    path = write_book(tmp_path / "book.json", komi=5.5)
    with gtp_engine("--zero", ZERO9, "--size", "9", "--playouts", "16", "--book", path) as e:
        e.ok("boardsize 9", timeout=120)
        e.ok("komi 7.5")
        assert e.ok("genmove b", timeout=120) != "A1"
        e.ok("clear_board")
        e.ok("komi 5.5")
        assert e.ok("genmove b", timeout=60) == "A1"


def test_a_bad_book_is_left_out_with_a_warning(gtp_engine, tmp_path):
    bad = tmp_path / "book.json"
    bad.write_text('{"format": "goengine-book", "version": 1, "size": 9, "komi": 7.5}')
    with gtp_engine("--zero", ZERO9, "--size", "9", "--playouts", "16", "--book", str(bad),
                    quiet=False) as e:
        e.ok("boardsize 9", timeout=120)
        assert e.ok("genmove b", timeout=120)
        assert any("no opening book" in line and "positions" in line for line in e.stderr_lines)


def test_book_and_no_book_exclude_each_other(repo_root, tmp_path):
    path = write_book(tmp_path / "book.json")
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--book", path, "--no-book"],
                          capture_output=True, cwd=repo_root, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert b"--book and --no-book exclude each other" in proc.stderr
