# Lint for the runner image and the runner's shell scripts. The top-level Makefile includes
# this file; `make -f docker/runner.mk lint-docker lint-shell` works on its own too.
# hadolint and shellcheck come from PyPI (the dev extra), so no system packages are needed.

VENV ?= .venv
# The runner's shell scripts (scripts/gpu-check is Python).
RUNNER_SHELL_SCRIPTS = $(wildcard mps/*.sh docker/*.sh)

.PHONY: lint-docker lint-shell

# $(STAMP) is the top-level Makefile's "venv installed" marker; empty when run on its own.
lint-docker: $(STAMP)
	$(VENV)/bin/hadolint --config docker/.hadolint.yaml docker/runner.Dockerfile

lint-shell: $(STAMP)
	$(VENV)/bin/shellcheck -x $(RUNNER_SHELL_SCRIPTS)
