# pagefleet: `make run` converts PDFs on an embedded S3 + SQS stack; `make test` tests it all.
# Both create the virtual environment and install the pinned dependencies themselves.

PYTHON ?= python3
VENV ?= .venv
PY = $(VENV)/bin/python
STAMP = $(VENV)/.installed-stamp
IN ?=
OUT ?= out
WORKERS ?=

.PHONY: all venv run up test lint typecheck clean

all: test

# Reinstalled whenever the pins change; requirements.lock is `pip freeze` of a resolved install.
$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "pagefleet needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check --upgrade pip
	$(VENV)/bin/pip install -q --disable-pip-version-check -c requirements.lock -e '.[dev]'
	@touch $@

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/pagefleet run $(IN) --out $(OUT) $(if $(WORKERS),--workers $(WORKERS))

up: $(STAMP)
	$(VENV)/bin/pagefleet up $(if $(WORKERS),--workers $(WORKERS))

# One test file per process (a file's module fixtures, such as the corpus run or the moto apply,
# are made once). Two processes more than cores: the moto apply, the image's pip replay and the
# tests that wait out a lease or a drain spend much of their time waiting, and a core would sit
# idle beside them (a fresh clone on 2 cores, 2026-12-02: 316 s with 3, 280 s with 4).
TEST_PROCESSES ?= $(shell echo $$(( $$(nproc) + 2 )))

test: $(STAMP)
	$(VENV)/bin/pytest -n $(TEST_PROCESSES) --dist loadfile

# The core and the handlers are typed under mypy's strict flags (pyproject.toml says which).
MYPY_PATHS = pagefleet handlers runner embedded rehearsal cli bench scripts/env-example scripts/gpu-check \
	scripts/drill

lint: $(STAMP) typecheck
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MAKE) lint-docker lint-shell

typecheck: $(STAMP)
	$(VENV)/bin/mypy --scripts-are-modules $(MYPY_PATHS)

clean:
	rm -rf $(VENV) build out .pytest_cache .ruff_cache .mypy_cache

-include terraform/terraform.mk
-include docker/runner.mk
-include bench/quality/quality.mk
-include bench/fleet/fleet.mk
-include bench/marker/marker.mk
