#!/usr/bin/env bash
# The vLLM sidecar's start as ECS gives it: import the real vLLM and parse its CLI as a uid
# with no passwd entry, once with HOME alone (expected to fail: torch's getpass.getuser()) and
# once with the task's environment (terraform/modules/runners/task_environment.json plus HOME),
# which must succeed. tests/test_runner_task_env.py replays the same call on the standard
# library alone; this is the real import, in a venv of several GB.
#
#   docker/replay-sidecar-user.sh VENV     VENV holds vllm (`make vllm-user-replay` builds it)
#
# Needs root (setpriv changes the uid) and a VENV whose interpreter that uid may execute.
set -euo pipefail

venv=${1:?usage: $0 VENV}
uid=$(python3 -c '
import json, pwd
uid = int(json.load(open("terraform/modules/runners/task_environment.json"))["user"])
while True:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        break
    uid += 1
print(uid)')
mapfile -t task_env < <(python3 -c '
import json
for k, v in json.load(open("terraform/modules/runners/task_environment.json"))["vllm_environment"].items():
    print(f"{k}={v}")')
home=$(mktemp -d)
chmod 0777 "$home"
trap 'rm -rf "$home"' EXIT

as_uid() {
    setpriv --reuid="$uid" --regid="$uid" --clear-groups -- /usr/bin/env -i "HOME=$home" "$@"
}

echo "replay: uid $uid (no passwd entry), HOME only: import vllm must fail"
if as_uid "$venv/bin/python" -c 'import vllm' 2>"$home/old.err"; then
    echo "replay: vllm imported without USER; the replay no longer reaches getpass" >&2
    exit 1
fi
grep -E "getpwuid\(\): uid not found|No username set" "$home/old.err" >&2

echo "replay: uid $uid with ${task_env[*]}: import vllm"
as_uid "${task_env[@]}" "$venv/bin/python" -c 'import vllm; print("vllm", vllm.__version__)'
# vLLM builds its CLI's defaults with a DeviceConfig, which asks the platform for its device
# (vllm/config/device.py:49-60 in 0.20.1) and raises where there is none: the CLI step needs a
# GPU (or a CPU build of vLLM), so a machine without one replays the import alone.
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "replay: no GPU here: vllm serve --help needs one to build its defaults; not replayed"
    echo "replay: the sidecar's user and environment import vLLM"
    exit 0
fi
echo "replay: uid $uid with ${task_env[*]}: vllm serve --help"
as_uid "${task_env[@]}" "$venv/bin/vllm" serve --help >/dev/null
echo "replay: the sidecar's user and environment import vLLM and parse its CLI"
