#!/usr/bin/env bash
# Start the instance's NVIDIA MPS control daemon at $PAGEFLEET_MPS_DIR, for every GPU.
# Idempotent: a daemon that answers there is used as it is. Refuses to start a second daemon
# beside another one (the AMI's nvidia-mps.service, say) that listens elsewhere: point
# PAGEFLEET_MPS_DIR at that one's pipe directory instead. Run it as the UID the CUDA clients
# (runner workers, vLLM sidecar) run as; see README.md.
set -euo pipefail
# shellcheck source=mps/common.sh
source "$(dirname "$0")/common.sh"

START_TIMEOUT_S="${MPS_START_TIMEOUT_S:-30}"
command -v nvidia-cuda-mps-control >/dev/null ||
    die "nvidia-cuda-mps-control not found (it ships with the NVIDIA driver utilities)"

gpus="$(list_gpus)"
[ -n "$gpus" ] || die "nvidia-smi lists no GPU"
mkdir -p "$MPS_DIR" "$MPS_LOG_DIR"
if daemon_answers "$MPS_DIR"; then
    echo "mps: a daemon already answers at $MPS_DIR; using it"
    exit 0
fi
others="$(control_daemons | tr '\n' ' ')"
if [ -n "$others" ]; then
    die "another MPS control daemon runs (pid ${others% }) but not at $MPS_DIR; not starting a" \
        "second one: set PAGEFLEET_MPS_DIR to its pipe directory (the ECS GPU AMI's" \
        "nvidia-mps.service uses /run/mps-ecs)"
fi
# A daemon that died leaves its pipes behind; clients would find `control` and hang on it.
rm -f "$MPS_DIR"/*
CUDA_MPS_PIPE_DIRECTORY="$MPS_DIR" CUDA_MPS_LOG_DIRECTORY="$MPS_LOG_DIR" \
    nvidia-cuda-mps-control -d
deadline=$((SECONDS + START_TIMEOUT_S))
until daemon_answers "$MPS_DIR"; do
    if ((SECONDS >= deadline)); then
        tail -n 20 "$MPS_LOG_DIR/control.log" >&2 2>/dev/null || true
        die "MPS daemon did not answer within ${START_TIMEOUT_S}s; log in $MPS_LOG_DIR"
    fi
    sleep 0.5
done
while read -r index uuid; do
    echo "mps: GPU $index ($uuid) shared through the daemon at $MPS_DIR"
done <<<"$gpus"
echo "mps: daemon started, pipe $MPS_DIR, log $MPS_LOG_DIR"
