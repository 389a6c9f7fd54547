"""``python -m bench.fleet``: see :mod:`bench.fleet.cli`."""

from bench.fleet.cli import main

raise SystemExit(main())
