"""Network evaluations per second inside the Zero search against raw onnxruntime throughput for
the same network and batch size, and the AlphaGo search's visits per second against its
rollouts alone, measured in one run.

    python benchmarks/bench_search_nn.py [--model models/bundled/zero-9x9.int8.onnx:9 ...]
        [--batch 8] [--seconds 3] [--repeats 3] [--threads 1] [--alphago-size 19]

Per `--model PATH[:SIZE]` (SIZE 9 when not given; default: the bundled 9x9 int8 Zero network on
9x9 and the 19x19 int8 one on 19x19; `--model fresh:9` exports a freshly initialised network of
the cpu preset, the speed does not depend on the weights): raw `session.run` on one batch of B random planes, then
a Zero search from the empty board (random symmetry, no cache, as this benchmark always ran it)
twice: on a fresh tree, whose memory pages the search writes for the first time (each first
write a kernel page fault), and on a tree kept from earlier searches, as engine-gtp keeps its
search's tree for as long as it runs (`kept_search`: the steady state of play after the first
moves); alternated `--repeats` times, then the search's own work a batch with the network's answers
canned (steady on a shared machine, where the ratio moves by 0.02-0.05 from run to run; the
ratio's shortfall is this work and the cache misses the network's run leaves it), and how a real
search's batch splits between the network's calls and the search's own work beside them. Then the
AlphaGo search on the bundled policy, value and rollout models (`--alphago-size`, 0 skips it;
`--alphago-lambda`, default 1: --search auto's on 13x13 and 19x19, where the value network is
not called) with `rollout_threads` 1 and 2, against the fast rollout policy's playouts alone on
one thread from the same empty board, alternated the same way; the ratios are against the
rollouts alone on one thread and on as many threads as the search's (that many times the one
thread's rate: the ceiling on that many cores).

Each rate is given per wall second and per CPU second of this process: on a machine shared with
other jobs the wall rates move with their load, while the CPU rates of one thread's work (raw
onnxruntime, the Zero search: onnxruntime runs in the caller's thread with one intra-op thread)
do not. The ratios are medians over the repeats. Goals: Zero search / raw >= 0.90; the AlphaGo
search's visits/s as near as its rollouts allow (a rollout per visit: the network calls run on
a second thread beside them).
"""
from __future__ import annotations

import os
import tempfile
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import click  # noqa: E402
import numpy as np  # noqa: E402

from goengine.engine.board import new_board  # noqa: E402
from goengine.engine.features import FEATURE_SETS  # noqa: E402
from goengine.engine.game import Game  # noqa: E402
from goengine.engine.playout import seed as playout_seed  # noqa: E402
from goengine.engine.rollout.policy import RolloutPolicy  # noqa: E402
from goengine.engine.search.alphago import AlphaGoSearch, rollouts  # noqa: E402
from goengine.engine.search.network import NetSearchConfig  # noqa: E402
from goengine.engine.search.zero import ZeroSearch  # noqa: E402
from goengine.models.onnx_evaluator import OnnxEvaluator  # noqa: E402
from goengine.models.store import default_path  # noqa: E402

try:    # `--model fresh`: a new network exported here needs the train extra (torch)
    from goengine.training.nets import networks as nets  # noqa: E402
    from goengine.training.nets.export import export_onnx  # noqa: E402
except ImportError:
    nets = export_onnx = None

DEFAULT_MODELS = ("models/bundled/zero-9x9.int8.onnx:9", "models/bundled/zero.int8.onnx:19")


def _fresh_model(kind: str) -> str:
    if nets is None:
        raise click.UsageError("--model fresh exports a new network: it needs the train extra "
                               "(pip install '.[train]')")
    fs = {"zero": "zero17", "policy": "alphago48", "value": "alphago49"}[kind]
    path = os.path.join(tempfile.mkdtemp(), f"{kind}.onnx")
    export_onnx(nets.build(kind, "cpu"), kind, path,
                {"feature_set": fs, "feature_version": FEATURE_SETS[fs].version})
    return path


def _timed(work, seconds: float) -> tuple[float, float]:
    """(per wall second, per CPU second of this process) of the counts `work()` returns, called
    until `seconds` have passed."""
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        n += work()
    return n / (time.perf_counter() - wall), n / max(time.process_time() - cpu, 1e-9)


def raw_rates(path, size, batch, seconds, threads) -> tuple[float, float]:
    """Raw onnxruntime: (evaluations per wall second, per CPU second) at batch `batch`."""
    ev = OnnxEvaluator(path, threads=threads, symmetry="none", cache_size=0)
    planes = np.random.default_rng(0).random((batch, ev.meta.planes, size, size), dtype=np.float32)
    sess, name = ev.model.session, ev.model.input_name
    sess.run(None, {name: planes})

    def work():
        sess.run(None, {name: planes})
        return batch
    return _timed(work, seconds)


class CannedEvaluator(OnnxEvaluator):
    """The evaluator with its session's answers canned (one real batch's outputs, sliced to each
    call's rows): what remains of a search's time is its own work, free of the network's time
    and of its noise on a shared machine."""

    def __init__(self, path, size, batch):
        super().__init__(path, threads=1, symmetry="random", cache_size=0, seed=1)
        planes = np.random.default_rng(0).random((batch, self.meta.planes, size, size),
                                                 dtype=np.float32)
        self._canned = super()._run(planes)
        self.calls = 0

    def _run(self, rows):
        self.calls += 1
        return {name: out[:len(rows)] for name, out in self._canned.items()}


class TimedEvaluator(OnnxEvaluator):
    """The evaluator with the CPU time of its session's calls summed: how a real search's batch
    splits between the network and the search's own work beside it."""

    def __init__(self, path):
        super().__init__(path, threads=1, symmetry="random", cache_size=0, seed=1)
        self.calls, self.cpu = 0, 0.0

    def _run(self, rows):
        cpu = time.process_time()
        out = super()._run(rows)
        self.cpu += time.process_time() - cpu
        self.calls += 1
        return out


def split_batch(path, size, batch, seconds) -> tuple[float, float]:
    """(CPU us a batch in the network's calls, CPU us a batch in the rest) of a real Zero search
    from the empty board of `seconds`, on a kept tree (`kept_search`)."""
    ev = TimedEvaluator(path)
    s = kept_search(ev, size, batch, seconds)
    ev.calls, ev.cpu = 0, 0.0
    cpu = time.process_time()
    zero_rates(s, size, seconds)
    total = time.process_time() - cpu
    calls = max(ev.calls, 1)
    return ev.cpu / calls * 1e6, (total - ev.cpu) / calls * 1e6


def own_work(path, size, batch, playouts=30_000) -> float:
    """CPU microseconds a batch of the Zero search's own work (CannedEvaluator), `playouts`
    from the empty board after a warm-up search."""
    ev = CannedEvaluator(path, size, batch)
    g = Game(size)
    zero_search(ev, batch, seed=1).search(g, g.to_play, playouts=playouts // 10)
    s = zero_search(ev, batch, seed=2)
    calls, cpu = ev.calls, time.process_time()
    s.search(g, g.to_play, playouts=playouts)
    return (time.process_time() - cpu) / max(ev.calls - calls, 1) * 1e6


def zero_rates(search: ZeroSearch, size, seconds) -> tuple[float, float]:
    """The Zero search's network evaluations (per wall second, per CPU second) from the empty
    board, one search of `seconds` on `search` with its tree started afresh."""
    g = Game(size)
    search.tree.reset(g.to_play)
    before = search.evaluations
    wall, cpu = time.perf_counter(), time.process_time()
    search.search(g, g.to_play, seconds=seconds)
    n = search.evaluations - before
    return n / (time.perf_counter() - wall), n / max(time.process_time() - cpu, 1e-9)


def zero_search(ev, batch, seed) -> ZeroSearch:
    return ZeroSearch(NetSearchConfig(mode="zero", batch_size=batch), net=ev, seed=seed)


def kept_search(ev, size, batch, seconds) -> ZeroSearch:
    """A Zero search whose tree has been through two searches of 2 x `seconds`: both of its
    array sets (tree reuse compacts from one into the other) written as far as a measured search
    reaches, as in engine-gtp after its first moves, where the search and its tree live as long
    as the engine. A fresh tree's first writes to each memory page cost the kernel's page faults
    (on this VM about 2 us a 4 KiB page, or a stall where it assembles a huge page)."""
    search = zero_search(ev, batch, seed=1)
    for _ in range(2):
        zero_rates(search, size, 2 * seconds)
    return search


def alphago_rates(nets, size, seconds, threads, seed, lam) -> tuple[float, float]:
    """The AlphaGo search's visits (per wall second, per CPU second) from the empty board."""
    policy, value, rollout = nets
    s = AlphaGoSearch(NetSearchConfig(mode="alphago", rollout_threads=threads, lam=lam),
                      policy=policy,
                      value=value, policy_features=policy.meta.feature_set,
                      value_features=value.meta.feature_set, seed=seed, rollout=rollout)
    g = Game(size)
    wall, cpu = time.perf_counter(), time.process_time()
    res = s.search(g, g.to_play, seconds=seconds)
    rates = (res.simulations / (time.perf_counter() - wall),
             res.simulations / max(time.process_time() - cpu, 1e-9))
    s.close()
    return rates


def rollout_rates(rollout, size, batch, seconds) -> tuple[float, float]:
    """The fast rollout policy's playouts alone, `batch` at a time as the search runs them (on
    one thread), from the empty board: (per wall second, per CPU second)."""
    st, meta = new_board(size)
    sts, metas = np.stack([st] * batch), np.stack([meta] * batch)
    tables, own = rollout.new_tables(), np.zeros(st.shape[1])
    playout_seed(1)

    def work():
        rollouts(sts.copy(), metas.copy(), batch, 7.5, 3 * size * size, own, own.copy(), tables,
                 True)
        return batch
    work()
    return _timed(work, seconds)


def _median(xs) -> float:
    return float(np.median(xs))


def zero_rows(path, size, batch, seconds, repeats, threads) -> None:
    ev = OnnxEvaluator(path, threads=threads, symmetry="random", cache_size=0, seed=1)
    zero_rates(zero_search(ev, batch, seed=1), size, 1.0)      # compile and warm up
    kept = kept_search(ev, size, batch, seconds)
    rows = []
    for r in range(repeats):
        raw = raw_rates(path, size, batch, seconds, threads)
        fresh = zero_rates(zero_search(ev, batch, seed=2 + r), size, seconds)
        steady = zero_rates(kept, size, seconds)
        rows.append((raw, fresh, steady))
        print(f"  repeat {r + 1}: raw {raw[0]:7.0f}/s wall {raw[1]:7.0f}/s CPU; inside the "
              f"search, a fresh tree {fresh[0]:7.0f}/s wall {fresh[1]:7.0f}/s CPU; the tree "
              f"kept {steady[0]:7.0f}/s wall {steady[1]:7.0f}/s CPU", flush=True)
    for k, name in ((1, "a fresh tree (its pages first written in the search)"),
                    (2, "the tree kept, as engine-gtp keeps it (its pages written already)")):
        wall = _median([row[k][0] / row[0][0] for row in rows])
        cpu = _median([row[k][1] / row[0][1] for row in rows])
        print(f"  Zero search / raw onnxruntime at batch {batch}, {name}: {wall:.2f} by wall "
              f"time, {cpu:.2f} by CPU time (goal >= 0.90)")
    raw_us = batch / _median([row[0][1] for row in rows]) * 1e6
    own = own_work(path, size, batch)
    print(f"  the search's own work, the network's answers canned: {own:.0f} CPU us a batch, "
          f"against the network's {raw_us:.0f}")
    net_us, rest_us = split_batch(path, size, batch, seconds)
    print(f"  in a real search, the tree kept: the network's calls {net_us:.0f} CPU us a batch (raw "
          f"{raw_us:.0f}), the search's own work beside them {rest_us:.0f} (canned {own:.0f})")


def alphago_rows(size, seconds, repeats, lam) -> None:
    paths = {k: default_path(k) for k in ("policy", "value", "rollout")}
    if not all(p.exists() for p in paths.values()):
        print("  the bundled policy, value and rollout models are missing: skipped")
        return
    nets = (OnnxEvaluator(paths["policy"], threads=1, kind="policy", seed=1),
            OnnxEvaluator(paths["value"], threads=1, kind="value", seed=1),
            RolloutPolicy.load(paths["rollout"]))
    alphago_rates(nets, size, 1.0, 2, seed=1, lam=lam)      # compile and warm up
    cfg = NetSearchConfig(mode="alphago")
    rows = []
    for r in range(repeats):
        alone = rollout_rates(nets[2], size, cfg.batch_size, seconds)
        one = alphago_rates(nets, size, seconds, 1, seed=2 + r, lam=lam)
        two = alphago_rates(nets, size, seconds, 2, seed=2 + r, lam=lam)
        rows.append((alone, one, two))
        print(f"  repeat {r + 1}: rollouts alone {alone[0]:6.0f}/s wall {alone[1]:6.0f}/s CPU; "
              f"search, 1 rollout thread {one[0]:6.0f}/s wall {one[1]:6.0f}/s CPU; "
              f"2 threads {two[0]:6.0f}/s wall {two[1]:6.0f}/s CPU", flush=True)
    for k, name in ((1, "1 rollout thread"), (2, "2 rollout threads")):
        wall = _median([row[k][0] / row[0][0] for row in rows])
        cpu = _median([row[k][1] / row[0][1] for row in rows])
        print(f"  AlphaGo search visits/s, {name} / rollouts alone on one thread: {wall:.2f} by "
              f"wall time ({wall / k:.2f} of {k} threads' rollouts), {cpu:.2f} by CPU time")


@click.command()
@click.option("--model", "models", multiple=True, default=DEFAULT_MODELS, show_default=True,
              help="PATH[:SIZE] of a zero-kind ONNX file and the board it runs on (9 if not "
                   "given; PATH 'fresh': a new cpu-preset network); repeatable")
@click.option("--batch", default=8, show_default=True)
@click.option("--seconds", default=3.0, show_default=True, help="per measurement")
@click.option("--repeats", default=3, show_default=True)
@click.option("--threads", default=1, show_default=True, help="onnxruntime threads (Zero)")
@click.option("--alphago-size", default=19, show_default=True,
              help="board of the AlphaGo search rows; 0: none")
@click.option("--alphago-lambda", type=click.FloatRange(0, 1), default=1.0, show_default=True,
              help="lambda of the AlphaGo search rows (1: --search auto's on 13x13 and 19x19)")
def main(models, batch, seconds, repeats, threads, alphago_size, alphago_lambda):
    for spec in models:
        path, colon, size = spec.rpartition(":")
        if not colon:       # PATH alone: 9x9, as this benchmark measured before it took sizes
            path, size = spec, "9"
        if not path or not size.isdigit():
            raise click.BadParameter(f"{spec!r} is not PATH[:SIZE]", param_hint="--model")
        path = _fresh_model("zero") if path == "fresh" else path
        print(f"{os.path.basename(path)} on {size}x{size}, batch {batch}, onnxruntime threads "
              f"{threads}", flush=True)
        zero_rows(path, int(size), batch, seconds, repeats, threads)
    if alphago_size:
        print(f"AlphaGo search on {alphago_size}x{alphago_size} (bundled policy, value, rollout "
              f"policy; batch 8, lambda {alphago_lambda:g})", flush=True)
        alphago_rows(alphago_size, seconds, repeats, alphago_lambda)


if __name__ == "__main__":
    main()
