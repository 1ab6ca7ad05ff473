"""Iterate games from SGF files, directory trees and KGS-style archives, streaming.

``iter_games(path)`` accepts a single ``.sgf`` file, a directory (walked recursively in
sorted order; ``.sgf`` files and archives inside are read, hidden entries skipped), or an
archive: ``.tar.bz2`` / ``.tbz2`` / ``.tar.gz`` / ``.tgz`` / ``.tar.xz`` / ``.tar`` (read as a
stream, in archive order) or ``.zip`` (archive order).  Nothing is unpacked to disk.

Broken games, unreadable files and corrupt archives never raise: they are counted in a
`ReadStats` by reason.  A path that does not exist, or is not a supported kind, raises.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from .reader import SgfError, read_sgf_collection
from .record import GameRecord

__all__ = ["ReadStats", "iter_games", "iter_sgf_bytes", "is_archive", "ARCHIVE_SUFFIXES"]

TAR_SUFFIXES = (".tar.bz2", ".tbz2", ".tbz", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar")
ZIP_SUFFIXES = (".zip",)
ARCHIVE_SUFFIXES = TAR_SUFFIXES + ZIP_SUFFIXES
SGF_SUFFIX = ".sgf"
_MAX_EXAMPLES = 5


@dataclass
class ReadStats:
    """What happened while reading.

    ``read``: games yielded; ``skipped``: broken games (and unreadable files / archives);
    ``reasons``: Counter of skip reasons (`sgf_tools.reader.REASONS`, plus ``"unreadable
    file"`` and ``"bad archive"``); ``examples``: the first few sources per reason;
    ``files``: SGF files / members opened.
    """

    read: int = 0
    skipped: int = 0
    files: int = 0
    reasons: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, reason: str, source: str | None) -> None:
        self.skipped += 1
        self.reasons[reason] += 1
        ex = self.examples.setdefault(reason, [])
        if len(ex) < _MAX_EXAMPLES and source is not None:
            ex.append(source)

    @property
    def total(self) -> int:
        return self.read + self.skipped

    def as_dict(self) -> dict:
        return {"read": self.read, "skipped": self.skipped, "files": self.files,
                "reasons": dict(self.reasons)}

    def __str__(self) -> str:
        rs = ", ".join("%s: %d" % kv for kv in sorted(self.reasons.items()))
        return "read %d games, skipped %d%s" % (self.read, self.skipped,
                                                " (%s)" % rs if rs else "")


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _is_sgf(name: str) -> bool:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if base.startswith("._") or "__MACOSX/" in name:      # macOS resource forks
        return False
    return base.lower().endswith(SGF_SUFFIX)


try:
    import lzma
    _LZMA_ERRORS: tuple = (lzma.LZMAError,)
except ImportError:  # pragma: no cover - Python built without lzma
    _LZMA_ERRORS = ()

_ARCHIVE_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError,
                   RuntimeError, ValueError, NotImplementedError) + _LZMA_ERRORS


def _iter_tar(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    try:
        with tarfile.open(path, mode="r|*") as tf:
            for member in tf:
                if not member.isfile() or not _is_sgf(member.name):
                    continue
                f = tf.extractfile(member)
                data = f.read() if f is not None else b""
                yield "%s:%s" % (path, member.name), data
    except _ARCHIVE_ERRORS as e:
        stats.skip("bad archive", "%s (%s: %s)" % (path, type(e).__name__, e))


def _iter_zip(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir() or not _is_sgf(info.filename):
                    continue
                try:
                    data = zf.read(info)
                except _ARCHIVE_ERRORS as e:
                    stats.skip("unreadable file", "%s:%s (%s)" % (path, info.filename, e))
                    continue
                yield "%s:%s" % (path, info.filename), data
    except _ARCHIVE_ERRORS as e:
        stats.skip("bad archive", "%s (%s: %s)" % (path, type(e).__name__, e))


def _iter_dir(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as e:
        stats.skip("unreadable file", "%s (%s)" % (path, e))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        full = os.path.join(path, entry.name)
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir:
            yield from _iter_dir(full, stats)
        elif is_archive(entry.name):
            yield from _iter_archive(full, stats)
        elif _is_sgf(entry.name):
            yield from _iter_file(full, stats)


def _iter_file(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        stats.skip("unreadable file", "%s (%s)" % (path, e))
        return
    yield path, data


def _iter_archive(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    if path.lower().endswith(ZIP_SUFFIXES):
        return _iter_zip(path, stats)
    return _iter_tar(path, stats)


def iter_sgf_bytes(path, stats: ReadStats | None = None) -> Iterator[tuple[str, bytes]]:
    """``(source, raw bytes)`` of every SGF file under `path` (see the module doc).

    ``source`` is the file path, or ``archive_path:member_name`` inside an archive.
    """
    if stats is None:
        stats = ReadStats()
    p = os.fspath(path)
    if os.path.isdir(p):
        return _iter_dir(p, stats)
    if not os.path.exists(p):
        raise FileNotFoundError(p)
    if is_archive(p):
        return _iter_archive(p, stats)
    return _iter_file(p, stats)


def iter_games(path, stats: ReadStats | None = None, *, comments: bool = False
               ) -> Iterator[GameRecord]:
    """Every readable game under `path` (file, directory tree or archive), in a
    deterministic order.  Broken games are skipped and counted in ``stats``, never raised.

    A file holding an SGF collection yields each of its games (sources ``path#1``, ...).
    """
    if stats is None:
        stats = ReadStats()
    for source, data in iter_sgf_bytes(path, stats):
        stats.files += 1
        for item in read_sgf_collection(data, source, comments=comments):
            if isinstance(item, SgfError):
                stats.skip(item.reason, item.source or source)
            else:
                stats.read += 1
                yield item
