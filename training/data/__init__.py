"""Shared layer: positions and game records on disk (datasets built from SGF collections, shards of
self-play games) and the files they are written with."""
