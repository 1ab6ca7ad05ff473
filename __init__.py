"""goengine: a Go engine on the AlphaGo family of algorithms, speaking GTP.

Installed as one package whose subpackages are the repository's folders (pyproject.toml maps
them): `goengine.engine` (rules, features, searches), `goengine.gtp` (the GTP server),
`goengine.models` (ONNX networks), `goengine.training` (engine-train), `goengine.match`
(engine-match), `goengine.sgf_tools` (SGF and archives). docs/DESIGN.md draws the layers.
"""

from goengine.engine.jit_cache import ensure_cache_dir

ensure_cache_dir()      # before any module that numba compiles is imported (engine/jit_cache.py)
