"""How far an opening book carried goengine through a match: for each game of an `engine-match
--sgf-dir` record, the moves goengine played from the book before the game left it.

    python experiments/book_coverage.py docs/results/matches/book-vs-nobook-9x9-1s \
        models/bundled/book-9x9.json [--engine A]

A move counts when the book holds the position and goengine played the book's move there; the
count stops at goengine's first position the book does not hold.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

import click

from goengine.engine.board import BLACK, WHITE
from goengine.engine.book import Book
from goengine.engine.replay import positions
from goengine.engine.rules import Rules
from goengine.sgf_tools.reader import read_sgf_file


def book_moves(record, book: Book, colour: int) -> tuple[int, int]:
    """(moves `colour` played from the book, the move number where it left it; 0: never)."""
    played = 0
    rules = Rules(komi=book.komi, scoring=book.scoring)
    for number, (game, mover, lc) in enumerate(positions(record, rules), start=1):
        if mover == colour:
            move = book.lookup(game, mover)
            if move is None:
                return played, number
            played += move == lc
    return played, 0


@click.command()
@click.argument("record_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("book_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--engine", default="A", show_default=True, type=click.Choice(["A", "B"]),
              help="the match's label of the engine that played the book")
def main(record_dir, book_file, engine):
    book = Book.load(book_file)
    rows = [json.loads(line) for line in (Path(record_dir) / "results.jsonl").open()]
    counts = {True: [], False: []}
    for row in rows:
        record = read_sgf_file(Path(record_dir) / f"game-{row['index']:04d}.sgf")
        colour = BLACK if row["black"] == engine else WHITE
        n, left = book_moves(record, book, colour)
        counts[row["winner"] == engine].append(n)
        click.echo(f"game {row['index']}: {n} book moves, left the book at move {left or '-'}, "
                   f"{'won' if row['winner'] == engine else 'lost'}")
    every = counts[True] + counts[False]
    click.echo(f"{len(every)} games: {statistics.mean(every):.2f} book moves a game "
               f"({min(every)} to {max(every)}); in the games won "
               f"{statistics.mean(counts[True]) if counts[True] else float('nan'):.2f}, lost "
               f"{statistics.mean(counts[False]) if counts[False] else float('nan'):.2f}")


if __name__ == "__main__":
    main()
