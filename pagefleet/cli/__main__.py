import sys

from pagefleet.cli import main

sys.exit(main())
