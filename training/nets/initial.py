"""The network a run starts from: a training checkpoint (.pt) or an exported ONNX file, whose
metadata names the net's config and whose initializers are its weights."""
from __future__ import annotations

import json
from pathlib import Path

import click
import onnx
import torch
from onnx import numpy_helper

from goengine.training.nets import networks as nets


def load_initial(path, kind: str = "policy") -> torch.nn.Module:
    """The network to start from: a training checkpoint (.pt) or an exported ONNX of `kind`
    (its `net_config` metadata and initializers)."""
    path = Path(path)
    if path.suffix != ".onnx":
        try:
            net, _ = nets.load_checkpoint(path)
        except Exception as e:      # not a checkpoint (torch says why): a usage error, not a trace
            raise click.ClickException(f"{path}: not a goengine checkpoint ({e})") from None
        return net
    proto = onnx.load(str(path))
    props = {p.key: p.value for p in proto.metadata_props}
    if props.get("kind") != kind or not props.get("net_config"):
        raise click.ClickException(f"{path}: not a {kind} ONNX with net_config metadata")
    net = nets.from_config(json.loads(props["net_config"]))
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
               for i in proto.graph.initializer}
    state = net.state_dict()
    # the exporter folds PositionBias's (A + A^T) / 2 into one unnamed constant: a symmetric
    # table, which is its own symmetrisation, so it stands for `bias.table`
    spare = [w for k, w in weights.items() if k not in state]
    for k in state:
        if k not in weights:
            fits = [w for w in spare if w.shape == state[k].shape]
            if len(fits) == 1 and k.endswith("bias.table"):
                weights[k] = fits[0]
    missing = [k for k in state if k not in weights or weights[k].shape != state[k].shape]
    if missing:
        raise click.ClickException(f"{path}: no weights for {missing[:3]} in the ONNX file; "
                                   f"start from a training checkpoint instead")
    net.load_state_dict({k: weights[k] for k in state})
    return net
