"""The Zero loop's training throughput: positions/s of one trainer process against N processes
under torchrun (DistributedDataParallel, gloo on a CPU), on a real run's games and network.

    python benchmarks/bench_zero_train.py --run runs/zero9 [--steps 60] [--procs 1,2]
        [--threads 1] [--batch-size 256]

Each setting trains a copy of the run's `checkpoint.pt` for `--steps` steps of the global
minibatch on the run's newest `window` games (`training.zero.ddp`, the module `engine-train zero
--trainer-procs N` starts; its own timer, so torchrun's start-up is left out) in a scratch copy of
the run (the games linked, not copied). Printed: positions/s per setting and the ratio of each to
the first. On a CPU the processes share the cores: with 2 cores, 2 processes of 1 thread compare
with 1 process of 2 threads (`--threads` is per process; the last line repeats 1 process at
`--threads` x the largest count).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import click
import torch

from goengine.training.zero.loop import ZeroConfig
from goengine.training.zero.train import STATS

RUN_FILES = ("checkpoint.pt", "state.json")


def scratch_run(run: Path, into: Path, cfg: ZeroConfig) -> Path:
    """A copy of `run` that training may overwrite: its checkpoint and state, the games linked,
    the config `cfg`."""
    into.mkdir()
    for name in RUN_FILES:
        shutil.copyfile(run / name, into / name)
    (into / "games").symlink_to((run / "games").resolve(), target_is_directory=True)
    (into / "zero_config.json").write_text(json.dumps(asdict(cfg)))
    return into


def train_rate(run: Path, cfg: ZeroConfig, procs: int, steps: int, tmp: Path) -> float:
    """positions/s of `steps` steps on `procs` torchrun processes, from a fresh copy of `run`."""
    scratch = scratch_run(run, tmp / f"p{procs}-t{cfg.threads}", cfg)
    target = int(torch.load(scratch / "checkpoint.pt", weights_only=False)["steps"]) + steps
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                    f"--nproc_per_node={procs}", "-m", "goengine.training.zero.ddp",
                    "--run-dir", str(scratch), "--target", str(target)], check=True,
                   stdout=subprocess.DEVNULL)
    return float(json.loads((scratch / STATS).read_text())["positions_s"])


@click.command()
@click.option("--run", "run_dir", required=True, type=click.Path(file_okay=False, exists=True),
              help="an engine-train zero run directory with games")
@click.option("--steps", default=60, show_default=True, type=click.IntRange(1))
@click.option("--procs", default="1,2", show_default=True, help="process counts to measure")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1),
              help="torch threads per process")
@click.option("--batch-size", default=None, type=click.IntRange(1),
              help="global minibatch [default: the run's]")
def main(run_dir, steps, procs, threads, batch_size):
    run = Path(run_dir)
    cfg = ZeroConfig(**json.loads((run / "zero_config.json").read_text()))
    cfg = replace(cfg, threads=threads, batch_size=batch_size or cfg.batch_size)
    counts = [int(p) for p in procs.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        rates = {}
        for n in counts:
            rates[(n, threads)] = train_rate(run, cfg, n, steps, Path(tmp))
            print(f"{n} process(es) x {threads} thread(s): {rates[(n, threads)]:,.0f} "
                  f"positions/s", flush=True)
        wide = max(counts) * threads
        if (1, wide) not in rates:
            rates[(1, wide)] = train_rate(run, replace(cfg, threads=wide), 1, steps, Path(tmp))
            print(f"1 process x {wide} thread(s): {rates[(1, wide)]:,.0f} positions/s", flush=True)
    base = rates[(counts[0], threads)]
    for (n, t), rate in list(rates.items())[1:]:
        print(f"{n} process(es) x {t} thread(s) against {counts[0]} x {threads}: "
              f"{rate / base:.2f}x")


if __name__ == "__main__":
    main()
