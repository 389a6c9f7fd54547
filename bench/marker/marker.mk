# The marker CPU bench's committed results. The top-level Makefile includes this file after
# docker/runner.mk, whose MARKER_VENV (the runner image's environment) runs it.
#
#   make marker-bench   scripts/bench --converter marker: CPU seconds per page and memory of
#                       marker's conversion processes, balanced and fast, text pages and scans,
#                       W = 1 and 2, against instant stub model servers, into
#                       $(MARKER_BENCH_RESULTS) (about 10 CPU-minutes; one marker process at a
#                       time but in the W = 2 rounds, about 1.5 GB each)

MARKER_BENCH_RESULTS ?= bench/results/$(shell date +%F)-marker-cpu
MARKER_BENCH_INPUTS ?= $(wildcard ../shared/corpus/real/unstructured__irs-irm-400p.pdf \
	../shared/corpus/real/pdfminer__175-scanned-service-bulletin.pdf)

.PHONY: marker-bench

marker-bench: marker-venv
	MARKER_PYTHON=$(MARKER_VENV)/bin/python scripts/bench --converter marker --workers 1,2 \
		--repeat 2 --out $(MARKER_BENCH_RESULTS) $(MARKER_BENCH_INPUTS)
