"""The networks: AlphaGo's policy and value networks and the AlphaGo Zero dual-head residual net.

All nets take float32[B, C, N, N] planes from `engine.features.extract` (side to move, row 0 at the
top), are fully convolutional where the paper allows it, and so run on 9x9, 13x13 and 19x19 alike.

| kind   | class     | input          | outputs                                                   |
|--------|-----------|----------------|-----------------------------------------------------------|
| policy | PolicyNet | 48 (alphago48) | policy_logits [B, N*N] (row-major, no pass)               |
| value  | ValueNet  | 49 (alphago49) | value [B] (tanh, side to move); with the auxiliary heads  |
|        |           |                | also ownership [B, N*N] (tanh) and score [B] (points)     |
| zero   | ZeroNet   | 17 (zero17)    | policy_logits [B, N*N+1] (pass last), value [B] (tanh);   |
|        |           |                | with the auxiliary heads also ownership and score         |

References: Silver et al. 2016 (Nature 529, "Mastering the game of Go with deep neural networks
and tree search"), Methods, "Neural network architecture"; Silver et al. 2017 (Nature 550,
"Mastering the game of Go without human knowledge"), Methods, "Neural network architecture".
See docs/algorithms.md §3.2.

Deviations from the papers, each made so that one network serves every board size:

- PolicyNet's "separate bias per point" is a `PositionBias`: a learned table indexed by the point's
  distances to the nearest horizontal and vertical edges (capped at 9), symmetrised so that it is
  invariant under the 8 board symmetries. On 19x19 with cap 9 this is exactly as expressive as a
  per-point bias restricted to be symmetric (55 free values = the 55 orbits of the 361 points),
  which is what 8-fold augmented training drives a per-point bias towards anyway. On 9x9 and 13x13 the
  points near the edge share the 19x19 values of the same line, which is the meaningful quantity.
- ValueNet(head="pool") and ZeroNet(value_head="pool") replace the fully connected layer over the
  N*N points by mean and max pooling over the board, then the same FC 256 -> FC 1 -> tanh.
- ZeroNet(policy_head="conv") replaces the FC layer to N*N+1 logits by a 1x1 convolution to one
  logit per point, plus a pass logit from the mean and max pooled trunk features.
The paper's fixed-size heads stay available: ValueNet(head="fc"), ZeroNet(policy_head="fc",
value_head="fc"), each with `board_size`.

`build(kind, preset, **overrides)` makes a net; `net.config` is a plain dict that `from_config`
rebuilds, and that `save_checkpoint` stores next to the weights.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

KINDS = ("policy", "value", "zero")

# The "paper" presets are the published networks; the "cpu" presets were chosen with
# benchmarks/bench_nets.py to cost about 1 ms per 19x19 position at batch 1 (onnxruntime, 1 thread,
# AMD EPYC, shared machine). Measured ms per position at batch 1, 19x19 / 9x9, on each line.
PRESETS: dict[str, dict[str, dict]] = {
    "policy": {
        # AlphaGo's match network, k = 192: 3.9 M parameters, ~20-25 ms / ~3.5-5 ms
        "paper": dict(planes=48, layers=13, filters=192),
        # the paper's depth at a quarter of its width: 0.29 M parameters, ~1.0 ms / ~0.27 ms
        # (8 x 64: 0.98 ms, 12 x 48: 1.05 ms, 8 x 48: 0.72 ms, 6 x 32: 0.31 ms)
        "cpu": dict(planes=48, layers=13, filters=48),
    },
    "value": {
        # AlphaGo's value network, fixed to 19x19: 4.0 M parameters, ~30-35 ms
        "paper": dict(planes=49, layers=13, filters=192, head="fc", board_size=19, fc=256),
        # the cpu policy trunk with the pooled head (any size): 0.31 M, ~1.1 ms / ~0.29 ms
        "cpu": dict(planes=49, layers=13, filters=48, head="pool", board_size=19, fc=256),
    },
    "zero": {
        # AlphaGo Zero's 20-block net (stem + 19 blocks x 256): 22.5 M parameters,
        # ~80-130 ms / ~21 ms
        "paper": dict(planes=17, filters=256, blocks=19, policy_head="conv", value_head="pool",
                      value_channels=32, fc=256, board_size=19),
        # 6 blocks x 48: 0.28 M parameters, ~1.0 ms / ~0.25 ms (4 x 64: 1.05 ms, 4 x 48: 0.65 ms)
        "cpu": dict(planes=17, filters=48, blocks=6, policy_head="conv", value_head="pool",
                    value_channels=32, fc=256, board_size=19),
    },
}


# ---------------------------------------------------------------------------------------------
# Building blocks


class PositionBias(nn.Module):
    """A learned bias per point, indexed by (distance to the row edge, distance to the col edge).

    bias[r, c] = T[min(d(r), cap), min(d(c), cap)], d(i) = min(i, N - 1 - i), T = (A + A^T) / 2.
    Works for any N; see the module docstring for why this stands in for AlphaGo's per-point bias.
    """

    def __init__(self, cap: int = 9):
        super().__init__()
        self.cap = cap
        self.table = nn.Parameter(torch.zeros(cap + 1, cap + 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:   # x [B, 1, H, W] -> [B, 1, H, W]
        return x + self.map(x.shape[-2], x.shape[-1], x.device)

    def map(self, h: int, w: int, device: torch.device | None = None) -> torch.Tensor:
        """The bias [H, W] on an H x W board."""
        r = torch.arange(h, device=device)
        c = torch.arange(w, device=device)
        dr = torch.minimum(r, h - 1 - r).clamp(max=self.cap)
        dc = torch.minimum(c, w - 1 - c).clamp(max=self.cap)
        table = 0.5 * (self.table + self.table.t())
        return table.index_select(0, dr).index_select(1, dc)


def _global_pool(x: torch.Tensor) -> torch.Tensor:
    """[B, C, H, W] -> [B, 2C]: the mean and the max over the board of each channel."""
    return torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)


def _alphago_trunk(planes: int, layers: int, filters: int) -> nn.Sequential:
    """Layer 1: k 5x5 filters + ReLU; layers 2..L-1: k 3x3 filters + ReLU (L-1 conv layers).

    He initialisation of the weights (normal, fan-in, ReLU gain; the biases keep PyTorch's small
    uniform draw, which also keeps them distinct for the ONNX exporter): a stack of plain ReLU
    convolutions with no normalisation keeps the variance of its activations only so.
    PyTorch's default (a third of the variance a layer) shrinks them by about 3^-12 over the 13
    layers: the value net's output is then the same for every position (its spread over a
    minibatch ~1e-7), and on noisy +-1 outcomes its loss sits at the constant's 1.00."""
    mods: list[nn.Module] = [nn.Conv2d(planes, filters, 5, padding=2), nn.ReLU()]
    for _ in range(layers - 2):
        mods += [nn.Conv2d(filters, filters, 3, padding=1), nn.ReLU()]
    for m in mods:
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
    return nn.Sequential(*mods)


@torch.no_grad()
def rescale_trunk_output(net: nn.Module, planes: torch.Tensor) -> float:
    """Divide the last convolution of `net.trunk` (weights and bias) by the root mean square of
    what the head reads of the trunk on `planes` (a value net's pooled features, else the trunk's
    output), and return that factor. ReLU is positively homogeneous, so the trunk computes the
    same features, at unit scale: a trained trunk under a new head (the SL policy's under a value
    head) gives the head features in the thousands (max-pooled), and Adam's first steps on the
    head then drive its tanh to +-1, where no gradient is left."""
    was_training = net.training
    net.eval()
    out = net.trunk(planes)
    reads = net.pooled(out) if isinstance(net, ValueNet) else out
    rms = float(reads.pow(2).mean().sqrt())
    net.train(was_training)
    last = [m for m in net.trunk if isinstance(m, nn.Conv2d)][-1]
    if rms > 0:
        last.weight.div_(rms)
        last.bias.div_(rms)
    return rms


def _conv_bn(cin: int, cout: int, size: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, size, padding=size // 2, bias=False),
                         nn.BatchNorm2d(cout))


def _check_size(x: torch.Tensor, board_size: int, what: str) -> None:
    if x.shape[-1] != board_size or x.shape[-2] != board_size:
        raise ValueError(f"{what} is fixed to {board_size}x{board_size}, got {tuple(x.shape[-2:])}")


class GoNet(nn.Module):
    """What every goengine network tells its callers (export, the training loops): its outputs
    in order (`output_names`, models.metadata.OUTPUT_NAMES of its kind then the auxiliary heads),
    the one board size it runs on (`fixed_board_size`, None: any), and `config`, the arguments
    `build` made it from (empty for a net constructed directly)."""

    output_names: tuple[str, ...]
    fixed_board_size: int | None

    def __init__(self):
        super().__init__()
        self.config: dict = {}


# ---------------------------------------------------------------------------------------------
# AlphaGo (Fan / Lee)


class PolicyNet(GoNet):
    """AlphaGo SL / RL policy network p_sigma / p_rho.

    Layer 1: k 5x5 filters, ReLU; layers 2..L-1: k 3x3 filters, ReLU; layer L: 1x1 conv to one
    filter plus a per-point bias (`PositionBias`). Output: logits [B, N*N], row-major, no pass;
    the softmax is left to the caller (the loss, or the evaluator with its legal mask).
    """

    def __init__(self, planes: int = 48, layers: int = 13, filters: int = 192, bias_cap: int = 9):
        super().__init__()
        if layers < 3:
            raise ValueError(f"layers must be >= 3, got {layers}")
        self.trunk = _alphago_trunk(planes, layers, filters)
        self.head = nn.Conv2d(filters, 1, 1, bias=False)
        self.bias = PositionBias(bias_cap)
        self.fixed_board_size = None            # runs on any size
        self.output_names = ("policy_logits",)

    def forward(self, planes: torch.Tensor) -> torch.Tensor:   # [B, C, N, N] -> [B, N*N]
        return self.bias(self.head(self.trunk(planes))).flatten(1)


class ValueNet(GoNet):
    """AlphaGo value network v_theta, with optional auxiliary heads.

    Layers 1..L-2 as the policy network, layer L-1 one more k 3x3 conv (so L-1 conv layers of k
    filters, as in the paper's numbering with L = 13), then a head:
      head="fc"   (paper) 1x1 conv to one filter, ReLU, FC N*N -> fc, ReLU, FC -> 1, tanh;
                  fixed to `board_size`.
      head="pool" mean + max pooling of the k trunk features, FC 2k -> fc, ReLU, FC -> 1, tanh;
                  any board size.
    Output: value [B] in [-1, 1] for the side to move.

    Auxiliary heads (KataGo's, docs/algorithms.md §4.3), trained on the final position of the
    self-play game; each adds an output after `value`:
      ownership=True  1x1 conv of the trunk features to one filter, tanh: ownership [B, N*N] in
                      [-1, 1], +1 = the side to move owns the point at the end (any board size);
      score=True      FC fc -> 1 on the value head's hidden layer, times N*N: score [B], the final
                      area score for the side to move in points, komi included. The layer learns
                      score / N^2, which stays within about [-1, 1] on every board size, and shares
                      the hidden layer the value reads, so that what it learns shapes the value.
    `output_names` lists the outputs in order: ("value",) without heads, where forward returns
    the value tensor alone (as before the heads existed), else a tuple.
    """

    def __init__(self, planes: int = 49, layers: int = 13, filters: int = 192, head: str = "fc",
                 board_size: int = 19, fc: int = 256, ownership: bool = False, score: bool = False):
        super().__init__()
        if head not in ("fc", "pool"):
            raise ValueError(f"head must be 'fc' or 'pool', got {head!r}")
        self.head_kind, self.board_size = head, board_size
        self.fixed_board_size = board_size if head == "fc" else None
        self.trunk = _alphago_trunk(planes, layers, filters)
        if head == "fc":
            self.reduce = nn.Sequential(nn.Conv2d(filters, 1, 1), nn.ReLU(), nn.Flatten())
            features = board_size * board_size
        else:
            self.reduce = None
            features = 2 * filters
        self.fc = nn.Sequential(nn.Linear(features, fc), nn.ReLU(), nn.Linear(fc, 1), nn.Tanh())
        self.own_head = nn.Conv2d(filters, 1, 1) if ownership else None
        self.score_head = nn.Linear(fc, 1) if score else None
        self.output_names = ("value",) + ("ownership",) * ownership + ("score",) * score

    def pooled(self, x: torch.Tensor) -> torch.Tensor:
        """What the value head reads of the trunk's output x [B, k, N, N]: [B, features]."""
        if self.reduce is not None:
            _check_size(x, self.board_size, "ValueNet(head='fc')")
            return self.reduce(x)
        return _global_pool(x)

    def forward(self, planes: torch.Tensor):   # [B, C, N, N] -> value [B] (, ownership, score)
        x = self.trunk(planes)
        pooled = self.pooled(x)
        hidden = self.fc[1](self.fc[0](pooled))
        value = self.fc[3](self.fc[2](hidden)).squeeze(1)
        if len(self.output_names) == 1:
            return value
        out = [value]
        if self.own_head is not None:
            out.append(torch.tanh(self.own_head(x)).flatten(1))
        if self.score_head is not None:
            out.append(self.score_head(hidden).squeeze(1) * (planes.shape[-2] * planes.shape[-1]))
        return tuple(out)


# ---------------------------------------------------------------------------------------------
# AlphaGo Zero


class ResidualBlock(nn.Module):
    """conv3x3, BN, ReLU, conv3x3, BN, + skip, ReLU."""

    def __init__(self, filters: int):
        super().__init__()
        self.a = _conv_bn(filters, filters, 3)
        self.b = _conv_bn(filters, filters, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.b(F.relu(self.a(x))))


class ZeroNet(GoNet):
    """AlphaGo Zero dual-head residual network f_theta(s) = (p, v).

    Stem: 3x3 conv, BN, ReLU; then `blocks` residual blocks of `filters` filters.
    Policy head: 1x1 conv to 2 filters, BN, ReLU, then
      policy_head="fc"   (paper) FC 2*N*N -> N*N+1; fixed to `board_size`;
      policy_head="conv" 1x1 conv to one logit per point, and a pass logit from a linear layer
                         on the mean + max pooled trunk features; any board size.
    Value head: 1x1 conv to `value_channels` filters, BN, ReLU, then
      value_head="fc"    (paper, value_channels=1) FC N*N*value_channels -> fc; fixed size;
      value_head="pool"  mean + max pooling -> FC 2*value_channels -> fc; any board size;
    then ReLU, FC -> 1, tanh.
    Outputs: policy_logits [B, N*N+1] (pass last), value [B] in [-1, 1] for the side to move.

    Auxiliary heads (KataGo's, docs/algorithms.md §4.3 and §4.6), designed as ValueNet's and with
    its output conventions, each an output after `value`:
      ownership=True  1x1 conv of the trunk features to one filter, tanh: ownership [B, N*N],
                      +1 = the side to move owns the point at the end;
      score=True      FC fc -> 1 on the value head's hidden layer, times N*N: score [B], the final
                      area score for the side to move in points, komi included.
    `output_names` lists the outputs; without heads forward returns (logits, value) as before.
    """

    def __init__(self, planes: int = 17, filters: int = 256, blocks: int = 19,
                 policy_head: str = "conv", value_head: str = "pool", value_channels: int = 32,
                 fc: int = 256, board_size: int = 19, ownership: bool = False,
                 score: bool = False):
        super().__init__()
        if policy_head not in ("fc", "conv") or value_head not in ("fc", "pool"):
            raise ValueError(f"bad heads: policy_head={policy_head!r}, value_head={value_head!r}")
        self.policy_head, self.value_head, self.board_size = policy_head, value_head, board_size
        fixed = policy_head == "fc" or value_head == "fc"
        self.fixed_board_size = board_size if fixed else None
        self.stem = nn.Sequential(_conv_bn(planes, filters, 3), nn.ReLU())
        self.tower = nn.Sequential(*[ResidualBlock(filters) for _ in range(blocks)])
        npts = board_size * board_size

        self.p_conv = nn.Sequential(_conv_bn(filters, 2, 1), nn.ReLU())
        if policy_head == "fc":
            self.p_fc = nn.Linear(2 * npts, npts + 1)
        else:
            self.p_point = nn.Conv2d(2, 1, 1)
            self.p_pass = nn.Linear(2 * filters, 1)

        self.v_conv = nn.Sequential(_conv_bn(filters, value_channels, 1), nn.ReLU())
        v_in = value_channels * npts if value_head == "fc" else 2 * value_channels
        self.v_fc = nn.Sequential(nn.Linear(v_in, fc), nn.ReLU(), nn.Linear(fc, 1), nn.Tanh())
        self.own_head = nn.Conv2d(filters, 1, 1) if ownership else None
        self.score_head = nn.Linear(fc, 1) if score else None
        self.output_names = (("policy_logits", "value") + ("ownership",) * ownership
                             + ("score",) * score)

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.fixed_board_size is not None:
            _check_size(planes, self.board_size, "ZeroNet with an 'fc' head")
        x = self.tower(self.stem(planes))
        p = self.p_conv(x)
        if self.policy_head == "fc":
            logits = self.p_fc(p.flatten(1))
        else:
            logits = torch.cat([self.p_point(p).flatten(1), self.p_pass(_global_pool(x))], dim=1)
        v = self.v_conv(x)
        v = v.flatten(1) if self.value_head == "fc" else _global_pool(v)
        hidden = self.v_fc[1](self.v_fc[0](v))
        out = [logits, self.v_fc[3](self.v_fc[2](hidden)).squeeze(1)]
        if self.own_head is not None:
            out.append(torch.tanh(self.own_head(x)).flatten(1))
        if self.score_head is not None:
            out.append(self.score_head(hidden).squeeze(1) * (planes.shape[-2] * planes.shape[-1]))
        return tuple(out)


# ---------------------------------------------------------------------------------------------
# Factory, config, checkpoints

_CLASSES = {"policy": PolicyNet, "value": ValueNet, "zero": ZeroNet}


def build(kind: str, preset: str = "cpu", **overrides) -> GoNet:
    """A fresh net of `kind` from `PRESETS[kind][preset]`, with `overrides` applied.

    The result carries `net.config = {"kind", "preset", **constructor arguments}`.
    """
    if kind not in PRESETS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    if preset not in PRESETS[kind]:
        raise ValueError(f"unknown preset {preset!r} for {kind}; expected {sorted(PRESETS[kind])}")
    params = {**PRESETS[kind][preset], **overrides}
    net = _CLASSES[kind](**params)
    net.config = {"kind": kind, "preset": preset, **params}
    return net


def from_config(config: dict) -> GoNet:
    """Rebuild the (untrained) net that `config` describes, e.g. the one stored in a checkpoint."""
    params = {k: v for k, v in config.items() if k not in ("kind", "preset")}
    net = _CLASSES[config["kind"]](**params)
    net.config = dict(config)
    return net


def with_heads(net: nn.Module, ownership: bool, score: bool) -> nn.Module:
    """`net` (a ValueNet or ZeroNet) with the auxiliary heads asked for: the same net when it has
    them, else a copy with its trained weights and the missing heads freshly initialised (a run
    that starts from a net trained without them, e.g. `engine-train zero --init-from`)."""
    if (net.own_head is not None, net.score_head is not None) == (ownership, score):
        return net
    grown = from_config({**net.config, "ownership": ownership, "score": score})
    ours = grown.state_dict()
    grown.load_state_dict({**ours, **{k: v for k, v in net.state_dict().items() if k in ours}})
    return grown


# Net2Net's symmetry breaking: a copied channel's incoming weights get Gaussian noise of this
# fraction of their layer's weight standard deviation, or copy and original would learn alike.
WIDEN_NOISE = 0.01


def widen(net: nn.Module, filters: int, noise: float = WIDEN_NOISE, seed: int = 0) -> nn.Module:
    """A copy of the AlphaGo policy or value net `net` with `filters` trunk filters that computes
    the same function (Net2WiderNet, Chen, Goodfellow and Shlens 2016): each new channel copies
    an existing one of the same layer, and the next layer's weights from a channel and its copies
    are divided among them. With `noise` > 0 the copies' incoming weights are perturbed so that
    they can part; the outputs then move by about that fraction."""
    old = net.config["filters"]
    if net.config["kind"] not in ("policy", "value"):
        raise ValueError(f"widen: an AlphaGo policy or value net, got {net.config['kind']}")
    if filters < old:
        raise ValueError(f"widen: {filters} filters is narrower than the net's {old}")
    wide = from_config({**net.config, "filters": filters})
    g = torch.Generator().manual_seed(seed)
    src = {k: v.detach().clone() for k, v in net.state_dict().items()}
    out = dict(src)
    convs = sorted({int(k.split(".")[1]) for k in src if k.startswith("trunk.")})

    def split(w: torch.Tensor, mapping: torch.Tensor) -> torch.Tensor:
        """Input columns [:, old] -> [:, filters]: a channel's weight divided among its copies."""
        share = torch.bincount(mapping)[mapping].to(w.dtype)
        return w[:, mapping] / share.view(1, -1, *[1] * (w.dim() - 2))

    mapping = None          # new channel -> the old channel it copies, of the layer before
    for i in convs:
        w, b = src[f"trunk.{i}.weight"], src[f"trunk.{i}.bias"]
        if mapping is not None:
            w = split(w, mapping)
        new = torch.cat([torch.arange(old), torch.randint(0, old, (filters - old,), generator=g)])
        w, b = w[new].clone(), b[new].clone()
        w[old:] += noise * w.std() * torch.randn(w[old:].shape, generator=g)
        out[f"trunk.{i}.weight"], out[f"trunk.{i}.bias"] = w, b
        mapping = new
    for name in ("head.weight", "own_head.weight", "reduce.0.weight"):
        if name in src:
            out[name] = split(src[name], mapping)
    if net.config["kind"] == "value" and net.config.get("head") == "pool":
        w = src["fc.0.weight"]      # [fc, 2k]: the k channel means, then the k channel maxima
        out["fc.0.weight"] = torch.cat([split(w[:, :old], mapping), split(w[:, old:], mapping)], dim=1)
    wide.load_state_dict(out)
    return wide


def weights_sha256(net: nn.Module) -> str:
    """sha256 over the state dict (sorted names, each tensor's raw bytes): names the weights."""
    h = hashlib.sha256()
    for name, tensor in sorted(net.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().to("cpu").contiguous().numpy().tobytes())
    return h.hexdigest()


def save_checkpoint(net: nn.Module, path: str | os.PathLike, **extra) -> None:
    """Write {"config", "state_dict", **extra} atomically (temporary file + rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        torch.save({"config": net.config, "state_dict": net.state_dict(), **extra}, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_checkpoint(path: str | os.PathLike) -> tuple[nn.Module, dict]:
    """(net with the saved weights, the whole checkpoint dict)."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    net = from_config(ckpt["config"])
    net.load_state_dict(ckpt["state_dict"])
    return net, ckpt
