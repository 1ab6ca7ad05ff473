"""Nothing compiles once the engine is ready: after the loader's last stage ("kernels"), a game
through every GTP command family adds no signature to any numba dispatcher (a new one is a
compile, or at least a cache load, in the middle of a game). The first genmove needs only stage
"player": the search for the board at hand, warmed up. And `engine-gtp --warmup` / `--help` as a user runs them."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest
from numba.core.registry import CPUDispatcher

import goengine.gtp.commands  # noqa: F401  (registers the handlers)
from goengine.engine.player import PlayerConfig
from goengine.engine.warmup import warm_up
from goengine.engine.timecontrol import TimeConfig
from goengine.gtp.server import REGISTRY, Server
from goengine.gtp import loader
from goengine.gtp.config import EngineConfig, resolve_auto_search
from goengine.gtp.session import Session


def _signatures() -> dict[str, tuple]:
    out = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("goengine."):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher):
                out[f"{value.py_func.__module__}.{value.py_func.__name__}"] = tuple(value.signatures)
    return out


def _game_script(sgf_path) -> list[str]:
    """Every command family: setup, play, genmove and its pass judgement, cleanup, analysis,
    the count, handicap (fixed, free, set), SGF, the time systems, GoGui, parameters, the sizes
    the models cover and one they do not."""
    return ["boardsize 9", "clear_board", "komi 6.5", "play b e5", "genmove w", "undo",
            "time_settings 60 5 1", "time_left b 50 0", "genmove w", "play b pass",
            "genmove w", "showboard", "final_score", "final_status_list dead",
            "final_status_list alive", "final_status_list seki", "reg_genmove b",
            "lz-analyze b 10", "kata-analyze b 10 ownership true", "kata-genmove_analyze b 10",
            "lz-genmove_analyze w 10", "gogui-best_moves", "gogui-visit_heatmap",
            "gogui-ownership", "gogui-analyze_commands", "kata-list-params",
            "kata-set-param maxVisits 40", "kata-get-param maxVisits",
            f"loadsgf {sgf_path}", "genmove w", "kgs-genmove_cleanup w",
            "kgs-rules japanese", "genmove w", "final_score", "kgs-rules chinese",
            "kgs-time_settings canadian 30 10 5", "time_left w 9 4", "genmove w",
            "kata-time_settings fischer-capped 30 2 60 -1", "genmove w", "kgs-game_over",
            "boardsize 19", "clear_board", "komi -40", "fixed_handicap 4", "genmove w",
            "play b pass", "genmove w", "final_score", "komi 7.5", "boardsize 13", "clear_board",
            "place_free_handicap 3", "genmove w", "play b pass", "genmove w",
            "final_status_list dead", "boardsize 9", "clear_board", "set_free_handicap c3 g7",
            "genmove w", "printsgf", "cputime"]


@pytest.mark.slow
@pytest.mark.parametrize("search", ["auto", "alphago", "zero", "policy", "heuristic"])
def test_no_numba_compile_after_warm_up(tmp_path, search, open_loss_sgf):
    """auto: the bundled models' choice, the Zero search on 9x9 and the AlphaGo search on the
    game's 19x19 and 13x13 boards."""
    sgf = tmp_path / "game.sgf"
    sgf.write_bytes(open_loss_sgf)
    config = EngineConfig(size=9, search=search, auto_search=True, seed=1, playouts=48)
    if search == "auto":
        config = resolve_auto_search(config)
        assert config.zero_sizes == (9,)
    session = Session(config, lambda: loader)
    session.params["gogui_search_seconds"] = 0.2
    script = "".join(f"{i} {line}\n" for i, line in enumerate(_game_script(sgf), 1))
    out = io.BytesIO()
    server = Server(session, REGISTRY, stdin=io.BytesIO(script.encode()), stdout=out)
    session.start_loading()
    session.wait_ready("kernels")
    before = _signatures()
    assert len(before) > 50, sorted(before)      # the engine's kernels are there to be watched
    server.serve()
    after = _signatures()
    answers = out.getvalue().decode()
    assert "?" not in "".join(line[:1] for line in answers.split("\n")), answers
    new = {name: set(sigs) - set(before.get(name, ())) for name, sigs in after.items()}
    assert {name: sigs for name, sigs in new.items() if sigs} == {}


def test_warmup_option_reports_progress_and_exits(repo_root):
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--warmup", "--size", "9"],
                          capture_output=True, cwd=repo_root, timeout=600, stdin=subprocess.DEVNULL)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert proc.stdout == b""
    assert "warm-up 9x9: heuristic search" in err and "warm-up 19x19: network searches" in err


def test_help_documents_the_time_and_resignation_defaults(repo_root):
    proc = subprocess.run([sys.executable, "-m", "goengine.gtp.main", "--help"], capture_output=True,
                          cwd=repo_root, timeout=60)
    text = " ".join(proc.stdout.decode().split())
    cfg, time_cfg = PlayerConfig(), TimeConfig()
    assert f"{time_cfg.default_time_per_move:g} s a move" in text
    assert f"(default {cfg.resign_threshold:.2f})" in text
    assert f"on {cfg.resign_consecutive} of the engine's moves in a row" in text
    assert f"{cfg.resign_min_move:g} * N*N" in text and "--warmup" in text


def test_the_warm_up_runs_on_boards_too_small_for_handicap():
    """5x5 (the Zero loop's correctness board): no fixed handicap there, and the engine must
    still load (it failed with 'board too small for fixed handicap')."""
    lines = []
    warm_up(sizes=(5,), progress=lines.append)
    assert any("warm-up 5x5: network searches" in line for line in lines)
