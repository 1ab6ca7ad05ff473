"""The regression set of positions where goengine's matches swung, and GNU Go as their judge.

Shared by `find_swings.py`, which builds the set from match records, and `bench_regression.py`,
which plays it. A position is stored whole (the SGF of the game up to the move), so the set
stands without the records it came from; its scores are GNU Go's `estimate_score`, in points
from the view of the side to move (goengine's side in the game), each taken after a move and
GNU Go's own reply to it, so that both sides have moved once and the estimate does not reward
the side that just moved for a threat left unanswered.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from data_paths import gnugo_argv
from goengine.engine.coords import format_gtp, loc
from goengine.gtp.client import GtpClient, GtpError
from goengine.sgf_tools import GameRecord, write_sgf

SET_PATH = Path(__file__).resolve().parent / "regression" / "positions.json"
GNUGO_LEVEL = 10
# a move GNU Go values within this fraction of its best is as good an answer as its best
ACCEPT_FRACTION = 0.9


@dataclass(frozen=True)
class Position:
    """One position of the set: goengine (`to_play`) played `played` here in `source` and the
    estimate fell by `drop` points over that move and the reply."""
    id: str
    source: str                  # the match record, relative to the repository
    size: int
    komi: float
    move_number: int             # moves played before this position
    to_play: str                 # 'b' or 'w': goengine's colour in the game
    sgf: str                     # the game up to this position
    played: str                  # goengine's move in the game (GTP vertex)
    drop: float                  # estimate before minus after the move and the game's reply
    score_before: float          # GNU Go's estimate here, to_play's view
    score_after_played: float    # after `played` and GNU Go's reply, to_play's view
    score_after_best: float      # after GNU Go's best move and its reply, to_play's view
    gnugo_move: str              # GNU Go's move here (level 10)
    acceptable: list[str] = field(default_factory=list)   # moves that count as right
    top_moves: list[tuple[str, float]] = field(default_factory=list)   # GNU Go's, with values
    result: str = ""             # the game's result (RE)

    @property
    def threshold(self) -> float:
        """A move is right by the estimate when its score lies nearer the best move's than
        the played move's."""
        return (self.score_after_best + self.score_after_played) / 2


def load_set(path: str | os.PathLike = SET_PATH) -> tuple[list[dict], list[Position]]:
    """How the set was made (a date, command and judge for each find_swings run) and its
    positions."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    positions = [Position(**{**p, "top_moves": [tuple(t) for t in p["top_moves"]]})
                 for p in data["positions"]]
    return data["made"], positions


def save_set(path: str | os.PathLike, made: list[dict], positions: list[Position]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    data = {"made": made, "positions": [dataclasses.asdict(p) for p in positions]}
    Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def position_sgf(record: GameRecord, upto: int) -> str:
    """The record's first `upto` moves as an SGF game with no result."""
    cut = dataclasses.replace(record, moves=record.moves[:upto], result=None, comments={})
    return write_sgf(cut, comments={}).decode("utf-8")


def vertex(point: tuple[int, int] | None, size: int) -> str:
    """A record's (row, col) point as a GTP vertex; None is a pass."""
    return "pass" if point is None else format_gtp(loc(point[0], point[1], size), size)


def other(colour: str) -> str:
    return "w" if colour == "b" else "b"


def parse_estimate(text: str) -> float:
    """GNU Go's `estimate_score` answer ('W+15.6 (upper bound: ...)') as black minus white."""
    head = text.split()[0]
    if head[0] in "BW" and head[1:2] == "+":
        points = float(head[2:])
        return points if head[0] == "B" else -points
    return 0.0


def parse_top_moves(text: str) -> list[tuple[str, float]]:
    """GNU Go's `top_moves` answer ('K3 81.60 J3 80.00 ...') as [(vertex, value)]."""
    words = text.split()
    return [(words[i].upper(), float(words[i + 1])) for i in range(0, len(words) - 1, 2)]


def acceptable_moves(top: list[tuple[str, float]]) -> list[str]:
    """GNU Go's moves valued within ACCEPT_FRACTION of its best."""
    if not top:
        return []
    best = top[0][1]
    return [v for v, value in top if value >= ACCEPT_FRACTION * best]


def judge_argv(gnugo: str | None) -> list[str] | None:
    """GNU Go's command line as the judge (`gnugo`, or the one on PATH or in /usr/games), None
    where there is none."""
    argv = gnugo_argv(gnugo)
    return None if argv is None else argv + ["--level", str(GNUGO_LEVEL), "--chinese-rules"]


class GnuGoJudge:
    """GNU Go over GTP, asked about positions given as SGF text: its score estimate, its best
    moves, and the estimate after a move and its own reply."""

    def __init__(self, argv: list[str], timeout: float = 300):
        self.client = GtpClient(argv, name="gnugo", timeout=timeout)
        self._dir = tempfile.TemporaryDirectory()
        self._file = os.path.join(self._dir.name, "position.sgf")

    def close(self) -> None:
        self.client.quit()
        self._dir.cleanup()

    def __enter__(self) -> "GnuGoJudge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def load(self, sgf: str) -> None:
        with open(self._file, "w", encoding="utf-8") as f:
            f.write(sgf)
        self.client.command(f"loadsgf {self._file}")

    def estimate(self, sgf: str, colour: str) -> float:
        """The estimate of the position, `colour`'s view."""
        self.load(sgf)
        return self._estimate(colour)

    def _estimate(self, colour: str) -> float:
        score = parse_estimate(self.client.command("estimate_score"))
        return score if colour == "b" else -score

    def top_moves(self, sgf: str, colour: str) -> list[tuple[str, float]]:
        """GNU Go's move for `colour` first, then the others it valued, best first."""
        self.load(sgf)
        move = self.client.command(f"reg_genmove {colour}").upper()
        top = parse_top_moves(self.client.command("top_moves"))
        if move not in {v for v, _ in top}:        # a pass or a move it did not value
            top = [(move, top[0][1] if top else 0.0)] + top
        return top

    def score_after(self, sgf: str, colour: str, move: str) -> float:
        """The estimate after `colour` plays `move` and GNU Go answers, `colour`'s view; a move
        GNU Go refuses (illegal) scores minus infinity."""
        self.load(sgf)
        if move.lower() == "resign":
            return float("-inf")
        try:
            self.client.command(f"play {colour} {move}")
        except GtpError:                # illegal here
            return float("-inf")
        reply = self.client.command(f"genmove {other(colour)}")
        if reply.lower() == "resign":
            return float("inf")
        return self._estimate(colour)
