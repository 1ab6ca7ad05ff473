"""engine-gtp as GoGui reads it: multi-line answers, the boards and the visit heat map.

GoGui's client takes the text of a response as everything after the first space of it, then
parses boards line by line (GtpUtil.parseStringBoard: blank lines skipped, each row needs N
values). A multi-line answer must therefore start `= ` (or `=id `), as GNU Go writes it.
"""
from __future__ import annotations

import pytest



@pytest.fixture(scope="module")
def eng(loaded_engine):
    yield from loaded_engine("--search", "heuristic", settings={"gogui_search_seconds": 0.3})


def _raw_answer(eng, command: str) -> bytes:
    start = len(eng.raw)
    eng.ask(command)
    return bytes(eng.raw[start:])


def _gogui_text(raw: bytes) -> str:
    """What GoGui's GtpClient hands to the analyze command: the response without its status
    character, id and the first space, and without the closing blank line."""
    text = raw.decode().rstrip("\n")
    return text[text.index(" ") + 1:] if " " in text else ""


def _gogui_board(text: str, size: int) -> list[list[str]]:
    """GtpUtil.parseStringBoard, top row first; raises ValueError as GoGui would fail."""
    rows = [line.split() for line in text.split("\n") if line.strip()]
    if len(rows) < size or any(len(r) < size for r in rows[:size]):
        raise ValueError("Incomplete string board")
    return [r[:size] for r in rows[:size]]


def test_multi_line_answers_start_with_a_space_as_gnu_go_writes_them(eng):
    eng.ok("clear_board")
    eng.ok("play b e5")
    raw = _raw_answer(eng, "17 showboard")
    assert raw.startswith(b"=17 \n")
    assert raw.endswith(b"\n\n") and b"\n\n" not in raw[:-2]
    # GoGui keeps the whole board: its column header is the first line
    header = next(line for line in _gogui_text(raw).split("\n") if line.strip())
    assert header.split() == list("ABCDEFGHJ")


def test_gogui_ownership_is_a_complete_dboard_for_gogui(eng):
    # the GoGui repro: boardsize 9, clear_board, play b e5, gogui-ownership
    eng.ok("boardsize 9")
    eng.ok("clear_board")
    eng.ok("play b e5")
    raw = _raw_answer(eng, "gogui-ownership")
    assert raw.startswith(b"= \n")
    board = _gogui_board(_gogui_text(raw), 9)
    values = [float(v) for row in board for v in row]
    assert all(-1.0 <= v <= 1.0 for v in values)
    assert float(board[4][4]) > 0.5          # E5, black's stone, owned by black


def test_visit_heat_map_is_a_gfx_influence_answer(eng):
    menu = eng.ok("gogui-analyze_commands").split("\n")
    assert "gfx/Visit Heatmap/gogui-visit_heatmap" in menu
    eng.ok("clear_board")
    eng.ok("play b e5")
    lines = _gogui_text(_raw_answer(eng, "gogui-visit_heatmap")).split("\n")
    kinds = [line.split()[0] for line in lines]
    assert set(kinds) <= {"INFLUENCE", "LABEL", "TEXT"} and "INFLUENCE" in kinds
    tokens = lines[kinds.index("INFLUENCE")].split()[1:]
    assert tokens and len(tokens) % 2 == 0
    points, values = tokens[0::2], [float(v) for v in tokens[1::2]]
    assert all(p[0] in "ABCDEFGHJ" and 1 <= int(p[1:]) <= 9 for p in points)
    assert "E5" not in points                 # only the candidate moves
    assert all(0.0 < v <= 1.0 for v in values) and max(values) == 1.0
