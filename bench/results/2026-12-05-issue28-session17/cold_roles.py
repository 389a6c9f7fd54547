"""CPU by process kind of one cold `pagefleet run` over the shared corpus (psutil, every 50 ms;
a process's CPU as last seen, so up to 50 ms of each is missed):

    .venv/bin/python bench/results/2026-12-05-issue28-session17/cold_roles.py .venv/bin/pagefleet
"""
import psutil, subprocess, sys, time, collections, shutil, tempfile
out = tempfile.mkdtemp()
p = subprocess.Popen([sys.argv[1], "run", "/work/shared/corpus/real", "--workers", "2", "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
root = psutil.Process(p.pid)
last = {}
kind = {}
def k(proc):
    try:
        c = " ".join(proc.cmdline())
    except psutil.Error:
        return "?"
    if not c:
        return "?"  # ending: its command line is gone
    try:
        parent = " ".join(proc.parent().cmdline())
    except (psutil.Error, AttributeError):
        parent = ""
    if "runner.worker" in parent and "runner.worker" not in c: return "conversion child" if "resource_tracker" not in c else "resource tracker"
    if "runner.worker" in c: return "worker"
    if "-m runner" in c: return "supervisor"
    if "multiprocessing.spawn" in c or "spawn_main" in c: return "conversion child"
    if "forkserver" in c: return "forkserver (template + envs)"
    if "pagefleet" in c and "run" in c: return "cli"
    return c[:60]
while p.poll() is None:
    try:
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        procs = []
    for q in procs:
        try:
            t = q.cpu_times(); last[q.pid] = t.user + t.system
            seen = k(q)  # at each look: a spawned process shows its parent's command at first
            if seen != "?": kind[q.pid] = seen
        except psutil.Error:
            pass
    time.sleep(0.05)
tot = collections.defaultdict(float); n = collections.Counter()
for pid, cpu in last.items():
    tot[kind[pid]] += cpu; n[kind[pid]] += 1
for name, cpu in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{cpu:7.2f} s  {n[name]:3d} procs  {name}")
print(f"{sum(tot.values()):7.2f} s total (seen)")
shutil.rmtree(out)
