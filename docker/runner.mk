# The runner image: lint, and build-and-push to the deployment's ECR repository. The top-level
# Makefile includes this file; `make -f docker/runner.mk lint-docker lint-shell` works on its
# own too. hadolint and shellcheck come from PyPI (the dev extra), so no system packages are
# needed for the lint; the image targets need Docker with buildx and the AWS CLI.
#
#   make runner-image   build docker/runner.Dockerfile for linux/amd64, tag it with the git
#                       revision (RUNNER_IMAGE_TAG=... to choose), push it to ECR and write the
#                       tag to terraform/runner-image.auto.tfvars.json, which `make deploy` reads
#   make vllm-image     copy the vLLM sidecar image (VLLM_IMAGE) into ECR, so instances pull it
#                       from ECR instead of Docker Hub through NAT; writes
#                       terraform/vllm-image.auto.tfvars.json
#
# Both need the repositories in the Terraform state first: `make image-repositories` (or a
# deploy); both take TF_BACKEND_CONFIG like deploy when the state is in S3.

VENV ?= .venv
# The runner's shell scripts (scripts/gpu-check is Python).
RUNNER_SHELL_SCRIPTS = $(wildcard mps/*.sh docker/*.sh)
RUNNER_IMAGE_TAG ?=
# The default of var.vllm_image in terraform/variables.tf (tests/test_terraform.py keeps them equal).
VLLM_IMAGE ?= vllm/vllm-openai:v0.20.1

.PHONY: lint-docker lint-shell runner-image vllm-image

# $(STAMP) is the top-level Makefile's "venv installed" marker; empty when run on its own.
lint-docker: $(STAMP)
	$(VENV)/bin/hadolint --config docker/.hadolint.yaml docker/runner.Dockerfile

lint-shell: $(STAMP)
	$(VENV)/bin/shellcheck -x $(RUNNER_SHELL_SCRIPTS)

# terraform-init comes from terraform/terraform.mk (through the top-level Makefile).
runner-image: terraform-init
	TF_DIR=$(TF_DIR) TF=$(TF) docker/push_image.sh runner $(RUNNER_IMAGE_TAG)

vllm-image: terraform-init
	TF_DIR=$(TF_DIR) TF=$(TF) docker/push_image.sh vllm $(VLLM_IMAGE)
