"""Learning curves of several Zero runs in one figure (value loss, policy loss, ownership MSE,
score MAE against the generation), e.g. runs of equal self-play cost with and without playout cap
randomisation or forced playouts (docs/algorithms.md §4.6).

    python experiments/zero_curves.py base=runs/base7/curve.csv pcr=runs/pcr7/curve.csv \
        --out docs/results/curves/zero-7x7-ablation.png

Each argument is LABEL=CURVE_CSV (an `engine-train zero` run's curve.csv).
"""
from __future__ import annotations

import csv
from pathlib import Path

import click

from goengine.training.nets.plots import save_figure, subplots

PANELS = (("value_loss", "value loss"), ("policy_loss", "policy loss"),
          ("ownership_mse", "ownership MSE per point"), ("score_mae", "score MAE (points)"))


def read_curve(path: Path) -> dict[str, list[float]]:
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    return {key: [float(r[key]) if r.get(key) else float("nan") for r in rows]
            for key in ("generation",) + tuple(k for k, _ in PANELS)}


@click.command()
@click.argument("curves", nargs=-1, required=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="PNG to write")
def main(curves, out):
    runs = []
    for arg in curves:
        label, sep, path = arg.partition("=")
        if not sep:
            raise click.BadParameter(f"{arg!r}: expected LABEL=CURVE_CSV")
        runs.append((label, read_curve(Path(path))))
    fig, axes = subplots(1, len(PANELS), figsize=(4 * len(PANELS), 3.2))
    for ax, (key, title) in zip(axes, PANELS):
        for label, curve in runs:
            ax.plot(curve["generation"], curve[key], label=label)
        ax.set_title(title)
        ax.set_xlabel("generation")
    axes[0].legend()
    save_figure(fig, Path(out))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
