"""The GTP server (`engine-gtp`), the GTP client and `engine-match`.

Importing this package is cheap: the engine is loaded by gtp.session in a background thread.
"""
