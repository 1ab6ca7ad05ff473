"""`engine-train zero`: the AlphaGo Zero loop of self-play, training and gating
(docs/algorithms.md §4.6).

    engine-train zero --size 9 --out runs/zero9                     # from scratch, local Ray
    engine-train zero --size 9 --out runs/zero9 --resume            # continue after a kill
    engine-train zero --size 9 --out runs/zero9 --init-from checkpoints/zero-cpu.pt
    engine-train zero ... --ray-address auto                        # games on a Ray cluster

Generation g (1, 2, ...):

1. self-play: `--games` games of the best network against itself through the engine's Zero search
   (`training.zero.selfplay`: root noise, the opening sampled, resignation; with `--gumbel` the
   Gumbel root search, its survivor played and its improved policy the target) on the workers
   (`training.workers.pool`), each job's games written as one shard (`training.zero.shards`), at
   `--komi`, or with `--fair-komi` at the komi at which Black would have won half of the previous
   generation's games (`next_komi`);
2. training: `--steps` minibatches from the newest `--window` games under random symmetries, loss
   (z - v)^2 - pi^T log p + c ||theta||^2 (`training.zero.train`), plus KataGo's ownership and score
   terms for the heads of `--heads`; the candidate's weights carry on from generation to
   generation, promoted or not;
3. gating: the candidate plays the best network without noise, the most visited move after the
   first `--gate-sampled-moves`, until the SPRT decides (`training.zero.sprt`); a pass promotes it.
   `--no-gating` promotes every candidate (AlphaZero's always-latest network);
4. the registry (`training.zero.registry`): a promoted network is copied to
   `registry/gen-NNNN.onnx` with its generation, games, steps and gating result in its metadata,
   and every gating result goes into registry.json / registry.csv.

`state.json` (written atomically after each phase) and `checkpoint.pt` (every
`--checkpoint-every` steps) are what `--resume` reads: a killed run loses at most the self-play
job, the training steps since the last checkpoint, or the gating games in progress.
curve.csv / curve.png: one row per generation (losses, the heads' ownership MSE and score MAE,
self-play speed, false resignations, gating score).
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import click
import numpy as np
import torch
from tqdm import tqdm

from goengine.engine.search.komi import fair_komi
from goengine.engine.search.network import ZERO_C_PUCT
from goengine.models.session import CPU, providers
from goengine.training.data.atomic import write_atomic
from goengine.training.export.evaluate import evaluate_collection
from goengine.training.nets import networks as nets
from goengine.training.nets.curves import append_row, read_rows
from goengine.training.nets.export import export_onnx, with_registry_metadata
from goengine.training.nets.initial import load_initial
from goengine.training.nets.loop import AUX_HEADS
from goengine.training.nets.optimizers import build_optimizer, restore_state
from goengine.training.nets.plots import save_figure, subplots
from goengine.training.nets.precision import choose as choose_precision
from goengine.training.workers.pool import WorkerPool, make_jobs
from goengine.training.zero.int8 import int8_twin
from goengine.training.zero.reference import ReferenceConfig, evaluate
from goengine.training.zero.registry import Registry
from goengine.training.zero.selfplay import ZeroGamesJob, default_play_on
from goengine.training.zero.shards import (ZeroShards, black_share, calibrated_threshold,
                                           load_generation, load_window, resignation_stats,
                                           window_komi)
from goengine.match.sprt import gate_decision
from goengine.training.zero.train import (STATS, HeadWeights, measure, part_means,
                                          run_steps, save_trainer)

BEST, CANDIDATE = "best", "candidate"       # network names on the workers
CURVE_FIELDS = ["generation", "decision", "selfplay_games", "train_steps", "loss", "value_loss",
                "policy_loss", "ownership_mse", "score_mae", "fresh_value_loss",
                "fresh_policy_loss", "human_value_mse", "human_top1",
                "window_positions", "selfplay_games_s", "selfplay_positions_s", "komi",
                "black_share",
                "train_positions_s", "resign_threshold", "false_resign", "would_resign",
                "gate_games", "gate_score",
                "llr", "elapsed_s"]


@dataclass(frozen=True)
class ZeroConfig:
    size: int = 9
    komi: float = 7.5               # the self-play komi; with fair_komi, the first generation's
    fair_komi: bool = False         # each generation at the komi Black would have won half the
                                    # previous one's games at (engine.search.komi.fair_komi)
    komi_step: float = 2.0          # the most the fair komi moves in one generation (points)
    generations: int = 10           # loop iterations (self-play, training, gating) to reach
    # self-play
    games: int = 100                # games per generation
    games_per_job: int = 4          # games a worker plays per job (one shard)
    visits: int = 100               # root visits per move (AlphaGo Zero: 1,600)
    fast_visits: int = 0            # > 0: playout cap randomisation (KataGo): a move is a full
                                    # search of `visits` with probability full_fraction, else a
                                    # fast one of this many, without noise and not recorded
    full_fraction: float = 0.25     # KataGo: 0.25 (600 / 100 visits)
    forced_playouts: float = 0.0    # > 0: forced playouts sqrt(k P N) at the noised root and
                                    # policy target pruning (KataGo: k = 2); 0: off
    gumbel: bool = False            # Gumbel AlphaZero self-play (Danihelka et al. 2022): the
                                    # Gumbel root search of `visits` simulations, its survivor
                                    # played, its improved policy the target; no Dirichlet noise,
                                    # no forced playouts, no sampled moves. Gating stays PUCT
    gumbel_k: int = 16              # moves sampled without replacement at the root (the paper's
                                    # 16 for Go)
    gumbel_c_visit: float = 50.0    # sigma(q) = (c_visit + max N) c_scale q (the paper's 50, 1)
    gumbel_c_scale: float = 1.0
    dirichlet_alpha: float = 0.0    # 0: 0.03 * 361 / N^2
    dirichlet_eps: float = 0.25
    sampled_moves: int = -1         # moves at temperature 1; -1: (N^2 // 12) // 2 * 2
    play_on: int = -1               # moves before which nobody passes or resigns (self-play
                                    # and gating); -1: N^2 // 2 (zero_selfplay.default_play_on)
    resign_threshold: float = 0.05  # win rate; 0 never resigns; the calibration's ceiling
    resign_target: float = 0.05     # false resignations allowed (AlphaGo Zero: 5%); 0: fixed
    no_resign_fraction: float = 0.1
    move_cap: int = 0               # 0: 2 N^2
    search_batch: int = 8           # leaves per network call
    selfplay_precision: str = "auto"  # the workers' networks: int8 | fp32 | auto (int8 on a CPU)
    c_puct: float = ZERO_C_PUCT     # PUCT exploration constant of the self-play and gating
                                    # searches (the Zero search's default)
    score_utility: float = 0.0      # KataGo's static score utility in the self-play and gating
                                    # searches (NetSearchConfig.score_utility); 0: off
    # training
    window: int = 5000              # newest games trained on (AlphaGo Zero: 500,000)
    steps: int = 200                # minibatches per generation (AlphaGo Zero: 1,000 of 2,048)
    q_weight: float = 0.0           # value target (1 - w) z + w q, q the self-play search's value
                                    # of the position (AlphaGo Zero: z alone, w = 0)
    batch_size: int = 256
    optimizer: str = "sgd"          # sgd (momentum 0.9, AlphaGo Zero) or adam
    lr: float = 0.01
    l2: float = 1e-4                # c
    heads: str = "ownership,score"  # KataGo's auxiliary heads of a new net: "none" or some of
                                    # "ownership,score"; a resumed run keeps its net's
    ownership_weight: float = 1.5   # the value net's (training.nets.loop.TrainConfig): on the MSE
                                    # averaged over the points, KataGo's 1.5 / N^2 per point summed
    score_weight: float = 1.0       # on the MSE of score / N^2 (TrainConfig's; KataGo's own score
                                    # weight is on a loss in points, of another scale)
    checkpoint_every: int = 50
    threads: int = 1                # torch threads of each trainer process
    precision: str = "auto"         # training.nets.precision: bf16 autocast (auto: GPU; CPU: timed)
    channels_last: bool = True      # NHWC activations for the trainer's convolutions
    trainer_procs: int = 1          # > 1: DistributedDataParallel under torchrun
    # gating
    gating: bool = True
    gate_visits: int = 50
    gate_sampled_moves: int = 2     # opening moves sampled, so that gating games differ
    gate_min: int = 100
    gate_max: int = 400
    gate_step: int = 20             # games between SPRT looks after the first gate_min
    elo0: float = 0.0
    elo1: float = 35.0
    sprt_alpha: float = 0.05
    sprt_beta: float = 0.05
    pass_score: float = 0.55        # at gate_max without a decision
    # evidence: each generation's network on held-out human games (engine-train eval's figures)
    human_sgf: tuple = ()           # SGF files, folders or archives; empty: not measured
    human_positions: int = 2000     # positions read, every human_every-th move of each game
    human_every: int = 10
    # network
    preset: str = "cpu"
    blocks: int = 0                 # 0: the preset's
    filters: int = 0
    seed: int = 0


def head_flags(heads: str) -> dict:
    """ZeroNet's `ownership` / `score` arguments for a `--heads` value ("none", "ownership",
    "score" or "ownership,score")."""
    names = set() if heads in ("none", "") else set(heads.split(","))
    unknown = names - set(AUX_HEADS)
    if unknown:
        raise click.BadParameter(f"unknown heads {sorted(unknown)}; expected 'none' or some of "
                                 f"{','.join(AUX_HEADS)}", param_hint="'--heads'")
    return {name: name in names for name in AUX_HEADS}


def new_net(cfg: ZeroConfig, init) -> torch.nn.Module:
    flags = head_flags(cfg.heads)
    if init is not None:   # a net trained without heads (e.g. on human games) gets fresh ones
        return nets.with_heads(load_initial(init, kind="zero"), **flags)
    overrides = {k: v for k, v in (("blocks", cfg.blocks), ("filters", cfg.filters)) if v}
    return nets.build("zero", cfg.preset, **overrides, **flags)


def write_json(path: Path, data: dict) -> None:
    write_atomic(path, lambda tmp: Path(tmp).write_text(json.dumps(data, indent=1)))


class ZeroRun:
    """One `engine-train zero` run directory."""

    def __init__(self, cfg: ZeroConfig, run_dir, init, pool: WorkerPool, resume: bool,
                 log=print, reference: ReferenceConfig = ReferenceConfig()):
        self.cfg, self.dir, self.pool, self.log = cfg, Path(run_dir), pool, log
        self.reference_cfg = reference
        self._start = time.monotonic()      # moved back by the resumed run's time once it is read
        self.selfplay_int8 = cfg.selfplay_precision == "int8" or (
            cfg.selfplay_precision == "auto" and providers() == [CPU])
        if not resume and (self.dir / "state.json").exists():
            raise click.UsageError(f"{run_dir} holds a run: --resume it, or give a new --out")
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(cfg.threads)
        torch.set_flush_denormal(True)   # a trained net's float32 forward meets denormals: slow
        self.registry = Registry(self.dir / "registry")
        self.shards = ZeroShards(self.dir / "games", info={"size": cfg.size, "komi": cfg.komi})
        state_path = self.dir / "state.json"
        if resume and state_path.exists():
            self.state = json.loads(state_path.read_text())
            if self.state["size"] != cfg.size:
                raise click.UsageError(f"{run_dir} is a {self.state['size']}x"
                                       f"{self.state['size']} run; --size {cfg.size} differs")
            self.net, ckpt = nets.load_checkpoint(self.dir / "checkpoint.pt")
            self.opt = self._optimizer(ckpt)
            self.steps = int(ckpt["steps"])
            self._count_lost_games()
            log(f"resumed: generation {self.state['generation']}, phase {self.state['phase']}, "
                f"best gen-{self.state['best']:04d}, {self.steps} steps, "
                f"{self.shards.games} games")
        else:
            self.net = new_net(cfg, init)
            self.opt = self._optimizer()
            self.steps = 0
            self.state = {"size": cfg.size, "generation": 1, "phase": "selfplay", "best": 0,
                          "elapsed_s": 0.0, "init": str(init or "scratch"), "row": {},
                          "resign_threshold": cfg.resign_threshold, "komi": cfg.komi}
            (self.dir / "curve.csv").unlink(missing_ok=True)
            export_onnx(self.net, "zero", self.dir / "candidate.onnx",
                        {"training_data": f"initial: {self.state['init']}",
                         "board_sizes": str(cfg.size), "komi": cfg.komi}, board_size=cfg.size)
            with_registry_metadata(self.dir / "candidate.onnx", self.registry.path(0),
                                   {"generation": 0, "selfplay_games": 0, "train_steps": 0,
                                    "gating": "initial"})
            self.registry.record({"generation": 0, "decision": "initial",
                                  "file": self.registry.path(0).name, "selfplay_games": 0,
                                  "train_steps": 0})
            self.save()
            self.write_state()
        # settled once a run (by timing the net where auto meets a CPU with bfloat16) and handed
        # to the torchrun trainers, so every process steps alike
        self.precision = choose_precision(cfg.precision, torch.device("cpu"), self.net, cfg.size,
                                          cfg.batch_size, cfg.channels_last, log)
        (self.dir / "zero_config.json").write_text(json.dumps(asdict(cfg), indent=2))
        self.publish(BEST, self.registry.path(self.state["best"]))
        self._start = time.monotonic() - self.state["elapsed_s"]

    def _optimizer(self, ckpt=None):
        """The optimizer of self.net (first put in the trainer's memory format), with the state
        of `ckpt` when given."""
        if self.cfg.channels_last:
            self.net = self.net.to(memory_format=torch.channels_last)
        opt = build_optimizer(self.net, self.cfg.optimizer, self.cfg.lr, self.cfg.l2)
        # a resumed run keeps this run's --lr and --l2; another --optimizer starts anew
        if ckpt is not None and not restore_state(opt, ckpt["optimizer"]):
            self.log(f"--optimizer {self.cfg.optimizer}: the checkpoint's optimizer state is "
                     f"another kind's; it starts anew")
        return opt

    def publish(self, name: str, path: Path) -> None:
        """Send the network at `path` to the workers under `name`: its int8 twin when self-play
        runs in int8 (1.6x the moves per CPU second on 9x9; training.export.quantize, calibrated on
        positions of the newest games), else the float file. The registry keeps the float files."""
        data = path.read_bytes()
        if self.selfplay_int8:
            with tempfile.TemporaryDirectory() as tmp:
                twin = int8_twin(path, Path(tmp) / "int8.onnx", self.dir / "games", self.cfg.size,
                                 [self.cfg.seed, self.state["generation"]])
                if twin is not None:       # no games yet, or int8 strays: the float file
                    data = twin.read_bytes()
        self.pool.publish(name, data, kind="zero")

    # ---- persistence ------------------------------------------------------------------------
    def save(self) -> None:
        save_trainer(self.dir / "checkpoint.pt", self.net, self.opt, self.steps, self.cfg)

    def write_state(self) -> None:
        self.state["elapsed_s"] = time.monotonic() - self._start
        write_json(self.dir / "state.json", self.state)

    # ---- the phases -------------------------------------------------------------------------
    def _job_args(self, gating: bool) -> dict:
        cfg = self.cfg
        common = dict(size=cfg.size, komi=self.selfplay_komi, move_cap=cfg.move_cap,
                      batch_size=cfg.search_batch, score_utility=cfg.score_utility,
                      c_puct=cfg.c_puct,
                      resign_threshold=self.state.get("resign_threshold", cfg.resign_threshold),
                      eps=cfg.dirichlet_eps, alpha=cfg.dirichlet_alpha,
                      play_on=cfg.play_on if cfg.play_on >= 0 else default_play_on(cfg.size))
        if gating:
            return dict(common, visits=cfg.gate_visits, noise=False,
                        sampled_moves=cfg.gate_sampled_moves, no_resign_fraction=0.0,
                        record=False)
        return dict(common, visits=cfg.visits, noise=True, sampled_moves=cfg.sampled_moves,
                    no_resign_fraction=cfg.no_resign_fraction, record=True,
                    fast_visits=cfg.fast_visits, full_fraction=cfg.full_fraction,
                    forced_playouts=cfg.forced_playouts, gumbel=cfg.gumbel,
                    gumbel_k=cfg.gumbel_k, gumbel_c_visit=cfg.gumbel_c_visit,
                    gumbel_c_scale=cfg.gumbel_c_scale)

    @property
    def selfplay_komi(self) -> float:
        """The komi of this generation's self-play (and gating) games: --komi, or with
        --fair-komi the one the run has reached (--komi until then)."""
        if not self.cfg.fair_komi:
            return self.cfg.komi
        return float(self.state.get("komi", self.cfg.komi))

    def selfplay(self) -> None:
        cfg, gen = self.cfg, self.state["generation"]
        done = self.shards.games_of(gen)
        bar = tqdm(total=cfg.games, initial=done, unit="game", desc=f"gen {gen} self-play",
                   dynamic_ncols=True, leave=False)
        t0, games, positions = time.monotonic(), 0, 0
        while done < cfg.games:
            left = cfg.games - done
            jobs = make_jobs([(BEST, BEST)] * left, -(-left // cfg.games_per_job),
                             np.random.SeedSequence([cfg.seed, gen, self.shards.shards_of(gen)]),
                             job_type=ZeroGamesJob, **self._job_args(gating=False))
            for _, results in self.pool.run(jobs):
                name = f"g{gen:04d}-{self.shards.shards_of(gen):05d}.npz"
                self.shards.write(results, name, gen)
                done += len(results)
                games += len(results)
                positions += sum(len(r.ply) for r in results)
                bar.update(len(results))
        bar.close()
        dt = max(time.monotonic() - t0, 1e-9)
        false, would = resignation_stats(self.dir / "games", gen)
        used = self.state.get("resign_threshold", cfg.resign_threshold)
        share, played, komi = black_share(self.dir / "games", gen)
        self.state["row"] = {"selfplay_games_s": f"{games / dt:.3f}" if games else "",
                             "selfplay_positions_s": f"{positions / dt:.1f}" if games else "",
                             "false_resign": false, "would_resign": would,
                             "resign_threshold": f"{used:.4f}", "komi": f"{komi:g}",
                             "black_share": f"{share:.3f}" if played else ""}
        if cfg.fair_komi and played:
            self.state["komi"] = next_komi(komi, share, cfg.size, cfg.komi_step)
        if cfg.resign_target > 0:
            # the next generation's threshold, from the no-resign games of the window
            new = calibrated_threshold(self.dir / "games", cfg.window, cfg.resign_target,
                                       cfg.resign_threshold)
            if new is not None:
                self.state["resign_threshold"] = new
        self.state["phase"] = "train"
        self.write_state()

    def train(self) -> None:
        cfg, gen = self.cfg, self.state["generation"]
        if "train_target" not in self.state:      # kept, so that a resumed phase ends there too
            self.state["row"].update(self._fresh_losses(gen))
            self.state["train_target"] = self.steps + cfg.steps
            self.write_state()
        target = self.state["train_target"]
        t0 = time.monotonic()
        rate = None
        if cfg.trainer_procs > 1:
            k, sums, positions, rate = self._train_distributed(target)
        else:
            window = load_window(self.dir / "games", cfg.window, q_weight=cfg.q_weight)
            rng = np.random.default_rng([cfg.seed, gen, self.steps])
            bar = tqdm(total=target, initial=self.steps, unit="step",
                       desc=f"gen {gen} training", dynamic_ncols=True, leave=False)

            def save(at):
                self.steps = at
                self.save()

            self.steps, sums, k = run_steps(self.net, self.opt, window, cfg.size,
                                            cfg.batch_size, rng, self.steps, target,
                                            cfg.checkpoint_every, save, bar,
                                            precision=self.precision,
                                            channels_last=cfg.channels_last,
                                            weights=head_weights(cfg))
            bar.close()
            positions = len(window.z)
        rate = rate or k * cfg.batch_size / max(time.monotonic() - t0, 1e-9)
        if k:
            means = part_means(sums, k)
            self.state["row"].update({name: "" if np.isnan(means[name]) else f"{means[name]:.4f}"
                                      for name in means})
            self.state["row"].update(window_positions=positions, train_positions_s=f"{rate:.0f}")
        self.state["phase"] = "gate"
        self.write_state()

    def _fresh_losses(self, gen: int) -> dict:
        """The net's value and policy losses on the games it has just played, before it trains
        on them: next to the training losses, the curve's measure of how far the value head
        has memorised its window rather than learned (docs/algorithms.md §4.6)."""
        games = self.dir / "games"
        window = load_generation(games, gen, window_komi(games, self.cfg.window))
        if window is None:
            return {}
        cpu = torch.device("cpu")
        parts = measure(self.net, window, self.cfg.size, cpu,
                        self.precision, head_weights(self.cfg))
        return {"fresh_value_loss": f"{parts['value_loss']:.4f}",
                "fresh_policy_loss": f"{parts['policy_loss']:.4f}"}

    def _human_figures(self, net: Path) -> dict:
        """The candidate's value MSE on the outcomes of the held-out human games and its
        policy's top-1 on their moves (training.export.evaluate): how the value learns what
        human games say, and how far self-play moves the policy from human play."""
        cfg = self.cfg
        if not cfg.human_sgf:
            return {}
        r = evaluate_collection(net, cfg.human_sgf, cfg.human_positions, cfg.human_every,
                                threads=cfg.threads)
        return {"human_value_mse": f"{r['value_mse']:.4f}", "human_top1": f"{r['top1']:.4f}"}

    def _train_distributed(self, target: int):
        """The steps up to `target` on `trainer_procs` torchrun processes (training.zero.ddp);
        the weights and optimizer come back through checkpoint.pt."""
        (self.dir / STATS).unlink(missing_ok=True)
        subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        f"--nproc_per_node={self.cfg.trainer_procs}", "-m",
                        "goengine.training.zero.ddp", "--run-dir", str(self.dir),
                        "--target", str(target), "--cpu-precision", self.precision], check=True)
        self.net, ckpt = nets.load_checkpoint(self.dir / "checkpoint.pt")
        self.opt = self._optimizer(ckpt)
        self.steps = int(ckpt["steps"])
        stats = json.loads((self.dir / STATS).read_text())
        return (stats["steps"], np.asarray(stats["loss"]), stats["window_positions"],
                stats["positions_s"])

    def gate(self) -> None:
        cfg, gen = self.cfg, self.state["generation"]
        export_onnx(self.net, "zero", self.dir / "candidate.onnx",
                    {"training_data": f"Zero self-play {cfg.size}x{cfg.size}, generation {gen}: "
                                      f"{self.shards.games} games, {self.steps} steps",
                     "board_sizes": str(cfg.size),
                     # the komi its value learned at: its window's games' (fair komi: a mean)
                     "komi": f"{window_komi(self.dir / 'games', cfg.window):g}"},
                    board_size=cfg.size)
        self.state["row"].update(self._human_figures(self.dir / "candidate.onnx"))
        result = {"decision": "latest", "wins": 0, "draws": 0, "losses": 0, "llr": ""}
        if cfg.gating:
            self.publish(CANDIDATE, self.dir / "candidate.onnx")
            wins = draws = losses = 0
            decision, ratio = "continue", 0.0
            bar = tqdm(total=cfg.gate_max, unit="game", desc=f"gen {gen} gating",
                       dynamic_ncols=True, leave=False)
            while decision == "continue":
                played = wins + draws + losses
                n = cfg.gate_min - played if played < cfg.gate_min else cfg.gate_step
                n = min(n, cfg.gate_max - played)
                half = n // 2
                pairs = [(CANDIDATE, BEST)] * (n - half) + [(BEST, CANDIDATE)] * half
                jobs = make_jobs(pairs, max(self.pool.size, -(-n // cfg.games_per_job)),
                                 np.random.SeedSequence([cfg.seed, gen, played, 1]),
                                 job_type=ZeroGamesJob, **self._job_args(gating=True))
                for _, results in self.pool.run(jobs):
                    for r in results:
                        z = r.z_for(CANDIDATE)
                        wins, draws, losses = wins + (z > 0), draws + (z == 0), losses + (z < 0)
                    bar.update(len(results))
                decision, ratio = gate_decision(wins, draws, losses, cfg.gate_min, cfg.gate_max,
                                                cfg.elo0, cfg.elo1, cfg.sprt_alpha,
                                                cfg.sprt_beta, cfg.pass_score)
                bar.set_postfix(w=wins, d=draws, l=losses, llr=f"{ratio:.2f}")
            bar.close()
            result = {"decision": decision, "wins": int(wins), "draws": int(draws),
                      "losses": int(losses), "llr": f"{ratio:.3f}"}
        self.state["gate"] = result
        self.state["phase"] = "promote"
        self.write_state()

    def _count_lost_games(self) -> None:
        """On resume: when the games directory holds fewer games than the registry's last
        generation had played (a run carried without its games, as a snapshot is), the games
        directory counts the difference as played earlier."""
        rows = self.registry.rows
        last = int(rows[-1]["selfplay_games"] or 0) if rows else 0    # sorted by generation
        if self.shards.games < last:
            self.shards.count_earlier(last - self.shards.games)

    def promote(self) -> None:
        gen, g = self.state["generation"], self.state["gate"]
        games = g["wins"] + g["draws"] + g["losses"]
        score = (g["wins"] + g["draws"] / 2) / games if games else None
        gating = (f"{g['decision']}: {g['wins']}-{g['draws']}-{g['losses']} against "
                  f"gen-{self.state['best']:04d}, LLR {g['llr']}" if games else g["decision"])
        promoted = g["decision"] in ("pass", "latest")
        row = {"generation": gen, "decision": g["decision"],
               "file": self.registry.path(gen).name if promoted else "",
               "selfplay_games": self.shards.games, "train_steps": self.steps,
               "gate_games": games, "gate_wins": g["wins"], "gate_draws": g["draws"],
               "gate_losses": g["losses"], "gate_score": "" if score is None else f"{score:.4f}",
               "llr": g["llr"], "false_resign": self.state["row"].get("false_resign", ""),
               "would_resign": self.state["row"].get("would_resign", ""),
               "resign_threshold": self.state["row"].get("resign_threshold", ""),
               "elapsed_s": f"{time.monotonic() - self._start:.0f}"}
        if promoted:
            with_registry_metadata(self.dir / "candidate.onnx", self.registry.path(gen),
                                   {"generation": gen, "selfplay_games": self.shards.games,
                                    "train_steps": self.steps, "gating": gating})
        self.registry.record(row)
        if not curve_has(self.dir / "curve.csv", gen):
            append_row(self.dir / "curve.csv", CURVE_FIELDS, {**self.state["row"], **row})
            plot_curve(self.dir / "curve.csv", self.dir / "curve.png")
        self.log(f"generation {gen}: {gating}")
        if promoted:
            self.state["best"] = gen
            self.publish(BEST, self.registry.path(gen))
        self.state.update(generation=gen + 1, phase="selfplay", row={})
        self.state.pop("gate", None)
        self.state.pop("train_target", None)
        self.write_state()

    def reference(self) -> None:
        """The best network against the fixed reference after every `every`-th generation (the
        workers wait: one match at a time on the machine); a run killed in the match plays it
        again on --resume."""
        ref, done = self.reference_cfg, self.state["generation"] - 1
        if ref.every and done and done % ref.every == 0 and self.state["best"] > 0:
            evaluate(self.dir, [self.state["best"]], self.cfg.size, ref.komi_for(self.cfg.komi),
                     ref, log=self.log)

    def run(self) -> None:
        phases = {"selfplay": self.selfplay, "train": self.train, "gate": self.gate,
                  "promote": self.promote}
        bar = tqdm(total=self.cfg.generations, initial=self.state["generation"] - 1,
                   unit="gen", desc="zero", dynamic_ncols=True)
        if self.state["phase"] == "selfplay":
            self.reference()
        while self.state["generation"] <= self.cfg.generations:
            gen = self.state["generation"]
            while self.state["generation"] == gen:
                phases[self.state["phase"]]()
            self.reference()
            bar.update(1)
            bar.set_postfix(best=f"gen-{self.state['best']:04d}")
        bar.close()


def next_komi(komi: float, share: float, size: int, step: float) -> float:
    """The next generation's self-play komi after Black won `share` at `komi`: the fair komi
    (engine.search.komi.fair_komi), at most `step` points away, on a half point (area scoring
    has no draws there)."""
    target = min(max(fair_komi(komi, share, size), komi - step), komi + step)
    return float(np.floor(target) + 0.5)


def head_weights(cfg: ZeroConfig) -> HeadWeights:
    return HeadWeights(cfg.ownership_weight, cfg.score_weight)


def curve_has(path: Path, generation: int) -> bool:
    if not path.exists():
        return False
    with path.open(newline="") as f:
        return any(r.get("generation") == str(generation) for r in csv.DictReader(f))


def plot_curve(csv_path: Path, png_path: Path) -> None:
    rows = read_rows(csv_path)
    fig, ax = subplots(1, 2, figsize=(10, 4))
    for key in ("loss", "value_loss", "policy_loss", "ownership_mse", "fresh_value_loss",
                "fresh_policy_loss", "human_value_mse"):
        pts = [(int(r["generation"]), float(r[key])) for r in rows if r.get(key)]
        if pts:
            ax[0].plot(*zip(*pts), label=key)
    ax[0].set_xlabel("generation")
    ax[0].set_title("training loss")
    if ax[0].lines:
        ax[0].legend()
    pts = [(int(r["generation"]), float(r["gate_score"]), r["decision"]) for r in rows
           if r.get("gate_score")]
    if pts:
        ax[1].plot([p[0] for p in pts], [p[1] for p in pts], color="grey")
        for x, y, d in pts:
            ax[1].plot(x, y, "o", color="green" if d == "pass" else "red")
    ax[1].axhline(0.55, color="grey", lw=0.8, ls="--")
    ax[1].set_ylim(0, 1)
    ax[1].set_xlabel("generation")
    ax[1].set_title("candidate's score against the best (green: promoted)")
    for a in ax:
        a.grid(alpha=0.3)
    save_figure(fig, png_path)


__all__ = ["ZeroConfig", "ZeroRun"]
