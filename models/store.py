"""Where the bundled models live, and their checksums.

    models/bundled/policy.onnx, value.onnx, zero.onnx, rollout.npz    (default model per kind)
    models/bundled/SHA256SUMS                                         (`sha256sum` format)

`bundled(kind)` is the path the engine loads when no model is given; it must exist and match its
line in SHA256SUMS. `record(path)` adds or updates a file's line after an export.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from goengine.models.metadata import ModelError
from goengine.models.names import BUNDLED_DIR, MODEL_FILES

CHECKSUMS = "SHA256SUMS"


def default_path(kind: str, directory: Path = BUNDLED_DIR) -> Path:
    """Where the default model of `kind` lives (it may not exist yet)."""
    if kind not in MODEL_FILES:
        raise ValueError(f"unknown kind {kind!r}; expected one of {sorted(MODEL_FILES)}")
    return directory / MODEL_FILES[kind]


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_checksums(directory: Path = BUNDLED_DIR) -> dict[str, str]:
    """{file name: sha256} from `directory`/SHA256SUMS; {} when there is none."""
    sums = directory / CHECKSUMS
    if not sums.is_file():
        return {}
    out = {}
    for line in sums.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            out[name.lstrip("*")] = digest
    return out


def check_sha256(path: str | os.PathLike, expected: str) -> None:
    """ModelError unless the file's sha256 is `expected`."""
    got = sha256_file(path)
    if got != expected.lower():
        raise ModelError(f"{path}: sha256 {got} does not match the expected {expected}; "
                         f"the file is corrupt or was replaced")


def verify(path: str | os.PathLike) -> Path:
    """Check `path` against the SHA256SUMS beside it; ModelError if missing, unlisted or changed."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    sums = read_checksums(path.parent)
    if path.name not in sums:
        raise ModelError(f"{path}: not listed in {path.parent / CHECKSUMS}")
    check_sha256(path, sums[path.name])
    return path


def bundled(kind: str, directory: Path = BUNDLED_DIR) -> Path:
    """The verified default model file of `kind`."""
    return verify(default_path(kind, directory))


def _write_checksums(directory: Path, sums: dict[str, str]) -> None:
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items()))
    tmp = directory / (CHECKSUMS + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, directory / CHECKSUMS)


def record(path: str | os.PathLike) -> str:
    """Add or update `path`'s line in the SHA256SUMS beside it (atomically); returns the sha256."""
    path = Path(path)
    sums = read_checksums(path.parent)
    sums[path.name] = sha256_file(path)
    _write_checksums(path.parent, sums)
    return sums[path.name]


def forget(path: str | os.PathLike) -> None:
    """Remove `path` (if there) and its line in the SHA256SUMS beside it."""
    path = Path(path)
    path.unlink(missing_ok=True)
    sums = read_checksums(path.parent)
    if sums.pop(path.name, None) is not None:
        _write_checksums(path.parent, sums)
