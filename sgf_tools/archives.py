"""Iterate games from SGF files, directory trees and KGS-style archives, streaming.

``iter_games(path)`` accepts a single ``.sgf`` file, a directory (walked recursively in
sorted order; ``.sgf`` files and archives inside are read, hidden entries skipped), or an
archive: ``.tar.bz2`` / ``.tbz2`` / ``.tar.gz`` / ``.tgz`` / ``.tar.xz`` / ``.tar`` (read as a
stream, in archive order) or ``.zip`` (archive order).  Nothing is unpacked to disk.

Broken games, unreadable files and corrupt archives never raise: they are counted in a
`ReadStats` by reason.  A path that does not exist, or is not a supported kind, raises.

A truncated archive (a broken download) keeps the files before the break and counts the rest
as one ``"truncated archive"``.  A zip without its central directory is read from its local
headers, in order.  A tar stream keeps what its compressor can decode: gzip and xz decode up to
the break, bzip2 only whole blocks (900 kB of input at the usual level 9), so a cut inside the
first block leaves nothing readable.
"""

from __future__ import annotations

import bz2
import os
import struct
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
    file"``, ``"bad archive"`` and ``"truncated archive"``); ``examples``: the first few sources per reason;
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


def _archive_failed(stats: ReadStats, path: str, error: Exception, files_before: int) -> None:
    """Count an archive that stopped with `error` after `files_before` SGF files."""
    # tarfile says "unexpected end of data" when the stream ends inside the archive, and "empty
    # file" when the decompressor gave nothing at all (a cut inside bzip2's first block)
    cut = isinstance(error, EOFError) or (isinstance(error, tarfile.ReadError) and str(error) in
                                          ("unexpected end of data", "empty file"))
    if cut:
        stats.skip("truncated archive", "%s (the data ends early; %d SGF files before the break)"
                   % (path, files_before))
    else:
        stats.skip("bad archive", "%s (%s: %s)" % (path, type(error).__name__, error))


def _iter_tar(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    done = 0
    try:
        with tarfile.open(path, mode="r|*") as tf:
            for member in tf:
                if not member.isfile() or not _is_sgf(member.name):
                    continue
                f = tf.extractfile(member)
                data = f.read() if f is not None else b""
                done += 1
                yield "%s:%s" % (path, member.name), data
    except _ARCHIVE_ERRORS as e:
        _archive_failed(stats, path, e, done)


def _iter_zip(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        yield from _iter_zip_local_headers(path, stats)   # no central directory: a cut download
        return
    except _ARCHIVE_ERRORS as e:
        stats.skip("bad archive", "%s (%s: %s)" % (path, type(e).__name__, e))
        return
    try:
        with zf:
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


# A zip member's local header (APPNOTE 4.3.7): signature, version, flags, method, time, date,
# CRC-32, compressed size, size, name length, extra length.
_ZIP_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_ZIP_LOCAL_SIG = b"PK\x03\x04"
_ZIP_DESCRIPTOR_SIG = b"PK\x07\x08"
_ZIP_CENTRAL_SIG = b"PK\x01\x02"
_ZIP_STORED, _ZIP_DEFLATED, _ZIP_BZIP2 = 0, 8, 12


def _zip_member_data(f, flags: int, method: int, csize: int) -> bytes | None:
    """The uncompressed data of the member whose data starts at f's position, or None when the
    file ends before it does. Raises `zipfile.BadZipFile` for a method it cannot read."""
    if flags & 0x08:                      # sizes in a data descriptor after the data
        if method != _ZIP_DEFLATED:
            raise zipfile.BadZipFile("streamed member with compression method %d" % method)
        dec = zlib.decompressobj(-15)
        out = []
        while not dec.eof:
            chunk = f.read(65536)
            if not chunk:
                return None
            out.append(dec.decompress(chunk))
        f.seek(-len(dec.unused_data), os.SEEK_CUR)
        desc = f.read(16)
        if len(desc) < 12:
            return None
        f.seek((16 if desc[:4] == _ZIP_DESCRIPTOR_SIG else 12) - len(desc), os.SEEK_CUR)
        return b"".join(out)
    raw = f.read(csize)
    if len(raw) < csize:
        return None
    if method == _ZIP_STORED:
        return raw
    if method == _ZIP_DEFLATED:
        return zlib.decompress(raw, -15)
    if method == _ZIP_BZIP2:
        return bz2.decompress(raw)
    raise zipfile.BadZipFile("compression method %d" % method)


def _iter_zip_local_headers(path: str, stats: ReadStats) -> Iterator[tuple[str, bytes]]:
    """The members of a zip that has no central directory (the end of the file is missing), in
    file order, up to the break."""
    done = 0
    with open(path, "rb") as f:
        while True:
            head = f.read(_ZIP_LOCAL.size)
            if head[:4] != _ZIP_LOCAL_SIG and len(head) >= 4:
                break
            if len(head) < _ZIP_LOCAL.size:
                stats.skip("truncated archive", "%s (%d SGF files before the break)" % (path, done))
                return
            _sig, _ver, flags, method, _t, _d, _crc, csize, _size, nlen, xlen = \
                _ZIP_LOCAL.unpack(head)
            name = f.read(nlen).decode("utf-8" if flags & 0x800 else "cp437", "replace")
            f.seek(xlen, os.SEEK_CUR)
            try:
                data = _zip_member_data(f, flags, method, csize)
            except _ARCHIVE_ERRORS as e:
                stats.skip("bad archive", "%s:%s (%s: %s)" % (path, name, type(e).__name__, e))
                return
            if data is None:
                stats.skip("truncated archive", "%s (%d SGF files before the break)" % (path, done))
                return
            if not name.endswith("/") and _is_sgf(name):
                done += 1
                yield "%s:%s" % (path, name), data
    if head[:4] == _ZIP_CENTRAL_SIG:      # the directory begins, but its end record is cut off
        stats.skip("truncated archive", "%s (%d SGF files before the break)" % (path, done))
    else:
        stats.skip("bad archive", "%s (not a zip file after %d SGF files)" % (path, done))


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
