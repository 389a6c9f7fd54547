"""``python -m bench.quality``: see :func:`bench.quality.main`."""

import sys

from bench.quality import main

sys.exit(main())
