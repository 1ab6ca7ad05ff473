"""Pondering: off by default; when on, the engine thinks on the opponent's time, stops at once on
any input, and never changes the position it reports."""
import time



def _log_lines(path):
    return path.read_text(errors="replace").splitlines() if path.exists() else []


def test_ponder_runs_between_moves_and_stops_on_input(tmp_path, gtp_engine):
    log = tmp_path / "engine.log"
    with gtp_engine("--size", "9", "--search", "heuristic", "--ponder", "--time-per-move", "0.3",
                    "--log-file", str(log)) as eng:
        eng.ok("boardsize 9")
        first = eng.ok("genmove b", timeout=60)
        before = eng.ok("showboard")
        time.sleep(1.5)                                   # the engine ponders on white's time
        assert any("pondering on" in ln for ln in _log_lines(log))
        assert eng.ok("name") == "goengine"               # answered: pondering stopped
        assert eng.ok("showboard") == before              # and it changed nothing
        assert eng.ok("goengine-get_param ponder") == "1"
        eng.ok("play w " + ("E5" if first.upper() != "E5" else "D4"))
        assert eng.ok("genmove b", timeout=60)


def test_ponder_is_off_by_default(tmp_path, gtp_engine):
    log = tmp_path / "engine.log"
    with gtp_engine("--size", "9", "--search", "heuristic", "--time-per-move", "0.2",
                    "--log-file", str(log)) as eng:
        eng.ok("genmove b", timeout=60)
        time.sleep(0.5)
        assert eng.ok("goengine-get_param ponder") == "0"
        assert not any("pondering on" in ln for ln in _log_lines(log))
