"""sgf_tools.archives: files, directory trees, tar/zip archives, broken games counted."""

from __future__ import annotations

import glob
import io
import itertools
import os
import tarfile
import zipfile

import pytest

from sgf_tools.archives import ReadStats, is_archive, iter_games, iter_sgf_bytes

DATA = "/work/shared/data"
KGS_FILES = sorted(glob.glob(os.path.join(DATA, "kgs-samples", "*.sgf")))
TYGEM = os.path.join(DATA, "tygem9d", "tygem9d-2015-05.tar.bz2")

pytestmark = pytest.mark.skipif(not KGS_FILES, reason="shared data not available")

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
    assert stats.read == len(games) == 19 and stats.skipped == 0 and stats.files == 19
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
    make_zip(str(root / "m.zip"), [("one.sgf", data[names[4]]), ("two.sgf", data[names[5]])])
    make_tar(str(root / "c.tar.bz2"), [("t/one.sgf", data[names[6]])], "w:bz2")
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
        assert len(games) < 19 and stats.reasons["bad archive"] == 1
        if mode == "w:gz":                                        # gzip streams: a prefix is read
            assert len(games) > 0
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 definitely not a zip")
    stats = ReadStats()
    assert list(iter_games(junk, stats)) == [] and stats.reasons["bad archive"] == 1
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


def test_iter_sgf_bytes_and_is_archive():
    assert is_archive("x.tar.bz2") and is_archive("X.ZIP") and is_archive("a.tgz")
    assert not is_archive("a.sgf")
    first = list(itertools.islice(iter_sgf_bytes(TYGEM), 3))
    assert [n for n, _ in first][0] == TYGEM + ":tygem9d-2015-05/2015-05-01-790141642.sgf"
    assert all(d.startswith(b"(;GM[1]") for _, d in first)


def test_real_archive_streams():
    stats = ReadStats()
    games = list(itertools.islice(iter_games(TYGEM, stats), 500))
    assert len(games) == 500 and stats.read == 500 and stats.skipped == 0
    assert len({g.source for g in games}) == 500
