"""The scripted GTP engine of tests/script_engine.py speaks GTP: the client and match tests run it
as a real subprocess."""
from __future__ import annotations

import subprocess


def test_script_engine_speaks_gtp(tmp_path, write_script_engine):
    argv = write_script_engine(tmp_path)
    out = subprocess.run(argv + ["normal"], input="1 name\nboardsize 9\n2 genmove b\nplay w c9\n"
                         "3 genmove b\nfoo\nquit\n", capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.split("\n\n")[:6] == ["=1 Script-normal", "= ", "=2 A9", "= ", "=3 B9",
                                             "? unknown command"]
