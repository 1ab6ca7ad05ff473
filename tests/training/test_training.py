"""engine-train end to end on the SGF fixtures of tests/data: dataset, training that learns,
kill and resume, eval, export, bundle, and the errors a user meets."""
import csv
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import onnx  # noqa: E402
from training_games import FIXTURE as GAMES, sgf_collection  # noqa: E402

from goengine.engine.features import extract  # noqa: E402
from goengine.engine.replay import positions  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.models.session import load_session  # noqa: E402
from goengine.models.store import verify  # noqa: E402
from goengine.sgf_tools import iter_games  # noqa: E402
from goengine.training.data.dataset import REPLAY_RULES, outcome  # noqa: E402
from goengine.training.nets import networks as nets  # noqa: E402
from goengine.training.nets.export import export_onnx  # noqa: E402

DATA = Path(__file__).parents[1] / "data"
KGS_FIXTURES = DATA / "kgs"
CALIBRATION = DATA / "games" / "tygem9d-2015-05"     # 19x19 games, as int8 calibration reads
# the options that keep the diagonal games (9x9, unranked players)
GAME_FILTERS = ("--sizes", 9, "--min-rank", "")


def train_cmd(*args):
    """The argv of a real engine-train process (the kill test; the others run it in process)."""
    return [sys.executable, "-m", "goengine.training.cli", *map(str, args)]


@pytest.fixture(scope="module")
def small_run(engine_train, tmp_path_factory):
    """A policy trained for 300 steps on the 120 learnable 9x9 games of tests/data/training
    (shared by the tests below)."""
    out = tmp_path_factory.mktemp("sl")
    engine_train("sl", "--sgf", GAMES, "--out", out, *GAME_FILTERS, "--steps", 300,
                 "--batch-size", 32, "--eval-every", 50, "--eval-positions", 600,
                 "--checkpoint-every", 100, "--heldout-fraction", 0.1, "--threads", 1)
    return out


def test_fixture_games_are_the_generators():
    assert GAMES.read_text() == sgf_collection()


def test_sl_run_writes_curves_checkpoint_and_onnx(small_run):
    meta = json.loads((small_run / "data" / "dataset.json").read_text())
    assert meta["feature_set"] == "alphago48"
    assert meta["stats"]["games"] == {"train": 106, "heldout": 14}
    rows = list(csv.DictReader((small_run / "curve.csv").open()))
    assert [int(r["step"]) for r in rows] == [50, 100, 150, 200, 250, 300]
    assert (small_run / "curve.png").stat().st_size > 1000
    assert (small_run / "checkpoint.pt").exists()
    props = {p.key: p.value for p in onnx.load(small_run / "policy.onnx").metadata_props}
    assert props["kind"] == "policy" and props["feature_set"] == "alphago48"
    assert float(props["heldout_top1"]) == pytest.approx(float(rows[-1]["heldout_top1"]), abs=1e-4)


def test_sl_training_learns(small_run):
    """Most moves of the fixture continue the line of the last two: the held-out loss falls far
    below a uniform guess's (ln 81) and below half the first steps' training loss, and top-1
    is far above chance (at most 1/46: every position has 46 or more empty points)."""
    rows = list(csv.DictReader((small_run / "curve.csv").open()))
    first, last = float(rows[0]["train_loss"]), float(rows[-1]["heldout_loss"])
    # the first row averages the loss over the first 50 steps, while the He-initialised net
    # already learns (3.38 against ln 81 = 4.39)
    assert last < 0.3 * math.log(81)
    assert last < 0.5 * first
    assert float(rows[-1]["heldout_top1"]) > 0.4 > 15 / 46


def test_resume_after_kill(engine_train, small_run, tmp_path):
    """SIGKILL in the middle of training, then --resume continues from the last checkpoint."""
    out = tmp_path / "run"
    args = ["sl", "--sgf", GAMES, *GAME_FILTERS, "--out", out, "--data-dir", small_run / "data", "--steps", 4000,
            "--batch-size", 8, "--eval-every", 1000, "--eval-positions", 100,
            "--checkpoint-every", 2, "--threads", 1]
    proc = subprocess.Popen(train_cmd(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ckpt = out / "checkpoint.pt"
    deadline = time.time() + 300
    while not ckpt.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ckpt.exists(), "no checkpoint written before the kill"
    step_at_kill = int(torch.load(ckpt, weights_only=True)["step"])
    assert step_at_kill >= 2
    args[args.index(4000)] = step_at_kill + 4
    p = engine_train(*args, "--resume")
    assert f"resumed from step {step_at_kill}" in p.stderr
    assert int(torch.load(ckpt, weights_only=True)["step"]) == step_at_kill + 4


def test_eval_prints_accuracy_line_for_onnx_and_checkpoint(engine_train, small_run):
    for model in (small_run / "policy.onnx", small_run / "checkpoint.pt"):
        p = engine_train("eval", "--model", model, "--sgf", GAMES, "--max-positions", 300)
        last = p.stdout.strip().splitlines()[-1].split()
        assert last[0] == "top1" and last[2] == "top5" and last[4] == "positions"
        assert 0.4 < float(last[1]) <= float(last[3]) <= 1 and int(last[5]) == 300


def test_eval_on_held_out_shards_agrees_with_the_training_run(engine_train, small_run):
    """`eval --data-dir` reads the held-out shards as the training run's evaluation does: the
    exported policy's top-1 there is the curve's last held-out top-1 (same 600 positions)."""
    p = engine_train("eval", "--model", small_run / "policy.onnx", "--data-dir", small_run / "data",
                     "--max-positions", 600)
    last = p.stdout.strip().splitlines()[-1].split()
    rows = list(csv.DictReader((small_run / "curve.csv").open()))
    positions = int(last[5])
    assert 0 < positions <= 600
    assert float(last[1]) == pytest.approx(float(rows[-1]["heldout_top1"]), abs=1.5 / positions)


def test_eval_split_reads_the_training_shards(engine_train, small_run):
    """`eval --split train` scores the training positions (every one, as many as the manifest
    counts), where the default reads the held-out ones: the two figures a run is underfit or
    overfit by."""
    stats = json.loads((small_run / "data" / "dataset.json").read_text())["stats"]["positions"]
    assert stats["train"] != stats["heldout"]
    for split in ("train", "heldout"):
        p = engine_train("eval", "--model", small_run / "policy.onnx", "--data-dir",
                         small_run / "data", "--split", split, "--max-positions", 10 ** 6)
        last = p.stdout.strip().splitlines()[-1].split()
        assert int(last[5]) == stats[split]


def test_eval_of_a_zero_net_gives_its_value_error_on_the_outcomes_and_its_policy(engine_train,
                                                                                   tmp_path):
    """A Zero net's `eval` has both heads' figures: the value head's MSE against the games'
    outcomes (for the side to move, as the engine's evaluator reads the value) before the
    policy's last line, on real onnxruntime sessions."""
    torch.manual_seed(0)
    path = tmp_path / "zero.onnx"
    export_onnx(nets.build("zero", "cpu", blocks=1, filters=8), "zero", path,
                {"training_data": "random weights", "board_sizes": "9"}, board_size=9)
    p = engine_train("eval", "--model", path, "--sgf", GAMES, "--max-positions", 200)
    value_line, last = p.stdout.strip().splitlines()[-2:]
    words = value_line.split()
    assert words[:2] == ["value:", "mse"] and words[3:] == ["positions", "200"]
    planes, z = [], []
    for record in iter_games(GAMES):
        for game, colour, _ in positions(record, REPLAY_RULES):
            planes.append(extract(game, "zero17"))
            z.append(outcome(record, colour))
        if len(planes) >= 200:
            break
    ev = OnnxEvaluator(path, kind="zero", symmetry="none", cache_size=0)
    v = ev.evaluate(np.stack(planes[:200]).astype(np.float32)).value_stm
    assert float(words[2]) == pytest.approx(float(np.mean((v - np.array(z[:200])) ** 2)), abs=1e-4)
    assert last.split()[0] == "top1" and last.split()[-1] == "200"


def phase_lines(stdout: str) -> dict:
    """{'0-59': {'mse': ..., 'positions': ...}, ...} from the `moves A-B: k v ...` lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("moves "):
            phase, figures = line[len("moves "):].split(": ")
            words = figures.split()
            out[phase] = {k: float(v) for k, v in zip(words[::2], words[1::2])}
    return out


def test_eval_by_move_splits_human_outcomes_into_phases(engine_train):
    """`eval --by-move` scores a real value net (onnxruntime) on real Tygem games phase by phase:
    the phases hold every position once, and the whole MSE is their position-weighted mean."""
    value = Path(__file__).parents[2] / "models" / "bundled" / "value.onnx"
    tygem = [DATA / "games" / "tygem9d-2015-05", DATA / "games" / "tygem9d-2015-06"]
    p = engine_train("eval", "--model", value, *[a for t in tygem for a in ("--sgf", t)],
                     "--by-move", "60,120,180", "--max-positions", 10 ** 6, "--threads", 1)
    last = p.stdout.strip().splitlines()[-1].split()
    total, mse = int(last[3]), float(last[1])
    phases = phase_lines(p.stdout)
    assert list(phases) == ["0-59", "60-119", "120-179", "180-"]
    # the 8 games of these folders, each with a winner and 60+ moves long
    assert all(f["positions"] > 0 for f in phases.values())
    assert sum(f["positions"] for f in phases.values()) == total
    assert mse == pytest.approx(sum(f["mse"] * f["positions"] for f in phases.values()) / total,
                                abs=1e-3)
    # 0-59 holds the first 60 moves of each game, passes aside (none in the fixtures' openings)
    assert phases["0-59"]["positions"] == 60 * len([g for t in tygem for g in t.glob("*.sgf")])


@pytest.mark.parametrize("args, message", [(("--by-move", "120,60"), "ascending"),
                                           (("--by-move", "6o"), "move numbers like"),
                                           (("--by-move", "60", "--data-dir", DATA), "needs --sgf")])
def test_eval_by_move_rejects_bad_phases(engine_train, small_run, args, message):
    source = () if "--data-dir" in args else ("--sgf", GAMES)
    p = engine_train("eval", "--model", small_run / "policy.onnx", *source, *args, ok=False)
    assert p.returncode == 2 and message in p.stderr


@pytest.mark.parametrize("sources", [(), ("--sgf", GAMES, "--data-dir", DATA)])
def test_eval_wants_one_source(engine_train, small_run, sources):
    p = engine_train("eval", "--model", small_run / "policy.onnx", *sources, ok=False)
    assert p.returncode == 2 and "--sgf or --data-dir" in p.stderr


def test_eval_gives_clear_error_for_broken_model(engine_train, tmp_path):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x01garbage" * 10)
    p = engine_train("eval", "--model", bad, "--sgf", GAMES, ok=False)
    assert p.returncode != 0
    assert "not a readable ONNX model" in p.stderr and "Traceback" not in p.stderr


def test_export_command_matches_torch(engine_train, small_run, tmp_path):
    out = tmp_path / "p.onnx"
    engine_train("export", "--checkpoint", small_run / "checkpoint.pt", "--out", out)
    net, _ = nets.load_checkpoint(small_run / "checkpoint.pt")
    net.eval()
    x = np.random.default_rng(0).random((2, 48, 13, 13), dtype=np.float32)
    sess = load_session(out)
    got = sess.session.run(None, {sess.input_name: x})[0]
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    assert np.abs(got - want).max() < 1e-4


@pytest.mark.slow
def test_export_records_the_komi_a_value_net_learned_at(engine_train, small_run, tmp_path):
    nets.save_checkpoint(nets.build("value", "cpu"), tmp_path / "value.pt")
    engine_train("export", "--checkpoint", tmp_path / "value.pt", "--out", tmp_path / "v.onnx",
                 "--komi", 6.5)
    assert OnnxEvaluator(tmp_path / "v.onnx", kind="value").learned_komi == 6.5
    engine_train("export", "--checkpoint", tmp_path / "value.pt", "--out", tmp_path / "v75.onnx")
    assert OnnxEvaluator(tmp_path / "v75.onnx", kind="value").learned_komi is None   # 7.5 then
    p = engine_train("export", "--checkpoint", small_run / "checkpoint.pt", "--out",
                     tmp_path / "p.onnx", "--komi", 6.5, ok=False)
    assert p.returncode == 2 and "no value" in p.stderr and not (tmp_path / "p.onnx").exists()


def test_bad_sgf_argument_is_a_clear_error(engine_train, tmp_path):
    p = engine_train("sl", "--sgf", tmp_path / "nope", "--out", tmp_path / "o", ok=False)
    assert p.returncode == 2 and "does not exist" in p.stderr and "Traceback" not in p.stderr


def test_bundle_exports_with_checksums_and_heldout_figures(engine_train, small_run, tmp_path):
    out = tmp_path / "bundled"
    engine_train("bundle", "--policy", small_run, "--heldout", GAMES, "--positions", 200,
                 "--out-dir", out)
    index = json.loads((out / "MODELS.json").read_text())
    entry = index["policy"]
    assert entry["file"] == "policy.onnx" and entry["training"]["step"] == 300
    assert entry["heldout"]["positions"] == 200 and 0.4 < entry["heldout"]["top1"] <= 1
    verify(out / "policy.onnx")          # listed in SHA256SUMS with the right digest
    props = {p.key: p.value for p in onnx.load(out / "policy.onnx").metadata_props}
    assert float(props["heldout_top1"]) == pytest.approx(entry["heldout"]["top1"], abs=1e-4)


@pytest.mark.slow
def test_bundle_int8_twins_only_the_networks_it_bundles(engine_train, small_run, tmp_path):
    """Bundling one network with --int8 leaves the other bundled networks' files as they were;
    --int8 alone twins every bundled network."""
    out = tmp_path / "bundled"
    engine_train("bundle", "--policy", small_run, "--out-dir", out)
    index = json.loads((out / "MODELS.json").read_text())
    # a second bundled network (the policy's file will do: quantization reads its feature set)
    (out / "value.onnx").write_bytes((out / "policy.onnx").read_bytes())
    index["value"] = {"file": "value.onnx"}
    (out / "MODELS.json").write_text(json.dumps(index))
    engine_train("bundle", "--policy", small_run, "--int8", CALIBRATION, "--out-dir", out)
    index = json.loads((out / "MODELS.json").read_text())
    assert (out / "policy.int8.onnx").is_file() and "int8" in index["policy"]
    assert not (out / "value.int8.onnx").exists() and "int8" not in index["value"]
    engine_train("bundle", "--int8", CALIBRATION, "--out-dir", out)
    index = json.loads((out / "MODELS.json").read_text())
    assert (out / "value.int8.onnx").is_file() and index["value"]["int8"]["file"] == "value.int8.onnx"


@pytest.mark.slow
def test_bundling_new_weights_drops_the_old_int8_twin(engine_train, small_run, tmp_path):
    """The engine prefers a twin on the CPU, so a twin of weights that were replaced would play in
    their place: bundling without --int8 removes it, its checksum line and its MODELS.json entry."""
    out = tmp_path / "bundled"
    engine_train("bundle", "--policy", small_run, "--int8", CALIBRATION, "--out-dir", out)
    assert (out / "policy.int8.onnx").is_file()
    assert "policy.int8.onnx" in (out / "SHA256SUMS").read_text()
    engine_train("bundle", "--policy", small_run, "--out-dir", out)
    index = json.loads((out / "MODELS.json").read_text())
    assert not (out / "policy.int8.onnx").exists() and "int8" not in index["policy"]
    assert "policy.int8.onnx" not in (out / "SHA256SUMS").read_text()
    verify(out / "policy.onnx")


def test_no_game_left_is_a_clear_error(engine_train, tmp_path):
    """Every game of tests/data/kgs fails a default filter: the run says what was dropped and
    which option loosens it, and exits with an error instead of a traceback."""
    p = engine_train("sl", "--sgf", KGS_FIXTURES, "--out", tmp_path / "o", ok=False)
    assert p.returncode == 1, p.stderr[-3000:]
    assert "Traceback" not in p.stderr
    err = p.stderr[p.stderr.index("Error:"):]
    assert "no game left" in err and "5 games read" in err
    assert "board size 2 (--sizes" in err and "rank 2 (--min-rank" in err
    assert "no result 1 (never used)" in err
    assert not (tmp_path / "o" / "data" / "dataset.json").exists()   # a retry builds anew
    p = engine_train("sl", "--sgf", KGS_FIXTURES, "--out", tmp_path / "o", "--sizes", 9,
                     "--min-rank", "", ok=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "none of the 2 games went to the held-out set: raise --heldout-fraction" in p.stderr
