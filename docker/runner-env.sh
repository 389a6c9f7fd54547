#!/usr/bin/env bash
# The runner image's Python environment, installed into a virtual environment: what
# docker/runner.Dockerfile runs, and what `make marker-venv` and tests/test_runner_image.py
# replay, so the image's pip step is tested by the same lines that build it.
#
#   docker/runner-env.sh VENV                          install
#   docker/runner-env.sh VENV --dry-run --report F     resolve only (pip's own options pass through)
#
# Run from the repository root. Steps:
# 1. Constraints: requirements.lock (everything pagefleet itself pins, tenacity included, which
#    google-genai, a marker-pdf dependency, caps below 9.2) without pillow: marker-pdf 2.0.0 needs
#    pillow<11 and the lock's pillow is the dev tools'. docker/runner.lock, when present, pins the
#    rest of marker's tree (torch included) to the versions `make marker-contract` tested.
# 2. pip install '.[runner,marker]'.
# 3. One cv2: rapidocr-onnxruntime (the CPU converter's OCR) requires opencv-python, surya pins
#    opencv-python-headless; both write the same cv2 package, and the non-headless build needs
#    libGL and glib at import. opencv-python is removed and surya's headless build reinstalled
#    over the files the two shared; rapidocr runs on it (it needs cv2 >= 4.5.1.48 only).
set -euo pipefail

[ $# -ge 1 ] || {
    echo "usage: $0 VENV [pip install options]" >&2
    exit 2
}
venv="$1"
shift
pip=("$venv/bin/python" -m pip)
dry_run=0
for arg in "$@"; do
    [ "$arg" = "--dry-run" ] && dry_run=1
done

constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
grep -v '^pillow==' requirements.lock >"$constraints"
lock=()
if [ -f docker/runner.lock ]; then
    lock=(-c docker/runner.lock)
fi

"${pip[@]}" install "$@" -c "$constraints" "${lock[@]}" '.[runner,marker]'
[ "$dry_run" = 1 ] && exit 0

headless="$("${pip[@]}" show opencv-python-headless | sed -n 's/^Version: //p')"
[ -n "$headless" ] || {
    echo "runner-env: opencv-python-headless is not installed; surya no longer pins it?" >&2
    exit 1
}
"${pip[@]}" uninstall -y opencv-python
"${pip[@]}" install --no-deps --force-reinstall -c "$constraints" "${lock[@]}" \
    "opencv-python-headless==$headless"
"$venv/bin/python" - <<'EOF'
import importlib.metadata as md

import cv2

owners = sorted(d.metadata["Name"] for d in md.distributions()
                if any(str(f).startswith("cv2/") for f in d.files or ()))
assert owners == ["opencv-python-headless"], f"cv2 is written by {owners}"
print(f"runner-env: one cv2, {cv2.__version__} from opencv-python-headless")
EOF
