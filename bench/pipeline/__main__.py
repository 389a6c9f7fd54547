"""``python -m bench.pipeline``: see :mod:`bench.pipeline.cli`."""

import sys

from bench.pipeline.cli import main

sys.exit(main())
