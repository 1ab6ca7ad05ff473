"""The GTP server (`engine-gtp`) and the GTP client (which `engine-match`, in `match/`, uses).

Importing this package is cheap: the engine is loaded by gtp.session in a background thread.
"""
