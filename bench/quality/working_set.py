"""Collect the facts suite's working set (``working_set.tsv``) from local git mirrors of its
source repositories: ``python -m bench.quality.working_set MIRRORS OUT``.

MIRRORS holds one bare or full clone per repository, named ``owner+name`` (its git directory
either that folder or its ``repo`` subfolder); each file is read at the listed commit and kept
only when its sha256 is the listed one.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

LIST = Path(__file__).resolve().parent / "working_set.tsv"


class Entry(NamedTuple):
    name: str
    kind: str
    pages: int
    repo: str
    path: str
    commit: str
    sha256: str
    size: int


def entries(listing: Path = LIST) -> list[Entry]:
    out = []
    for line in listing.read_text().splitlines():
        if line and not line.startswith("#"):
            name, kind, pages, repo, path, commit, sha256, size = line.split("\t")
            out.append(Entry(name, kind, int(pages), repo, path, commit, sha256, int(size)))
    return out


def collect(mirrors: Path, out: Path, listing: Path = LIST) -> list[str]:
    """Write each listed file into ``out``; the problems, one line each."""
    out.mkdir(parents=True, exist_ok=True)
    problems = []
    for e in entries(listing):
        folder = mirrors / e.repo.replace("/", "+")
        git_dir = folder / "repo" if (folder / "repo").is_dir() else folder
        got = subprocess.run(
            ["git", "-C", str(git_dir), "show", f"{e.commit}:{e.path}"],
            capture_output=True,
            check=False,
        )
        if got.returncode != 0:
            problems.append(f"{e.name}: {e.repo} {e.commit}:{e.path} not in {git_dir}")
        elif hashlib.sha256(got.stdout).hexdigest() != e.sha256:
            problems.append(f"{e.name}: sha256 differs from the listed one")
        else:
            (out / e.name).write_bytes(got.stdout)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirrors", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    problems = collect(args.mirrors, args.out)
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
