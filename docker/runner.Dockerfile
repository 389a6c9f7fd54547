# The pagefleet runner: `python -m runner` (the supervisor) and its workers, marker-pdf 2.x with
# the layout and OCR-error model weights and the font baked in. surya's OCR VLM is not in this
# image: a vLLM sidecar in the same ECS task serves it (PAGEFLEET_MARKER_INFERENCE_URL).
#
#   docker build -f docker/runner.Dockerfile -t pagefleet-runner .
#
# The build needs network (PyPI, Hugging Face, models.datalab.to); the running task needs none
# but S3, SQS and the sidecar.

# CUDA runtime for the driver-facing libraries; torch's wheels bring their own CUDA user space.
# docker/runner.lock pins torch 2.14.1, PyPI's default build of which is for CUDA 13.0: the
# instance's NVIDIA driver must be 580 or newer (not yet checked on the ECS GPU AMI: no GPU here).
FROM nvidia/cuda:12.8.1-runtime-ubuntu22.04

ARG DEBIAN_FRONTEND=noninteractive
# tini is PID 1: it forwards ECS's SIGTERM to the supervisor and reaps conversion processes
# orphaned by a killed worker.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3.11 python3.11-venv tini \
    && rm -rf /var/lib/apt/lists/*

# Same UID as the MPS daemon on the host and the vLLM sidecar (mps/README.md, "Same UID").
RUN groupadd --gid 1000 runner && useradd --uid 1000 --gid 1000 --create-home runner

ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HOME=/opt/models/hf \
    MODEL_CACHE_DIR=/opt/models/datalab \
    FONT_PATH=/opt/models/fonts/GoNotoCurrent-Regular.ttf
RUN python3.11 -m venv /opt/venv

WORKDIR /opt/pagefleet
COPY pyproject.toml requirements.lock README.md ./
COPY docker/runner-env.sh docker/runner.lock ./docker/
COPY pagefleet ./pagefleet
COPY handlers ./handlers
COPY runner ./runner
# The image's Python environment, exactly as `make marker-venv` builds it for the contract test
# and tests/test_runner_image.py replays it (dry run) in CI: requirements.lock without pillow
# (marker-pdf 2.0.0 needs pillow<11) and docker/runner.lock as constraints, '.[runner,marker]',
# then one cv2 (opencv-python-headless, which needs neither libGL nor glib).
RUN python3.11 -m pip install pip==26.3 \
    && docker/runner-env.sh /opt/venv

# Bake the weights the runner's own model servers load (rf-detr layout and its order head, the
# OCR-error model) and marker's font, so a task never downloads at start-up.
RUN python -c "\
from surya.settings import settings; \
from surya.common.rfdetr_torch import resolve_model_dir; \
from surya.ocr_error.loader import _resolve_checkpoint; \
from marker.util import download_font; \
resolve_model_dir(settings.FAST_LAYOUT_MODEL_CHECKPOINT); \
resolve_model_dir(settings.FAST_ORDER_MODEL_CHECKPOINT); \
_resolve_checkpoint(settings.OCR_ERROR_MODEL_CHECKPOINT); \
download_font()" \
    && test -s "$FONT_PATH" \
    && chmod -R a+rX /opt/models

ENV HF_HUB_OFFLINE=1 \
    PAGEFLEET_CONVERTER=marker
USER 1000:1000
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["python", "-m", "runner", "--check"]
ENTRYPOINT ["tini", "--", "python", "-m", "runner"]
