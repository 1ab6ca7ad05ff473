"""The project's documentation stays true: cited files and sections exist, every GTP command is
documented.

Citations look like `docs/algorithms.md §4.3` or `docs/gtp.md §2.1, §2.3` (a bare § right after
a cited one belongs to the same file); inside docs/algorithms.md and docs/gtp.md a bare § refers
to the file itself. The GTP command list comes from a real `engine-gtp` (its `list_commands`).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest


ROOT_PATH = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("engine", "gtp", "match", "models", "sgf_tools", "training", "tests", "benchmarks",
               "experiments")
NUMBERED_DOCS = ("docs/algorithms.md", "docs/gtp.md", "docs/training.md")

DOC_PATH = re.compile(r"(?<![\w/.])docs/[\w./-]+\.md")
# a record or curve behind a figure; `*` stands for any part of a name (a family of records)
RECORD_PATH = re.compile(r"(?<![\w/.])docs/results/(?:[\w.-]+/)*[\w.*-]+\.(?:txt|csv|png|sgf|json)")
# a link in Markdown to a file of the repository: [text](path) or [text](path#anchor)
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)")
# an internal run number (the word session and a number); evidence is dated by calendar date
RUN_NUMBER = re.compile(r"sessions?\s+\d", re.IGNORECASE)
README_MAX_LINES = 320
SECTION = r"§\d+(?:\.\d+)*"
# a doc path, then one or more sections joined by ", ", " and " or "-" (a range)
CITATION = re.compile(rf"(docs/[\w-]+\.md)`?\s*({SECTION}(?:(?:,\s*|\s+and\s+|-){SECTION})*)")
BARE = re.compile(rf"(?<![\w/.`]){SECTION}")
HEADING = re.compile(r"^#{2,4}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)


def _texts() -> dict[str, str]:
    """Every file that may cite the docs: sources, tests, benchmarks, experiments, README and the
    docs."""
    files = [ROOT_PATH / "README.md", *sorted((ROOT_PATH / "docs").rglob("*.md"))]
    for d in SOURCE_DIRS:
        files += sorted((ROOT_PATH / d).rglob("*.py"))
    return {str(f.relative_to(ROOT_PATH)): f.read_text(encoding="utf-8") for f in files}


def _sections(doc: str) -> set[str]:
    text = (ROOT_PATH / doc).read_text(encoding="utf-8")
    return set(HEADING.findall(text))


def _numbers(run: str) -> list[str]:
    return re.findall(r"§(\d+(?:\.\d+)*)", run)


def test_cited_doc_files_exist():
    missing = sorted({f"{name}: {path}" for name, text in _texts().items()
                      for path in DOC_PATH.findall(text) if not (ROOT_PATH / path).is_file()})
    assert not missing, "\n".join(missing)


def test_cited_records_exist():
    missing = sorted({f"{name}: {path}" for name, text in _texts().items()
                      for path in RECORD_PATH.findall(text)
                      if not any(ROOT_PATH.glob(path)) and not (ROOT_PATH / path).is_file()})
    assert not missing, "\n".join(missing)


def test_markdown_links_lead_to_files():
    docs = [ROOT_PATH / "README.md", *sorted((ROOT_PATH / "docs").rglob("*.md"))]
    missing = sorted(f"{doc.relative_to(ROOT_PATH)}: {target}" for doc in docs
                     for target in LINK.findall(doc.read_text(encoding="utf-8"))
                     if not (doc.parent / target).exists())
    assert not missing, "\n".join(missing)


def test_readme_is_a_user_guide_of_bounded_length():
    lines = (ROOT_PATH / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; results go to docs/results/"


def test_no_internal_run_numbers():
    """Evidence is dated by calendar date and commit, never by an internal run number."""
    texts = dict(_texts())
    for folder in ("docs", "models", "training", "checkpoints", "experiments"):
        for f in sorted((ROOT_PATH / folder).rglob("*")):
            if f.suffix in (".md", ".txt", ".csv", ".json") and f.is_file():
                texts[str(f.relative_to(ROOT_PATH))] = f.read_text(encoding="utf-8")
    bad = sorted(f"{name}: {m.group(0)}" for name, text in texts.items()
                 for m in RUN_NUMBER.finditer(text))
    assert not bad, "\n".join(bad)


def test_no_citation_of_notes_outside_the_repository():
    # the names are split so that this file does not cite them itself
    outside = ("ALGORITHMS" + ".md", "GTP-CLIENTS" + ".md", "shared" + "/docs")
    bad = sorted(f"{name}: {word}" for name, text in _texts().items() for word in outside
                 if word in text)
    assert not bad, "\n".join(bad)


def test_cited_sections_exist():
    sections = {doc: _sections(doc) for doc in NUMBERED_DOCS}
    assert all(sections.values()), sections
    bad = []
    for name, text in _texts().items():
        for doc, run in CITATION.findall(text):
            for number in _numbers(run):
                if doc not in sections:
                    bad.append(f"{name}: {doc} has no numbered sections (§{number})")
                elif number not in sections[doc]:
                    bad.append(f"{name}: {doc} §{number}")
        if name in sections:        # a bare § inside a numbered doc is one of its own sections
            own = CITATION.sub("", text)
            bad += [f"{name}: §{n}" for run in BARE.findall(own) for n in _numbers(run)
                    if n not in sections[name]]
    assert not bad, "\n".join(bad)


def test_section_citations_are_recognised():
    """The checks above read what they should: a citation, a list and a range; not GTP's own."""
    found = [(doc, _numbers(run)) for doc, run in CITATION.findall(
        "see docs/algorithms.md §4.3, and `docs/gtp.md` §2.1, §2.3; docs/algorithms.md §2.1-§2.5 "
        "and docs/gtp.md\n§3 (GTP 2, section 2)")]
    assert found == [("docs/algorithms.md", ["4.3"]), ("docs/gtp.md", ["2.1", "2.3"]),
                     ("docs/algorithms.md", ["2.1", "2.5"]), ("docs/gtp.md", ["3"])]
    assert _sections("docs/algorithms.md") >= {"2", "3.2", "4.3", "6"}


@pytest.fixture(scope="module")
def gtp_commands(gtp_engine) -> list[str]:
    with gtp_engine() as e:                 # answered at once, while the engine loads
        head, body = e.ask("list_commands")
    assert head == "=" and "genmove" in body.split("\n")
    return body.split("\n")


def _command_reference() -> str:
    text = (ROOT_PATH / "docs/gtp.md").read_text(encoding="utf-8")
    start = re.search(r"^## 4\. Command reference$", text, re.MULTILINE)
    assert start, "docs/gtp.md has no '## 4. Command reference'"
    end = re.search(r"^## \d+\.", text[start.end():], re.MULTILINE)
    return text[start.end():start.end() + end.start()] if end else text[start.end():]


def test_every_gtp_command_is_in_the_command_reference(gtp_commands):
    reference = _command_reference()
    missing = [c for c in gtp_commands if not re.search(rf"`{re.escape(c)}[ `]", reference)]
    assert not missing, f"docs/gtp.md §4 does not describe: {', '.join(missing)}"


def test_the_command_reference_lists_only_real_commands(gtp_commands):
    rows = re.findall(r"^\| `([\w-]+)", _command_reference(), re.MULTILINE)
    assert len(rows) > 20
    unknown = sorted(set(rows) - set(gtp_commands))
    assert not unknown, f"docs/gtp.md §4 has rows for commands the engine does not list: {unknown}"
