"""The int8 twin of a Zero network (training.export.quantize), calibrated on its run's own positions:
what self-play's workers play on a CPU, what the bundle ships beside the float file, and what the
reference matches play, as engine-gtp loads from a model directory on a CPU."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from goengine.models.metadata import ModelError
from goengine.training.export.quantize import quantize_model
from goengine.training.zero.shards import load_window
from goengine.training.zero.train import sample_batch

CALIBRATION_GAMES, CALIBRATION_POSITIONS = 200, 256     # an int8 network's calibration


def int8_twin(path: Path, out: Path, games_dir: Path, size: int, seed,
              through: int | None = None) -> Path | None:
    """The int8 twin of the Zero network at `path`, calibrated on positions of the newest games
    of a run's `games_dir` (of generations up to `through` when given and there are any, so that
    a generation's twin is the same file whenever it is made), written to `out`; None when there
    are no games, or when no int8 version follows the float network's outputs (then the float
    file serves)."""
    window = (load_window(games_dir, CALIBRATION_GAMES, through)
              or load_window(games_dir, CALIBRATION_GAMES))
    if window is None or not len(window.z):
        return None
    planes = sample_batch(window, size, CALIBRATION_POSITIONS, np.random.default_rng(seed)).planes
    try:
        return quantize_model(path, out, planes, f"int8 static QDQ, {len(planes)} calibration "
                                                 f"positions of the newest {window.games} self-play games")
    except ModelError:
        return None
