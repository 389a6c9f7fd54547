#!/usr/bin/env bash
# Health check: exit 0 when every GPU's MPS daemon answers, 1 (naming the GPUs) otherwise.
set -euo pipefail
# shellcheck source=mps/common.sh
source "$(dirname "$0")/common.sh"

gpus="$(list_gpus)"
failed=0
while read -r index uuid; do
    pipe="$MPS_DIR/$uuid/pipe"
    if daemon_answers "$pipe"; then
        servers="$(echo get_server_list | CUDA_MPS_PIPE_DIRECTORY="$pipe" nvidia-cuda-mps-control)"
        echo "mps: GPU $index ($uuid) ok, servers: ${servers:-none yet}"
    else
        echo "mps: GPU $index ($uuid) has no answering daemon at $pipe" >&2
        failed=1
    fi
done <<<"$gpus"
exit "$failed"
