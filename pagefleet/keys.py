"""The bucket's key layout, in one place.

inbox/<rel>.pdf                          what users upload (.pdf in any letter case)
outbox/<rel>.md, <rel>.assets/, <rel>.json   what they get back
jobs/<job_id>/manifest.json              the split plan
jobs/<job_id>/chunks/<index>.pdf         one page range of the source
jobs/<job_id>/results/<index>.result.json    a converted (or failed) chunk
jobs/<job_id>/assets/<name>              images a chunk's Markdown links to
"""

from __future__ import annotations

from urllib.parse import unquote_plus

INBOX = "inbox/"
OUTBOX = "outbox/"
JOBS = "jobs/"
RESULT_SUFFIX = ".result.json"
PDF_SUFFIXES = tuple(
    "." + a + b + c for a in "pP" for b in "dD" for c in "fF"
)  # S3 suffix filters are case-sensitive: one rule per letter case.


# Markdown links to images carry this prefix until assembly swaps it for the outbox assets
# folder, which a converter cannot know (it sees a chunk, not the document's name).
ASSET_LINK_PREFIX = "pagefleet-asset:"


def decode_event_key(raw: str) -> str:
    """S3 event keys are form-URL-encoded (moto also encodes '/' as '%2F')."""
    return unquote_plus(raw)


def is_inbox_pdf(key: str) -> bool:
    return key.startswith(INBOX) and key.lower().endswith(".pdf") and len(key) > len(INBOX) + 4


def rel_of(inbox_key: str) -> str:
    """``inbox/a/b.PDF`` -> ``a/b``: the relative name shared by input and outputs."""
    return inbox_key[len(INBOX) : -len(".pdf")]


def outbox_markdown(rel: str) -> str:
    return f"{OUTBOX}{rel}.md"


def outbox_assets(rel: str) -> str:
    return f"{OUTBOX}{rel}.assets/"


def outbox_record(rel: str) -> str:
    return f"{OUTBOX}{rel}.json"


def asset_dir_name(rel: str) -> str:
    """The assets folder as the Markdown links to it, relative to the .md file."""
    return rel.rsplit("/", 1)[-1] + ".assets"


def job_prefix(job_id: str) -> str:
    return f"{JOBS}{job_id}/"


def manifest(job_id: str) -> str:
    return f"{JOBS}{job_id}/manifest.json"


def chunk_pdf(job_id: str, index: int) -> str:
    return f"{JOBS}{job_id}/chunks/{index:05d}.pdf"


def results_prefix(job_id: str) -> str:
    return f"{JOBS}{job_id}/results/"


def chunk_result(job_id: str, index: int) -> str:
    return f"{results_prefix(job_id)}{index:05d}{RESULT_SUFFIX}"


def job_assets(job_id: str) -> str:
    return f"{JOBS}{job_id}/assets/"


def job_of_result(key: str) -> tuple[str, int] | None:
    """``jobs/<id>/results/00003.result.json`` -> (id, 3); None for any other key."""
    parts = key.split("/")
    if len(parts) != 4 or parts[0] + "/" != JOBS or parts[2] != "results":
        return None
    if not parts[3].endswith(RESULT_SUFFIX):
        return None
    stem = parts[3][: -len(RESULT_SUFFIX)]
    return (parts[1], int(stem)) if stem.isdigit() else None
