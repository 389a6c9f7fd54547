"""``python -m bench``: the pipeline bench, as ``python -m bench.pipeline``."""

import sys

from bench.pipeline.cli import main

sys.exit(main())
