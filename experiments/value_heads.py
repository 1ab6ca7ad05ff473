"""What each auxiliary head adds to the value network: held-out value MSE of the same net trained on
the same value-data shards for the same steps with (a) the value head only, (b) + ownership,
(c) + score, (d) both (docs/algorithms.md §4.3).

    engine-train value-data --out runs/vdata9 --size 9 --games 9000 --positions-per-game 4 \\
        --rl-policy runs/rl9/policy.onnx
    python experiments/value_heads.py runs/vdata9 --out runs/heads9 --steps 3000

Prints one row per configuration (held-out value MSE, ownership MSE per point, score mean absolute
error in points, seconds) and writes them to OUT/heads.csv; each run keeps its curve.csv and
curve.png in OUT/<name>. `--configs a,c` runs some of them (two processes can share the work).

`--one-of K` trains on one position of each game of a dataset made with `--positions-per-game K`
(every K-th training row; the held-out split unchanged): one position per game against K from the
same games, at the same cost of self-play.
"""
from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path

import click
import numpy as np

from goengine.training.nets.loop import TrainConfig, train

CONFIGS = {"a": (), "b": ("ownership",), "c": ("score",), "d": ("ownership", "score")}
FIELDS = ["config", "heads", "steps", "batch_size", "positions_seen", "value_mse", "own_mse",
          "score_mae", "seconds"]


def one_of(data_dir: Path, k: int, out: Path) -> Path:
    """A copy of `data_dir` with every k-th training row (one position per game when each game
    wrote k consecutive rows); the held-out shards are the same files."""
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(data_dir.glob("*.npz")):
        if not f.name.startswith("train-"):
            shutil.copy(f, out / f.name)
            continue
        with np.load(f) as d:
            if len(d["z"]) % k:
                raise click.ClickException(f"{f}: {len(d['z'])} rows is no multiple of {k}")
            np.savez(out / f.name, **{name: d[name][::k] for name in d.files})
    meta = json.loads((data_dir / "dataset.json").read_text())
    meta["one_of"] = k
    (out / "dataset.json").write_text(json.dumps(meta, indent=2))
    return out


@click.command()
@click.argument("data_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--out", required=True, type=click.Path(file_okay=False))
@click.option("--steps", default=3000, show_default=True, type=click.IntRange(1))
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(1))
@click.option("--eval-every", default=500, show_default=True, type=click.IntRange(1))
@click.option("--eval-positions", default=20_000, show_default=True, type=click.IntRange(1))
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--ownership-weight", default=TrainConfig.ownership_weight, show_default=True,
              type=float)
@click.option("--score-weight", default=TrainConfig.score_weight, show_default=True, type=float)
@click.option("--configs", default="a,b,c,d", show_default=True)
@click.option("--one-of", "one_of_k", default=1, show_default=True, type=click.IntRange(1),
              help="train on every K-th training row (one position per game of K)")
def main(data_dir, out, steps, batch_size, eval_every, eval_positions, threads, seed,
         ownership_weight, score_weight, configs, one_of_k):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if one_of_k > 1:
        data_dir = one_of(Path(data_dir), one_of_k, out / f"data-1of{one_of_k}")
    for name in configs.split(","):
        heads = CONFIGS[name]
        cfg = TrainConfig(kind="value", steps=steps, batch_size=batch_size, eval_every=eval_every,
                          eval_positions=eval_positions, checkpoint_every=steps, threads=threads,
                          seed=seed, heads=heads, ownership_weight=ownership_weight,
                          score_weight=score_weight)
        t0 = time.monotonic()
        m = train(cfg, data_dir, out / name, log=lambda s: click.echo(s, err=True))
        row = {"config": name + (f"/1of{one_of_k}" if one_of_k > 1 else ""), "heads": "+".join(heads) or "value only", "steps": steps,
               "batch_size": batch_size, "positions_seen": m["positions"],
               "value_mse": f"{m['mse']:.4f}", "own_mse": f"{m['own_mse']:.4f}"
               if "own_mse" in m else "", "score_mae": f"{m['score_mae']:.2f}"
               if "score_mae" in m else "", "seconds": f"{time.monotonic() - t0:.0f}"}
        path = out / "heads.csv"
        new = not path.exists()
        with path.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
        click.echo(" ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
