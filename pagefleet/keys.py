"""The bucket's key layout, in one place.

inbox/<rel>.pdf                          what users upload (.pdf in any letter case)
outbox/<rel>.md, <rel>.assets/, <rel>.json   what they get back
outbox/_refused/<hash>.json              the record of an input whose <rel> is refused (rule 4)
jobs/<job_id>/manifest.json              the split plan
jobs/<job_id>/chunks/<index>.pdf         one page range of the source
jobs/<job_id>/results/<index>.result.json    a converted (or failed) chunk
jobs/<job_id>/assets/<name>              images a chunk's Markdown links to
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import unquote_plus

INBOX = "inbox/"
OUTBOX = "outbox/"
JOBS = "jobs/"
RESULT_SUFFIX = ".result.json"
REFUSED = f"{OUTBOX}_refused/"
MAX_KEY_BYTES = 1024  # S3's limit, in bytes of UTF-8 (moto does not enforce it)
# Room kept for the longest asset name a converter writes (page-00001-picture-12.jpeg).
ASSET_NAME_BYTES = 64
PDF_SUFFIXES = tuple(
    "." + a + b + c for a in "pP" for b in "dD" for c in "fF"
)  # S3 suffix filters are case-sensitive: one rule per letter case.


# Markdown links to images carry this prefix until assembly swaps it for the outbox assets
# folder, which a converter cannot know (it sees a chunk, not the document's name).
ASSET_LINK_PREFIX = "pagefleet-asset:"

_INDEX = re.compile(r"[0-9]+")


def decode_event_key(raw: str) -> str:
    """S3 event keys are form-URL-encoded (moto also encodes '/' as '%2F')."""
    return unquote_plus(raw)


def is_upload(key: str) -> bool:
    """A key the S3 notification rules announce (``stack.py`` makes them of these names): every
    one gets a record, ``inbox/.pdf`` too (refused: it has no name)."""
    return key.startswith(INBOX) and key.endswith(PDF_SUFFIXES)


def is_inbox_pdf(key: str) -> bool:
    """An upload with a name of its own."""
    return is_upload(key) and len(key) > len(INBOX) + len(".pdf")


def inbox_key(rel: str, suffix: str = ".pdf") -> str:
    return f"{INBOX}{rel}{suffix}"


def rel_of(inbox_key: str) -> str:
    """``inbox/a/b.PDF`` -> ``a/b``: the relative name shared by input and outputs."""
    return inbox_key[len(INBOX) : -len(".pdf")]


def outbox_markdown(rel: str) -> str:
    return f"{OUTBOX}{rel}.md"


def outbox_assets(rel: str) -> str:
    return f"{OUTBOX}{rel}.assets/"


def _climbs(path: str) -> bool:
    return any(segment in ("", ".", "..") for segment in path.split("/"))


def key_problem(rel: str) -> str | None:
    """Why ``rel`` cannot name outbox objects, or None. A ``.``/``..`` or empty segment is legal
    in a key but becomes path traversal the moment a tool maps keys to files; the longest
    outbox key (an asset) must stay within S3's limit."""
    if _climbs(rel):
        return "its name has an empty, '.' or '..' path segment"
    longest = len(outbox_assets(rel).encode()) + ASSET_NAME_BYTES
    if longest > MAX_KEY_BYTES:
        return (
            f"its outbox keys would be up to {longest} bytes, over S3's {MAX_KEY_BYTES}-byte "
            "limit; use a shorter name"
        )
    return None


def outbox_record(rel: str) -> str:
    """The job record of ``rel``; for a refused name, a short key derived from it, so the user
    (and ``pagefleet status``) still finds why."""
    if key_problem(rel) is not None:
        return f"{REFUSED}{hashlib.sha256(rel.encode()).hexdigest()[:32]}.json"
    return f"{OUTBOX}{rel}.json"


def outputs_of_record(record_key: str) -> tuple[str, str]:
    """The Markdown's key and the assets' prefix beside the record ``record_key``."""
    stem = record_key.removesuffix(".json")
    return f"{stem}.md", f"{stem}.assets/"


def download_path(key: str) -> str | None:
    """Where a download puts outbox key ``key``, relative to its folder: the key below
    ``outbox/``, if no segment of it climbs out of the folder (None otherwise)."""
    if not key.startswith(OUTBOX):
        return None
    path = key[len(OUTBOX) :]
    return None if _climbs(path) else path


def is_outbox_record(key: str) -> bool:
    """A job record among the outbox's keys (not a JSON file among a document's assets)."""
    return key.startswith(OUTBOX) and key.endswith(".json") and ".assets/" not in key


def asset_dir_name(rel: str) -> str:
    """The assets folder as the Markdown links to it, relative to the .md file."""
    return rel.rsplit("/", 1)[-1] + ".assets"


def job_prefix(job_id: str) -> str:
    return f"{JOBS}{job_id}/"


def manifest(job_id: str) -> str:
    return f"{JOBS}{job_id}/manifest.json"


def chunk_pdf(job_id: str, index: int) -> str:
    return f"{JOBS}{job_id}/chunks/{index:05d}.pdf"


def is_manifest(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 3 and parts[0] + "/" == JOBS and parts[2] == "manifest.json"


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
    # ASCII digits only: str.isdigit() also takes "²³", which int() refuses.
    return (parts[1], int(stem)) if parts[1] and _INDEX.fullmatch(stem) else None
