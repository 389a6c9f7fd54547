"""The runner: ``python -m runner`` on a GPU instance (or a CPU), the ECS task's container.

``supervisor`` starts W ``worker`` processes per GPU (sized by ``worker_plan``); each worker
long-polls the chunks queue and converts in a ``conversion`` child with one of ``converters``;
``gpu``, ``mps`` and ``protection`` hold what the host and ECS need; ``health``, ``telemetry``
and ``cli`` are how it reports; ``smoke`` is the GPU smoke test.
"""

__all__ = [
    "cli",
    "conversion",
    "converters",
    "gpu",
    "health",
    "mps",
    "protection",
    "smoke",
    "supervisor",
    "telemetry",
    "worker",
    "worker_plan",
    "worker_state",
]
