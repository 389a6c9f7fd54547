"""``python -m bench.marker``: the marker CPU bench."""

import sys

from bench.marker.cli import main

sys.exit(main())
