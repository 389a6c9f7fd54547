"""``python -m runner``: the supervisor; ``python -m runner --check``: the health check."""

from runner.cli import main

raise SystemExit(main())
