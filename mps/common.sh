# shellcheck shell=bash
# Shared by start_mps.sh, stop_mps.sh and check_mps.sh: where each GPU's MPS daemon lives.
# One daemon per GPU, keyed by GPU UUID: UUIDs, unlike indices, are the same on the host and
# inside a container that sees only some GPUs (runner/worker_plan.py looks for <uuid>/pipe).

# shellcheck disable=SC2034  # used by the scripts that source this file
MPS_DIR="${PAGEFLEET_MPS_DIR:-/tmp/nvidia-mps}"

die() {
    echo "mps: $*" >&2
    exit 1
}

# Prints "index uuid" per GPU.
list_gpus() {
    command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver on this machine"
    nvidia-smi --query-gpu=index,uuid --format=csv,noheader | tr -d ',' ||
        die "nvidia-smi could not list the GPUs"
}

# True when the control daemon behind pipe directory $1 answers a command.
daemon_answers() {
    echo get_server_list |
        CUDA_MPS_PIPE_DIRECTORY="$1" timeout 5 nvidia-cuda-mps-control >/dev/null 2>&1
}
