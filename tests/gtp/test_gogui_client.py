"""engine-gtp driven by GoGui's own client classes (net.sf.gogui.gtp.GtpClient, AnalyzeDefinition,
GtpUtil.parseDoubleBoard), compiled from GoGui's source with javac.

Runs where javac and a GoGui source tree are there: GOGUI_SRC names its `src` folder (e.g. from
`git clone https://github.com/Remi-Coulom/gogui` — not part of this repository); skipped elsewhere.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SRC = os.environ.get("GOGUI_SRC")

pytestmark = pytest.mark.skipif(
    not (SRC and Path(SRC, "net/sf/gogui/gtp/GtpClient.java").is_file() and shutil.which("javac")),
    reason="set GOGUI_SRC to GoGui's src folder (and have javac) to drive the engine with GoGui's client")


def test_gogui_client_reads_every_analyze_command(tmp_path):
    subprocess.run(["javac", "-d", str(tmp_path), "-sourcepath", SRC, str(HERE / "gogui" / "Check.java")],
                   check=True, capture_output=True, timeout=300)
    engine = f"{sys.executable} -m goengine.gtp.main --search heuristic -q"
    out = subprocess.run(["java", "-cp", str(tmp_path), "Check", engine], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "  GFX / Visit Heatmap / gogui-visit_heatmap" in lines
    assert "  DBOARD / Ownership / gogui-ownership" in lines
    assert any(l.startswith("dboard parsed: rows 9") for l in lines)       # a full 9x9 board
    assert any(l.startswith("heatmap first token line: [INFLUENCE ") for l in lines)
    assert any(l.startswith("final_score: ") and l[13] in "BW0" for l in lines)
