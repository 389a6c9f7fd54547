"""Where the tools stand: the repository root and the results folder every tool writes under.

One place, so that no module counts its own depth below the root (``parents[N]``) to find them.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each run writes a folder of its own here: bench/results/<date>-<label>/.
RESULTS = ROOT / "bench" / "results"
