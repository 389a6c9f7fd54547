"""The core of pagefleet: what the handlers, the runner, the embedded stack and the command share.

Plain functions and pydantic models that know nothing about Lambda events or the poll loop. In
the order one PDF meets them: ``keys`` (the bucket's layout), ``events`` (S3 notifications),
``pdf`` and ``costs`` (checks and page costs; ``hidden_layer``, a scan's OCR layer not worth
trusting), ``planning`` and ``splitting`` (page ranges, chunk
PDFs, the manifest), ``conversions`` (how often a chunk was converted), ``chunk_results`` (a
chunk's converted or failed result), ``completion``, ``assembly`` and ``layout`` (the document in
page order; ``marker_assembly`` and ``marker_headings`` for marker's chunks), ``outbox`` (the
final writes), ``job_events`` (the job's end, announced). Around them: ``settings``, ``models``,
``errors``, ``stack``, ``scaling``, the S3/SQS access in ``aws``, ``storage`` and ``queues``, the
operator side in ``submission``, ``status`` and ``redrive``, ``preflight`` (what a deploy
needs of an AWS account), and ``process_exit`` (a process's end without the interpreter's
teardown).
"""

__all__ = [
    "assembly",
    "aws",
    "chunk_results",
    "completion",
    "conversions",
    "costs",
    "errors",
    "events",
    "gc_pause",
    "hidden_layer",
    "job_events",
    "keys",
    "layout",
    "marker_assembly",
    "marker_headings",
    "models",
    "outbox",
    "pdf",
    "planning",
    "preflight",
    "process_exit",
    "queues",
    "redrive",
    "scaling",
    "settings",
    "splitting",
    "stack",
    "status",
    "storage",
    "submission",
]
