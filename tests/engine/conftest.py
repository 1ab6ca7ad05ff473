"""Fixtures of the engine tests: real KGS games replayed on the engine's Game
(tests/kgs_replay.py)."""
from __future__ import annotations

import pytest

import kgs_replay


@pytest.fixture(scope="session")
def read_game():
    """`read_game(name)`: (size, handicap locs, [(colour, loc)]) of a KGS game, from sgfmill."""
    return kgs_replay.read_game


@pytest.fixture(scope="session")
def new_game():
    """`new_game(size, handicap)`: an empty Game (no superko) with the handicap stones set."""
    return kgs_replay.new_game


@pytest.fixture(scope="session")
def replay():
    """`replay(size, handicap, moves)`: the Game after these moves."""
    return kgs_replay.replay
