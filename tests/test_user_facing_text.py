"""What a user reads speaks of the project and its users: no references into an issue
tracker they cannot open (a rule's citation goes to ``docs/spec/``), in code, docs or data."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Where text a user reads lives: the packages, their data, the docs and the tests.
SCANNED = ("harness", "conformance", "fake_clis", "benchmarks", "docs", "tests", "scripts")
SUFFIXES = {".py", ".json", ".md", ".sh", ".c", ".toml", ".txt"}
#: "issue 7", "issue 8 item 2", "issues 3-4", "(issue #12)": our own tracker's numbers.
#: An upstream project's issue is cited with its repository ("upstream issue #430").
TRACKER = re.compile(r"(?i)(?<!upstream )\bissues? #?\d+")


def _files() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    for top in SCANNED:
        found += [p for p in (ROOT / top).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    return [p for p in found if p.exists() and p != Path(__file__).resolve()]


def test_no_text_points_into_an_issue_tracker() -> None:
    hits = []
    for path in _files():
        for number, line in enumerate(path.read_text("utf-8", "replace").splitlines(), 1):
            if TRACKER.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not hits, "\n".join(hits)


def test_the_pattern_finds_a_tracker_reference_and_spares_an_upstream_one() -> None:
    assert TRACKER.search("rules for the runner (issue 5, items 3-6)")
    assert TRACKER.search("see issues 7")
    assert not TRACKER.search("both flags live under -p (upstream issue #430)")
