"""The installed layout: one `goengine` package holding the repository's package folders."""
from __future__ import annotations

import pathlib

import pytest

tomllib = pytest.importorskip("tomllib")   # Python 3.11+
ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_package_folder_is_installed_under_goengine():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"goengine": "."}
    folders = {".".join(("goengine", *p.parent.relative_to(ROOT).parts))
               for p in ROOT.glob("*/**/__init__.py")
               if p.parent.relative_to(ROOT).parts[0] not in ("tests", "benchmarks", "build")}
    assert folders | {"goengine"} == set(config["packages"])


def test_console_scripts_point_into_the_namespace():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts and all(target.startswith("goengine.") for target in scripts.values())
