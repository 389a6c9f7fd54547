#!/usr/bin/env bash
# Start one NVIDIA MPS control daemon per GPU. Idempotent: a GPU whose daemon answers is left alone.
# Run it as the UID the CUDA clients (runner workers, vLLM sidecar) run as; see README.md.
set -euo pipefail
# shellcheck source=mps/common.sh
source "$(dirname "$0")/common.sh"

START_TIMEOUT_S="${MPS_START_TIMEOUT_S:-30}"
command -v nvidia-cuda-mps-control >/dev/null ||
    die "nvidia-cuda-mps-control not found (it ships with the NVIDIA driver utilities)"

gpus="$(list_gpus)"
[ -n "$gpus" ] || die "nvidia-smi lists no GPU"
while read -r index uuid; do
    pipe="$MPS_DIR/$uuid/pipe"
    log="$MPS_DIR/$uuid/log"
    mkdir -p "$pipe" "$log"
    if daemon_answers "$pipe"; then
        echo "mps: GPU $index ($uuid) already has a daemon at $pipe"
        continue
    fi
    # A daemon that died leaves its pipes behind; clients would find `control` and hang on it.
    rm -f "$pipe"/*
    CUDA_VISIBLE_DEVICES="$uuid" CUDA_MPS_PIPE_DIRECTORY="$pipe" CUDA_MPS_LOG_DIRECTORY="$log" \
        nvidia-cuda-mps-control -d
    deadline=$((SECONDS + START_TIMEOUT_S))
    until daemon_answers "$pipe"; do
        if ((SECONDS >= deadline)); then
            tail -n 20 "$log/control.log" >&2 2>/dev/null || true
            die "GPU $index ($uuid): MPS daemon did not answer within ${START_TIMEOUT_S}s; log in $log"
        fi
        sleep 0.5
    done
    echo "mps: GPU $index ($uuid) daemon started, pipe $pipe, log $log"
done <<<"$gpus"
