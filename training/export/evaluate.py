"""Move-prediction accuracy of a policy (or MSE of a value net) on any SGF collection, from an
exported ONNX file or a training checkpoint (`engine-train eval`).

    engine-train eval --model models/bundled/policy.onnx --sgf ../shared/data/tygem9d/tygem9d-2015-06.tar.bz2
    engine-train eval --model models/bundled/value.onnx --data-dir runs/vdata19   # held-out shards

`--data-dir` reads the held-out shards a dataset build or `engine-train value-data` wrote (the
positions and targets the training runs evaluate on), every board size in them (a line for each
size before the last line when there are several). `--by-move 60,120,180,240` (with `--sgf`)
adds a line for each phase of the games: a value net's error on human outcomes is mostly in the
opening, where the game is undecided.
The last line is `top1 <fraction> top5 <fraction> positions <n>` (policy) or
`mse <value> positions <n>` (value). A Zero net gets both: `value: mse <value> positions <n>`
(its value head against the outcomes of the games with a result, as the network says it at the
komi it learned at, not moved to the game's) before its policy's last line.
"""
from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import torch

from goengine.engine.coords import PASS, loc_to_pos
from goengine.engine.features import FEATURE_SETS, extract
from goengine.engine.replay import ReplayError, positions
from goengine.models.session import load_session
from goengine.sgf_tools import FilterConfig, FilterStats, ReadStats, apply_filters, iter_games
from goengine.training.data.dataset import REPLAY_RULES, PackedPositions, outcome, shard_sizes
from goengine.training.nets import networks as nets


def _score(model, x: np.ndarray, targets: np.ndarray, z: np.ndarray) -> np.ndarray:
    """[top-1 hits, top-5 hits, squared error, 1, valued] per position [B, 5] of one batch of
    planes x [B, C, N, N] against its targets: the move's Pos for a policy or Zero net, and the
    outcome z for the mover (+1 won, -1 lost, 0 unknown or drawn) for a value net (every position)
    or a Zero net's value head (the positions whose game has a known result)."""
    out = model.run(x)
    rows = np.zeros((len(x), 5))
    rows[:, 3] = 1
    if model.kind in ("value", "zero"):
        value = out[1 if model.kind == "zero" else 0].reshape(-1)
        known = z != 0 if model.kind == "zero" else np.ones(len(z), dtype=bool)
        rows[:, 2] = np.where(known, (value - z) ** 2, 0.0)
        rows[:, 4] = known
    if model.kind == "value":
        return rows
    policy = out[0]
    board = policy[:, :x.shape[-1] * x.shape[-2]]   # a Zero net's pass logit is no move target
    order = np.argsort(-board, axis=1)[:, :5]
    rows[:, 0] = order[:, 0] == targets
    rows[:, 1] = (order == targets[:, None]).any(axis=1)
    return rows


def _figures(kind: str, tally: np.ndarray, **extra) -> dict:
    top1, top5, sq, count, valued = tally
    count, valued = int(count), int(valued)
    if kind == "value":
        return {"mse": sq / max(valued, 1), "positions": count, **extra}
    figures = {"top1": top1 / max(count, 1), "top5": top5 / max(count, 1), "positions": count}
    if kind == "zero":      # the value head's error on the games with a known result
        figures.update(value_mse=sq / max(valued, 1), value_positions=valued)
    return {**figures, **extra}


class _Model:
    """Runs planes [B, C, N, N] through an ONNX file or a torch checkpoint."""

    def __init__(self, path: Path, threads: int):
        if path.suffix == ".onnx":
            self.session = load_session(path, threads)
            self.kind = self.session.meta.kind
            self.feature_set = self.session.meta.feature_set
            self.run = lambda x: self.session.session.run(None, {self.session.input_name: x})
        else:
            torch.set_num_threads(threads)
            net, _ = nets.load_checkpoint(path)
            net.eval()
            self.kind = net.config["kind"]
            self.feature_set = {"policy": "alphago48", "value": "alphago49", "zero": "zero17"}[self.kind]

            def run(x):
                with torch.no_grad():
                    out = net(torch.from_numpy(x))
                return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]
            self.run = run


def evaluate_collection(model_path, sgf_paths, max_positions=20000, every=1, threads=2,
                        filters: FilterConfig | None = None, batch=128, by_move=(),
                        decided_on_board: bool = False):
    """The figures of a model on the positions of SGF games (every `every`-th move, the first
    `max_positions`). by_move: ascending move numbers that cut the games into phases; the figures
    of each phase come back under "by_move" ("0-59", "60-119", ..., "240-"), since what a value net
    can know of the outcome depends on how far the game has gone. decided_on_board: leave out the
    games won on time or by forfeit."""
    model = _Model(Path(model_path), threads)
    fs = FEATURE_SETS[model.feature_set]
    read, filt = ReadStats(), FilterStats()
    filters = filters or FilterConfig(sizes=None, require_result=model.kind == "value",
                                      decided_on_board=decided_on_board)
    edges = np.asarray(sorted(by_move), dtype=np.int64)
    xs, targets, zs, moves = [], [], [], []
    # per phase: top-1 hits, top-5 hits, squared error, positions, positions with a known outcome
    tally = np.zeros((len(edges) + 1, 5))
    skipped = 0

    def flush():
        if not xs:
            return
        rows = _score(model, np.stack(xs).astype(np.float32), np.asarray(targets),
                      np.asarray(zs, dtype=np.float64))
        np.add.at(tally, np.searchsorted(edges, np.asarray(moves), side="right"), rows)
        for pending in (xs, targets, zs, moves):
            pending.clear()

    def full():
        return int(tally[:, 3].sum()) + len(xs) >= max_positions

    for src in sgf_paths:
        for record in apply_filters(iter_games(src, read), filters, filt):
            if model.kind == "value" and record.winner is None:
                continue
            try:
                for i, (game, color, lc) in enumerate(positions(record, REPLAY_RULES)):
                    if lc == PASS or i % every:
                        continue
                    xs.append(extract(game, fs.name))
                    targets.append(loc_to_pos(lc, game.size) if model.kind != "value" else 0)
                    zs.append(outcome(record, color))
                    moves.append(i)
                    if len(xs) >= batch:
                        flush()
                    if full():
                        break
            except ReplayError:
                skipped += 1
            if full():
                break
        if full():
            break
    flush()
    extra = {"skipped_games": skipped}
    if len(edges):
        bounds = [0, *edges.tolist()]
        names = [f"{lo}-{hi - 1}" for lo, hi in zip(bounds, bounds[1:])] + [f"{bounds[-1]}-"]
        extra["by_move"] = {name: _figures(model.kind, t) for name, t in zip(names, tally)}
    return _figures(model.kind, tally.sum(axis=0), **extra)


def evaluate_shards(model_path, data_dir, max_positions=20000, threads=2, batch=128,
                    split: str = "heldout") -> dict:
    """The same figures on the `split` shards of a dataset directory (the first `max_positions`
    of each board size, identity symmetry, as the training runs' held-out evaluation reads them)."""
    model = _Model(Path(model_path), threads)
    planes = FEATURE_SETS[model.feature_set].num_planes
    sizes = shard_sizes(data_dir, split)
    if not sizes:
        raise click.ClickException(f"{data_dir}: no {split} shards")
    tallies = {}
    for size in sizes:
        data = PackedPositions(data_dir, split, size, planes, limit=max_positions)
        tallies[size] = np.zeros(5)
        for start in range(0, len(data), batch):
            x, move, z = data.batch(np.arange(start, min(start + batch, len(data))), symmetry=0)
            tallies[size] += _score(model, x, move, z).sum(axis=0)
    by_size = {size: _figures(model.kind, t) for size, t in tallies.items()}
    return _figures(model.kind, sum(tallies.values()), skipped_games=0, by_size=by_size)
