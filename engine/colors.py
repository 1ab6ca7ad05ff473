"""Colours of points and players, in plain Python: the one definition the board kernels (numba
reads these module globals as constants), the clocks and the GTP layer share. Importing it loads
neither numpy nor numba, so the GTP server can parse colours before the engine is loaded."""
from __future__ import annotations

EMPTY = 0
BLACK = 1
WHITE = 2
BORDER = 3      # the frame of off-board points around the padded board

COLOUR_NAMES = {BLACK: "black", WHITE: "white"}
COLOUR_LETTERS = {BLACK: "b", WHITE: "w"}


__all__ = ["EMPTY", "BLACK", "WHITE", "BORDER", "COLOUR_NAMES", "COLOUR_LETTERS"]
