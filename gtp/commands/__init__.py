"""GTP command handlers, registered in gtp.server.REGISTRY when their module is imported.

    core        protocol_version name version known_command list_commands quit boardsize
                clear_board komi play genmove undo showboard
    tournament  handicap, time, scoring, loadsgf/printsgf, reg_genmove, cputime
    kgs         kgs-* and kata-* time settings, kgs-rules, kgs-genmove_cleanup, kgs-game_over
    analysis    lz-analyze kata-analyze lz-genmove_analyze kata-genmove_analyze
    gogui       gogui-analyze_commands gogui-interrupt and the gfx/board commands, goengine-*_param

The import order below is the order of `list_commands`.
"""
from goengine.gtp.commands import core  # noqa: F401  (registration)
from goengine.gtp.commands import tournament  # noqa: F401
from goengine.gtp.commands import kgs  # noqa: F401
from goengine.gtp.commands import analysis  # noqa: F401
from goengine.gtp.commands import gogui  # noqa: F401
