"""The dependency direction of docs/DESIGN.md, enforced on the imports of every module."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# package -> top-level modules it must never import
FORBIDDEN = {
    "sgf_tools": {"engine", "models", "gtp", "training", "torch", "onnxruntime"},
    "engine": {"torch", "onnxruntime", "sgfmill", "sgf_tools", "models", "gtp", "training"},
    "models": {"torch", "gtp", "training"},
    "gtp": {"torch", "training", "match"},
    # engine-match: a tool of its own that speaks GTP to engines (gtp.client) and referees with engine
    "match": {"torch", "onnxruntime", "models", "training"},
}


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_respect_layering(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    bad = []
    for f in files:
        for name in _imports(f):
            if name in FORBIDDEN[package]:
                bad.append(f"{f.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_nothing_imports_training():
    bad = []
    for package in ("engine", "models", "gtp", "match", "sgf_tools"):
        for f in (ROOT / package).rglob("*.py"):
            if "training" in set(_imports(f)):
                bad.append(str(f.relative_to(ROOT)))
    assert not bad
