"""The benchmark harness behind ``scripts/bench`` (pages/s, stage times, scaling)."""
