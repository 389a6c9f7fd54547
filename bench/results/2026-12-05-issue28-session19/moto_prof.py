"""The embedded moto server's request threads under cProfile (thread CPU time), over the
warm-up round and one round of ``stack_cpu_by_function.py``; the stats go to ``moto.prof``.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session19/moto_prof.py
"""

import cProfile
import pstats
import sys
import threading
import time
from pathlib import Path

if __name__ == "__main__":  # the Lambda environments are spawned: they import this module
    sys.argv = ["stack_cpu_by_function", "/work/shared/corpus/real", "--rounds", "1"]
    sys.path.insert(0, str(Path(__file__).parent.parent / "2026-12-05-issue28-stack-2"))
    import stack_cpu_by_function

    from embedded import server

    profiles: list[cProfile.Profile] = []
    local = threading.local()
    answer = server._KeepAliveHandler.run_wsgi

    def profiled(self: server._KeepAliveHandler) -> None:
        profile = getattr(local, "profile", None)
        if profile is None:
            profile = local.profile = cProfile.Profile(time.thread_time)
            profiles.append(profile)
        profile.enable()
        try:
            answer(self)
        finally:
            profile.disable()

    server._KeepAliveHandler.run_wsgi = profiled  # type: ignore[method-assign]
    stack_cpu_by_function.main()
    stats = pstats.Stats(profiles[0])
    for profile in profiles[1:]:
        stats.add(profile)
    stats.dump_stats("moto.prof")
