"""`engine-train`: one subcommand per training stage.

    engine-train sl --sgf kgs/ --out runs/sl            # SL policy on KGS archives
    engine-train value --sgf kgs/ --out runs/value      # value net on game outcomes
    engine-train value-data --out runs/vdata            # value positions from self-play
    engine-train value --data-dir runs/vdata --out runs/value   # ... and a value net on them
    engine-train rollout --sgf kgs/ --out rollout.npz   # fast rollout policy
    engine-train eval --model runs/sl/policy.onnx --sgf heldout/
    engine-train export --checkpoint runs/sl/checkpoint.pt --out policy.onnx
    engine-train bundle --policy runs/sl --value runs/value --heldout heldout.tar.bz2
"""
from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """Train goengine's networks (needs the `train` extra: torch)."""


def _register():
    from training.bundle import bundle_command
    from training.evaluate import eval_command
    from training.export_cli import export_command
    from training.sl import sl_command, value_command
    cli.add_command(sl_command)
    cli.add_command(value_command)
    cli.add_command(eval_command)
    cli.add_command(export_command)
    cli.add_command(bundle_command)
    from training.selfplay_value import value_data_command
    cli.add_command(value_data_command)
    try:
        from training.rollout import rollout_command
        cli.add_command(rollout_command)
    except ImportError:
        pass


def main(argv=None):
    _register()
    cli.main(args=argv, prog_name="engine-train")


if __name__ == "__main__":
    main()
