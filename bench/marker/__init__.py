"""The marker CPU bench: what a marker 2.x page costs the runner's own CPUs (``scripts/bench
--converter marker``), with its model servers replaced by instant stubs."""
