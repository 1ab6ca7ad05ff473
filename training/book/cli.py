"""`engine-train book`: an opening book from long searches of a Zero network (training.book.build)."""
from __future__ import annotations

import os

import click

from goengine.engine.book import Book, BookError
from goengine.models.metadata import ModelError
from goengine.training.book.build import BookBuilder, BookConfig, made_by

D = BookConfig(network="")


@click.command("book")
@click.option("--network", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the Zero network (ONNX) to search with, e.g. models/bundled/zero-9x9.int8.onnx")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="the book file (JSON), written after every position")
@click.option("--size", default=D.size, show_default=True, type=click.IntRange(2, 25))
@click.option("--komi", default=D.komi, show_default=True, type=click.FloatRange(-1000, 1000))
@click.option("--scoring", default=D.scoring, show_default=True,
              type=click.Choice(["area", "territory"]))
@click.option("--visits", default=D.visits, show_default=True, type=click.IntRange(1),
              help="search visits per position")
@click.option("--depth", default=D.depth, show_default=True, type=click.IntRange(1),
              help="moves from the empty board")
@click.option("--positions", default=D.positions, show_default=True, type=click.IntRange(1),
              help="positions to search (the most likely first)")
@click.option("--min-share", default=D.min_share, show_default=True,
              type=click.FloatRange(0, 1, min_open=True),
              help="follow the moves with at least this share of a search's visits")
@click.option("--branch", default=D.branch, show_default=True, type=click.IntRange(1),
              help="... at most this many of them")
@click.option("--wide-depth", default=D.wide_depth, show_default=True, type=click.IntRange(0),
              help="in the first moves of the game the opponent's replies are every move the "
                   "network's policy gives --wide-share, each as likely as another (another "
                   "program's openings)")
@click.option("--wide-share", default=D.wide_share, show_default=True,
              type=click.FloatRange(0, 1, min_open=True))
@click.option("--wide-branch", default=D.wide_branch, show_default=True, type=click.IntRange(1))
@click.option("--threads", default=D.threads, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=D.seed, show_default=True, type=click.IntRange(0))
@click.option("--resume", is_flag=True, help="go on with the book in --out")
def book_command(network, out, size, komi, scoring, visits, depth, positions, min_share, branch,
                 wide_depth, wide_share, wide_branch, threads, seed, resume):
    """Build an opening book: the first positions of a game searched long, best-first."""
    cfg = BookConfig(network=network, size=size, komi=komi, scoring=scoring, visits=visits,
                     depth=depth, positions=positions, min_share=min_share, branch=branch,
                     wide_depth=wide_depth, wide_share=wide_share, wide_branch=wide_branch,
                     threads=threads, seed=seed)
    if os.path.exists(out) and not resume:
        raise click.UsageError(f"{out} exists: --resume to go on with it, or another --out")
    if resume and os.path.exists(out):
        try:
            book = Book.load(out)
        except BookError as e:
            raise click.ClickException(str(e))
        if (book.size, book.komi, book.scoring) != (size, komi, scoring):
            raise click.UsageError(f"{out} is a {book.size}x{book.size} book at komi "
                                   f"{book.komi:g} ({book.scoring} scoring), not {size}x{size} "
                                   f"at {komi:g} ({scoring})")
        click.echo(f"resuming {out}: {len(book)} positions")
    else:
        book = Book(size, komi, scoring, made_by(cfg))
    try:
        builder = BookBuilder(cfg, book)
    except ModelError as e:
        raise click.ClickException(str(e))
    searched = builder.run(out, report=click.echo)
    click.echo(f"{out}: {len(book)} positions ({searched} searched now)")
