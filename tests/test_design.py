"""docs/DESIGN.md is the design the code cites: every "rule N" in a comment or docstring names one
of its rules, and nothing in the repository points at a design document outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "DESIGN.md"
# What a reader could not open from a clone: documents that live beside the repository.
OUTSIDE = re.compile(r"ANCHORS\.md|STYLE\.md|\.\./shared/(?!corpus)|(?<!docs/)\bDESIGN\.md")


def _tracked_sources() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [
        ROOT / name
        for name in listed
        if not name.startswith("bench/results/")
        and name != "tests/test_design.py"
        and (ROOT / name).is_file()
        and (ROOT / name).suffix in {".py", ".sh", ".tf", ".hcl", ".md", "", ".mk", ".toml"}
    ]


def _rules() -> set[int]:
    return {int(n) for n in re.findall(r"^(\d)\. \*\*", DESIGN.read_text(), re.M)}


def test_the_design_has_the_seven_rules() -> None:
    assert _rules() == set(range(1, 8))


def test_every_cited_rule_is_one_the_design_has() -> None:
    cited = {
        (path.relative_to(ROOT).as_posix(), int(n))
        for path in _tracked_sources()
        for n in re.findall(r"\b[Rr]ules? (\d+)\b", path.read_text(errors="replace"))
    }
    assert cited, "no file cites a rule: the pattern no longer matches the comments"
    assert {(where, n) for where, n in cited if n not in _rules()} == set()


def test_nothing_points_at_a_document_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _tracked_sources()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == []
