"""The Zero loop's training phase on several processes: DistributedDataParallel under torchrun
(gloo on CPU, NCCL on GPUs), started by `engine-train zero --trainer-procs N` for each
generation's steps, or by hand:

    torchrun --standalone --nproc_per_node 2 -m goengine.training.zero.ddp \\
        --run-dir runs/zero9 --target 400

Every process reads the run's `checkpoint.pt` and the newest `window` games, and draws its own
minibatches of batch_size / N positions (its own seed); DDP averages the gradients, so a step is
one step of the global batch. Rank 0 writes `checkpoint.pt` (as the one-process trainer does) and
`train_stats.json` (losses, positions/s) for the loop to read.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import click
import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from goengine.training.nets import networks as nets
from goengine.training.nets.optimizers import build_optimizer, restore_state
from goengine.training.nets.precision import resolve as resolve_precision
from goengine.training.zero.loop import ZeroConfig, head_weights
from goengine.training.zero.shards import load_window
from goengine.training.zero.train import STATS, run_steps, save_trainer


def train_distributed(run_dir: Path, target: int, cfg, cpu_precision: str | None = None) -> None:
    """Run this process's share of the steps up to `target` (called under torchrun); on CPUs at
    `cpu_precision` when given (the loop's choice, training.nets.precision.choose), so that every
    process steps alike."""
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if cuda else "cpu")
    torch.set_num_threads(cfg.threads)
    net, ckpt = nets.load_checkpoint(run_dir / "checkpoint.pt")
    net.to(device)
    if cfg.channels_last:
        net = net.to(memory_format=torch.channels_last)
    opt = build_optimizer(net, cfg.optimizer, cfg.lr, cfg.l2)
    restore_state(opt, ckpt["optimizer"])      # the loop's checkpoint: the same kind
    steps = int(ckpt["steps"])
    gen = json.loads((run_dir / "state.json").read_text())["generation"]
    model = DistributedDataParallel(net, device_ids=[device.index] if cuda else None)
    window = load_window(run_dir / "games", cfg.window, q_weight=cfg.q_weight)
    rng = np.random.default_rng([cfg.seed, gen, steps, rank])

    def save(at):
        if rank == 0:
            save_trainer(run_dir / "checkpoint.pt", net, opt, at, cfg)

    t0 = time.monotonic()
    steps, sums, k = run_steps(model, opt, window, cfg.size, max(1, cfg.batch_size // world),
                               rng, steps, target, cfg.checkpoint_every, save, device=device,
                               precision=(cpu_precision if cpu_precision and not cuda
                                          else resolve_precision(cfg.precision, device)),
                               channels_last=cfg.channels_last, weights=head_weights(cfg))
    dt = max(time.monotonic() - t0, 1e-9)
    if rank == 0:
        (run_dir / STATS).write_text(json.dumps({
            "steps": k, "loss": sums.tolist(), "positions_s": k * cfg.batch_size / dt,
            "window_positions": len(window.z), "procs": world}))
    dist.barrier()
    dist.destroy_process_group()


@click.command()
@click.option("--run-dir", required=True, type=click.Path(file_okay=False, exists=True))
@click.option("--target", required=True, type=click.IntRange(1), help="train up to this step")
@click.option("--cpu-precision", type=click.Choice(["fp32", "bf16"]), default=None,
              help="the precision on CPUs (engine-train zero passes the one it chose) [default: "
                   "the run's --precision, auto being fp32 here on a CPU]")
def main(run_dir, target, cpu_precision):
    run_dir = Path(run_dir)
    cfg = ZeroConfig(**json.loads((run_dir / "zero_config.json").read_text()))
    train_distributed(run_dir, target, cfg, cpu_precision)


if __name__ == "__main__":
    main()
