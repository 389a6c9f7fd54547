"""``python -m bench.quality``: see :mod:`bench.quality.cli`."""

import sys

from bench.quality.cli import main

sys.exit(main())
