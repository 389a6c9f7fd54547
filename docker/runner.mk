# The runner image: lint, and build-and-push to the deployment's ECR repository. The top-level
# Makefile includes this file; `make -f docker/runner.mk lint-docker lint-shell` works on its
# own too. hadolint and shellcheck come from PyPI (the dev extra), so no system packages are
# needed for the lint; the image targets need Docker with buildx and the AWS CLI.
#
#   make runner-image   build docker/runner.Dockerfile for linux/amd64, tag it with the git
#                       revision (RUNNER_IMAGE_TAG=... to choose), push it to ECR and write the
#                       tag to terraform/runner-image.auto.tfvars.json, which `make deploy` reads
#   make vllm-image     build the vLLM sidecar image (docker/vllm.Dockerfile: VLLM_IMAGE with
#                       surya's OCR weights baked in) and push it to ECR, so instances pull it
#                       from ECR instead of Docker Hub and download no weights; writes
#                       terraform/vllm-image.auto.tfvars.json (VLLM_WEIGHTS_TAG=... names a
#                       rebuild with the weights' newer `main`)
#
# Both need the repositories in the Terraform state first: `make image-repositories` (or a
# deploy); both take TF_BACKEND_CONFIG like deploy when the state is in S3.

VENV ?= .venv
# The runner's shell scripts (scripts/gpu-check is Python).
RUNNER_SHELL_SCRIPTS = $(wildcard mps/*.sh docker/*.sh) scripts/gpu-smoke
RUNNER_IMAGE_TAG ?=
# The default of var.vllm_image in terraform/variables.tf (tests/test_terraform.py keeps them equal).
VLLM_IMAGE ?= vllm/vllm-openai:v0.20.1
VLLM_WEIGHTS_TAG ?= surya-ocr-2

.PHONY: lint-docker lint-shell runner-image vllm-image

# $(STAMP) is the top-level Makefile's "venv installed" marker; empty when run on its own.
lint-docker: $(STAMP)
	$(VENV)/bin/hadolint --config docker/.hadolint.yaml docker/runner.Dockerfile docker/vllm.Dockerfile

lint-shell: $(STAMP)
	$(VENV)/bin/shellcheck -x $(RUNNER_SHELL_SCRIPTS)

# terraform-init comes from terraform/terraform.mk (through the top-level Makefile).
runner-image: terraform-init
	TF_DIR=$(TF_DIR) TF=$(TF) docker/push_image.sh runner $(RUNNER_IMAGE_TAG)

vllm-image: terraform-init
	TF_DIR=$(TF_DIR) TF=$(TF) WEIGHTS_TAG=$(VLLM_WEIGHTS_TAG) docker/push_image.sh vllm $(VLLM_IMAGE)

# --- the runner image's Python environment, outside Docker (no Docker engine here) ---
#
#   make marker-venv      docker/runner-env.sh (the image's own pip step) into $(MARKER_VENV), a
#                         side venv of several GB (torch), then the test tools on top
#   make runner-lock      the same from scratch, ignoring docker/runner.lock, and rewrite that
#                         lock from the result (after changing requirements.lock or marker's pin)
#   make marker-contract  tests/test_marker_contract.py (the real marker-pdf, the layout and
#                         OCR-error servers surya spawns on random-initialised weights, a stub
#                         VLM), tests/test_marker.py and tests/test_gpu_smoke.py there; output,
#                         versions and timings under $(MARKER_RESULTS), which is committed (the
#                         install alone takes longer than `make test` may, the contract test
#                         about ten minutes on 2 busy cores)
#   make marker-chunking  tests/test_marker_chunking.py there: a generated document converted
#                         by the real marker whole and in chunks of 1, 3 and 16 pages gives
#                         the same Markdown; output under $(MARKER_CHUNKING_RESULTS), committed
PYTHON ?= python3
MARKER_VENV ?= .venv-marker
MARKER_RESULTS ?= bench/results/$(shell date +%F)-marker-contract
MARKER_PYTEST = $(MARKER_VENV)/bin/python -m pytest --noconftest -p no:cacheprovider -v -s

MARKER_CHUNKING_RESULTS ?= bench/results/$(shell date +%F)-marker-chunks

.PHONY: marker-venv runner-lock marker-contract marker-chunking vllm-user-replay

# The real vLLM of VLLM_IMAGE imported as the sidecar's uid (no passwd entry) and environment:
# docker/replay-sidecar-user.sh. As root; the venv (vLLM, CUDA torch: several GB) is built with
# a system Python, whose interpreter another uid may execute.
VLLM_VENV ?= .venv-vllm
VLLM_REPLAY_PYTHON ?= /usr/bin/python3
VLLM_VERSION = $(patsubst v%,%,$(lastword $(subst :, ,$(VLLM_IMAGE))))

vllm-user-replay:
	test -x $(VLLM_VENV)/bin/vllm || { $(VLLM_REPLAY_PYTHON) -m venv $(VLLM_VENV) && \
		$(VLLM_VENV)/bin/pip install -q vllm==$(VLLM_VERSION); }
	docker/replay-sidecar-user.sh $(VLLM_VENV)

marker-venv: $(MARKER_VENV)/.installed-stamp

$(MARKER_VENV)/.installed-stamp: pyproject.toml requirements.lock docker/runner-env.sh $(wildcard docker/runner.lock)
	rm -rf $(MARKER_VENV)
	$(PYTHON) -m venv $(MARKER_VENV)
	$(MARKER_VENV)/bin/python -m pip install -q pip==26.3
	start=$$(date +%s) && docker/runner-env.sh $(MARKER_VENV) -q && \
		echo "runner-env.sh: $$(( $$(date +%s) - start )) s, $$(du -sh $(MARKER_VENV) | cut -f1)" \
		| tee $(MARKER_VENV)/install-time.txt
	$(MARKER_VENV)/bin/python -m pip freeze --exclude-editable | grep -v '^pagefleet' \
		>$(MARKER_VENV)/image-freeze.txt
	grep -v '^pillow==' requirements.lock >$(MARKER_VENV)/test-constraints.txt
	$(MARKER_VENV)/bin/python -m pip install -q -c $(MARKER_VENV)/test-constraints.txt \
		pytest pytest-timeout pytest-asyncio fpdf2
	touch $@

runner-lock:
	mv docker/runner.lock docker/runner.lock.old
	$(MAKE) marker-venv || { mv docker/runner.lock.old docker/runner.lock; exit 1; }
	head -n 3 docker/runner.lock.old >docker/runner.lock
	cat $(MARKER_VENV)/image-freeze.txt >>docker/runner.lock
	rm docker/runner.lock.old

marker-contract: marker-venv
	mkdir -p $(MARKER_RESULTS)
	cp $(MARKER_VENV)/install-time.txt $(MARKER_VENV)/image-freeze.txt $(MARKER_RESULTS)/
	$(MARKER_PYTEST) tests/test_marker.py >$(MARKER_RESULTS)/test_marker.txt 2>&1; \
		status=$$?; cat $(MARKER_RESULTS)/test_marker.txt; \
		$(MARKER_PYTEST) tests/test_marker_contract.py >$(MARKER_RESULTS)/contract.txt 2>&1 \
		|| status=1; cat $(MARKER_RESULTS)/contract.txt; \
		$(MARKER_PYTEST) tests/test_gpu_smoke.py >$(MARKER_RESULTS)/gpu_smoke.txt 2>&1 \
		|| status=1; cat $(MARKER_RESULTS)/gpu_smoke.txt; exit $$status

marker-chunking: marker-venv
	mkdir -p $(MARKER_CHUNKING_RESULTS)
	start=$$(date +%s); \
		$(MARKER_PYTEST) --durations=0 --basetemp=$(MARKER_CHUNKING_RESULTS)/tmp \
		tests/test_marker_chunking.py >$(MARKER_CHUNKING_RESULTS)/chunking.txt 2>&1; \
		status=$$?; echo "make marker-chunking: $$(( $$(date +%s) - start )) s" \
		>>$(MARKER_CHUNKING_RESULTS)/chunking.txt; \
		find $(MARKER_CHUNKING_RESULTS)/tmp -name '*.md' -exec cp {} $(MARKER_CHUNKING_RESULTS)/ \; ; \
		rm -rf $(MARKER_CHUNKING_RESULTS)/tmp; \
		cat $(MARKER_CHUNKING_RESULTS)/chunking.txt; exit $$status

# --- scripts/gpu-smoke's wheels, for a GPU machine without network (mps/README.md) ---
#
#   make gpu-smoke-wheels  the exact wheels (pins from requirements.lock) of each distribution in
#                          mps/gpu-smoke-wheels.txt, for CPython 3.12 on x86_64 Linux, into
#                          $(GPU_SMOKE_WHEELS), which the device run carries (about 3 MiB)
GPU_SMOKE_WHEELS ?= build/gpu-smoke-wheels
# pip matches each --platform tag as given: pydantic_core's wheel is manylinux_2_17, psutil's
# manylinux_2_28 (among older tags); neither tag implies the other.

.PHONY: gpu-smoke-wheels

gpu-smoke-wheels: $(STAMP)
	rm -rf $(GPU_SMOKE_WHEELS)
	mkdir -p $(GPU_SMOKE_WHEELS)
	grep -v '^#' mps/gpu-smoke-wheels.txt | while read -r name; do \
		grep "^$$name==" requirements.lock || { echo "$$name: no pin in requirements.lock" >&2; exit 1; }; \
	done >$(GPU_SMOKE_WHEELS)/pins.txt
	$(VENV)/bin/python -m pip download -q --no-deps --only-binary=:all: -d $(GPU_SMOKE_WHEELS) \
		--python-version 3.12 --implementation cp --abi cp312 \
		--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
		-r $(GPU_SMOKE_WHEELS)/pins.txt
	ls -l $(GPU_SMOKE_WHEELS)/*.whl
	du -sh $(GPU_SMOKE_WHEELS)
