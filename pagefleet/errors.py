"""Stable error codes: they appear in job records and users script against them."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    # The input itself (rule 4): decided by the splitter, the job fails at once.
    NOT_PDF = "not_pdf"
    EMPTY = "empty"
    ENCRYPTED = "encrypted"
    NO_PAGES = "no_pages"
    TOO_MANY_PAGES = "too_many_pages"
    TOO_LARGE = "too_large"
    MALFORMED = "malformed"
    # The upload was deleted or replaced before it could be split.
    INPUT_GONE = "input_gone"
    # Its key would make an outbox key S3 refuses or a path a tool mis-maps (rule 4).
    BAD_KEY = "bad_key"
    # A chunk's conversion: recorded per chunk, the job ends partial or failed.
    TIMEOUT = "timeout"
    MEMORY = "memory"
    CONVERT_ERROR = "convert_error"
    # The converter's model servers failed on some of the chunk's pages (marker left them
    # without their text): retried like any failed conversion, never recorded done.
    INFERENCE_FAILED = "inference_failed"
    # A chunk, or an upload, whose message reached a dead-letter queue.
    DEAD_LETTER = "dead_letter"
    # The whole job.
    ALL_CHUNKS_FAILED = "all_chunks_failed"


class PagefleetError(Exception):
    """An error with a stable code and a message meant for a person."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
