"""Learning curves as CSV files: one row per evaluation, appended as training goes, so that a
killed run keeps its curve and a resumed one continues it."""
from __future__ import annotations

import csv
from pathlib import Path


def read_rows(path: Path) -> list[dict]:
    """The rows of the curve at `path` (file closed before returning)."""
    with Path(path).open(newline="") as f:
        return list(csv.DictReader(f))


def append_row(path: Path, fields: list[str], row: dict) -> None:
    """Append `row` to the CSV at `path` (fields it lacks stay empty), writing the header when
    the file is new; a file with other columns (written by an older version) is rewritten with
    `fields` first."""
    new = not path.exists()
    if not new:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            old_fields, rows = reader.fieldnames, list(reader)
        if old_fields != fields:
            with path.open("w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                w.writerows({k: r.get(k, "") for k in fields} for r in rows)
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in fields})
