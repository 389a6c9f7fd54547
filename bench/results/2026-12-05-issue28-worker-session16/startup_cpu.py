"""One ``python -m runner.worker``'s own CPU from exec to "worker ready" and to its first receive.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-worker-session16/startup_cpu.py [--starts 5]

One moto server and stack (``embedded.provision.create_stack``); then, ``--starts`` times, one
worker process started as the supervisor starts it (settings as environment, a state file),
read with psutil: its own CPU when it logs "worker ready" (its converter warm), and when its
state file appears (clients made, the queue's URL got: its next request is the first
ReceiveMessage); its conversion child's CPU at that point apart. Then SIGTERM. Prints a JSON
line a start and the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from embedded.provision import create_stack
from embedded.server import MotoServer
from pagefleet.settings import load_settings, settings_env


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def one_start(env: dict[str, str], state: Path) -> dict[str, float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.worker"],
        env={**env, "PAGEFLEET_WORKER_STATE_FILE": str(state)},
        stderr=subprocess.PIPE,
        text=True,
    )
    watched = psutil.Process(proc.pid)
    assert proc.stderr is not None
    for line in proc.stderr:  # blocks until the line: the worker is then past it
        if "worker ready" in line:
            ready = _cpu(watched)
            break
    else:
        raise RuntimeError("the worker exited before it was ready")
    while not state.exists():
        assert proc.poll() is None, "the worker exited early"
        time.sleep(0.002)
    first_receive = _cpu(watched)
    child = sum(_cpu(c) for c in watched.children(recursive=True))
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    state.unlink()
    return {
        "to_ready_s": round(ready, 3),
        "to_first_receive_s": round(first_receive, 3),
        "conversion_child_s": round(child, 3),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--starts", type=int, default=5)
    args = p.parse_args()
    server = MotoServer()
    server.start()
    name = f"wstart-{int(time.time())}"
    settings = load_settings(endpoint_url=server.url, bucket=name, queue_prefix=name)
    create_stack(settings)
    env = {**os.environ, **settings_env(settings.model_copy(update={"poll_wait_s": 1}))}
    state = Path(tempfile.mkdtemp(prefix="wstart-")) / "worker.json"
    starts = []
    try:
        for _ in range(args.starts):
            starts.append(one_start(env, state))
            print(json.dumps(starts[-1]), flush=True)
    finally:
        server.stop()
    print(
        json.dumps(
            {
                f"median_{key}": statistics.median(s[key] for s in starts)
                for key in ("to_ready_s", "to_first_receive_s", "conversion_child_s")
            }
        )
    )


if __name__ == "__main__":
    main()
