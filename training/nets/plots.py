"""Learning-curve figures: matplotlib on its file-only backend (training runs headless, often
over ssh), written atomically so that a plot read while training goes is never half written."""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def subplots(*args, **kwargs):
    """`matplotlib.pyplot.subplots` on the file-only backend: (figure, axes)."""
    return plt.subplots(*args, **kwargs)


def save_figure(fig, png_path: Path) -> None:
    """Lay out `fig`, write it to `png_path` (temporary file + rename) and close it."""
    fig.tight_layout()
    tmp = Path(png_path).with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=80)
    os.replace(tmp, png_path)
    plt.close(fig)
