"""The Zero loop's registry of generations: the promoted networks as ONNX files and a table of
every gating result (registry.json, and registry.csv for reading).

    reg = Registry(run_dir / "registry")
    reg.record({"generation": 3, "decision": "pass", ...})     # replaces generation 3's row
    reg.path(3)                                                # registry/gen-0003.onnx

A row is keyed by its generation, so writing one again (a run resumed between the export of a
promoted network and the table's write) replaces it: the table never holds a generation twice,
and both files are written to a temporary file and renamed.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from goengine.training.data.atomic import write_atomic

FIELDS = ["generation", "decision", "file", "selfplay_games", "train_steps", "gate_games",
          "gate_wins", "gate_draws", "gate_losses", "gate_score", "llr", "resign_threshold",
          "false_resign", "would_resign", "elapsed_s"]


class GenerationTable:
    """Rows keyed by generation in STEM.json, and STEM.csv for reading, both rewritten whole and
    atomically: writing a generation again replaces its row."""

    def __init__(self, directory, stem: str, fields: list[str]):
        self.dir, self.stem, self.fields = Path(directory), stem, fields
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"{stem}.json"
        self.rows: list[dict] = json.loads(path.read_text()) if path.exists() else []

    def has(self, generation: int) -> bool:
        return any(r["generation"] == generation for r in self.rows)

    def record(self, row: dict) -> None:
        self.rows = [r for r in self.rows if r["generation"] != row["generation"]] + [row]
        self.rows.sort(key=lambda r: r["generation"])
        write_atomic(self.dir / f"{self.stem}.json",
                     lambda tmp: Path(tmp).write_text(json.dumps(self.rows, indent=1)))
        text = io.StringIO()
        w = csv.DictWriter(text, fieldnames=self.fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(self.rows)
        write_atomic(self.dir / f"{self.stem}.csv",
                     lambda tmp: Path(tmp).write_text(text.getvalue()))


class Registry(GenerationTable):
    def __init__(self, directory):
        super().__init__(directory, "registry", FIELDS)

    def path(self, generation: int) -> Path:
        return self.dir / f"gen-{generation:04d}.onnx"

    def promoted(self) -> list[dict]:
        return [r for r in self.rows if r["decision"] in ("initial", "pass", "latest")]


__all__ = ["FIELDS", "GenerationTable", "Registry"]
