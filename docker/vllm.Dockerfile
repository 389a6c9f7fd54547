# The runners' vLLM sidecar: the vLLM image surya's OCR model needs, with that model's weights in
# its Hugging Face cache, so that a new instance downloads nothing and the sidecar runs offline.
#
#   docker build -f docker/vllm.Dockerfile --build-arg VLLM_IMAGE=vllm/vllm-openai:v0.20.1 .
#
# `make vllm-image` builds it and pushes it to the deployment's ECR (docker/push_image.sh). The
# build needs Docker Hub and Hugging Face; the running sidecar needs neither.
#
# The weights of datalab-to/surya-ocr-2 are under a modified AI Pubs OpenRAIL-M licence, not
# surya's Apache 2.0 (terraform/README.md, "The weights' licence"): an image holding them is a
# copy of them, so check the licence before you push one to a registry others can pull from.

# terraform/variables.tf's default vllm_image (tests/test_vllm_image.py keeps them equal).
ARG VLLM_IMAGE=vllm/vllm-openai:v0.20.1
FROM ${VLLM_IMAGE}
ARG VLLM_IMAGE

# What the sidecar serves: terraform/modules/runners/main.tf passes `--model` this repository and
# no `--revision`, so vLLM resolves `main` in the cache; the download records the commit `main`
# was at build time under refs/main, and an image is that commit for good. A commit hash here
# would leave refs/main unwritten (the check below fails the build) and the sidecar unable to
# start offline. tests/test_vllm_image.py checks both against Terraform.
ARG SURYA_OCR_MODEL=datalab-to/surya-ocr-2
ARG SURYA_OCR_REVISION=main

# Outside the sidecar's HOME, over which the task mounts an instance folder (vllm_cache_*), so
# the mount cannot hide the weights; readable by the uid the task runs it as (1000).
ENV HF_HUB_CACHE=/opt/models/hf-hub
RUN python3 -c "import sys; from huggingface_hub import snapshot_download; print(snapshot_download(sys.argv[1], revision=sys.argv[2]))" \
        "$SURYA_OCR_MODEL" "$SURYA_OCR_REVISION" \
    && test -s "$HF_HUB_CACHE/models--${SURYA_OCR_MODEL%%/*}--${SURYA_OCR_MODEL#*/}/refs/$SURYA_OCR_REVISION" \
    && chmod -R a+rX /opt/models

LABEL org.opencontainers.image.title="pagefleet vLLM sidecar" \
      org.opencontainers.image.base.name="${VLLM_IMAGE}" \
      io.pagefleet.model="${SURYA_OCR_MODEL}" \
      io.pagefleet.model-revision="${SURYA_OCR_REVISION}" \
      io.pagefleet.model-license="modified AI Pubs OpenRAIL-M"

# Offline: vLLM and transformers read the cache and never ask the Hub (the task environment sets
# it too, from vllm_image_has_weights).
ENV HF_HUB_OFFLINE=1
