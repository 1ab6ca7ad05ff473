"""Value-network data from self-play (training.value.selfplay) with the real bundled SL policy
(onnxruntime) and rollout policy, and value training on it across board sizes."""
import csv
import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from goengine.engine.features import FEATURE_SETS  # noqa: E402
from goengine.engine.rollout.policy import RolloutPolicy  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.models.store import bundled  # noqa: E402
from goengine.training.nets.curves import append_row, read_rows  # noqa: E402
from goengine.training.data.dataset import PackedPositions, dataset_komi  # noqa: E402
from goengine.training.nets.loop import CURVE_FIELDS, plot_curve  # noqa: E402
from matplotlib.image import imread  # noqa: E402
from goengine.training.value.selfplay import SelfPlayValue, SelfPlayValueConfig  # noqa: E402

COLOUR_PLANE = 48          # alphago49: the value net's 49th plane, ones when black is to move




@pytest.fixture(scope="module")
def players():
    rollout = RolloutPolicy.load(bundled("rollout"))
    return lambda seed: (OnnxEvaluator(bundled("policy"), threads=1, kind="policy", cache_size=0,
                                       seed=seed), rollout)


def generate(players, out, **kw):
    cfg = SelfPlayValueConfig(**{"games": 12, "size": 9, "batch_games": 5, "positions_per_game": 3,
                                 "heldout_fraction": 0.3, **kw})
    gen = SelfPlayValue(cfg, *players(cfg.seed))
    return gen, gen.generate(out)


def test_one_game_one_outcome_from_each_side(players, tmp_path):
    """Positions of one game are written together; z is the game's result seen from the side to
    move, so z times the colour (+1 black) is the same for all of them."""
    gen, meta = generate(players, tmp_path)
    assert gen.played["games"] == 12 and gen.played["random_moves"] == 12   # move U, once per game
    st = meta["stats"]
    assert st["games"]["train"] + st["games"]["heldout"] == 12
    assert st["positions"]["train"] == 3 * st["games"]["train"]
    assert st["positions"]["heldout"] == 3 * st["games"]["heldout"]
    for split in ("train", "heldout"):
        if st["positions"][split] == 0:
            continue
        data = PackedPositions(tmp_path, split, 9, FEATURE_SETS["alphago49"].num_planes)
        planes, _move, z = data.batch(np.arange(len(data)), symmetry=0)
        assert set(np.unique(z)) <= {-1.0, 0.0, 1.0}
        black = np.where(planes[:, COLOUR_PLANE, 0, 0] == 1, 1.0, -1.0)
        assert ((planes[:, COLOUR_PLANE] == planes[:, COLOUR_PLANE, :1, :1]).all())
        per_game = (z * black).reshape(-1, 3)
        assert (per_game == per_game[:, :1]).all()
    # both outcomes occur: the rollouts decide games, not a constant
    train = PackedPositions(tmp_path, "train", 9, 49)
    assert len(np.unique(train.z)) >= 2


def test_same_seed_same_games_and_runs_add_up(players, tmp_path):
    generate(players, tmp_path / "a", seed=3)
    generate(players, tmp_path / "b", seed=3)
    for f in ("train-9-00000.npz",):
        a, b = np.load(tmp_path / "a" / f), np.load(tmp_path / "b" / f)
        assert (a["x"] == b["x"]).all() and (a["z"] == b["z"]).all()
    _, meta = generate(players, tmp_path / "a", seed=4, size=7, komi=6.5)
    assert meta["sizes"] == [7, 9] and meta["sources"] == ["selfplay:3", "selfplay:4"]
    total = meta["stats"]["games"]["train"] + meta["stats"]["games"]["heldout"]
    assert total == 24 and meta["stats"]["played"]["games"] == 24
    assert meta["stats"]["komi"] == {"7.5": 12, "6.5": 12} and dataset_komi(meta["stats"]) == 7.0


@pytest.mark.slow
def test_cli_then_value_training_on_two_sizes(engine_train, tmp_path):
    data = tmp_path / "vdata"
    p = engine_train("value-data", "--out", data, "--size", 9, "--games", 16,
                     "--positions-per-game", 4, "--heldout-fraction", 0.25, "--batch-games", 8,
                     "--workers", 0)
    assert "positions train" in p.stdout
    engine_train("value-data", "--out", data, "--size", 7, "--games", 16, "--positions-per-game", 4,
                 "--heldout-fraction", 0.25, "--batch-games", 8, "--workers", 0)
    meta = json.loads((data / "dataset.json").read_text())
    assert meta["sources"] == ["selfplay:0", "selfplay:1"]     # the second run took a new seed
    assert meta["stats"]["komi"] == {"7.5": 32}
    out = tmp_path / "run"
    engine_train("value", "--data-dir", data, "--out", out, "--steps", 6, "--batch-size", 8,
                 "--eval-every", 3, "--eval-positions", 64, "--threads", 1)
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [int(r["step"]) for r in rows] == [3, 6]
    by_size = dict(kv.split("=") for kv in rows[-1]["heldout_by_size"].split())
    assert {"mse_7", "mse_9"} <= set(by_size) and all(0 <= float(by_size[f"mse_{n}"]) <= 4
                                                      for n in (7, 9))
    ev = OnnxEvaluator(out / "value.onnx", kind="value")
    assert ev.has_ownership and ev.has_score      # --heads auto: the data has their targets
    assert ev.learned_komi == 7.5                 # the self-play komi, from the dataset
    for n in (7, 9, 19):                        # the pooled head runs on any size
        v = ev.evaluate(np.zeros((2, 49, n, n), dtype=np.float32)).value_stm
        assert v.shape == (2,) and np.all(np.abs(v) <= 1)


def test_the_dataset_komi_is_the_mean_of_the_games_that_state_one():
    assert dataset_komi({"komi": {"6.5": 3, "7.5": 1, "unknown": 9}}) == 6.75
    assert dataset_komi({"komi": {"unknown": 2}}) is None
    assert dataset_komi({"games": {"train": 5}}) is None      # built before the komi was counted


def test_value_needs_sgf_or_a_built_dataset(engine_train, tmp_path):
    p = engine_train("value", "--out", tmp_path / "o", ok=False)
    assert p.returncode == 2 and "--data-dir" in p.stderr and "Traceback" not in p.stderr


def test_curve_of_an_older_version_is_upgraded(tmp_path):
    path = tmp_path / "curve.csv"
    old = [f for f in CURVE_FIELDS if f != "heldout_by_size"]
    path.write_text(",".join(old) + "\n" + ",".join("1" if f == "step" else "" for f in old) + "\n")
    append_row(path, CURVE_FIELDS, {"step": 2, "heldout_by_size": "mse_9=0.5"})
    rows = read_rows(path)
    assert [r["step"] for r in rows] == ["1", "2"] and rows[1]["heldout_by_size"] == "mse_9=0.5"


@pytest.mark.parametrize("filled, panels", [
    ({"train_loss": "0.9", "heldout_mse": "0.5", "heldout_score_mae": "12.5"}, 2),  # value run
    ({"train_loss": "2.1", "heldout_top1": "0.4", "heldout_top5": "0.7"}, 2),       # policy run
    ({"train_loss": "0.9"}, 1),
])
def test_curve_plot_draws_only_filled_panels(tmp_path, filled, panels):
    path = tmp_path / "curve.csv"
    for step in (1000, 2000):
        append_row(path, CURVE_FIELDS, {"step": step, **filled})
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # an empty panel's legend warns
        plot_curve(path, tmp_path / "curve.png")
    height, width = imread(tmp_path / "curve.png").shape[:2]
    assert width == 400 * panels and height == 320                 # 5 x 4 inches a panel at 80 dpi
