"""``python -m runner``: the supervisor; ``python -m runner --check``: the health check."""

from pagefleet.process_exit import exit_process
from runner.cli import main

exit_process(main())  # its workers have exited: nothing is left for a teardown to close
