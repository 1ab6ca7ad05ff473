"""Dataset building in several processes (training.data.shard_build): the same positions as in one,
shards numbered as one build's, a failing process reported, a killed build built anew."""
import json
from pathlib import Path

import numpy as np
import pytest

from goengine.sgf_tools import FilterConfig
from goengine.training.data.prepare import make_filters, prepare_dataset
from goengine.training.data.shard_build import PART_PREFIX, build_shards
from training_games import FIXTURE as DIAGONALS

GAMES = Path(__file__).parents[1] / "data" / "games"
ANY = FilterConfig(sizes=None, min_rank=None, require_result=True)
SOURCES = [GAMES / "tygem9d-2015-05", GAMES / "tygem9d-2015-06", DIAGONALS]


def rows(folder: Path) -> list[bytes]:
    """Every stored position (planes, move, outcome, size), sorted: the dataset's content
    whatever the shard that holds it."""
    out = []
    for f in folder.glob("*.npz"):
        with np.load(f) as z:
            out += [x.tobytes() + m.tobytes() + o.tobytes() + s.tobytes()
                    for x, m, o, s in zip(z["x"], z["move"], z["z"], z["size"])]
    return sorted(out)


@pytest.mark.parametrize("per_game", [None, 3])
def test_processes_keep_the_positions_of_one_process(tmp_path, per_game):
    one, two = tmp_path / "one", tmp_path / "two"
    s1 = build_shards(SOURCES, one, filters=ANY, heldout_fraction=0.1, positions_per_game=per_game,
                      shard_size=50, workers=1)
    s2 = build_shards(SOURCES, two, filters=ANY, heldout_fraction=0.1, positions_per_game=per_game,
                      shard_size=50, workers=2)
    assert s1.as_dict() == s2.as_dict()
    assert s1.games["train"] > 100 and s1.games["heldout"] > 5         # 8 19x19 + 120 9x9 games
    assert rows(one) == rows(two) and len(rows(one)) == sum(s1.positions.values())
    for split, n in (("train", 9), ("heldout", 9), ("train", 19)):
        names = sorted(p.name for p in two.glob(f"{split}-{n}-*.npz"))
        assert names == [f"{split}-{n}-{i:05d}.npz" for i in range(len(names))]   # no gaps
    assert not list(two.glob(PART_PREFIX + "*"))
    assert json.loads((two / "dataset.json").read_text())["stats"] == s2.as_dict()


def test_a_sample_of_positions_depends_on_the_game_not_on_its_place(tmp_path):
    """The 9x9 games alone keep the positions they kept after the 19x19 games."""
    build_shards(SOURCES, tmp_path / "all", filters=ANY, heldout_fraction=0.0, positions_per_game=3)
    build_shards([DIAGONALS], tmp_path / "9", filters=ANY, heldout_fraction=0.0, positions_per_game=3)
    nine = [r for r in rows(tmp_path / "all") if r[-1] == 9]
    assert nine == rows(tmp_path / "9") and len(nine) == 3 * 120


def test_progress_counts_every_game(tmp_path):
    seen = []
    stats = build_shards(SOURCES, tmp_path, filters=ANY, workers=2,
                         progress=lambda done, st: seen.append(done))
    assert seen == sorted(seen) and seen[-1] == sum(stats.games.values()) == 128


def test_a_failing_process_is_an_error_not_a_wait(tmp_path):
    with pytest.raises(RuntimeError, match="dataset-building process failed"):
        build_shards(SOURCES, tmp_path, feature_set="no-such-planes", filters=ANY, workers=2)
    assert not (tmp_path / "dataset.json").exists()


def test_a_killed_build_is_built_anew(tmp_path):
    """Shards and process folders without dataset.json are a build that was killed: the next
    `engine-train sl` run discards them instead of adding to them."""
    filters = make_filters("", (9,), None, 0, None)
    fresh = prepare_dataset([str(DIAGONALS)], tmp_path / "fresh", "alphago48", filters, 0.1, None,
                            None, 1, build_workers=2)
    data = tmp_path / "killed"
    build_shards([DIAGONALS], data, filters=filters, heldout_fraction=0.1, max_games=40)
    (data / "dataset.json").unlink()
    (data / f"{PART_PREFIX}0").mkdir()
    (data / f"{PART_PREFIX}0" / "train-9-00000.npz").write_bytes(b"half")
    meta = prepare_dataset([str(DIAGONALS)], data, "alphago48", filters, 0.1, None, None, 1,
                           build_workers=2)
    assert meta["stats"] == fresh["stats"]
    assert rows(data) == rows(tmp_path / "fresh")
    assert not list(data.glob(PART_PREFIX + "*"))
