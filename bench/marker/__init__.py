"""The marker CPU bench: what a marker 2.x page costs the runner's own CPUs (``scripts/bench
--converter marker``), with its model servers replaced by instant stubs.

``cli`` (the command), ``documents`` (the chunks: generated text pages, their scans, a real
PDF's first pages), ``stubs`` (the contract test's stub servers answering with page-sized
text), ``measure`` (conversion processes side by side, their CPU and memory), ``models`` (the
results), ``sizing`` (from CPU per page to the instance each GPU needs) and ``report``.
"""
