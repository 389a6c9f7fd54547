"""The bucket's key layout, in one place.

inbox/<rel>.pdf                          what users upload (.pdf in any letter case)
outbox/<name>.md, <name>.assets/, <name>.json    what they get back
outbox/_refused/<hash>.json              the record of an input whose <rel> is refused (rule 4)
outbox/_refused/<hash>~.json             the record of a stray upload: an inbox object not
                                         named .pdf, or the key ``inbox`` itself
jobs/<job_id>/manifest.json              the split plan
jobs/<job_id>/sent                       written once every chunk message is out (repeats end)
jobs/<job_id>/chunks/<index>.pdf         one page range of the source
jobs/<job_id>/results/<index>.result.json    a converted (or failed) chunk
jobs/<job_id>/conversions/<index>.json   how many conversions of a chunk have started
jobs/<job_id>/assets/<name>              a chunk's images too large to ride in its result

The outbox name of an upload is its ``<rel>``, unchanged for every ordinary name
(``inbox/a/b.pdf`` -> ``outbox/a/b.md``, ``.json``, ``.assets/``). Two inbox keys never get the
same outbox objects, nor one the other's assets folder, nor does any reach ``_refused/``
(rule 3), because the few path segments that could collide are marked with ``~``:

- a folder named like an assets folder, ``inbox/x/a.assets/c.pdf``: ``outbox/x/a.assets~/c.md``
  (``a.pdf``'s images stay alone in ``outbox/x/a.assets/``);
- a top folder named like the refused namespace, ``inbox/_refused/h.pdf``:
  ``outbox/_refused~/h.json``;
- the later of two keys that differ only in the letter case of ``.pdf`` (``x/Case.pdf``, then
  ``x/Case.PDF``) takes its suffix and a mark, a *variant* name: ``outbox/x/Case.PDF~.md``,
  ``.json``, ``.assets/`` (which key came first is decided in ``outbox.py``, at publishing);
- a segment that already has that form, marks included (a folder ``a.assets~``, a document
  ``b.pdf~``), gets one mark more, so every name maps back to one inbox key
  (:func:`parse_outbox`).
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal, NamedTuple
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
)  # .pdf in every letter case: S3 keys are case-sensitive.
ASSETS = ".assets"
MARK = "~"


# Markdown links to images carry this prefix until publishing swaps it for the outbox assets
# folder, which a converter cannot know (it sees a chunk, not the document's name).
ASSET_LINK_PREFIX = "pagefleet-asset:"

# The segments that are marked, by where they stand (see the module's docstring).
_FOLDER = re.compile(r".*\.assets~*", re.DOTALL)
_TOP_FOLDER = re.compile(r"_refused~*|.*\.assets~*", re.DOTALL)
_DOCUMENT = re.compile(r".*\.[pP][dD][fF]~+", re.DOTALL)
_VARIANT = re.compile(r"(.*)(\.[pP][dD][fF])~", re.DOTALL)
_INDEX = re.compile(r"[0-9]+")
_REFUSED_RECORD = re.compile(r"[0-9a-f]{32}(?:(\.[pP][dD][fF])?~)?\.json")


def decode_event_key(raw: str) -> str:
    """S3 event keys are form-URL-encoded (moto also encodes '/' as '%2F')."""
    return unquote_plus(raw)


def is_upload(key: str) -> bool:
    """An upload to convert: every one gets a record, ``inbox/.pdf`` too (refused: it has no
    name). The ingest rule announces these and the strays (:func:`is_stray`)."""
    return key.startswith(INBOX) and key.endswith(PDF_SUFFIXES)


def is_stray(key: str) -> bool:
    """An object the ingest rule announces that is meant as an upload but is not named one: a
    key under ``inbox/`` not named .pdf, or ``inbox`` itself (``aws s3 cp x.pdf s3://B/inbox``
    writes that key). A folder marker (``inbox/a/``, the S3 console's "create folder") is not."""
    in_inbox = key == INBOX.rstrip("/") or key.startswith(INBOX)
    return in_inbox and not key.endswith("/") and not is_upload(key)


def stray_record(key: str) -> str:
    """The record of stray upload ``key``: a name its key alone has (a digest of it, marked so
    that no refused name's record is the same, see :func:`outbox_record`)."""
    return f"{REFUSED}{hashlib.sha256(key.encode()).hexdigest()[:32]}{MARK}.json"


def inbox_key(rel: str, suffix: str = ".pdf") -> str:
    return f"{INBOX}{rel}{suffix}"


def rel_of(inbox_key: str) -> str:
    """``inbox/a/b.PDF`` -> ``a/b``: the relative name shared by input and outputs."""
    return inbox_key[len(INBOX) : -len(".pdf")]


def suffix_of(inbox_key: str) -> str:
    """``inbox/a/b.PDF`` -> ``.PDF``: what a variant name adds (see the module's docstring)."""
    return inbox_key[-len(".pdf") :]


def _mark(segment: str, marked: re.Pattern[str]) -> str:
    return segment + MARK if marked.fullmatch(segment) else segment


def _unmark(segment: str, marked: re.Pattern[str]) -> str:
    unmarked = segment.removesuffix(MARK)
    return unmarked if unmarked != segment and marked.fullmatch(unmarked) else segment


def _name(rel: str, variant: str) -> str:
    *folders, document = rel.split("/")
    marked = [_mark(f, _TOP_FOLDER if i == 0 else _FOLDER) for i, f in enumerate(folders)]
    document = _mark(document, _DOCUMENT) + (variant + MARK if variant else "")
    return "/".join([*marked, document])


def _climbs(path: str) -> bool:
    return any(segment in ("", ".", "..") for segment in path.split("/"))


def key_problem(rel: str, variant: str = "") -> str | None:
    """Why ``rel`` (in its ``variant`` name, if any) cannot name outbox objects, or None. A
    ``.``/``..`` or empty segment is legal in a key but becomes path traversal the moment a tool
    maps keys to files; the longest outbox key (an asset) must stay within S3's limit."""
    if _climbs(rel):
        return "its name has an empty, '.' or '..' path segment"
    longest = len(f"{OUTBOX}{_name(rel, variant)}{ASSETS}/".encode()) + ASSET_NAME_BYTES
    if longest > MAX_KEY_BYTES:
        return (
            f"its outbox keys would be up to {longest} bytes, over S3's {MAX_KEY_BYTES}-byte "
            "limit; use a shorter name"
        )
    return None


def _stem(rel: str, variant: str) -> str:
    """``outbox/<name>``, which ``.md``, ``.json`` and ``.assets/`` follow; for a refused name,
    a short one derived from it, so the user (and ``pagefleet status``) still finds why."""
    if key_problem(rel, variant) is None:
        return OUTBOX + _name(rel, variant)
    digest = hashlib.sha256(rel.encode()).hexdigest()[:32]
    return f"{REFUSED}{digest}{variant + MARK if variant else ''}"


def outbox_markdown(rel: str, variant: str = "") -> str:
    return f"{_stem(rel, variant)}.md"


def outbox_assets(rel: str, variant: str = "") -> str:
    return f"{_stem(rel, variant)}{ASSETS}/"


def outbox_record(rel: str, variant: str = "") -> str:
    """The job record of ``rel``: ``variant`` is the inbox key's suffix where another key of
    the same ``rel`` holds the plain name (outbox.py decides)."""
    return f"{_stem(rel, variant)}.json"


def asset_dir_name(rel: str, variant: str = "") -> str:
    """The assets folder as the Markdown links to it, relative to the .md file."""
    return _stem(rel, variant).rsplit("/", 1)[-1] + ASSETS


def outputs_of_record(record_key: str) -> tuple[str, str]:
    """The Markdown's key and the assets' prefix beside the record ``record_key``."""
    stem = record_key.removesuffix(".json")
    return f"{stem}.md", f"{stem}{ASSETS}/"


class OutboxKey(NamedTuple):
    """What an outbox key pagefleet writes is: which inbox key's, and which of its objects."""

    rel: str | None  # None for a refused name's record: the record itself names the input
    variant: str
    kind: Literal["markdown", "record", "asset"]


def parse_outbox(key: str) -> OutboxKey | None:
    """The inverse of the outbox names above; None for a key pagefleet never writes (a user's
    own file under ``outbox/``, a JSON file among a document's assets)."""
    if not key.startswith(OUTBOX):
        return None
    path = key[len(OUTBOX) :]
    if key.startswith(REFUSED) and (found := _REFUSED_RECORD.fullmatch(key[len(REFUSED) :])):
        return OutboxKey(None, found[1] or "", "record")
    segments = path.split("/")
    # Every folder of a name that ends in .assets is marked, but the assets folder itself.
    folder = next((i for i, s in enumerate(segments[:-1]) if s.endswith(ASSETS)), None)
    kind: Literal["markdown", "record", "asset"]
    if folder is not None:
        stem, kind = "/".join([*segments[:folder], segments[folder][: -len(ASSETS)]]), "asset"
    elif path.endswith(".md"):
        stem, kind = path[: -len(".md")], "markdown"
    elif path.endswith(".json"):
        stem, kind = path[: -len(".json")], "record"
    else:
        return None
    *folders, document = stem.split("/")
    variant = ""
    if found := _VARIANT.fullmatch(document):
        document, variant = found[1], found[2]
    rel = "/".join(
        [
            *(_unmark(f, _TOP_FOLDER if i == 0 else _FOLDER) for i, f in enumerate(folders)),
            _unmark(document, _DOCUMENT),
        ]
    )
    return OutboxKey(rel, variant, kind) if _stem(rel, variant) == OUTBOX + stem else None


def is_outbox_record(key: str) -> bool:
    """A job record among the outbox's keys (not a JSON file among a document's assets)."""
    parsed = parse_outbox(key)
    return parsed is not None and parsed.kind == "record"


class Document(NamedTuple):
    """A document as an operator names it: by its inbox key, an outbox key of its, or its rel
    (``pagefleet status``, ``get``)."""

    rel: str | None  # None: named by a refused name's record, which says the input
    inbox: str | None = None  # its inbox key, where the name says it
    record: str | None = None  # its record's key, where the name says it


def document_named(name: str) -> Document:
    if is_upload(name):
        return Document(rel_of(name), name)
    if is_stray(name):
        return Document(None, name, stray_record(name))
    if (parsed := parse_outbox(name)) is not None:
        if parsed.rel is None:
            return Document(None, record=name)
        inbox = inbox_key(parsed.rel, parsed.variant) if parsed.variant else None
        return Document(parsed.rel, inbox, outbox_record(parsed.rel, parsed.variant))
    if name.endswith(PDF_SUFFIXES):
        return document_named(INBOX + name)
    return Document(name)


def download_path(key: str) -> str | None:
    """Where a download puts outbox key ``key``, relative to its folder: the key below
    ``outbox/``, if no segment of it climbs out of the folder (None otherwise)."""
    if not key.startswith(OUTBOX):
        return None
    path = key[len(OUTBOX) :]
    return None if _climbs(path) else path


def job_prefix(job_id: str) -> str:
    return f"{JOBS}{job_id}/"


def job_of_prefix(prefix: str) -> str | None:
    """``jobs/<id>/`` (a listing's common prefix) -> id; None for any other prefix."""
    if not prefix.startswith(JOBS) or not prefix.endswith("/"):
        return None
    job_id = prefix[len(JOBS) : -1]
    return job_id if job_id and "/" not in job_id else None


def manifest(job_id: str) -> str:
    return f"{JOBS}{job_id}/manifest.json"


def sent_marker(job_id: str) -> str:
    return f"{JOBS}{job_id}/sent"


def chunk_pdf(job_id: str, index: int) -> str:
    return f"{JOBS}{job_id}/chunks/{index:05d}.pdf"


def is_manifest(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 3 and parts[0] + "/" == JOBS and parts[2] == "manifest.json"


def results_prefix(job_id: str) -> str:
    return f"{JOBS}{job_id}/results/"


def chunk_result(job_id: str, index: int) -> str:
    return f"{results_prefix(job_id)}{index:05d}{RESULT_SUFFIX}"


def chunk_conversions(job_id: str, index: int) -> str:
    return f"{JOBS}{job_id}/conversions/{index:05d}.json"


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
