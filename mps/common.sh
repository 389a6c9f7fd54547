# shellcheck shell=bash
# Shared by start_mps.sh, stop_mps.sh and check_mps.sh: where the instance's MPS daemon lives.
# One control daemon per instance, for every GPU, its pipe directory at PAGEFLEET_MPS_DIR (the
# runner's setting of the same name, runner/worker_plan.py): the ECS GPU AMI's own
# nvidia-mps.service where the AMI has one (user data then makes PAGEFLEET_MPS_DIR that
# daemon's directory), else the daemon start_mps.sh starts. Never two: a second control daemon
# on the same GPUs would make clients of the first and the second take turns or fail.

# shellcheck disable=SC2034  # used by the scripts that source this file
# Off CUDA's default pipe directory (/tmp/nvidia-mps), where any CUDA client without
# CUDA_MPS_PIPE_DIRECTORY would find the daemon: "MPS off" stays off.
MPS_DIR="${PAGEFLEET_MPS_DIR:-/run/pagefleet-mps}"
# The daemon's logs: beside the pipe directory, which is mounted into the containers.
# shellcheck disable=SC2034
MPS_LOG_DIR="${PAGEFLEET_MPS_LOG_DIR:-${MPS_DIR%/}.log}"

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

# Pids of every MPS control daemon running on this machine, whatever its pipe directory.
control_daemons() {
    pgrep -f 'nvidia-cuda-mps-control -d' || true
}
