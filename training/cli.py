"""`engine-train`: one subcommand per training stage.

    engine-train sl --sgf kgs/ --out runs/sl            # SL policy on KGS archives
    engine-train value --sgf kgs/ --out runs/value      # value net on game outcomes
    engine-train value-data --out runs/vdata            # value positions from self-play
    engine-train selfplay --size 9 --out runs/games9    # policy self-play games on Ray workers
    engine-train rl --size 9 --out runs/rl9             # RL policy by REINFORCE self-play
    engine-train zero --size 9 --out runs/zero9         # AlphaGo Zero self-play loop with gating
    engine-train zero-reference --run runs/zero9        # its generations against GNU Go
    engine-train zero-snapshot --run runs/zero9 --out DIR   # the run less its games, to resume
    engine-train zero-grow --run runs/zero9 --blocks 10 --filters 64 --out DIR   # a bigger net
    engine-train value --data-dir runs/vdata --out runs/value   # ... and a value net on them
    engine-train rollout --sgf kgs/ --out rollout.npz   # fast rollout policy
    engine-train eval --model runs/sl/policy.onnx --sgf heldout/
    engine-train export --checkpoint runs/sl/checkpoint.pt --out policy.onnx
    engine-train quantize --model policy.onnx --sgf kgs/ --out policy.int8.onnx   # int8 for the CPU
    engine-train book --network models/bundled/zero-9x9.int8.onnx --out book-9x9.json   # opening book
    engine-train bundle --policy runs/sl --value runs/value --heldout heldout.tar.bz2
"""
from __future__ import annotations

import sys

import click

# The `train` extra of pyproject.toml: the modules the other subcommands import.
TRAIN_EXTRA = ("torch", "onnx", "tqdm", "matplotlib", "ray")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """Train goengine's networks (needs the `train` extra: torch)."""


def register_commands():
    # Imported here, not at the top: the stages' commands need the `train` extra (torch), and
    # `main` turns its absence into a message instead of a traceback. One CLI module a stage.
    from goengine.training.book.cli import book_command
    from goengine.training.bundle.cli import bundle_command
    from goengine.training.export.cli import (eval_command, export_command,
                                              flush_denormals_command, quantize_command)
    from goengine.training.rl.cli import rl_command, selfplay_command
    from goengine.training.rollout.cli import rollout_command
    from goengine.training.sl.cli import sl_command
    from goengine.training.value.cli import value_command, value_data_command
    from goengine.training.zero.cli import (zero_command, zero_grow_command,
                                            zero_reference_command, zero_snapshot_command)
    for command in (sl_command, value_command, eval_command, export_command, flush_denormals_command,
                    bundle_command, rl_command,
                    value_data_command, selfplay_command, rollout_command, zero_command,
                    zero_reference_command, zero_snapshot_command, zero_grow_command,
                    quantize_command, book_command):
        cli.add_command(command)


def main(argv=None):
    try:
        register_commands()
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in TRAIN_EXTRA:
            raise
        sys.exit(f"engine-train: no module named {e.name!r}; the training commands need the "
                 f"`train` extra: pip install 'goengine[train]' (from a clone: "
                 f"pip install '.[train]')")
    cli.main(args=argv, prog_name="engine-train")


if __name__ == "__main__":
    main()
