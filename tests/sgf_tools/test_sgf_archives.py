"""sgf_tools.archives: files, directory trees, tar/zip archives, broken games counted."""

from __future__ import annotations

import glob
import io
import itertools
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from goengine.sgf_tools.archives import ReadStats, is_archive, iter_games, iter_sgf_bytes

FIXTURES = Path(__file__).parents[1] / "data" / "kgs"
KGS_FILES = sorted(glob.glob(os.path.join(FIXTURES, "*.sgf")))
# a real Tygem archive, when ../shared/data is beside the project
TYGEM = str(Path(__file__).resolve().parents[3] / "shared" / "data" / "tygem9d"
            / "tygem9d-2015-05.tar.bz2")
needs_tygem = pytest.mark.skipif(not os.path.isfile(TYGEM), reason="no Tygem archive beside the "
                                                                   "project")

BROKEN = {
    "empty.sgf": b"",
    "garbage.sgf": bytes(range(256)).replace(b"(", b"") * 4,
    "truncated.sgf": b"(;GM[1]FF[4]SZ[19]KM[6.5];B[pd];W[pp];B[dd];W[d",
    "badsize.sgf": b"(;GM[1]SZ[abc];B[pd])",
    "offboard.sgf": b"(;GM[1]SZ[9];B[ee];W[pp])",
}
BROKEN_REASONS = {"empty": 1, "not sgf": 1, "parse error": 1, "bad size": 1, "move off board": 1}


def kgs_members(order=None):
    files = KGS_FILES if order is None else [KGS_FILES[i] for i in order]
    return [("kgs/" + os.path.basename(f), open(f, "rb").read()) for f in files]


def make_tar(path, members, mode):
    with tarfile.open(path, mode) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def make_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def test_single_file():
    stats = ReadStats()
    games = list(iter_games(KGS_FILES[0], stats))
    assert len(games) == 1 and games[0].source == KGS_FILES[0]
    assert (stats.read, stats.skipped, stats.files) == (1, 0, 1)


@pytest.mark.parametrize("suffix,mode", [(".tar.gz", "w:gz"), (".tgz", "w:gz"),
                                         (".tar.bz2", "w:bz2"), (".tar", "w"), (".zip", None)])
def test_archives_count_games_in_archive_order(tmp_path, suffix, mode):
    order = list(range(len(KGS_FILES)))[::-1]                  # not sorted: archive order wins
    members = kgs_members(order)
    members.insert(3, ("kgs/README.txt", b"not a game"))          # ignored
    members.insert(5, ("__MACOSX/kgs/._x.sgf", b"\x00\x05\x16\x07"))  # ignored
    path = str(tmp_path / ("kgs" + suffix))
    make_zip(path, members) if mode is None else make_tar(path, members, mode)
    stats = ReadStats()
    games = list(iter_games(path, stats))
    assert stats.read == len(games) == len(KGS_FILES) == stats.files and stats.skipped == 0
    assert [g.source for g in games] == ["%s:kgs/%s" % (path, os.path.basename(KGS_FILES[i]))
                                         for i in order]
    # same records as reading the files one by one
    direct = {os.path.basename(f): next(iter_games(f)) for f in KGS_FILES}
    for g in games:
        assert g == direct[g.source.rsplit("/", 1)[1]]


def test_directory_tree_sorted_with_archives_inside(tmp_path):
    root = tmp_path / "games"
    (root / "b_sub" / "deeper").mkdir(parents=True)
    (root / "a_sub").mkdir()
    (root / ".hidden").mkdir()
    names = [os.path.basename(f) for f in KGS_FILES]
    data = {n: open(f, "rb").read() for n, f in zip(names, KGS_FILES)}
    (root / "z.sgf").write_bytes(data[names[0]])
    (root / "a_sub" / "x.SGF").write_bytes(data[names[1]])
    (root / "b_sub" / "deeper" / "y.sgf").write_bytes(data[names[2]])
    (root / "b_sub" / "notes.txt").write_text("not a game")
    (root / ".hidden" / "h.sgf").write_bytes(data[names[3]])
    make_zip(str(root / "m.zip"), [("one.sgf", data[names[4]]), ("two.sgf", data[names[0]])])
    make_tar(str(root / "c.tar.bz2"), [("t/one.sgf", data[names[1]])], "w:bz2")
    stats = ReadStats()
    got = [g.source for g in iter_games(root, stats)]
    r = str(root)
    assert got == [os.path.join(r, "a_sub", "x.SGF"),
                   os.path.join(r, "b_sub", "deeper", "y.sgf"),
                   os.path.join(r, "c.tar.bz2") + ":t/one.sgf",
                   os.path.join(r, "m.zip") + ":one.sgf",
                   os.path.join(r, "m.zip") + ":two.sgf",
                   os.path.join(r, "z.sgf")]
    assert stats.read == 6 and stats.skipped == 0
    assert [g.source for g in iter_games(root)] == got             # deterministic


def test_broken_games_skipped_and_counted(tmp_path):
    members = kgs_members()[:4]
    for i, (name, data) in enumerate(BROKEN.items()):
        members.insert(2 * i, (name, data))
    for path in (make_tar(str(tmp_path / "mixed.tar.gz"), members, "w:gz"),
                 make_zip(str(tmp_path / "mixed.zip"), members)):
        stats = ReadStats()
        games = list(iter_games(path, stats))
        assert len(games) == stats.read == 4
        assert stats.skipped == 5 and dict(stats.reasons) == BROKEN_REASONS
        assert stats.examples["move off board"] == [path + ":offboard.sgf"]
        assert stats.total == 9 and stats.files == 9
        assert "skipped 5" in str(stats) and stats.as_dict()["reasons"] == BROKEN_REASONS
    d = tmp_path / "dir"
    d.mkdir()
    for name, data in BROKEN.items():
        (d / name).write_bytes(data)
    stats = ReadStats()
    assert list(iter_games(d, stats)) == []
    assert dict(stats.reasons) == BROKEN_REASONS


def test_corrupt_archives_never_raise(tmp_path):
    for suffix, mode in ((".tar.gz", "w:gz"), (".tar.bz2", "w:bz2")):
        good = make_tar(str(tmp_path / ("good" + suffix)), kgs_members(), mode)
        blob = open(good, "rb").read()
        cut = tmp_path / ("cut" + suffix)
        cut.write_bytes(blob[: len(blob) * 2 // 3])               # truncated download
        stats = ReadStats()
        games = list(iter_games(cut, stats))
        assert len(games) < len(KGS_FILES) and dict(stats.reasons) == {"truncated archive": 1}
        if mode == "w:gz":                                        # gzip streams: a prefix is read
            assert len(games) > 0
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"definitely not a zip, PK\x03\x04")
    stats = ReadStats()
    assert list(iter_games(junk, stats)) == [] and stats.reasons["bad archive"] == 1
    header_cut = tmp_path / "header_cut.zip"            # a member header that ends too soon
    header_cut.write_bytes(b"PK\x03\x04 definitely not a zip")
    stats = ReadStats()
    assert list(iter_games(header_cut, stats)) == []
    assert dict(stats.reasons) == {"truncated archive": 1}
    junk_tgz = tmp_path / "junk.tgz"
    junk_tgz.write_bytes(b"\x1f\x8b garbage")
    stats = ReadStats()
    assert list(iter_games(junk_tgz, stats)) == [] and stats.reasons["bad archive"] == 1


def test_collection_file_yields_every_game(tmp_path):
    a, b = (open(f, "rb").read() for f in KGS_FILES[:2])
    p = tmp_path / "two.sgf"
    p.write_bytes(a + b"\n" + b)
    games = list(iter_games(p))
    assert [g.source for g in games] == [str(p), str(p) + "#1"]


def test_missing_path_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(iter_games(tmp_path / "nope.tar.bz2"))


def test_is_archive():
    assert is_archive("x.tar.bz2") and is_archive("X.ZIP") and is_archive("a.tgz")
    assert not is_archive("a.sgf")


@needs_tygem
def test_iter_sgf_bytes_of_a_real_archive():
    first = list(itertools.islice(iter_sgf_bytes(TYGEM), 3))
    assert [n for n, _ in first][0] == TYGEM + ":tygem9d-2015-05/2015-05-01-790141642.sgf"
    assert all(d.startswith(b"(;GM[1]") for _, d in first)


@needs_tygem
def test_real_archive_streams():
    stats = ReadStats()
    games = list(itertools.islice(iter_games(TYGEM, stats), 500))
    assert len(games) == 500 and stats.read == 500 and stats.skipped == 0
    assert len({g.source for g in games}) == 500


# ---- truncated downloads: the games before the break are kept ---------------------------------
def fixture_members(copies: int) -> list[tuple[str, bytes]]:
    """`copies` copies of the genuine KGS files of tests/data/kgs, under distinct names."""
    files = sorted(FIXTURES.glob("*.sgf"))
    return [("games/%02d-%s" % (i, f.name), f.read_bytes()) for i in range(copies) for f in files]


def test_truncated_zip_keeps_the_files_before_the_break(tmp_path):
    full = make_zip(str(tmp_path / "full.zip"), fixture_members(4))
    blob = open(full, "rb").read()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(blob[: len(blob) // 2])          # a broken download: no central directory
    with zipfile.ZipFile(full) as zf:
        whole = [i.filename for i in zf.infolist()
                 if i.header_offset + 30 + len(i.filename) + len(i.extra) + i.compress_size
                 <= len(blob) // 2]
    stats = ReadStats()
    games = list(iter_games(cut, stats))
    assert len(whole) >= 5
    assert [g.source for g in games] == ["%s:%s" % (cut, n) for n in whole]
    assert stats.read == len(whole) and dict(stats.reasons) == {"truncated archive": 1}


class _Unseekable(io.RawIOBase):
    """A write-only stream: zipfile then writes sizes in data descriptors after each member."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += b
        return len(b)


def test_truncated_streamed_zip_keeps_the_files_before_the_break(tmp_path):
    out = _Unseekable()
    members = fixture_members(2)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            with zf.open(name, "w") as f:
                f.write(data)
    cut = tmp_path / "cut.zip"
    cut.write_bytes(bytes(out.data[: len(out.data) * 3 // 4]))
    stats = ReadStats()
    games = list(iter_games(cut, stats))
    assert 0 < len(games) < len(members)
    assert [g.source for g in games] == ["%s:%s" % (cut, n) for n, _ in members[:len(games)]]
    assert dict(stats.reasons) == {"truncated archive": 1}


def test_truncated_tar_bz2_keeps_the_blocks_before_the_break(tmp_path):
    """bzip2 decompresses whole blocks (100 kB of input at level 1): the games of every block
    that ends before the break are read, the rest is one truncated archive."""
    members = fixture_members(12)
    full = tmp_path / "full.tar.bz2"
    with tarfile.open(full, "w:bz2", compresslevel=1) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    blob = full.read_bytes()
    cut = tmp_path / "cut.tar.bz2"
    cut.write_bytes(blob[: len(blob) * 3 // 4])
    stats = ReadStats()
    games = list(iter_games(cut, stats))
    assert 0 < len(games) < len(members)
    assert [g.source for g in games] == ["%s:%s" % (cut, n) for n, _ in members[:len(games)]]
    assert dict(stats.reasons) == {"truncated archive": 1}
    assert "%d SGF files before the break" % len(games) in stats.examples["truncated archive"][0]


def test_archive_cut_inside_its_first_block_says_so(tmp_path):
    """Nothing of a bzip2 block can be decoded before the block ends (bzip2recover finds
    nothing either): the archive is reported as truncated, not as an empty file."""
    full = make_tar(str(tmp_path / "full.tar.bz2"), fixture_members(1), "w:bz2")
    cut = tmp_path / "cut.tar.bz2"
    cut.write_bytes(open(full, "rb").read()[:4000])
    stats = ReadStats()
    assert list(iter_games(cut, stats)) == []
    assert dict(stats.reasons) == {"truncated archive": 1}
    assert "0 SGF files before the break" in stats.examples["truncated archive"][0]
