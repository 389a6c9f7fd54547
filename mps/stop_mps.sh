#!/usr/bin/env bash
# Stop every MPS control daemon start_mps.sh started. `quit` lets running clients finish first.
set -euo pipefail
# shellcheck source=mps/common.sh
source "$(dirname "$0")/common.sh"

STOP_TIMEOUT_S="${MPS_STOP_TIMEOUT_S:-30}"
status=0
for pipe in "$MPS_DIR"/*/pipe; do
    [ -d "$pipe" ] || continue
    daemon_answers "$pipe" || continue
    echo quit | CUDA_MPS_PIPE_DIRECTORY="$pipe" nvidia-cuda-mps-control
    deadline=$((SECONDS + STOP_TIMEOUT_S))
    while daemon_answers "$pipe"; do
        if ((SECONDS >= deadline)); then
            echo "mps: daemon at $pipe still answers after ${STOP_TIMEOUT_S}s" >&2
            status=1
            break
        fi
        sleep 0.5
    done
    echo "mps: stopped daemon at $pipe"
done
exit "$status"
