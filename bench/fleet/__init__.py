"""The fleet simulator behind ``scripts/fleet-sim``: the deployed pipeline and its scaling policy
as a discrete-event model (SimPy), replaying workloads for latency, GPU-hours and cost."""
