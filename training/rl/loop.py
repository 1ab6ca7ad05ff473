"""AlphaGo's reinforcement learning of the policy network by self-play (`engine-train rl`,
docs/algorithms.md §4.5).

    engine-train rl --size 9 --out runs/rl9 --iterations 50 --games 32
    engine-train rl --size 9 --out runs/rl9 --iterations 100 --resume     # continue the same run
    engine-train rl ... --ray-address auto                              # self-play on a Ray cluster

The RL network p_rho starts as a copy of the SL network p_sigma (`--init`: a training checkpoint or
an exported policy ONNX). Iteration i:

1. the current weights are exported to ONNX (`training.nets.export`, parity-checked) and shipped to the
   self-play workers (`training.workers.pool`), which evaluate them with onnxruntime like the engine;
2. an opponent is drawn uniformly from the pool of earlier networks (at first the SL network
   alone; the current network joins every K = `--pool-every` iterations); with `--pfsp p` it is
   drawn with weight (1 - x)^p instead, x the learner's running win rate against each member;
3. `--games` games current-vs-opponent (half with each colour), moves sampled from the policies,
   candidate moves only (one-point eyes never filled), ended by two passes or the move cap, scored
   by area with komi 7.5 (`training.workers.selfplay`);
4. REINFORCE on the current network's moves, z_t = +1 / -1 for the winner's / loser's moves, b(s_t)
   the value network's v(s_t) with `--value`, else 0:

       delta_rho = alpha / n * sum_i sum_t  dlog p_rho(a_t^i | s_t^i) / drho  * (z_t^i - b(s_t^i))

   (n games; plain SGD, alpha = `--lr`; log p over the candidate moves the move was sampled from).
   `--optimizer adam` (or `--momentum` with SGD) steps along a running mean of these gradients
   instead: the noise of one minibatch's outcomes averages out over the iterations, the signal
   does not.
   With `--kl-weight beta` > 0 each of those positions also adds beta * KL(p_sigma || p_rho), over
   the candidate moves, to the loss: an anchor to the SL network (AlphaStar's KL to its supervised
   policy). Without it, 60 updates of 32 games took the 19x19 policy from 46.0% to 36.5% top-1 on
   human moves and it lost 68.5% of greedy games to the SL network while winning 88% of sampled
   ones: the updates' noise, not the outcomes, moves the best move (docs/algorithms.md §4.5).

Every `--eval-every` iterations the current network also plays `--eval-games` games against the SL
network, moves sampled as in training, and `--eval-greedy-games` more in which both sides play
their most probable move after `--eval-sampled-moves` sampled opening moves (the measure of the
policy that `--search policy` plays). curve.csv / curve.png hold the win rates against the pool
opponent and against the SL network; checkpoint.pt (atomic) holds everything `--resume` needs;
with `--ema d` the checks, the pool and policy.onnx use a moving average of the weights
(average <- d * average + (1 - d) * weights after every update, as KataGo exports its nets), the
learner's own weights still playing the training games; `--reference` names the SL network when
`--init` is not it (a run continued from an RL policy, measured against SL all the same);
the games go to `games/` as game shards (`training.data.game_shards`, one per iteration);
`policy.onnx` is the exported RL policy.
"""
from __future__ import annotations

import copy
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F
from tqdm import tqdm

from goengine.models.metadata import PLANES
from goengine.training.data.game_shards import GameShards
from goengine.training.nets import networks as nets
from goengine.training.nets.curves import append_row, read_rows
from goengine.training.nets.export import export_onnx
from goengine.training.nets.initial import load_initial
from goengine.training.nets.optimizers import build_optimizer, restore_state
from goengine.training.nets.plots import save_figure, subplots
from goengine.training.nets.precision import autocast as precision_autocast
from goengine.training.nets.precision import choose as choose_precision
from goengine.training.workers.pool import WorkerPool, make_jobs
from goengine.training.workers.selfplay import POLICY_FEATURES, default_sampled_moves

SL, CURRENT, AVERAGED, VALUE = "sl", "current", "averaged", "value"   # network names on the workers
CURVE_FIELDS = ["iteration", "updates", "games", "opponent", "winrate_pool", "winrate_sl",
                "sl_games", "winrate_sl_greedy", "greedy_games", "loss", "kl", "positions",
                "games_per_s", "elapsed_s"]


@dataclass(frozen=True)
class RLConfig:
    size: int = 9                   # 9, 13 or 19
    komi: float = 7.5
    iterations: int = 100           # minibatches of games (AlphaGo: 10,000)
    games: int = 32                 # games per iteration, n (AlphaGo: 128)
    pool_every: int = 5             # K: the current network joins the pool every K (AlphaGo: 500)
    lr: float = 1e-3                # alpha, plain SGD (AlphaGo: 0.001)
    optimizer: str = "sgd"          # training.nets.optimizers: sgd (AlphaGo) or adam
    momentum: float = 0.0           # SGD momentum (AlphaGo: none)
    kl_weight: float = 0.0          # beta of the KL(p_SL || p_RL) anchor per position (AlphaGo: 0)
    entropy_weight: float = 0.0     # weight of each position's policy entropy bonus (A3C: 0.01;
                                    # AlphaGo: 0)
    temperature: float = 1.0        # policy sampling temperature in self-play
    fork: bool = False              # training games greedy but for one forked learner move
    greedy_opponent: bool = False   # training opponents greedy after the opening, the learner
                                    # sampling: the play the greedy checks measure
    pfsp: float = 0.0               # p: opponents drawn with weight (1 - win rate)^p (0: uniform)
    symmetry: str = "none"          # how the networks of the training and check games see the
                                    # board (models.onnx_evaluator.SYMMETRY_MODES)
    ema: float = 0.0                # decay per update of the weights' moving average, the network
                                    # the checks, the pool and policy.onnx use (0: the raw weights)
    move_cap: int = 0               # moves before a game is scored as it stands (0: 2 N^2)
    eval_every: int = 5             # iterations between games against the SL network
    eval_games: int = 64            # games against the SL network per evaluation
    eval_greedy_games: int = 0      # more games per evaluation, greedy after the first moves
    eval_sampled_moves: int = -1    # the greedy games' sampled opening moves; -1: N^2 // 12, even
    games_per_job: int = 16         # games a worker plays in lockstep
    chunk: int = 512                # positions per forward/backward (bounds the memory)
    seed: int = 0
    threads: int = 1                # torch intra-op threads of the learner
    precision: str = "auto"         # training.nets.precision: bf16 autocast (auto: GPU; CPU: timed)
    channels_last: bool = True      # NHWC activations for the learner's convolutions


class OpponentPool:
    """The networks the current one plays against: names, sampled uniformly (AlphaGo) or, with
    `exponent` p > 0, with weight (1 - x)^p, x the learner's running win rate against each
    (AlphaStar's prioritized fictitious self-play: the opponents it still loses to come back
    more often than those it has learned to beat).

    A member that joins starts at the mean of the estimates of the members played so far: the
    learner it was a moment ago beats that pool as the learner does, and a newcomer at a flat
    0.5 would outweigh every member the learner has mostly beaten and take the draws from the
    ones it still loses to (measured on 9x9: docs/algorithms.md §4.5)."""

    PRIOR = 0.5       # the win rate assumed against a network not played yet in an unplayed pool
    STEP = 0.3        # weight of an iteration's games in the running win rate

    def __init__(self, names=(SL,), winrates=None):
        self.names = list(names)
        self.winrates = dict(winrates or {})

    def sample(self, rng: np.random.Generator, exponent: float = 0.0) -> str:
        if exponent > 0:
            weights = np.array([(1.0 - self.winrate(n)) ** exponent for n in self.names])
            if weights.sum() > 0:
                return self.names[int(rng.choice(len(self.names), p=weights / weights.sum()))]
        return self.names[int(rng.integers(len(self.names)))]

    def winrate(self, name: str) -> float:
        return self.winrates.get(name, self.PRIOR)

    def record(self, name: str, rate: float) -> None:
        """Fold the learner's win rate in one iteration's games against `name` into its estimate."""
        self.winrates[name] = (1 - self.STEP) * self.winrate(name) + self.STEP * rate

    def after(self, iteration: int, every: int) -> str | None:
        """The name the current network joins under after `iteration` (1-based), or None."""
        if every > 0 and iteration % every == 0:
            name = f"iter-{iteration:05d}"
            if self.winrates:
                self.winrates[name] = float(np.mean(list(self.winrates.values())))
            self.names.append(name)
            return name
        return None


# ---- the update ------------------------------------------------------------------------------

def candidate_log_probs(net, planes: torch.Tensor, mask: torch.Tensor,
                        temperature: float = 1.0) -> torch.Tensor:
    """log p over the candidate moves `mask` (-inf elsewhere) of the policy at `temperature`
    (softmax of the logits / T, the distribution self-play sampled from), float32 even under
    bfloat16 autocast: log p of unlikely moves needs the mantissa."""
    logits = net(planes).float() / temperature
    return F.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=1)


def reinforce_loss(net, planes: torch.Tensor, move: torch.Tensor, mask: torch.Tensor,
                   advantage: torch.Tensor, games: int, anchor_logp: torch.Tensor | None = None,
                   kl_weight: float = 0.0, temperature: float = 1.0,
                   entropy_weight: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, KL summed over the positions): -1/n sum_t [(z_t - b_t) log p(a_t | s_t) -
    beta KL(p_anchor(s_t) || p(s_t)) + eta H(p(s_t))], log p over the candidate moves `mask`.

    The entropy bonus eta H (A3C, Mnih et al. 2016) keeps the moves a sharpening policy has
    stopped sampling alive: REINFORCE only learns where the policy still explores, and a policy
    sure of its most probable move (p > 0.99 there) never finds out that another one wins.

    p is the policy at the self-play `temperature` (the one the moves were sampled from: the
    gradient of REINFORCE is that of the sampling distribution's log-likelihood); greedy play
    is its limit T -> 0 (on 9x9, T 0.5 did not make the greedy policy stronger: docs/algorithms.md
    §4.5).
    planes float32[P, 48, N, N]; move int64[P] (Pos); mask bool[P, N*N]; advantage float32[P];
    anchor_logp: the anchor network's candidate_log_probs on the same positions (at the same
    temperature), or None."""
    logp_all = candidate_log_probs(net, planes, mask, temperature)
    logp = logp_all.gather(1, move[:, None])[:, 0]
    loss = -(advantage * logp).sum()
    kl = torch.zeros(())
    if anchor_logp is not None:
        terms = anchor_logp.exp() * (anchor_logp - logp_all)
        kl = torch.where(mask, terms, torch.zeros_like(terms)).sum()   # -inf - -inf off the mask
        loss = loss + kl_weight * kl
    if entropy_weight > 0:
        # p log p with 0 off the mask (not 0 * -inf there, whose gradient is NaN)
        plogp = logp_all.exp() * logp_all.masked_fill(~mask, 0.0)
        loss = loss + entropy_weight * plogp.sum()      # - eta * sum_t H(p(s_t))
    return loss / games, kl.detach()


def learner_positions(results, size: int):
    """(planes uint8 packed [P, L], move [P], mask bool[P, N*N], advantage w (z - b) [P]) of the
    learner's recorded moves in `results`; z = +1 for the winner's moves, -1 for the loser's, w
    the position's weight (1 but for forked games)."""
    xs, moves, masks, adv = [], [], [], []
    for r in results:
        if len(r.move) == 0:
            continue
        xs.append(r.x)
        moves.append(r.move.astype(np.int64))
        masks.append(np.unpackbits(r.mask, axis=1, count=size * size).astype(bool))
        weight = r.weight if len(r.weight) == len(r.move) else 1.0
        adv.append((r.winner * r.colour - r.baseline) * weight)
    if not xs:
        return None
    return (np.concatenate(xs), np.concatenate(moves), np.concatenate(masks),
            np.concatenate(adv).astype(np.float32))


def reinforce_step(net, opt, data, games: int, size: int, chunk: int, precision: str = "fp32",
                   channels_last: bool = True, anchor=None, kl_weight: float = 0.0,
                   temperature: float = 1.0, entropy_weight: float = 0.0
                   ) -> tuple[float, float]:
    """One optimizer step over all the positions of an iteration's games; returns the loss and the
    mean KL(p_anchor || p) per position before the step (0 without an `anchor` network).
    `precision`: a resolved one ("fp32" / "bf16", training.nets.precision.resolve)."""
    x, move, mask, adv = data
    planes_len = PLANES[POLICY_FEATURES] * size * size
    net.train()
    opt.zero_grad(set_to_none=True)
    total, kl_total = 0.0, 0.0
    for s in range(0, len(move), chunk):
        planes = np.unpackbits(x[s:s + chunk], axis=1, count=planes_len).astype(np.float32)
        planes = torch.from_numpy(planes).view(-1, PLANES[POLICY_FEATURES], size, size)
        if channels_last:
            planes = planes.contiguous(memory_format=torch.channels_last)
        cand = torch.from_numpy(mask[s:s + chunk])
        with precision_autocast(torch.device("cpu"), precision):
            anchor_logp = None
            if anchor is not None:
                with torch.no_grad():
                    anchor_logp = candidate_log_probs(anchor, planes, cand, temperature)
            loss, kl = reinforce_loss(net, planes, torch.from_numpy(move[s:s + chunk]), cand,
                                      torch.from_numpy(adv[s:s + chunk]), games, anchor_logp,
                                      kl_weight, temperature, entropy_weight)
        loss.backward()
        total += float(loss.detach())
        kl_total += float(kl)
    opt.step()
    return total, kl_total / max(len(move), 1)


# ---- the network -----------------------------------------------------------------------------

def update_average(average: torch.nn.Module, net: torch.nn.Module, decay: float) -> None:
    """average <- decay * average + (1 - decay) * net, over every floating tensor of the state
    (KataGo exports such an average, not the last step's weights: REINFORCE's steps wander with
    each minibatch's outcomes, their average keeps the drift they share)."""
    with torch.no_grad():
        source = net.state_dict()
        for k, v in average.state_dict().items():
            if v.is_floating_point():
                v.lerp_(source[k].to(v.dtype), 1.0 - decay)
            else:
                v.copy_(source[k])


def export_bytes(net, path: Path, size: int, training_data: str) -> bytes:
    export_onnx(net, "policy", path, {"training_data": training_data}, board_size=size)
    return path.read_bytes()


# ---- the loop --------------------------------------------------------------------------------

def both_colours(games: int, name: str = CURRENT) -> list:
    """(black, white) pairs of `games` games of the network `name` against SL, half each way."""
    h = games // 2
    return [(name, SL)] * h + [(SL, name)] * (games - h)


def check_row(played: dict, name: str = CURRENT) -> dict:
    """The curve's columns of one check: the network `name`'s win rate in each kind of game."""
    row = {}
    for kind, rate, count in (("eval", "winrate_sl", "sl_games"),
                              ("greedy", "winrate_sl_greedy", "greedy_games")):
        if played.get(kind):
            row[rate] = f"{np.mean([r.z_for(name) > 0 for r in played[kind]]):.4f}"
            row[count] = len(played[kind])
    return row


class RLRun:
    """One `engine-train rl` run directory: network, optimizer, pool, curve, checkpoint."""

    def __init__(self, cfg: RLConfig, run_dir, init, value, pool: WorkerPool, resume: bool,
                 log=print, reference=None):
        self.cfg, self.dir, self.pool, self.log = cfg, Path(run_dir), pool, log
        self.greedy_after = (cfg.eval_sampled_moves if cfg.eval_sampled_moves >= 0
                             else default_sampled_moves(cfg.size))
        (self.dir / "pool").mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(cfg.threads)
        ckpt_path = self.dir / "checkpoint.pt"
        if resume and ckpt_path.exists():
            self.net, ckpt = nets.load_checkpoint(ckpt_path)
            self.opt = self._optimizer(ckpt)
            self.iteration, self.games = int(ckpt["iteration"]), int(ckpt["games"])
            self.elapsed = float(ckpt.get("elapsed_s", 0.0))
            self.opponents = OpponentPool(json.loads(ckpt["pool"]),
                                          json.loads(ckpt.get("pool_winrates", "{}")))
            self.rng = np.random.default_rng()
            self.rng.bit_generator.state = json.loads(ckpt["rng"])
            self.init = ckpt["init"]
            log(f"resumed after iteration {self.iteration}, pool {self.opponents.names}")
        else:
            self.init = str(init)
            self.net = load_initial(init)
            self.opt = self._optimizer()
            self.iteration, self.games, self.elapsed = 0, 0, 0.0
            self.opponents = OpponentPool()
            self.rng = np.random.default_rng(cfg.seed)
            # the pool's first member and the checks' opponent: the SL network, which is the
            # starting network unless `reference` names it (a run resumed from an RL policy)
            sl = init if reference is None else reference
            export_onnx(self.net if reference is None else load_initial(reference), "policy",
                        self.dir / "pool" / f"{SL}.onnx",
                        {"training_data": f"SL policy {Path(sl).name}"}, board_size=cfg.size)
            (self.dir / "curve.csv").unlink(missing_ok=True)
        self.precision = choose_precision(cfg.precision, torch.device("cpu"), self.net, cfg.size,
                                          log=log)
        # the SL network the KL term anchors to, frozen: the pool's first member (the starting
        # weights, or --reference when the run continues an RL policy)
        self.anchor = (load_initial(self.dir / "pool" / f"{SL}.onnx").eval()
                       if cfg.kl_weight > 0 else None)
        if cfg.channels_last:
            self.net = self.net.to(memory_format=torch.channels_last)
            if self.anchor is not None:
                self.anchor = self.anchor.to(memory_format=torch.channels_last)
        self.average = None
        if cfg.ema > 0:
            self.average = copy.deepcopy(self.net).eval()
            if resume and ckpt_path.exists() and "average" in ckpt:
                self.average.load_state_dict(ckpt["average"])
        # the network the checks measure, the pool takes in and policy.onnx holds
        self.checked = AVERAGED if self.average is not None else CURRENT
        (self.dir / "rl_config.json").write_text(json.dumps(asdict(cfg), indent=2))
        for name in self.opponents.names:
            pool.publish(name, (self.dir / "pool" / f"{name}.onnx").read_bytes())
        self.value = value is not None
        if value is not None:
            pool.publish(VALUE, Path(value).read_bytes(), kind="value")
        self.shards = GameShards(self.dir / "games", shard_games=1 << 30,
                                 info={"size": cfg.size, "komi": cfg.komi, "run": "rl"})

    def _optimizer(self, ckpt=None):
        """The optimizer of the run's config, with the checkpoint's state when the checkpoint was
        made with the same kind (a resumed run that changes `--optimizer` starts its state anew)."""
        cfg = self.cfg
        opt = build_optimizer(self.net, cfg.optimizer, cfg.lr, momentum=cfg.momentum)
        if ckpt is not None and not restore_state(opt, ckpt["optimizer"]):
            saved = json.loads(ckpt.get("rl_config", "{}")).get("optimizer", "sgd")
            self.log(f"optimizer {saved} -> {cfg.optimizer}: its state starts anew")
        return opt

    def play(self, pairs_by_kind: dict, it: int, bar) -> dict:
        """Play {kind: [(black, white)]} in one pass over the workers; {kind: [GameResult]}."""
        cfg = self.cfg
        jobs, kinds = [], []
        for k, (kind, pairs) in enumerate(pairs_by_kind.items()):
            part = make_jobs(pairs, -(-len(pairs) // cfg.games_per_job),
                             np.random.SeedSequence([cfg.seed, it, k]), size=cfg.size,
                             komi=cfg.komi, move_cap=cfg.move_cap, temperature=cfg.temperature,
                             sampled_moves=self.greedy_after if kind == "greedy"
                             or (kind == "train" and (cfg.fork or cfg.greedy_opponent)) else -1,
                             learner=CURRENT if kind == "train" else None,
                             fork=kind == "train" and cfg.fork,
                             greedy_opponent=kind == "train" and cfg.greedy_opponent,
                             value=VALUE if kind == "train" and self.value and not cfg.fork
                             else None, symmetry=cfg.symmetry)
            jobs += part
            kinds += [kind] * len(part)
        out = {kind: [] for kind in pairs_by_kind}
        for j, results in self.pool.run(jobs):
            out[kinds[j]] += results
            bar.update(len(results))
        return out

    def iteration_step(self, bar) -> dict:
        cfg = self.cfg
        it = self.iteration + 1
        t0 = time.monotonic()
        self.pool.publish(CURRENT, export_bytes(self.net, self.dir / "current.onnx", cfg.size,
                                                f"RL self-play, {self.iteration} updates"))
        opponent = self.opponents.sample(self.rng, cfg.pfsp)
        half = cfg.games // 2
        todo = {"train": [(CURRENT, opponent)] * half + [(opponent, CURRENT)] * (cfg.games - half)}
        evaluate = cfg.eval_every > 0 and self.iteration % cfg.eval_every == 0
        if evaluate:
            self.publish_checked()
            todo.update(self.check_games())
        played = self.play(todo, it, bar)
        train = played["train"]
        for r in train:
            self.shards.buffer.append(r)
        self.shards.flush(f"rl-{it:05d}.npz")
        data = learner_positions(train, cfg.size)
        loss, kl = reinforce_step(self.net, self.opt, data, len(train), cfg.size, cfg.chunk,
                                  self.precision, cfg.channels_last, self.anchor,
                                  cfg.kl_weight, cfg.temperature, cfg.entropy_weight
                                  ) if data is not None else (0.0, 0.0)
        if self.average is not None:
            update_average(self.average, self.net, cfg.ema)
        n_games = sum(len(v) for v in played.values())
        self.iteration, self.games = it, self.games + n_games
        joined = self.opponents.after(it, cfg.pool_every)
        if joined:
            path = self.dir / "pool" / f"{joined}.onnx"
            # the weights after this update: exported now so that the pool file is what joins
            self.pool.publish(joined, export_bytes(self.policy_net, path, cfg.size,
                                                   f"RL self-play, {it} updates"))
        won = float(np.mean([r.z_for(CURRENT) > 0 for r in train]))
        self.opponents.record(opponent, won)
        row = {"iteration": it, "updates": it - 1, "games": self.games, "opponent": opponent,
               "winrate_pool": f"{won:.4f}",
               "loss": f"{loss:.4f}", "kl": f"{kl:.4f}" if self.anchor is not None else "",
               "positions": 0 if data is None else len(data[1]),
               "games_per_s": f"{n_games / (time.monotonic() - t0):.2f}"}
        if evaluate:
            row.update(check_row(played, self.checked))
        return row

    @property
    def policy_net(self) -> torch.nn.Module:
        """The run's policy: the weights' moving average with `ema`, else the weights."""
        return self.average if self.average is not None else self.net

    def publish_checked(self) -> None:
        """Ship the network the checks measure to the workers (the learner's weights go out every
        iteration anyway)."""
        if self.average is not None:
            self.pool.publish(AVERAGED, export_bytes(self.average, self.dir / "average.onnx",
                                                     self.cfg.size, "RL self-play, moving average"
                                                     f" after {self.iteration} updates"))

    def final_evaluation(self, bar) -> dict:
        """The trained weights against the SL network (the curve's last point)."""
        cfg = self.cfg
        self.pool.publish(CURRENT, export_bytes(self.net, self.dir / "current.onnx", cfg.size,
                                                f"RL self-play, {self.iteration} updates"))
        self.publish_checked()
        played = self.play(self.check_games(), self.iteration + 1, bar)
        return {"iteration": self.iteration, "updates": self.iteration,
                "games": self.games + sum(len(v) for v in played.values()),
                **check_row(played, self.checked)}

    def check_games(self) -> dict:
        """The games of one check against the SL network, half with each colour: sampled as in
        training ("eval") and, with `eval_greedy_games`, greedy after the opening ("greedy")."""
        cfg = self.cfg
        checks = {"eval": both_colours(cfg.eval_games, self.checked)}
        if cfg.eval_greedy_games:
            checks["greedy"] = both_colours(cfg.eval_greedy_games, self.checked)
        return checks

    def save(self) -> None:
        nets.save_checkpoint(self.net, self.dir / "checkpoint.pt", optimizer=self.opt.state_dict(),
                             iteration=self.iteration, games=self.games,
                             pool=json.dumps(self.opponents.names), init=self.init,
                             pool_winrates=json.dumps(self.opponents.winrates),
                             rng=json.dumps(self.rng.bit_generator.state),
                             elapsed_s=self.elapsed,
                             rl_config=json.dumps(asdict(self.cfg)),
                             **({} if self.average is None
                                else {"average": self.average.state_dict()}))

    def run(self) -> None:
        cfg = self.cfg
        check = cfg.eval_games + cfg.eval_greedy_games
        def games_before(it):     # training and evaluation games of iterations 1..it
            evals = -(-it // cfg.eval_every) if cfg.eval_every else 0
            return it * cfg.games + evals * check

        final = check if cfg.eval_every else 0   # the trained weights against SL

        bar = tqdm(total=games_before(cfg.iterations) + final, initial=games_before(self.iteration),
                   unit="game", desc="rl", dynamic_ncols=True, smoothing=0.1)
        start = time.monotonic() - self.elapsed      # the curve's clock goes on after --resume
        trained = self.iteration < cfg.iterations
        while self.iteration < cfg.iterations:
            row = self.iteration_step(bar)
            self.elapsed = time.monotonic() - start
            row["elapsed_s"] = f"{self.elapsed:.0f}"
            append_row(self.dir / "curve.csv", CURVE_FIELDS, row)
            plot_curve(self.dir / "curve.csv", self.dir / "curve.png")
            self.save()
            bar.set_postfix(pool=row["winrate_pool"], sl=row.get("winrate_sl", "-"),
                            games_s=row["games_per_s"])
            if "winrate_sl" in row:
                bar.write(" ".join(f"{k}={v}" for k, v in row.items() if v != ""))
        if trained and cfg.eval_every > 0:
            row = self.final_evaluation(bar)
            append_row(self.dir / "curve.csv", CURVE_FIELDS, row)
            plot_curve(self.dir / "curve.csv", self.dir / "curve.png")
            bar.write(" ".join(f"{k}={v}" for k, v in row.items() if v != ""))
        bar.close()
        export_onnx(self.policy_net, "policy", self.dir / "policy.onnx",
                    {"training_data": f"RL self-play {cfg.size}x{cfg.size} from {Path(self.init).name}: "
                                      f"{self.iteration} iterations of {cfg.games} games"},
                    board_size=cfg.size)


def plot_curve(csv_path: Path, png_path: Path) -> None:
    rows = read_rows(csv_path)
    fig, ax = subplots(figsize=(7, 4))
    for key, x_key, label in (("winrate_pool", "iteration", "against the pool opponent"),
                              ("winrate_sl", "updates", "against the SL policy"),
                              ("winrate_sl_greedy", "updates",
                               "against the SL policy, greedy after the opening")):
        pts = [(int(r[x_key]), float(r[key])) for r in rows if r.get(key)]
        if pts:
            ax.plot(*zip(*pts), marker=None if key == "winrate_pool" else "o", label=label)
    ax.axhline(0.5, color="grey", lw=0.8)
    ax.set_xlabel("iteration (policy updates)")
    ax.set_ylabel("win rate")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.grid(alpha=0.3)
    save_figure(fig, png_path)
