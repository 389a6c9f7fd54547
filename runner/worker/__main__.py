"""``python -m runner.worker``: one worker process; the supervisor starts W of them.

The worker is a package so that this is its entry point: multiprocessing's spawn re-imports a
program's ``-m`` module in each child it starts, except a package's ``__main__``, so the
conversion child (runner/conversion.py) starts without importing the worker and the S3 and SQS
clients it needs (~0.3 s of CPU at every start and restart).
"""

from runner.worker import main

main()
