"""The deployment rehearsed offline: Terraform's root module applied to a moto server, then the
handlers and the runner run from what the apply left (each function's environment, handler,
timeout and event source mapping, the runner task's environment, each role's policy), and
their output compared with the embedded stack's for the same uploads.

Imports point down only: this package uses :mod:`embedded` and :mod:`pagefleet`; nothing
there imports it.
"""
