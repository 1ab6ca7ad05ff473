"""`engine-train zero`, `zero-reference`, `zero-snapshot` and `zero-grow`: the AlphaGo Zero loop
(training.zero.loop), its generations against a fixed reference (training.zero.reference), a run
without its games to resume elsewhere (training.zero.snapshot), and a bigger net trained on a run's
games (training.zero.grow).

    engine-train zero --size 9 --out runs/zero9 --init-from checkpoints/zero-cpu.pt
    engine-train zero --size 19 --out runs/z19 --init-from checkpoints/zero-cpu.pt --gumbel
    engine-train zero-reference --run runs/zero9
    engine-train zero-snapshot --run runs/zero9 --out checkpoints/zero9
    engine-train zero-grow --run runs/zero9 --blocks 10 --filters 64 --out runs/zero9-grown
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click
import torch

from goengine.training.data.params import GENERATIONS, TRAINED_RUN, ZERO_RUN
from goengine.training.nets import networks as nets
from goengine.training.nets.optimizers import OPTIMIZERS
from goengine.training.nets.precision import precision_options
from goengine.training.workers.pool import WorkerPool, worker_options
from goengine.training.zero.grow import GrowConfig, grow_run
from goengine.training.zero.loop import ZeroConfig, ZeroRun, head_flags
from goengine.training.zero.reference import evaluate, reference_config, reference_options
from goengine.training.zero.registry import Registry
from goengine.training.zero.snapshot import snapshot

D = ZeroConfig()


def check_heads(ctx, param, value: str) -> str:
    """--heads as given, once head_flags has read it (a bad name is a usage error)."""
    head_flags(value)
    return value


PUCT_EXPLORATION = {"forced_playouts": "--forced-playouts", "dirichlet_alpha": "--dirichlet-alpha",
                    "dirichlet_eps": "--dirichlet-eps", "sampled_moves": "--sampled-moves"}


def check_gumbel(cfg: ZeroConfig) -> None:
    """--gumbel explores by its own sampling of the root's moves: the PUCT self-play's root noise,
    forced playouts and sampled opening moves have no effect there, so setting one is a usage
    error rather than a silent no-op."""
    values, defaults = asdict(cfg), asdict(D)
    given = [flag for name, flag in PUCT_EXPLORATION.items() if values[name] != defaults[name]]
    if given:
        raise click.UsageError(f"{', '.join(given)}: PUCT self-play's exploration; --gumbel "
                               f"explores by its own sampling (leave them at their defaults)")


@click.command("zero")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="run directory")
@click.option("--init-from", "init", default=None, type=click.Path(dir_okay=False, exists=True),
              help="start from this Zero network (a training checkpoint .pt or a zero ONNX, "
                   "e.g. checkpoints/zero-cpu.pt) [default: from scratch]")
@click.option("--size", default=D.size, show_default=True, type=click.IntRange(5, 19))
@click.option("--komi", default=D.komi, show_default=True, type=click.FloatRange(-1000, 1000),
              help="self-play komi (with --fair-komi the first generation's; the reference "
                   "matches' unless --reference-komi)")
@click.option("--fair-komi/--fixed-komi", default=D.fair_komi, show_default=True,
              help="play each generation at the komi at which Black would have won half of the "
                   "previous generation's games (a resumed run keeps the komi it reached)")
@click.option("--komi-step", default=D.komi_step, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="with --fair-komi: the most the komi moves from one generation to the next")
@click.option("--generations", default=D.generations, show_default=True, type=click.IntRange(1),
              help="generations to reach (a resumed run goes on to this number)")
@click.option("--games", default=D.games, show_default=True, type=click.IntRange(1),
              help="self-play games per generation")
@click.option("--games-per-job", default=D.games_per_job, show_default=True,
              type=click.IntRange(1), help="games per worker job (one shard)")
@click.option("--visits", "--simulations", default=D.visits, show_default=True,
              type=click.IntRange(2), help="root visits per self-play move (with --gumbel: "
                                           "the Gumbel search's simulations)")
@click.option("--fast-visits", default=D.fast_visits, show_default=True, type=click.IntRange(0),
              help="playout cap randomisation: visits of the fast, unrecorded searches "
                   "(0: off, every move a full search)")
@click.option("--full-fraction", default=D.full_fraction, show_default=True,
              type=click.FloatRange(0, 1, min_open=True),
              help="with --fast-visits: the chance that a move is a full, recorded search")
@click.option("--forced-playouts", default=D.forced_playouts, show_default=True,
              type=click.FloatRange(0),
              help="k of KataGo's forced playouts sqrt(k P N) at the noised self-play root, "
                   "pruned from the policy target (KataGo: 2; 0: off)")
@click.option("--gumbel/--no-gumbel", default=D.gumbel, show_default=True,
              help="Gumbel AlphaZero self-play: the Gumbel root search with sequential halving "
                   "plays each move and its improved policy is the target (no Dirichlet noise, "
                   "forced playouts or sampled moves); gating stays PUCT")
@click.option("--gumbel-k", default=D.gumbel_k, show_default=True, type=click.IntRange(1),
              help="with --gumbel: moves sampled at the root, halved down to one")
@click.option("--gumbel-c-visit", default=D.gumbel_c_visit, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="with --gumbel: c_visit of sigma(q) = (c_visit + max N) c_scale q")
@click.option("--gumbel-c-scale", default=D.gumbel_c_scale, show_default=True,
              type=click.FloatRange(0, min_open=True), help="with --gumbel: c_scale of sigma(q)")
@click.option("--dirichlet-alpha", default=D.dirichlet_alpha, show_default=True,
              type=click.FloatRange(0), help="root noise alpha; 0: 0.03 * 361 / N^2")
@click.option("--dirichlet-eps", default=D.dirichlet_eps, show_default=True,
              type=click.FloatRange(0, 1))
@click.option("--sampled-moves", default=D.sampled_moves, show_default=True,
              type=click.IntRange(-1), help="moves at temperature 1; -1: (N^2 // 12) // 2 * 2")
@click.option("--play-on", default=D.play_on, show_default=True, type=click.IntRange(-1),
              help="moves before which neither side passes nor resigns; -1: N^2 // 2, 0: off")
@click.option("--resign-threshold", default=D.resign_threshold, show_default=True,
              type=click.FloatRange(0, 1), help="resign below this win rate (the start and the "
                                                "ceiling of the calibration); 0 never")
@click.option("--resign-target", default=D.resign_target, show_default=True,
              type=click.FloatRange(0, 1), help="false-resignation rate the threshold is set to "
                                                "from the no-resign games (0: keep it fixed)")
@click.option("--no-resign-fraction", default=D.no_resign_fraction, show_default=True,
              type=click.FloatRange(0, 1), help="games that never resign (false-resign count)")
@click.option("--move-cap", default=D.move_cap, show_default=True, type=click.IntRange(0),
              help="moves before a game is scored as it stands (0: 2 N^2)")
@click.option("--search-batch", default=D.search_batch, show_default=True,
              type=click.IntRange(1), help="leaves per network call in the search")
@click.option("--selfplay-precision", default=D.selfplay_precision, show_default=True,
              type=click.Choice(["auto", "int8", "fp32"]),
              help="networks on the workers (self-play and gating): int8 twins "
                   "(training.export.quantize) or the float files; auto: int8 where onnxruntime runs on "
                   "the CPU")
@click.option("--c-puct", default=D.c_puct, show_default=True, type=click.FloatRange(0),
              help="PUCT exploration constant of the self-play and gating searches")
@click.option("--score-utility", default=D.score_utility, show_default=True,
              type=click.FloatRange(0), help="KataGo's static score utility in the self-play and "
              "gating searches: a leaf's utility is (v + F (2/pi) atan(score / N)) / (1 + F) "
              "(0: off)")
@click.option("--human-sgf", multiple=True, type=click.Path(exists=True),
              help="held-out human games (SGF file, folder or archive; repeatable): each "
                   "generation's value MSE on their outcomes and top-1 on their moves, in the curve")
@click.option("--human-positions", default=D.human_positions, show_default=True,
              type=click.IntRange(1), help="with --human-sgf: positions read")
@click.option("--human-every", default=D.human_every, show_default=True, type=click.IntRange(1),
              help="with --human-sgf: every n-th move of each game")
@click.option("--window", default=D.window, show_default=True, type=click.IntRange(1),
              help="newest games trained on")
@click.option("--steps", default=D.steps, show_default=True, type=click.IntRange(1),
              help="training minibatches per generation")
@click.option("--q-weight", default=D.q_weight, show_default=True, type=click.FloatRange(0, 1),
              help="value target (1 - w) z + w q: the game's outcome mixed with the self-play "
                   "search's value of the position (0: the outcome alone, as AlphaGo Zero)")
@click.option("--batch-size", default=D.batch_size, show_default=True, type=click.IntRange(1))
@click.option("--optimizer", default=D.optimizer, show_default=True,
              type=click.Choice(OPTIMIZERS))
@click.option("--lr", default=D.lr, show_default=True, type=click.FloatRange(0, min_open=True))
@click.option("--l2", default=D.l2, show_default=True, type=click.FloatRange(0),
              help="c in c ||theta||^2")
@click.option("--heads", default=D.heads, show_default=True, callback=check_heads,
              help="auxiliary heads of a new net: none, ownership, score or ownership,score "
                   "(a resumed run keeps its net's)")
@click.option("--ownership-weight", default=D.ownership_weight, show_default=True,
              type=click.FloatRange(0), help="weight of the ownership MSE (mean over points)")
@click.option("--score-weight", default=D.score_weight, show_default=True,
              type=click.FloatRange(0), help="weight of the MSE of score / N^2")
@click.option("--checkpoint-every", default=D.checkpoint_every, show_default=True,
              type=click.IntRange(1))
@click.option("--threads", default=D.threads, show_default=True, type=click.IntRange(1),
              help="torch threads of each trainer process")
@precision_options
@click.option("--trainer-procs", default=D.trainer_procs, show_default=True,
              type=click.IntRange(1), help="training processes: > 1 runs DistributedDataParallel "
                                           "under torchrun (gloo on CPU, NCCL on GPUs)")
@click.option("--gating/--no-gating", default=D.gating, show_default=True,
              help="--no-gating promotes every candidate (AlphaZero)")
@click.option("--gate-visits", default=D.gate_visits, show_default=True, type=click.IntRange(2))
@click.option("--gate-sampled-moves", default=D.gate_sampled_moves, show_default=True,
              type=click.IntRange(0), help="opening moves sampled in gating games")
@click.option("--gate-min", default=D.gate_min, show_default=True, type=click.IntRange(2))
@click.option("--gate-max", default=D.gate_max, show_default=True, type=click.IntRange(2))
@click.option("--gate-step", default=D.gate_step, show_default=True, type=click.IntRange(2),
              help="gating games between SPRT looks after --gate-min")
@click.option("--elo0", default=D.elo0, show_default=True, type=float)
@click.option("--elo1", default=D.elo1, show_default=True, type=float)
@click.option("--sprt-alpha", default=D.sprt_alpha, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True))
@click.option("--sprt-beta", default=D.sprt_beta, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True))
@click.option("--pass-score", default=D.pass_score, show_default=True,
              type=click.FloatRange(0, 1), help="score that passes at --gate-max")
@click.option("--preset", default=D.preset, show_default=True,
              type=click.Choice(sorted(nets.PRESETS["zero"])), help="network from scratch")
@click.option("--blocks", default=D.blocks, show_default=True, type=click.IntRange(0),
              help="residual blocks (0: the preset's)")
@click.option("--filters", default=D.filters, show_default=True, type=click.IntRange(0),
              help="filters (0: the preset's)")
@click.option("--seed", default=D.seed, show_default=True, type=click.IntRange(0))
@click.option("--resume", is_flag=True, help="continue the run in --out")
@reference_options(every_default=0)
@worker_options
def zero_command(out, init, resume, workers, ray_address, ref_every, ref_games, ref_time,
                 ref_opponent, ref_threads, ref_komi, ref_precision, **options):
    """AlphaGo Zero self-play loop with gating (docs/algorithms.md §4.6)."""
    cfg = ZeroConfig(**options)
    reference = reference_config(ref_every, ref_games, ref_time, ref_opponent, ref_threads,
                                 ref_komi, ref_precision)
    if cfg.gate_min > cfg.gate_max:
        raise click.UsageError("--gate-min is above --gate-max")
    if cfg.fast_visits >= cfg.visits:
        raise click.UsageError("--fast-visits must be below --visits (the full searches)")
    if cfg.gumbel:
        check_gumbel(cfg)
    pool = WorkerPool(workers, ray_address)
    try:
        ZeroRun(cfg, out, init, pool, resume, log=click.echo, reference=reference).run()
    finally:
        pool.close()
    click.echo(f"registry: {Path(out) / 'registry' / 'registry.csv'}")


@click.command("zero-reference")
@click.option("--run", "run_dir", required=True, type=ZERO_RUN,
              help="an engine-train zero run directory")
@click.option("--generations", default="", type=GENERATIONS, help="comma-separated registry generations "
              "[default: every promoted one, or every --reference-every-th]")
@reference_options(every_default=1)
def zero_reference_command(run_dir, generations, ref_every, ref_games, ref_time, ref_opponent,
                           ref_threads, ref_komi, ref_precision):
    """Play registry networks of a Zero run against a fixed reference (GNU Go 3.8 level 10 by
    default) and write registry/reference.csv and reference.png."""
    state = json.loads((Path(run_dir) / "state.json").read_text())
    cfg = json.loads((Path(run_dir) / "zero_config.json").read_text())
    registry = Registry(Path(run_dir) / "registry")
    if generations:
        gens = list(generations)
    else:
        gens = [r["generation"] for r in registry.promoted() if r["generation"] > 0
                and r["generation"] % max(ref_every, 1) == 0]
    missing = [g for g in gens if not registry.path(g).exists()]
    if missing:
        raise click.BadParameter(f"no registry network for generation(s) {missing}",
                                 param_hint="'--generations'")
    reference = reference_config(ref_every, ref_games, ref_time, ref_opponent, ref_threads,
                                 ref_komi, ref_precision)
    evaluate(Path(run_dir), gens, state["size"], reference.komi_for(cfg["komi"]), reference,
             log=click.echo)
    click.echo(f"reference: {Path(run_dir) / 'registry' / 'reference.csv'}")


G = GrowConfig()


@click.command("zero-grow")
@click.option("--run", "run_dir", required=True, type=TRAINED_RUN,
              help="an engine-train zero run directory (its checkpoint.pt and games)")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="folder for checkpoint.pt, grown.onnx, curve.csv and curve.png")
@click.option("--blocks", default=G.blocks, show_default=True, type=click.IntRange(1))
@click.option("--filters", default=G.filters, show_default=True, type=click.IntRange(1))
@click.option("--games", default=G.games, show_default=True, type=click.IntRange(1),
              help="the run's newest games to train on and hold out from")
@click.option("--holdout-every", default=G.holdout_every, show_default=True,
              type=click.IntRange(2), help="hold out every n-th shard of those games")
@click.option("--batch-size", default=G.batch_size, show_default=True, type=click.IntRange(1))
@click.option("--lr", default=G.lr, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Adam's learning rate at the start (cosine to 0 over the budget)")
@click.option("--warmup", default=G.warmup, show_default=True, type=click.FloatRange(0, 1),
              help="the fraction of the budget over which the learning rate ramps up")
@click.option("--l2", default=G.l2, show_default=True, type=click.FloatRange(0))
@click.option("--minutes", default=G.minutes, show_default=True,
              type=click.FloatRange(0, min_open=True), help="the budget, unless --steps")
@click.option("--steps", default=G.steps, show_default=True, type=click.IntRange(0),
              help="the budget in steps (0: --minutes)")
@click.option("--eval-every", default=G.eval_every, show_default=True, type=click.IntRange(1),
              help="steps between held-out measurements")
@click.option("--device", default="auto", show_default=True,
              type=click.Choice(["auto", "cpu", "cuda"]), help="auto: the GPU when there is one")
@click.option("--precision", default=G.precision, show_default=True,
              type=click.Choice(["auto", "fp32", "bf16"]))
@click.option("--threads", default=G.threads, show_default=True, type=click.IntRange(1))
@click.option("--batch-threads", default=G.batch_threads, show_default=True,
              type=click.IntRange(1), help="threads making the training batches")
@click.option("--seed", default=G.seed, show_default=True, type=click.IntRange(0))
def zero_grow_command(run_dir, out, device, **options):
    """Grow a Zero run's network (more blocks, more filters; the same function at first) and
    train it on the run's newest games, keeping the best held-out checkpoint."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        raise click.UsageError("--device cuda: torch sees no GPU here")
    result = grow_run(Path(run_dir), Path(out), GrowConfig(**options), torch.device(device),
                      log=click.echo)
    click.echo(json.dumps({"base": result["base"], "best": result["best"],
                           "positions_s": round(result["positions_s"])}))


@click.command("zero-snapshot")
@click.option("--run", "run_dir", required=True, type=ZERO_RUN,
              help="an engine-train zero run directory")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="the snapshot's folder (an earlier snapshot there is replaced)")
@click.option("--keep", default="", type=GENERATIONS, help="registry generations to keep besides the best, e.g. "
                                         "10,20 (those with reference matches)")
@click.option("--with-window", is_flag=True,
              help="copy the shards of the training window too (the run's --window games), so "
                   "that the copy trains on what the run would have")
def zero_snapshot_command(run_dir, out, keep, with_window):
    """The run without its games, to resume elsewhere (engine-train zero --resume)."""
    keep_set = set(keep)
    window = 0
    if with_window:
        window = json.loads((Path(run_dir) / "zero_config.json").read_text())["window"]
    files = snapshot(Path(run_dir), Path(out), keep_set, window)
    size = sum(f.stat().st_size for f in files)
    click.echo(f"{len(files)} files, {size / 1e6:.1f} MB in {out}")
