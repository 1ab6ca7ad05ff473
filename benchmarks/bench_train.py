"""Positions per second of the SL policy training step and the RL REINFORCE step on this CPU, for
each precision / layout / compile / thread / batch setting against float32 in the same run.

    python benchmarks/bench_train.py                          # every setting, batch 64, 2 threads,
                                                              # then fp32 vs bf16-cl per batch/threads
    python benchmarks/bench_train.py --settings fp32 bf16-cl --batches 64 256 --threads 2
    python benchmarks/bench_train.py --steps sl --repeats 5

The net is the PolicyNet "cpu" preset (13 x 48) on 19x19; the SL step is training.nets.loop.train_step
(cross-entropy, AdamW of make_optimizer), the RL step training.rl.loop.reinforce_step (REINFORCE loss
over the candidate moves, plain SGD, one chunk = the batch). The planes are random 0/1 planes and
random moves: the time of a step does not depend on the values. Each setting has its own copy of
the same initial net and its own optimizer. The settings are timed interleaved (repeat 1 of every
setting, then repeat 2, ...) so that other work on a shared machine falls on all of them alike;
reported are the median positions/s over the repeats and the ratio to the float32 setting (NCHW
layout, no compile) of the same step, batch and threads; and the same per second of this process's
CPU time (pos/cpu-s), which other work on the machine disturbs less than the wall clock (with 2
threads it counts the time a thread spins waiting for the other).

Settings: fp32, fp32-cl (channels-last), bf16 (torch.autocast("cpu", bfloat16)), bf16-cl,
fp32-compile / bf16-cl-compile (torch.compile, inductor; compile time is left out).
"""
from __future__ import annotations

import argparse
import copy
import statistics
import time

import numpy as np
import torch

from goengine.training.nets.loop import TrainConfig, make_optimizer, train_step
from goengine.training.nets.networks import build
from goengine.training.nets.precision import cpu_has_bf16
from goengine.training.rl.loop import reinforce_step

SIZE = 19
SETTINGS = {   # name: (precision, channels_last, compile)
    "fp32": ("fp32", False, False),
    "fp32-cl": ("fp32", True, False),
    "bf16": ("bf16", False, False),
    "bf16-cl": ("bf16", True, False),
    "fp32-compile": ("fp32", False, True),
    "bf16-cl-compile": ("bf16", True, True),
}
BASELINE = "fp32"


def sl_batch(rng, batch: int, planes: int):
    return (rng.integers(0, 2, (batch, planes, SIZE, SIZE)).astype(np.float32),
            rng.integers(0, SIZE * SIZE, batch).astype(np.int64), np.zeros(batch, np.float32))


def rl_data(rng, batch: int, planes: int):
    """An iteration's learner positions as training.rl.loop.learner_positions returns them."""
    x = np.packbits(rng.integers(0, 2, (batch, planes * SIZE * SIZE)).astype(np.uint8), axis=1)
    mask = rng.random((batch, SIZE * SIZE)) < 0.8
    move = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int64)
    adv = rng.choice([-1.0, 1.0], batch).astype(np.float32)
    return x, move, mask, adv


class Cell:
    """One (step, setting, batch) to time: its net, optimizer and a step function."""

    def __init__(self, step: str, setting: str, batch: int, net0, rng):
        precision, cl, compiled = SETTINGS[setting]
        self.step, self.setting, self.batch = step, setting, batch
        net = copy.deepcopy(net0)
        if cl:
            net = net.to(memory_format=torch.channels_last)
        run_net = torch.compile(net) if compiled else net
        planes = net.config["planes"]
        if step == "sl":
            opt = make_optimizer(net, TrainConfig())
            data = sl_batch(rng, batch, planes)
            self.fn = lambda: train_step(run_net, opt, "policy", data, precision=precision,
                                         channels_last=cl)
        else:
            opt = torch.optim.SGD(net.parameters(), lr=1e-3)
            data = rl_data(rng, batch, planes)
            self.fn = lambda: reinforce_step(run_net, opt, data, 16, SIZE, batch, precision, cl)
        self.rates: list[float] = []
        self.cpu_rates: list[float] = []

    def warm_up(self, steps: int = 2) -> None:
        for _ in range(steps):      # the first calls compile (torch.compile) and pick kernels
            self.fn()

    def time(self, steps: int) -> None:
        t, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            self.fn()
        self.rates.append(steps * self.batch / (time.perf_counter() - t))
        self.cpu_rates.append(steps * self.batch / (time.process_time() - cpu))


def run(cells: list[Cell], threads: int, repeats: int, seconds: float) -> None:
    torch.set_num_threads(threads)
    for c in cells:
        c.warm_up()
    for _ in range(repeats):
        for c in cells:
            t = time.perf_counter()
            c.fn()
            per_step = time.perf_counter() - t
            c.time(max(1, int(seconds / max(per_step, 1e-3))))


def table(groups: list[tuple[int, list[Cell]]]) -> None:
    print(f"{'step':4} {'threads':>7} {'batch':>5} {'setting':16} {'pos/s':>8} {'min':>8} "
          f"{'max':>8} {'x fp32':>7} {'pos/cpu-s':>9} {'x fp32':>7}")
    for threads, cells in groups:
        base = {(c.step, c.batch): c for c in cells if c.setting == BASELINE}
        for c in cells:
            med, cpu = statistics.median(c.rates), statistics.median(c.cpu_rates)
            ref = base.get((c.step, c.batch))
            ratio = f"{med / statistics.median(ref.rates):7.2f}" if ref else f"{'-':>7}"
            cpu_ratio = f"{cpu / statistics.median(ref.cpu_rates):7.2f}" if ref else f"{'-':>7}"
            print(f"{c.step:4} {threads:7d} {c.batch:5d} {c.setting:16} {med:8.0f} "
                  f"{min(c.rates):8.0f} {max(c.rates):8.0f} {ratio} {cpu:9.0f} {cpu_ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", nargs="*", default=["sl", "rl"], choices=["sl", "rl"])
    ap.add_argument("--settings", nargs="*", default=list(SETTINGS), choices=list(SETTINGS),
                    help=f"settings timed at --batch / --thread (the {BASELINE} baseline is added)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--thread", type=int, default=2, help="threads of the settings table")
    ap.add_argument("--scale", default="bf16-cl", choices=list(SETTINGS),
                    help="the setting timed against fp32 at every --batches x --threads")
    ap.add_argument("--batches", nargs="*", type=int, default=[64, 128, 256])
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0, help="timed seconds per cell and repeat")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, CPU bfloat16: {cpu_has_bf16()} (AVX-512 BF16 "
          f"{torch.cpu._is_avx512_bf16_supported()}, AMX {torch.cpu._is_amx_tile_supported()}), "
          f"{torch.get_num_threads()} threads available")
    torch.manual_seed(0)
    net0 = build("policy", "cpu")
    rng = np.random.default_rng(0)
    settings = [BASELINE] + [s for s in args.settings if s != BASELINE]
    groups = []
    if settings:
        cells = [Cell(step, s, args.batch, net0, rng) for step in args.steps for s in settings]
        run(cells, args.thread, args.repeats, args.seconds)
        groups.append((args.thread, cells))
    if args.scale != BASELINE and args.batches and args.threads:
        for threads in args.threads:
            cells = [Cell(step, s, b, net0, rng) for step in args.steps for b in args.batches
                     for s in (BASELINE, args.scale)]
            run(cells, threads, args.repeats, args.seconds)
            groups.append((threads, cells))
    table(groups)


if __name__ == "__main__":
    main()
