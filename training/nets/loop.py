"""The supervised training loop shared by the SL policy and the value network.

Named steps: `make_optimizer`, `train_step`, `evaluate`, `save`, `log`. Everything a run needs to
resume (weights, optimizer, step, random state, curve so far) is in one checkpoint written
atomically every `checkpoint_every` steps; `--resume` continues where it stopped.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import click
import numpy as np
import torch
from torch.nn import functional as F
from tqdm import tqdm

from goengine.training.data.dataset import PackedPositions, SizeMix, shard_sizes
from goengine.training.nets import networks as nets
from goengine.training.nets.curves import append_row, read_rows
from goengine.training.nets.plots import save_figure, subplots
from goengine.training.nets.precision import autocast as precision_autocast
from goengine.training.nets.precision import choose as choose_precision


@dataclass(frozen=True)
class TrainConfig:
    kind: str = "policy"            # policy: cross-entropy on the human move; value: MSE on z;
                                    # zero: both, on the dual-head 17-plane net
    preset: str = "cpu"             # training.nets.networks.PRESETS
    net_filters: int | None = None  # the preset's filters per layer, overridden
    net_layers: int | None = None   # the preset's layers (policy, value) or residual blocks (zero)
    steps: int = 100_000            # minibatches
    batch_size: int = 64            # AlphaGo: 16 (policy), 32 (value)
    optimizer: str = "adam"         # "sgd": the paper's plain SGD; "adam": a modern default
    lr: float = 1e-3                # AlphaGo SL: 0.003 with SGD
    lr_halve_every: int = 0         # steps; AlphaGo halved every 80 million; 0 = constant / cosine
    cosine: bool = True             # cosine decay to lr/20 over `steps` (adam)
    weight_decay: float = 1e-4
    eval_every: int = 1000          # steps between held-out evaluations
    eval_positions: int = 20_000    # held-out positions per evaluation
    checkpoint_every: int = 500     # steps
    threads: int = 2                # torch intra-op threads
    seed: int = 1
    train_limit: int | None = None  # load at most this many training positions
    init_from: str | None = None    # start from another run's checkpoint: all of a net of the
                                    # same kind (widened when narrower), else its trunk (the SL
                                    # policy's for the value net: the same AlphaGo trunk)
    device: str = "cpu"             # "cpu", "cuda", or "auto" (cuda when torch sees a GPU)
    loader_workers: int = 0         # processes building minibatches (unpacking, symmetries); a
                                    # GPU step outruns one CPU core's unpacking many times over
    heads: tuple = ()               # value: auxiliary heads, of "ownership" and "score"
                                    # (training.nets.networks.ValueNet); their targets come from self-play
    ownership_weight: float = 1.5   # on the ownership MSE averaged over the points: KataGo's
                                    # 1.5 / N^2 per point, summed
    score_weight: float = 1.0       # on the MSE of score / N^2: a small term, as KataGo's
    precision: str = "auto"         # training.nets.precision: "bf16" autocast, "fp32", or "auto" (bf16
                                    # on a GPU; on a CPU the faster of the two, timed: choose)
    channels_last: bool = True      # NHWC activations: oneDNN's fast layout for these convs
    compile: bool = False           # torch.compile the net (inductor; needs a C compiler)

AUX_HEADS = ("ownership", "score")


def size_args(cfg: TrainConfig) -> dict:
    """The net's constructor arguments for `cfg.net_filters` / `cfg.net_layers` (none: the
    preset's)."""
    args = {}
    if cfg.net_filters is not None:
        args["filters"] = cfg.net_filters
    if cfg.net_layers is not None:
        args["blocks" if cfg.kind == "zero" else "layers"] = cfg.net_layers
    return args


def head_args(cfg: TrainConfig) -> dict:
    """The net's constructor arguments for `cfg.heads` (none for other kinds than value)."""
    unknown = set(cfg.heads) - set(AUX_HEADS)
    if unknown:
        raise ValueError(f"unknown heads {sorted(unknown)}; expected some of {AUX_HEADS}")
    if not cfg.heads:
        return {}
    if cfg.kind != "value":
        raise ValueError(f"auxiliary heads are for the value net, not {cfg.kind!r}")
    return {name: name in cfg.heads for name in AUX_HEADS}


def aux_loss(outputs: dict, own, score, n: int, mask=None) -> dict:
    """The auxiliary heads' terms, unweighted: {"ownership": MSE per point, "score": MSE of
    score / N^2} for the heads `outputs` holds; with `mask` [B] (1: the position has targets),
    the means are over the masked positions only (0 when there are none)."""
    def mean(err):      # err [B]: each position's squared error
        if mask is None:
            return err.mean()
        return (err * mask).sum() / mask.sum().clamp(min=1.0)

    terms = {}
    if "ownership" in outputs:
        terms["ownership"] = mean(((outputs["ownership"] - own) ** 2).mean(dim=1))
    if "score" in outputs:
        terms["score"] = mean(((outputs["score"] - score) / (n * n)) ** 2)
    return terms


def make_optimizer(net, cfg: TrainConfig):
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "adam":
        return torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}")


def learning_rate(cfg: TrainConfig, step: int) -> float:
    if cfg.lr_halve_every > 0:
        return cfg.lr * 0.5 ** (step // cfg.lr_halve_every)
    if cfg.cosine and cfg.optimizer == "adam":
        frac = min(step / max(cfg.steps, 1), 1.0)
        return cfg.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
    return cfg.lr


def _loss(net, kind, planes, move, z, own=None, score=None, mask=None,
          cfg: TrainConfig | None = None):
    out = net(planes)
    if kind == "zero":
        logits, value = out
        loss = F.cross_entropy(logits, move) + F.mse_loss(value, z)
        top1 = (logits.argmax(dim=1) == move).float().mean()
        return loss, top1, logits
    if kind == "policy":
        loss = F.cross_entropy(out, move)
        top1 = (out.argmax(dim=1) == move).float().mean()
        return loss, top1, out
    if isinstance(out, tuple):
        outputs = dict(zip(net.output_names, out))
        terms = aux_loss(outputs, own, score, planes.shape[-1], mask)
        loss = F.mse_loss(outputs["value"], z) + cfg.ownership_weight * terms.get("ownership", 0.0) \
            + cfg.score_weight * terms.get("score", 0.0)
        return loss, torch.zeros(()), outputs["value"]
    loss = F.mse_loss(out, z)
    return loss, torch.zeros(()), out


def init_from(net: nets.GoNet, path, sample=None) -> str:
    """Start `net` from checkpoint `path`; returns what was done, for the log. A net of the same
    kind and depth gives every weight that fits, heads included, widened first (`nets.widen`,
    the same function) when it has fewer filters; any other net gives its `trunk.*` weights, a
    first layer with fewer input planes (48 -> 49) copied into the leading planes and the rest
    zero, and with `sample` (planes of training positions) the copied trunk's output is scaled
    to unit size for the new head (`nets.rescale_trunk_output`)."""
    src_net, _ = nets.load_checkpoint(path)
    same = all(src_net.config.get(k) == net.config.get(k) for k in ("kind", "layers", "planes"))
    widened = ""
    if same and src_net.config["filters"] < net.config["filters"]:
        widened = f", widened from {src_net.config['filters']} to {net.config['filters']} filters"
        src_net = nets.widen(src_net, net.config["filters"])
    own = net.state_dict()
    copied = 0
    for name, t in src_net.state_dict().items():
        if not (same or name.startswith("trunk.")) or name not in own:
            continue
        dst = own[name]
        if dst.shape == t.shape:
            dst.copy_(t)
        elif dst.dim() == 4 and dst.shape[0] == t.shape[0] and dst.shape[2:] == t.shape[2:] \
                and dst.shape[1] > t.shape[1]:
            dst.zero_()
            dst[:, :t.shape[1]].copy_(t)
        else:
            continue
        copied += 1
    net.load_state_dict(own)
    if same or sample is None or isinstance(net, nets.ZeroNet):     # no AlphaGo trunk to scale
        return f"{copied} tensors{widened}"
    rms = nets.rescale_trunk_output(net, torch.as_tensor(sample))
    return f"{copied} tensors, the trunk's output scaled by 1/{rms:.3g} for the new head"


class Device(click.ParamType):
    """--device: a torch device name (cpu, cuda, cuda:1, ...) or auto (cuda when torch sees a
    GPU); the name as given."""

    name = "device"

    def convert(self, value, param, ctx):
        if value == "auto":
            return value
        try:
            torch.device(value)
        except (RuntimeError, TypeError):
            self.fail(f"{value!r} is no torch device: cpu, cuda, cuda:N or auto", param, ctx)
        return value


DEVICE = Device()


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch sees no GPU (a CPU build of torch, or no driver)")
    return torch.device(name)


def _to_device(batch, device: torch.device):
    return tuple((a if isinstance(a, torch.Tensor) else torch.from_numpy(a)).to(
        device, non_blocking=True) for a in batch)


def train_step(net, opt, kind, batch, device: torch.device = torch.device("cpu"),
               cfg: TrainConfig | None = None, precision: str = "fp32",
               channels_last: bool = True) -> tuple[float, float]:
    """One optimizer step on `batch`: (planes, move, z), or (planes, move, z, own, score[, mask])
    for a value net with auxiliary heads (weighted by `cfg`; mask [B] 1 where the position has
    their targets: the heads learn from those only); `precision` is a resolved one ("fp32" /
    "bf16", training.nets.precision.resolve). Returns (loss, top-1)."""
    planes, move, z, *aux = _to_device(batch, device)
    if channels_last:
        planes = planes.contiguous(memory_format=torch.channels_last)
    net.train()
    # bfloat16 on a GPU or a CPU with bfloat16 arithmetic: the step about 4x (CPU) to several
    # times (GPU) faster; weights, gradients and optimizer stay float32
    with precision_autocast(device, precision):
        loss, top1, _ = _loss(net, kind, planes, move, z, *aux, cfg=cfg)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return float(loss.detach()), float(top1)


@torch.no_grad()
def evaluate(net: nets.GoNet, kind, data: PackedPositions, positions: int, batch_size: int = 256) -> dict:
    """Held-out loss, top-1 and top-5 (policy) or MSE (value), on a fixed prefix, identity symmetry;
    for a value net with auxiliary heads also the ownership MSE per point (`own_mse`) and the
    score's mean absolute error in points (`score_mae`), over the positions with those targets
    (`aux_positions` of them)."""
    net.eval()
    device = next(net.parameters()).device
    n = min(positions, len(data))
    loss_sum = top1 = top5 = mse_sum = own_sum = score_sum = aux_n = 0.0
    heads = kind == "value" and len(net.output_names) > 1
    for start in range(0, n, batch_size):
        idx = np.arange(start, min(start + batch_size, n))
        planes, move, z, *aux = _to_device(data.batch(idx, symmetry=0, aux=heads), device)
        out = net(planes)
        out = tuple(o.float() for o in out) if isinstance(out, tuple) else out.float()
        if heads:
            outputs = dict(zip(net.output_names, out))
            out = outputs["value"]
            own, score, mask = aux
            aux_n += float(mask.sum())
            if "ownership" in outputs:
                own_sum += float((((outputs["ownership"] - own) ** 2).mean(dim=1) * mask).sum())
            if "score" in outputs:
                score_sum += float(((outputs["score"] - score).abs() * mask).sum())
        if kind == "zero":
            out, value = out
            mse_sum += float(F.mse_loss(value, z, reduction="sum"))
        if kind in ("policy", "zero"):
            loss_sum += float(F.cross_entropy(out, move, reduction="sum"))
            top = out.topk(5, dim=1).indices
            top1 += float((top[:, 0] == move).sum())
            top5 += float((top == move[:, None]).any(dim=1).sum())
        else:
            loss_sum += float(F.mse_loss(out, z, reduction="sum"))
    if kind == "policy":
        return {"loss": loss_sum / n, "top1": top1 / n, "top5": top5 / n, "positions": n}
    if kind == "zero":
        return {"loss": loss_sum / n, "top1": top1 / n, "top5": top5 / n, "mse": mse_sum / n,
                "positions": n}
    extra = {"aux_positions": int(aux_n)} if heads else {}
    if heads and "ownership" in net.output_names:
        extra["own_mse"] = own_sum / max(aux_n, 1.0)
    if heads and "score" in net.output_names:
        extra["score_mae"] = score_sum / max(aux_n, 1.0)
    return {"mse": loss_sum / n, "positions": n, **extra}


class _Minibatches(torch.utils.data.IterableDataset):
    """Endless minibatches of `data` for a DataLoader's worker processes, each worker on its own
    random stream (seed, worker id), so `loader_workers` processes unpack and rotate in parallel."""

    def __init__(self, data: SizeMix, batch_size: int, seed: int, aux: bool = False):
        self.data, self.batch_size, self.seed, self.aux = data, batch_size, seed, aux

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng([self.seed, info.id if info else 0])
        while True:
            yield self.data.sample(self.batch_size, rng, aux=self.aux)


def minibatches(data: SizeMix, cfg: TrainConfig, rng: np.random.Generator, step: int):
    """The training minibatches: drawn in this process from `rng` (reproducible, resumable with
    the checkpointed random state), or by `cfg.loader_workers` processes (seeded by the step)."""
    aux = bool(cfg.heads)
    if cfg.loader_workers <= 0:
        while True:
            yield data.sample(cfg.batch_size, rng, aux=aux)
    loader = torch.utils.data.DataLoader(
        _Minibatches(data, cfg.batch_size, cfg.seed * 1_000_003 + step, aux), batch_size=None,
        num_workers=cfg.loader_workers, pin_memory=torch.cuda.is_available(), prefetch_factor=4)
    yield from loader


def evaluate_sizes(net, kind, held: dict, positions: int) -> dict:
    """`evaluate` on the held-out set of each board size; the metrics of the largest size (the
    one reported and compared across runs), plus `mse_<n>` / `top1_<n>` for every size."""
    per = {n: evaluate(net, kind, data, positions) for n, data in held.items()}
    out = dict(per[max(per)])
    if len(per) > 1:
        for n, m in per.items():
            for key in ("mse", "top1", "own_mse", "score_mae"):
                if key in m:
                    out[f"{key}_{n}"] = m[key]
    return out


CURVE_FIELDS = ["step", "positions", "train_loss", "train_top1", "heldout_loss", "heldout_top1",
                "heldout_top5", "heldout_mse", "lr", "elapsed_s", "heldout_by_size",
                "heldout_own_mse", "heldout_score_mae"]


CURVE_PANELS = [("loss", ("train_loss", "heldout_loss", "heldout_mse", "heldout_own_mse")),
                ("accuracy", ("train_top1", "heldout_top1", "heldout_top5")),
                ("score MAE (points)", ("heldout_score_mae",))]


def plot_curve(csv_path: Path, png_path: Path) -> None:
    rows = read_rows(csv_path)
    if not rows:
        return
    x = [int(r["step"]) for r in rows]
    panels = []
    for title, keys in CURVE_PANELS:
        lines = [(key, [(xi, float(r[key])) for xi, r in zip(x, rows) if r.get(key)])
                 for key in keys]
        lines = [(key, pts) for key, pts in lines if pts]
        if lines:
            panels.append((title, lines))
    if not panels:
        return
    # A policy run fills loss and accuracy, a value run loss and score: no empty panel either way.
    fig, ax = subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for a, (title, lines) in zip(ax[0], panels):
        for key, pts in lines:
            a.plot(*zip(*pts), label=key)
        a.set_xlabel("step")
        a.set_title(title)
        a.legend()
        a.grid(alpha=0.3)
    save_figure(fig, png_path)


def save(net, opt, run_dir: Path, step: int, positions: int, rng, best: dict, cfg: TrainConfig):
    nets.save_checkpoint(net, run_dir / "checkpoint.pt", optimizer=opt.state_dict(), step=step,
                         positions=positions, rng=json.dumps(rng.bit_generator.state),
                         torch_rng=torch.get_rng_state(), best=json.dumps(best),
                         train_config=json.dumps(asdict(cfg)))


def train(cfg: TrainConfig, data_dir, run_dir, resume: bool = False, size: int | None = None,
          planes: int | None = None, log=print) -> dict:
    """Train on the shards of `data_dir`; returns the last held-out metrics."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    ckpt_path = run_dir / "checkpoint.pt"
    meta = json.loads((Path(data_dir) / "dataset.json").read_text())
    planes = planes or meta["planes"]
    sizes = shard_sizes(data_dir) if size is None else [size]
    train_data = SizeMix(data_dir, "train", sizes, planes, limit=cfg.train_limit)
    held = {n: PackedPositions(data_dir, "heldout", n, planes, limit=cfg.eval_positions)
            for n in shard_sizes(data_dir, "heldout") if n in sizes}
    if not held:
        raise FileNotFoundError(f"no held-out shards of sizes {sizes} in {data_dir}")
    if cfg.heads and not (train_data.has_aux and all(h.has_aux for h in held.values())):
        raise ValueError(f"{data_dir} has no ownership / score targets for the heads "
                         f"{list(cfg.heads)}: make the data with engine-train value-data, or "
                         f"build it again from SGF with engine-train value --sgf")
    log(f"board sizes {sizes}: training positions {len(train_data)}, held-out positions "
        f"{sum(len(h) for h in held.values())}")
    if resume and ckpt_path.exists():
        net, ckpt = nets.load_checkpoint(ckpt_path)
        net = net.to(device)
        opt = make_optimizer(net, cfg)
        opt.load_state_dict(ckpt["optimizer"])
        step, positions = int(ckpt["step"]), int(ckpt["positions"])
        rng = np.random.default_rng()
        rng.bit_generator.state = json.loads(ckpt["rng"])
        torch.set_rng_state(ckpt["torch_rng"])
        best = json.loads(ckpt["best"])
        log(f"resumed from step {step}")
    else:
        if resume:
            log("no checkpoint to resume from; starting fresh")
        torch.manual_seed(cfg.seed)
        net = nets.build(cfg.kind, cfg.preset, planes=planes, **size_args(cfg), **head_args(cfg))
        if cfg.init_from:
            # a few hundred training positions, drawn apart from the training stream
            sample = train_data.sample(256, np.random.default_rng(cfg.seed + 1))[0]
            log(f"initialised from {cfg.init_from}: {init_from(net, cfg.init_from, sample)}")
        net = net.to(device)
        opt = make_optimizer(net, cfg)
        step, positions, best = 0, 0, {}
        rng = np.random.default_rng(cfg.seed)
        (run_dir / "curve.csv").unlink(missing_ok=True)
    if cfg.channels_last:
        net = net.to(memory_format=torch.channels_last)
    precision = choose_precision(cfg.precision, device, net, max(sizes), cfg.batch_size,
                                 cfg.channels_last, log)
    log(f"precision {precision} ({cfg.precision}), channels-last {cfg.channels_last}, "
        f"compile {cfg.compile}")
    # the compiled module shares the net's parameters: checkpoints and evaluation use `net`
    step_net = torch.compile(net) if cfg.compile else net
    (run_dir / "train_config.json").write_text(
        json.dumps({**asdict(cfg), "data_dir": str(Path(data_dir).resolve())}, indent=2))
    start = time.monotonic()
    bar = tqdm(total=cfg.steps, initial=step, unit="step", dynamic_ncols=True, smoothing=0.05)
    run_loss = run_top1 = 0.0
    k = 0
    batches = minibatches(train_data, cfg, rng, step)
    while step < cfg.steps:
        for g in opt.param_groups:
            g["lr"] = learning_rate(cfg, step)
        loss, top1 = train_step(step_net, opt, cfg.kind, next(batches), device, cfg, precision,
                                cfg.channels_last)
        step += 1
        positions += cfg.batch_size
        run_loss += loss
        run_top1 += top1
        k += 1
        bar.update(1)
        if step % 50 == 0:
            rate = bar.format_dict.get("rate") or 0
            bar.set_postfix(loss=f"{run_loss / k:.3f}", top1=f"{run_top1 / k:.3f}",
                            pos_s=f"{rate * cfg.batch_size:.0f}")
        if step % cfg.eval_every == 0 or step == cfg.steps:
            metrics = evaluate_sizes(net, cfg.kind, held, cfg.eval_positions)
            row = {"step": step, "positions": positions, "train_loss": f"{run_loss / k:.4f}",
                   "train_top1": f"{run_top1 / k:.4f}" if cfg.kind != "value" else "",
                   "lr": f"{learning_rate(cfg, step):.2e}",
                   "elapsed_s": f"{time.monotonic() - start:.0f}"}
            if cfg.kind in ("policy", "zero"):
                row.update(heldout_loss=f"{metrics['loss']:.4f}", heldout_top1=f"{metrics['top1']:.4f}",
                           heldout_top5=f"{metrics['top5']:.4f}")
            if cfg.kind in ("value", "zero"):
                row.update(heldout_mse=f"{metrics['mse']:.4f}")
            for key in ("own_mse", "score_mae"):
                if key in metrics:
                    row[f"heldout_{key}"] = f"{metrics[key]:.4f}"
            by_size = {k: v for k, v in metrics.items()
                       if k.startswith(("mse_", "top1_", "own_mse_", "score_mae_"))}
            if by_size:
                row["heldout_by_size"] = " ".join(f"{k}={v:.4f}" for k, v in sorted(by_size.items()))
            append_row(run_dir / "curve.csv", CURVE_FIELDS, row)
            plot_curve(run_dir / "curve.csv", run_dir / "curve.png")
            bar.write(" ".join(f"{a}={b}" for a, b in row.items() if b != ""))
            best = {**metrics, "step": step, "positions": positions}
            run_loss = run_top1 = 0.0
            k = 0
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            save(net, opt, run_dir, step, positions, rng, best, cfg)
    bar.close()
    save(net, opt, run_dir, step, positions, rng, best, cfg)
    return best
