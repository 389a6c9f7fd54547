# The quality report's peers in a side venv: `make quality-peers`, then `scripts/quality`.
# The top-level Makefile includes this file; `make -f bench/quality/quality.mk quality-peers`
# works on its own too. The peers are measured, never imported by pagefleet: pymupdf4llm is AGPL,
# so it lives only here, in .venv-peers (ignored by git, like every .venv-*).
#
#   make quality-peers   create .venv-peers with pdf-oxide, markitdown and pymupdf4llm (with
#                        pymupdf's layout model); scripts/quality then scores them beside the
#                        text-layer converter and pdftext in the same pass
#   make quality         scripts/quality on ../shared/corpus/real (QUALITY_OUT=FILE to keep it)
#   make quality-marker  scripts/quality --converter marker on ../shared/corpus/real: marker in
#                        chunks against marker whole, by the marker venv's Python (make
#                        marker-venv: not a prerequisite here, so that a venv kept elsewhere,
#                        MARKER_VENV=DIR, is used as it is); report and run time in
#                        $(QUALITY_MARKER_RESULTS)/report.md, committed (several minutes);
#                        QUALITY_MARKER_ARGS="--keep DIR" to read the differences

PYTHON ?= python3
PEERS_VENV ?= .venv-peers
PEERS_STAMP = $(PEERS_VENV)/.installed-stamp
QUALITY_OUT ?=
# pymupdf4llm 2.x is an empty package that needs pymupdf 2.x, whose layout model is not
# published for it: 1.28.2 is the last release with the code and a matching pymupdf-layout.
QUALITY_PEERS = pdf-oxide==0.3.78 markitdown[pdf]==0.1.9 pymupdf4llm==1.28.2 pymupdf==1.28.2 \
	pymupdf-layout==1.28.2

.PHONY: quality-peers quality quality-marker

$(PEERS_STAMP): bench/quality/quality.mk
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install -q --disable-pip-version-check --upgrade pip
	$(PEERS_VENV)/bin/pip install -q --disable-pip-version-check $(QUALITY_PEERS)
	@touch $@

quality-peers: $(PEERS_STAMP)

# $(STAMP) is the top-level Makefile's "venv installed" marker; empty when run on its own.
quality: $(STAMP)
	scripts/quality $(if $(QUALITY_OUT),--out $(QUALITY_OUT))

MARKER_VENV ?= .venv-marker
QUALITY_MARKER_RESULTS ?= bench/results/$(shell date +%F)-marker-chunks/quality
QUALITY_MARKER_ARGS ?=

quality-marker:
	mkdir -p $(QUALITY_MARKER_RESULTS)
	start=$$(date +%s); \
		MARKER_PYTHON=$(MARKER_VENV)/bin/python scripts/quality --converter marker $(QUALITY_MARKER_ARGS) \
		--out $(QUALITY_MARKER_RESULTS)/report.md; status=$$?; \
		printf '\n`make quality-marker` (scripts/quality --converter marker, %s): %s s\n' \
		"$$(date -u +%FT%TZ)" "$$(( $$(date +%s) - start ))" >>$(QUALITY_MARKER_RESULTS)/report.md; \
		exit $$status
