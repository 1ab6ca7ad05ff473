"""engine-gtp driven by GoGui's own client classes (net.sf.gogui.gtp.GtpClient, AnalyzeDefinition,
GtpUtil.parseDoubleBoard), taken from an installed GoGui.

Runs where java (11 or later, which runs tests/gtp/gogui/Check.java as a source file) and GoGui are
there: GOGUI_JAR names GoGui's gogui.jar, a folder of its classes, or its install folder (with
lib/gogui.jar). GoGui is not part of this repository: install it as its own instructions say
(https://github.com/Remi-Coulom/gogui). Skipped elsewhere.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
GTP_CLIENT_CLASS = Path("net", "sf", "gogui", "gtp", "GtpClient.class")


def gogui_classpath(path: str | None) -> str | None:
    """GoGui's classes for java's -cp: gogui.jar itself, a class folder, or an install folder."""
    if not path:
        return None
    for candidate in (Path(path, "lib", "gogui.jar"), Path(path)):
        if candidate.is_file() and candidate.suffix == ".jar":
            return str(candidate)
        if (candidate / GTP_CLIENT_CLASS).is_file():
            return str(candidate)
    return None


CLASSPATH = gogui_classpath(os.environ.get("GOGUI_JAR"))

pytestmark = pytest.mark.skipif(
    CLASSPATH is None or not shutil.which("java"),
    reason="set GOGUI_JAR to an installed GoGui (gogui.jar, its class folder or its install folder; "
           "needs java 11+) to drive the engine with GoGui's client")


def test_gogui_client_reads_every_analyze_command():
    engine = f"{sys.executable} -m goengine.gtp.main --search heuristic -q"
    out = subprocess.run(["java", "-cp", CLASSPATH, str(HERE / "gogui" / "Check.java"), engine],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "  GFX / Visit Heatmap / gogui-visit_heatmap" in lines
    assert "  DBOARD / Ownership / gogui-ownership" in lines
    assert any(l.startswith("dboard parsed: rows 9") for l in lines)       # a full 9x9 board
    assert any(l.startswith("heatmap first token line: [INFLUENCE ") for l in lines)
    assert any(l.startswith("final_score: ") and l[13] in "BW0" for l in lines)
