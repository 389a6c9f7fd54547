#!/usr/bin/env bash
# Stop the MPS control daemon at $PAGEFLEET_MPS_DIR. `quit` lets running clients finish first.
# Daemons elsewhere (the AMI's) are not this script's to stop.
set -euo pipefail
# shellcheck source=mps/common.sh
source "$(dirname "$0")/common.sh"

STOP_TIMEOUT_S="${MPS_STOP_TIMEOUT_S:-30}"
if ! daemon_answers "$MPS_DIR"; then
    echo "mps: no daemon answers at $MPS_DIR"
    exit 0
fi
echo quit | CUDA_MPS_PIPE_DIRECTORY="$MPS_DIR" nvidia-cuda-mps-control
deadline=$((SECONDS + STOP_TIMEOUT_S))
while daemon_answers "$MPS_DIR"; do
    if ((SECONDS >= deadline)); then
        die "daemon at $MPS_DIR still answers after ${STOP_TIMEOUT_S}s"
    fi
    sleep 0.5
done
echo "mps: stopped daemon at $MPS_DIR"
