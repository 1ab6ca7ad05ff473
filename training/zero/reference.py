"""Strength over generations: a Zero network's search against a fixed external reference.

Gating only says that a network beats its predecessor; a fixed opponent (GNU Go 3.8 level 10 by
default) puts the generations on one scale. `play_reference` plays `engine-gtp --zero NET`
against it through engine-match's referee (the same games `engine-match` plays) and returns the
win rate with its Wilson interval; `reference_table` keeps one row per generation in
reference.csv beside the registry, and `plot_reference` draws it.

    engine-train zero ... --reference-every 5          # in the loop, every 5th generation
    engine-train zero-reference --run runs/zero9       # afterwards, the registry's networks

On a CPU the engine plays each network's int8 twin (training.zero.int8, calibrated on the run's
games), as `engine-gtp` plays a model directory there, and with its own default threads.
"""
from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from goengine.match.cli import prepare_sgf_dir
from goengine.match.runner import EngineSpec, Match, MatchConfig
from goengine.models.session import CPU, providers
from goengine.training.nets.plots import save_figure, subplots
from goengine.training.zero.int8 import int8_twin
from goengine.training.zero.registry import GenerationTable

GNUGO = "/usr/games/gnugo --mode gtp --level 10"
FIELDS = ["generation", "games", "wins", "draws", "losses", "winrate", "ci_low", "ci_high",
          "black_wins", "black_games", "seconds_per_move", "opponent", "komi", "elapsed_s",
          "network", "threads"]
PRECISIONS = ("auto", "int8", "fp32")


@dataclass(frozen=True)
class ReferenceConfig:
    every: int = 0                  # generations between reference matches in the loop; 0: none
    games: int = 20                 # 20 games: the strength table's matches against GNU Go
    time_per_move: float = 1.0      # our engine's seconds per move (engine-gtp --time-per-move)
    opponent: str = GNUGO
    threads: int | None = None      # engine-gtp's --threads; None: its default (the machine's
                                    # cores, at most 4, for the Zero search; 1 to generation 170)
    komi: float | None = None       # the matches' komi; None: the run's (a run at a balanced
                                    # komi still measures itself at the usual 7.5 with this)
    precision: str = "auto"         # the file played: the int8 twin (auto: on a CPU, as engine-gtp
                                    # loads a model directory there) or the float file (fp32)

    def komi_for(self, run_komi: float) -> float:
        return run_komi if self.komi is None else self.komi


def engine_argv(net: Path, cfg: ReferenceConfig, seed: int) -> list[str]:
    """`engine-gtp` with `net` alone (the Zero search), at the reference's time per move."""
    threads = [] if cfg.threads is None else ["--threads", str(cfg.threads)]
    return [sys.executable, "-m", "goengine.gtp.main", "--zero", str(net),
            "--time-per-move", f"{cfg.time_per_move:g}", *threads, "--seed", str(seed), "--quiet"]


def play_reference(net: Path, generation: int, size: int, komi: float, cfg: ReferenceConfig,
                   out_dir: Path, log=print) -> dict:
    """`cfg.games` games of `net` against the reference, colours alternating; the row for
    reference.csv. The games' SGF files and results go to `out_dir`."""
    jsonl, csv = prepare_sgf_dir(out_dir, True, None, None)    # a killed match's games go
    t0 = time.monotonic()
    mcfg = MatchConfig(
        engine_a=EngineSpec(engine_argv(net, cfg, generation), f"gen-{generation:04d}"),
        engine_b=EngineSpec(shlex.split(cfg.opponent)), games=cfg.games, size=size,
        komi=komi, move_timeout=max(30.0, 10 * cfg.time_per_move), sgf_dir=str(out_dir),
        results_jsonl=jsonl, results_csv=csv,
        stderr_dir=str(out_dir), seed=generation)

    def progress(res, match):
        s = match.summary()
        log(f"reference gen-{generation:04d} game {res.index}/{cfg.games}: {res.result} "
            f"({res.black_name} black) | {s.wins['A']}-{s.wins['B']}")

    summary = Match(mcfg, progress=progress).run()
    (out_dir / "summary.json").write_text(json.dumps(summary.as_dict(), indent=2))
    n = summary.games - summary.no_result
    low, high = summary.interval_a
    a = summary.by_color["A"]
    return {"generation": generation, "games": n, "wins": summary.wins["A"],
            "draws": summary.draws, "losses": summary.wins["B"],
            "winrate": f"{summary.winrate_a:.4f}", "ci_low": f"{low:.4f}",
            "ci_high": f"{high:.4f}", "black_wins": a.get("black_wins", 0),
            "black_games": a.get("black_games", 0),
            "seconds_per_move": ("" if summary.avg_move_time.get("A") is None
                                 else f"{summary.avg_move_time['A']:.3f}"),
            "opponent": cfg.opponent, "komi": f"{komi:g}", "elapsed_s": f"{time.monotonic() - t0:.0f}",
            "network": "int8" if net.name.endswith(".int8.onnx") else "fp32",
            "threads": "default" if cfg.threads is None else cfg.threads}


def played_file(run_dir: Path, generation: int, size: int, cfg: ReferenceConfig,
                out_dir: Path) -> Path:
    """The file of the generation's network the engine plays: its int8 twin in `out_dir` where
    `cfg.precision` asks for one (auto: on a CPU) and it can be made, else the float file."""
    net = run_dir / "registry" / f"gen-{generation:04d}.onnx"
    if cfg.precision == "fp32" or (cfg.precision == "auto" and providers() != [CPU]):
        return net
    out_dir.mkdir(parents=True, exist_ok=True)
    twin = int8_twin(net, out_dir / f"gen-{generation:04d}.int8.onnx", run_dir / "games", size,
                     [0, generation], through=generation)
    return net if twin is None else twin


def reference_table(registry_dir) -> GenerationTable:
    """reference.csv / reference.json beside the registry: a run killed in a match keeps the rows
    before it."""
    return GenerationTable(registry_dir, "reference", FIELDS)


def plot_reference(rows: list[dict], png_path: Path, title: str) -> None:
    fig, ax = subplots(figsize=(6, 4))
    if rows:
        x = [int(r["generation"]) for r in rows]
        y = [float(r["winrate"]) for r in rows]
        lo = [float(r["winrate"]) - float(r["ci_low"]) for r in rows]
        hi = [float(r["ci_high"]) - float(r["winrate"]) for r in rows]
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o-", capsize=3)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_xlabel("generation")
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    save_figure(fig, png_path)


def evaluate(run_dir: Path, generations, size: int, komi: float, cfg: ReferenceConfig,
             log=print) -> list[dict]:
    """Reference matches for the registry networks of `generations` that have none yet; their
    rows go to registry/reference.csv and the plot to reference.png in the run directory."""
    run_dir = Path(run_dir)
    table = reference_table(run_dir / "registry")
    rows = []
    for gen in generations:
        if table.has(gen):
            continue
        out_dir = run_dir / "reference" / f"gen-{gen:04d}"
        net = played_file(run_dir, gen, size, cfg, out_dir)
        log(f"reference gen-{gen:04d}: {net.name}")
        row = play_reference(net, gen, size, komi, cfg, out_dir, log=log)
        table.record(row)
        rows.append(row)
        log(f"reference gen-{gen:04d}: {row['wins']} of {row['games']} won "
            f"({float(row['winrate']):.1%} [{float(row['ci_low']):.1%}, "
            f"{float(row['ci_high']):.1%}]) against {cfg.opponent}")
        plot_reference(table.rows, run_dir / "reference.png",
                       f"{size}x{size}: the best network's search against "
                       f"{shlex.split(cfg.opponent)[0].rsplit('/', 1)[-1]}")
    return rows


def reference_options(every_default: int):
    """The reference match's CLI options, shared by `engine-train zero` and `zero-reference`."""
    D = ReferenceConfig()

    def decorate(f):
        for opt in reversed([
            click.option("--reference-every", "ref_every", default=every_default,
                         show_default=True, type=click.IntRange(0),
                         help="play the best network against the reference after every K-th "
                              "generation (0: never)"),
            click.option("--reference-games", "ref_games", default=D.games, show_default=True,
                         type=click.IntRange(1), help="games per reference match"),
            click.option("--reference-time", "ref_time", default=D.time_per_move,
                         show_default=True, type=click.FloatRange(0, min_open=True),
                         help="our engine's seconds per move in reference matches"),
            click.option("--reference", "ref_opponent", default=D.opponent, show_default=True,
                         help="the reference opponent's GTP command"),
            click.option("--reference-threads", "ref_threads", default=D.threads,
                         type=click.IntRange(1),
                         help="our engine's --threads in reference matches [default: "
                              "engine-gtp's]"),
            click.option("--reference-precision", "ref_precision", default=D.precision,
                         show_default=True, type=click.Choice(PRECISIONS),
                         help="the network file our engine plays: its int8 twin (auto: on a "
                              "CPU) or the float file"),
            click.option("--reference-komi", "ref_komi", default=None, type=click.FloatRange(-1000, 1000),
                         help="komi of the reference matches [default: the run's]; the "
                              "network's value is moved there from the komi it learned at")]):
            f = opt(f)
        return f
    return decorate


def reference_config(ref_every, ref_games, ref_time, ref_opponent, ref_threads,
                     ref_komi=None, ref_precision="auto") -> ReferenceConfig:
    return ReferenceConfig(every=ref_every, games=ref_games, time_per_move=ref_time,
                           opponent=ref_opponent, threads=ref_threads, komi=ref_komi,
                           precision=ref_precision)


__all__ = ["GNUGO", "ReferenceConfig", "evaluate", "reference_table", "engine_argv", "play_reference",
           "played_file", "plot_reference", "reference_config", "reference_options"]
