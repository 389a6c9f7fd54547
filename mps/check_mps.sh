#!/usr/bin/env bash
# Health check: exit 0 when the MPS daemon at $PAGEFLEET_MPS_DIR answers, 1 otherwise.
set -euo pipefail
# shellcheck source=mps/common.sh
source "$(dirname "$0")/common.sh"

if daemon_answers "$MPS_DIR"; then
    servers="$(echo get_server_list | CUDA_MPS_PIPE_DIRECTORY="$MPS_DIR" nvidia-cuda-mps-control)"
    echo "mps: daemon at $MPS_DIR ok, servers: ${servers:-none yet}"
    exit 0
fi
echo "mps: no answering daemon at $MPS_DIR" >&2
exit 1
