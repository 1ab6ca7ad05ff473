"""A Zero run without its games: what `engine-train zero --resume` needs to go on elsewhere (another
machine, the next session), small enough to commit or copy.

    engine-train zero-snapshot --run runs/zero9 --out checkpoints/zero9
    cp -r checkpoints/zero9 runs/zero9 && engine-train zero --out runs/zero9 --resume ...
    engine-train zero-snapshot --run runs/zero9 --out /tmp/zero9 --with-window   # and its window

It holds the trainer's checkpoint (weights, optimizer), the state, the config, the curve, the
registry's tables (registry, reference matches, their plots) and of the registry's networks the
best one and those given by `--keep` (every file is 1-2 MB); not the self-play games. A resumed
snapshot starts its generation's self-play over and trains on the games it plays from then on
(the window fills again). It is taken between generations only: in the middle of one, the
checkpoint has already moved past the games that the snapshot leaves out.

`--with-window` also copies the shards of the training window (the run's `--window` games, about
1 MB a 9x9 generation) with a manifest that lists them and counts the games left behind as
`earlier`: the copy goes on exactly as the run would have (the same window, komi and resignation
threshold), on a bigger machine for a while, say, and its new shards and manifest can come back.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from goengine.training.data.atomic import write_atomic
from goengine.training.data.game_shards import MANIFEST, read_manifest
from goengine.training.zero.registry import Registry
from goengine.training.zero.shards import newest_shards

# besides state.json, which is written last
RUN_FILES = ("checkpoint.pt", "zero_config.json", "curve.csv", "curve.png", "reference.png")


def snapshot(run_dir: Path, out: Path, keep: set[int] = frozenset(),
             window: int = 0) -> list[Path]:
    """Copy `run_dir` less its games into `out` (replacing what is there), with the newest
    `window` games' shards when `window` > 0; the files written."""
    state_text = (run_dir / "state.json").read_text()
    state = json.loads(state_text)
    registry = Registry(run_dir / "registry")
    if state["phase"] != "selfplay" or registry.rows[-1]["generation"] != state["generation"] - 1:
        raise click.UsageError(f"{run_dir} is in the middle of generation {state['generation']} "
                               f"({state['phase']}): snapshot it between generations")
    if (out / "games").exists():
        raise click.UsageError(f"{out} holds games: give a folder that is not a run")
    written = []

    def copy(src: Path, dst: Path) -> None:
        dst.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(dst, lambda tmp: shutil.copyfile(src, tmp))
        written.append(dst)

    wanted = {registry.path(g).name for g in {state["best"], *keep}}
    for old in (out / "registry").glob("gen-*.onnx"):
        if old.name not in wanted:
            old.unlink()                      # an earlier snapshot's networks that are not kept
    for name in RUN_FILES:
        if (run_dir / name).is_file():
            copy(run_dir / name, out / name)
    for src in sorted((run_dir / "registry").iterdir()):
        if src.is_file() and (src.suffix != ".onnx" or src.name in wanted):
            copy(src, out / "registry" / src.name)
    if window > 0:
        copy_window(run_dir / "games", out / "games", window, copy)
    if (run_dir / "state.json").read_text() != state_text:
        raise click.UsageError(f"{run_dir} moved on while it was copied: snapshot it again")
    write_atomic(out / "state.json", lambda tmp: Path(tmp).write_text(state_text))
    written.append(out / "state.json")     # last: a snapshot with a state is a whole one
    return written


def copy_window(games: Path, out: Path, window: int, copy) -> None:
    """The shards of the newest `window` games, then a manifest of them alone whose `earlier`
    counts the games and positions of the shards left behind (training.zero.shards)."""
    manifest = read_manifest(games)
    chosen = {s["file"] for s in newest_shards(games, window)[0]}
    kept = [s for s in manifest["shards"] if s["file"] in chosen]
    for shard in kept:
        copy(games / shard["file"], out / shard["file"])
    left = [s for s in manifest["shards"] if s["file"] not in chosen]
    earlier = manifest.get("earlier", {})
    small = dict(manifest, shards=kept, earlier={
        "games": earlier.get("games", 0) + sum(s["games"] for s in left),
        "positions": earlier.get("positions", 0) + sum(s["positions"] for s in left)})
    write_atomic(out / MANIFEST, lambda tmp: Path(tmp).write_text(json.dumps(small, indent=1)))


__all__ = ["snapshot"]
