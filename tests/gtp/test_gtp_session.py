"""gtp.session in-process, on the real loader and real searches: what the session picks by the
capabilities a Search declares (dead stones, pondering), never by the search's class."""
from __future__ import annotations

import io
import os
import threading
import time

import pytest

import goengine.gtp.commands  # noqa: F401  (registers the handlers)
from goengine.engine.evaluator import UniformEvaluator
from goengine.engine.player import Player
from goengine.engine.search.mcts import MctsSearch
from goengine.engine.search.policy import PolicyPlayer
from goengine.gtp import config, loader
from goengine.gtp.config import EngineConfig, resolve_auto_search
from goengine.gtp.server import REGISTRY, Server
from goengine.gtp.session import Session


def _session(search) -> Session:
    s = Session(EngineConfig(size=5, search="heuristic", seed=1), lambda: loader)
    s.loader = loader
    s.game = loader.new_game(5, s.rules)
    s.player = Player(search)
    return s


def test_a_search_with_ownership_judges_its_own_dead_stones():
    s = _session(MctsSearch(seed=1))
    assert s.status_player() is s.player


def test_a_search_without_ownership_gets_a_heuristic_judge_made_once():
    s = _session(PolicyPlayer(UniformEvaluator(), seed=1))
    judge = s.status_player()
    assert judge is not s.player and judge.ownership_from_playouts and judge.can_ponder
    assert s.status_player() is judge
    assert judge.ownership(s.game, playouts=20).shape == (5, 5)


def test_the_session_ponders_only_searches_with_a_tree():
    s = _session(MctsSearch(seed=1))
    s._ready["player"].set()
    assert s.ponder_job() is None                 # nothing pending
    s.params["ponder"] = True
    s.ponder_pending = True
    player, game = s.ponder_job()
    assert player is s.player and game is not s.game and game.size == 5
    assert not s.ponder_pending

    s = _session(PolicyPlayer(UniformEvaluator(), seed=1))
    s._ready["player"].set()
    s.params["ponder"] = True
    s.ponder_pending = True
    assert s.ponder_job() is None                 # no tree: nothing to keep for the next move


def test_auto_search_plays_each_size_at_its_measured_lambda(monkeypatch):
    """--search auto without --lambda: the AlphaGo search takes AUTO_LAMBDA's lambda on its
    sizes and 0.5 elsewhere; --lambda applies to every size."""
    monkeypatch.setattr(config, "AUTO_LAMBDA", {19: 1.0})
    auto = resolve_auto_search(EngineConfig(size=13, seed=1, no_book=True))
    assert auto.search == "alphago" and auto.lam_by_size == ((19, 1.0),)
    s = Session(auto, lambda: loader)
    s.game = loader.new_game(13, s.rules)
    loader.load_player(s)
    search = s.player.search
    assert (search.config.lam_for(19), search.config.lam_for(13)) == (1.0, 0.5)
    s.player.set_param("lam", "0.25")       # GTP's lambda, like --lambda, is every size's
    assert (search.config.lam_for(19), search.config.lam_for(13)) == (0.25, 0.25)
    # the table is the command line's: GTP neither lists nor sets it
    assert "lam" in s.player.params() and "lam_by_size" not in s.player.params()
    with pytest.raises(KeyError):
        s.player.set_param("lam_by_size", "0.5")
    told = resolve_auto_search(EngineConfig(size=13, lam=0.25, no_book=True))
    assert told.lam_by_size == ()


def test_rollout_threads_zero_takes_the_cores_at_lambda_1(monkeypatch):
    """--rollout-threads 0 reaches the AlphaGo search, which splits its rollouts over the
    machine's cores on the sizes where it runs at lambda 1 (AUTO_LAMBDA), one thread elsewhere."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    auto = resolve_auto_search(EngineConfig(size=13, seed=1, no_book=True, rollout_threads=0,
                                            playouts=16))
    s = Session(auto, lambda: loader)
    s.game = loader.new_game(13, s.rules)
    loader.load_player(s)
    search = s.player.search
    assert search.config.rollout_threads == 0
    s.player.genmove(s.game, s.game.to_play)
    assert len(search._helpers) == 1         # 13x13: lambda 1, two threads on two cores
    search.close()


class _HeldLoader:
    """The real loader whose player stage waits until the test lets it finish: a warm-up that
    takes as long as the test wants."""

    def __init__(self):
        self.release = threading.Event()

    def __getattr__(self, name):
        return getattr(loader, name)

    def load_player(self, s):
        self.release.wait(30)
        loader.load_player(s)


def test_a_game_starts_only_when_the_warm_up_is_over():
    """A controller's clock runs from its first genmove: clear_board (which every controller sends
    before a game) answers only once the player is built and every kernel warmed up, so that no
    compile is charged to a move."""
    held = _HeldLoader()
    session = Session(EngineConfig(size=9, search="heuristic", seed=1, playouts=16),
                      lambda: held)
    r_in, w_in = os.pipe()
    out = io.BytesIO()
    server = Server(session, REGISTRY, stdin=os.fdopen(r_in, "rb"), stdout=out)
    session.start_loading()
    serving = threading.Thread(target=server.serve, daemon=True)
    serving.start()
    with os.fdopen(w_in, "wb", buffering=0) as w:
        w.write(b"1 name\n2 boardsize 9\n3 clear_board\n")
        session._ready["game"].wait(60)
        time.sleep(0.5)
        assert b"=3" not in out.getvalue() and not session.is_ready("player")
        held.release.set()
        w.write(b"4 genmove b\n5 quit\n")
    serving.join(120)
    answers = out.getvalue().decode()
    assert "=1 " in answers and "=3" in answers and "=4 " in answers, answers
    assert answers.index("=3") < answers.index("=4 ")


def test_settings_sent_again_before_every_move_keep_the_lag_measured():
    """gtp2ogs sends kgs-time_settings before every move, then time_left: the same settings keep
    the clock, so the engine measures its lag between the reports (it measured none before)."""
    session = Session(EngineConfig(size=9, search="heuristic", seed=1, playouts=200),
                      lambda: loader)
    session.start_loading()
    session.wait_ready("player")
    left = 60.0
    for move in range(8):
        script = (f"kgs-time_settings byoyomi 60 5 3\ntime_left black 60 0\n"
                  f"time_left white {int(left)} 0\ngenmove w\nplay b pass\n")
        out = io.BytesIO()
        t0 = time.monotonic()
        Server(session, REGISTRY, stdin=io.BytesIO(script.encode()), stdout=out).serve()
        left -= time.monotonic() - t0 + 0.05          # the server charges a little lag
        assert out.getvalue().decode().count("=") == 5, out.getvalue()
    samples = session.player.time.lag.samples
    assert len(samples) == 7 and all(-1.5 < x < 1.5 for x in samples), samples
