"""An embedded moto server (S3 + SQS over real HTTP) on a free loopback port.

moto's own ``ThreadedMotoServer``, less what a stream of requests from a handful of clients
does not need:

- werkzeug's development server answers every request with ``Connection: close`` (its
  ``http.server`` base cannot skip a body the application left unread) and then waits 10 ms for
  stray bytes, so each request cost a TCP connection, a server thread and the client's
  connection set-up. Here each request body is read whole before moto sees it, the reply goes
  out whole with its length, and connections are kept.
- moto's dispatcher finds the service behind a request's host by listing its package folder (a
  ``stat`` per service) and trying every service's URL patterns, under one lock; the answer
  depends on the host string alone and is kept per host.
- CORS headers for browsers (``MOTO_DISABLE_GLOBAL_CORS``, moto's own switch), and the
  search of a request's host for a bucket name (``S3_IGNORE_SUBDOMAIN_BUCKETNAME``, its own).
- Flask's request cycle around moto's views, which takes nothing from it: the view runs on
  the request Flask would make, and its reply is the one Flask would send. And the email
  package's parser for a request's plain header lines (the same message, built directly).
- moto's SQS responses list their class's methods on every request, and draw each receipt
  handle letter by letter: each list is kept, each handle drawn from ``os.urandom``.
- moto checks each message it delivers against the queue's retention period by building every
  queue attribute, three of which walk all the queue's messages, three times over: a burst of
  1,000 uploads made each ReceiveMessage cost O(queue) per message delivered (a fifth of the
  embedded stack's CPU). Here the check reads the period itself, with the same answer.
- moto's SQS reads the clock as ``utcnow() - utcfromtimestamp(0)``, four datetimes a reading,
  and a send builds the queue's attributes, which read it for every message three times over:
  a send to a queue 1,100 deep cost 32 ms, so a burst's uploads (each one a notification sent
  to the ingest queue, under the S3 lock) slowed as the queue filled. Here it reads
  ``time.time()``, the same number: 1.1 ms.
- moto lists a prefix by copying the bucket's whole key store and reading the newest version
  of every key in it, so each listing cost O(bucket): with the 4 listings a job makes (its
  results, its outbox assets, the janitor's two) a burst of 1,000 slowed as it went, the
  listings taking a third of the server's CPU. Here moto's own listing runs on the keys under
  the prefix alone, found by name, with the same answer.
- werkzeug copies a request body it reads, 64 kB at a time, unless the server says the
  stream ends with the body; this server reads each body whole first, and says so.

- moto's serializer turns every timestamp it answers with (a listed key's ``LastModified``, a
  HEAD's or GET's ``Last-Modified``) from the string its models made back into a datetime with
  botocore's general parser (dateutil): half the server's CPU of a listing. Here the two
  formats moto's S3 writes are read with the standard library's own parsers, to the same
  datetime; anything else still goes to botocore's.

- moto's serializer writes a listing's reply by walking the output shape member by member and
  looking each value up under every alias it may have: five sixths of the server's CPU for a
  listing of 36 entries. Here the listing's XML is written directly, byte for byte moto's;
  anything it does not write (an owner, an empty prefix) still goes to the serializer.
And three things moto needs: CopyObject conditional on its destination, as S3's is (see
``_conditional_copy``), S3 requests one at a time (see ``_S3_LOCK``), and a queue's messages
changed under the queue's own lock (see ``_locked_delete``). And one for a watcher of the
outbox in this process: a count of the writes that may have written a job record, with a wait
for the next (``record_writes``).
"""

from __future__ import annotations

import contextlib
import datetime
import email.parser
import email.utils
import functools
import http.client
import io
import logging
import os
import re
import socket
import string
import threading
import time
import xml.sax.saxutils
from collections.abc import Iterator
from http.server import HTTPServer
from types import TracebackType
from typing import Any, NamedTuple, cast

# Read by moto when it is imported (moto.settings), so set before.
os.environ.setdefault("MOTO_DISABLE_GLOBAL_CORS", "true")
# Bucket names from the path alone: every client of this loopback server addresses S3 by path
# (pagefleet/aws.py), and moto's test of the host for a bucket name, by up to nine regular
# expressions three times a request, always found none (3% of a request's server CPU).
os.environ.setdefault("S3_IGNORE_SUBDOMAIN_BUCKETNAME", "true")

import moto.core.responses
import moto.core.serialize
import moto.core.utils
import moto.settings
import moto.sqs.models
from botocore.exceptions import ClientError
from dateutil.tz import tzutc  # type: ignore[import-untyped]
from flask import Flask
from moto.core.request import EnvironHeaders, Request
from moto.core.responses import ActionResult
from moto.core.utils import convert_to_flask_response, unix_time
from moto.moto_api import recorder
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from moto.s3.exceptions import MissingKey, PreconditionFailed
from moto.s3.models import FakeBucket, FakeKey, FakeTableStorageBucket, S3Backend
from moto.s3.responses import S3Response
from moto.s3.utils import _VersionedKeyStore
from moto.sqs.models import Message, Queue, SQSBackend
from werkzeug.exceptions import BadRequestKeyError, HTTPException
from werkzeug.serving import make_server

from pagefleet.aws import use_fake_credentials


def _retained(self: SQSBackend, queue_name: str, message: Message) -> bool:
    # Set from the queue's attributes by moto (camel case to snake case), so untyped there.
    period = int(getattr(self.get_queue(queue_name), "message_retention_period"))  # noqa: B009
    return period + (message.sent_timestamp or 0) / 1000 > time.time()


SQSBackend.is_message_valid_based_on_retention_period = _retained  # type: ignore[method-assign]


def _sqs_unix_time(dt: datetime.datetime | None = None) -> float:
    return time.time() if dt is None else unix_time(dt)


def _sqs_unix_time_millis(dt: datetime.datetime | None = None) -> float:
    return _sqs_unix_time(dt) * 1000.0


moto.sqs.models.unix_time = _sqs_unix_time
moto.sqs.models.unix_time_millis = _sqs_unix_time_millis
# moto's SQS turns each attribute's name into its Python attribute's, letter by letter, every
# time it builds a queue's attributes (moto/sqs/models.py, Queue.attributes: 15 names for every
# message sent, a fifth of the server's CPU of a send) or sets them; the answer depends on the
# name alone, and the names are SQS's attribute names.
moto.sqs.models.camelcase_to_underscores = functools.lru_cache(maxsize=256)(
    moto.sqs.models.camelcase_to_underscores
)

# moto's SQS is not thread-safe either, and its requests cannot run one at a time (a long poll
# waits inside one). A delete rebuilds the queue's message list from the list it started with
# and puts the copy in its place, holding no lock, while a send appends under the queue's lock:
# a delete that overlapped another brought that one's message back, in flight for the queue's
# visibility timeout (the drill's burst: a splitter batch of 10 "not yet split" six minutes
# after it was), and a message sent meanwhile was lost (an upload never split). Deletes and
# receives take the lock sends take; a long poll releases it while it waits (a Condition).
_moto_delete = Queue.delete_message
_moto_receive = SQSBackend.receive_message


def _locked_delete(self: Queue, receipt_handle: str) -> None:
    with self._messages_lock:
        _moto_delete(self, receipt_handle)


# Bumped on a moto Queue by release_polls: the long polls waiting on it end, empty.
_RELEASES = "_pagefleet_releases"


def _locked_receive(
    self: SQSBackend,
    queue_name: str,
    count: int,
    wait_seconds_timeout: int,
    visibility_timeout: int,
    message_attribute_names: list[str] | None = None,
) -> list[Message]:
    """moto's receive, its long poll kept here: a look (moto's receive without a wait), then a
    wait on the queue's lock, which a send notifies, for at most a second before the next look
    (a message whose lease or delay ran out notifies nothing), as moto's own loop does; and it
    ends early, empty, when :func:`release_polls` names the queue."""
    queue = self.get_queue(queue_name)
    with queue._messages_lock:
        released = getattr(queue, _RELEASES, 0)
        deadline = time.monotonic() + wait_seconds_timeout
        while True:
            found: list[Message] = _moto_receive(
                self, queue_name, count, 0, visibility_timeout, message_attribute_names
            )
            left = deadline - time.monotonic()
            if found or left <= 0 or getattr(queue, _RELEASES, 0) != released:
                return found
            queue._messages_lock.wait(min(left, 1.0))


def release_polls(region: str, queue_urls: list[str]) -> None:
    """End the long polls waiting on these queues of this process's moto now, empty, as their
    wait running out would: a consumer that stops need not wait out a 20 s poll. Polls that
    start later wait as usual."""
    for url in queue_urls:
        account, name = url.rstrip("/").split("/")[-2:]
        queue = moto.sqs.models.sqs_backends[account][region].queues.get(name)
        if queue is None:
            continue
        with queue._messages_lock:
            setattr(queue, _RELEASES, getattr(queue, _RELEASES, 0) + 1)
            queue._messages_lock.notify_all()


Queue.delete_message = _locked_delete  # type: ignore[method-assign]
SQSBackend.receive_message = _locked_receive  # type: ignore[method-assign]

_moto_list_objects = S3Backend.list_objects


# What moto.core.utils writes: iso_8601_datetime_without_milliseconds_s3, rfc_1123_datetime.
_ISO_8601 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6})?Z")
_RFC_1123 = re.compile(r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT")
_moto_parse_timestamp = moto.core.serialize.parse_to_aware_datetime


def _parse_timestamp(value: Any) -> datetime.datetime:
    """botocore's ``parse_to_aware_datetime`` (UTC, tzutc) without dateutil's general parser
    for the formats moto writes."""
    if isinstance(value, str):
        if _ISO_8601.fullmatch(value):
            return datetime.datetime.fromisoformat(value[:-1]).replace(tzinfo=tzutc())
        if _RFC_1123.fullmatch(value):
            parsed = email.utils.parsedate_to_datetime(value)
            return parsed.replace(tzinfo=tzutc())
    aware: datetime.datetime = _moto_parse_timestamp(value)
    return aware


moto.core.serialize.parse_to_aware_datetime = _parse_timestamp


def _request_id(headerdict: dict[str, Any] | None = None) -> str:
    """moto's ``gen_amzn_requestid_long`` (moto/utilities/aws_headers.py, which moto's
    responses call for every reply, moto/core/responses.py ``_enrich_response``): 52 letters
    and digits for ``x-amzn-requestid``, here from one ``os.urandom`` rather than 52 calls of
    ``random.choice``, a twentieth of the server's CPU a request."""
    request_id = os.urandom(26).hex()
    if headerdict is not None:
        headerdict["x-amzn-requestid"] = request_id
    return request_id


moto.core.responses.gen_amzn_requestid_long = _request_id

# What _receipt_handle draws from: each byte value stands for a lowercase letter.
_LETTERS = bytes(string.ascii_lowercase[value % 26].encode()[0] for value in range(256))


def _receipt_handle() -> str:
    """moto's ``generate_receipt_handle`` (moto/sqs/utils.py, called for each message a
    receive hands out): 185 lowercase letters, here from one ``os.urandom`` rather than 185
    calls of ``random.choice``, a tenth of the server's CPU of an SQS request."""
    return os.urandom(185).translate(_LETTERS).decode()


moto.sqs.models.generate_receipt_handle = _receipt_handle

# moto's BaseResponse.call_action lists its class's methods (inspect.getmembers, every
# attribute of the class read and sorted) on every SQS request to check that the action is one
# of them, another tenth of its CPU; a class's methods are set once its module is imported
# (this module's own patches included), so each class's list is read once.
moto.core.responses.method_names_from_class = functools.cache(
    moto.core.responses.method_names_from_class
)

# moto reads a service's model (moto/core/utils.py, _load_service_model: S3's and SQS's, each
# kept once read) with a loader made for that read, and a new botocore loader lists botocore's
# and moto's data folders first (list_available_services: a stat per service, ~0.03 CPU s).
# One loader serves every read; it keeps what it has listed and read (botocore's
# instance_cache), and moto's own cache already hands each model to every caller.
moto.core.utils.create_loader = functools.cache(moto.core.utils.create_loader)


class _KeysUnder(NamedTuple):
    """What moto's listing reads of a bucket (its keys), holding those under one prefix."""

    keys: _VersionedKeyStore


def _list_objects_under_prefix(
    self: S3Backend,
    bucket: FakeBucket,
    prefix: str | None,
    delimiter: str | None,
    marker: str | None,
    max_keys: int | None,
) -> tuple[set[FakeKey], set[str], bool, str | None]:
    if not prefix or isinstance(bucket, FakeTableStorageBucket):
        return _moto_list_objects(self, bucket, prefix, delimiter, marker, max_keys)
    store = bucket.keys
    under = _VersionedKeyStore()
    # dict's own methods: the names alone, and the version lists as they are (no copy, no
    # newest-version lookup per key). S3 requests run one at a time (_S3_LOCK).
    dict.update(
        under,
        {
            name: dict.__getitem__(store, name)
            for name in dict.keys(store)
            if name.startswith(prefix)
        },
    )
    listed = _KeysUnder(under)  # all of a bucket that moto's listing reads
    return _moto_list_objects(self, listed, prefix, delimiter, marker, max_keys)  # type: ignore[arg-type]


S3Backend.list_objects = _list_objects_under_prefix  # type: ignore[method-assign]


_moto_copy_object = S3Response.copy_object


def _conditional_copy(self: S3Response) -> Any:
    """moto 5.2.5 checks ``If-Match``/``If-None-Match`` on PutObject (moto/s3/responses.py,
    put_object) but not on CopyObject, which S3 conditions the same way (botocore's s3 model,
    CopyObjectRequest): the outbox's exactly-once copies (rule 2) rely on it. The same checks,
    before the copy; S3 requests run one at a time here (_S3_LOCK), so nothing comes between."""
    existing = self.backend.get_object(self.bucket_name, self.parse_key_name())
    if_match = self.headers.get("If-Match")
    if if_match:
        if existing is None:
            raise MissingKey
        if if_match.replace('"', "") != existing.etag.replace('"', ""):
            raise PreconditionFailed("If-Match")
    if self.headers.get("If-None-Match") == "*" and existing is not None:
        raise PreconditionFailed("If-None-Match")
    return _moto_copy_object(self)


S3Response.copy_object = _conditional_copy  # type: ignore[method-assign]


# A listing's reply, as moto's serializer writes it (moto/core/serialize.py: the S3 model's
# member order, xmltodict's escaping, flattened lists, timestamps as ``%Y-%m-%dT%H:%M:%S.000Z``),
# written directly: the serializer walks the output shape member by member, looking each
# value up under every alias, five sixths of the server's CPU for a listing of 36 entries.
_LISTING_HEAD = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
)
# ListObjectsV2Output's members that moto's list_objects_v2 sets, in the model's order.
_LISTING_MEMBERS = (
    "Name", "Prefix", "Delimiter", "MaxKeys", "CommonPrefixes", "EncodingType", "KeyCount",
    "NextContinuationToken", "StartAfter",
)  # fmt: skip
_LISTED_MEMBERS = ("Key", "LastModified", "ETag", "ChecksumAlgorithm", "Size", "StorageClass")
_moto_serialized = S3Response.serialized


def _text(name: str, value: Any) -> str:
    return f"<{name}>{xml.sax.saxutils.escape(str(value))}</{name}>"


def _listing_xml(result: dict[str, Any]) -> str | None:
    """The reply's body; None where the result holds what this does not write (an owner, a
    member it does not know, an empty string: xmltodict writes those its own way)."""
    if (
        set(result) - {"IsTruncated", "Contents", *_LISTING_MEMBERS}
        or any(value == "" for value in result.values())
        or any(set(item) - set(_LISTED_MEMBERS) for item in result["Contents"])
    ):
        return None
    parts = [_LISTING_HEAD, _text("IsTruncated", "true" if result["IsTruncated"] else "false")]
    for item in result["Contents"]:
        parts.append("<Contents>")
        for name in _LISTED_MEMBERS:
            if name not in item:
                continue
            value = item[name]
            if name == "ChecksumAlgorithm":
                parts.extend(_text(name, algorithm) for algorithm in value)
            elif name == "LastModified":
                parts.append(
                    _text(name, _parse_timestamp(value).strftime("%Y-%m-%dT%H:%M:%S.000Z"))
                )
            else:
                parts.append(_text(name, value))
        parts.append("</Contents>")
    for name in _LISTING_MEMBERS:
        if name == "CommonPrefixes":
            parts.extend(
                f"<{name}>{_text('Prefix', p['Prefix'])}</{name}>" for p in result.get(name, ())
            )
        elif name in result:
            parts.append(_text(name, result[name]))
    parts.append("</ListBucketResult>")
    return "".join(parts)


def _serialized(self: S3Response, action_result: ActionResult) -> Any:
    """A listing's reply written by :func:`_listing_xml`, the rest by moto's serializer."""
    result = action_result.result
    if (
        self.data.get("Action") == "ListObjectsV2"
        and type(action_result) is ActionResult
        and isinstance(result, dict)
        and not moto.settings.PRETTIFY_RESPONSES
        and (body := _listing_xml(result)) is not None
    ):
        return 200, {"Content-Type": "application/xml", **self.response_headers}, body
    return _moto_serialized(self, action_result)


S3Response.serialized = _serialized  # type: ignore[method-assign,assignment]


class _HostCachingDispatcher(DomainDispatcherApplication):
    def __init__(self) -> None:
        super().__init__(create_backend_app)
        self._backends: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        # Called under the application's lock: the dictionary needs none of its own.
        if host not in self._backends:
            self._backends[host] = super().get_backend_for_host(host)
        return self._backends[host]

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        """moto's service app (Flask), less Flask's request cycle where it does nothing for
        moto's views (its contexts, hooks, signals and session): of the server's 1.21 ms of CPU
        a request, 0.11 (a mix of the stack's S3 and SQS requests, timed). What Flask
        3.1's ``wsgi_app`` does for such a request is done here (see :func:`_dispatch`); any
        other request (an OPTIONS, a path no route takes, an app with hooks) goes to Flask."""
        app = self.get_application(environ)
        if _hookless(app) and environ.get("REQUEST_METHOD") != "OPTIONS":
            # Flask's create_url_adapter for an app without host or subdomain matching.
            adapter = app.url_map.bind_to_environ(
                environ,
                server_name=app.config["SERVER_NAME"],
                subdomain=app.url_map.default_subdomain or "",
            )
            try:
                rule, _ = adapter.match(return_rule=True)
            except HTTPException:
                pass  # Flask answers it (404, 405, a redirect)
            else:
                view = app.view_functions[rule.endpoint]
                if isinstance(view, convert_to_flask_response):
                    return _dispatch(app, view, environ)(environ, start_response)
        return app(environ, start_response)


def _hookless(app: Flask) -> bool:
    """Whether Flask's request cycle does nothing for ``app`` beyond running its view: no
    request hooks, error handlers or URL preprocessors (moto's apps, CORS off, have none)."""
    return not any(
        any(funcs.values())
        for funcs in (
            app.before_request_funcs,
            app.after_request_funcs,
            app.teardown_request_funcs,
            app.url_value_preprocessors,
            app.error_handler_spec,
        )
    )


class _HeadersReadOnce(EnvironHeaders):
    """A request's headers as moto reads them, its environ walked once. werkzeug's
    ``EnvironHeaders`` walks the whole environ (~40 entries) on every iteration, and moto's S3
    iterates a PUT's headers ~70 times (``_acl_from_headers`` and ``metadata_from_headers``
    call ``items()``/``keys()`` once per header, moto 5.2.5): a fifth of the server's CPU for a
    PUT. moto only ever adds to the environ (``HTTP_HOST`` where a request has no Host): the
    headers are read again when its size changes. Lookups by name still go to the environ."""

    def __iter__(self) -> Iterator[tuple[str, str]]:
        size, read = self.__dict__.get("_read", (-1, []))
        if size != len(self.environ):
            read = list(super().__iter__())
            self.__dict__["_read"] = (len(self.environ), read)
        return iter(read)


def _dispatch(app: Flask, view: convert_to_flask_response, environ: dict[str, Any]) -> Any:
    """The response Flask makes from moto's view (moto/core/utils.py,
    ``convert_to_flask_response.__call__``, which reads the request from Flask's context; here
    it is made from the environ as Flask makes it, ``app.request_class``): the view's result,
    a ``ClientError`` as a 400, and a werkzeug ``HTTPException`` (moto's ``RESTError``s) as
    Flask's ``handle_http_exception`` returns it, an app without error handlers: the exception
    itself, made a response by ``make_response`` (``force_type``). Flask in debug mode (moto's
    apps are) re-raises a ``BadRequestKeyError``, as anything else: the server answers 500."""
    request = cast(Request, app.request_class(environ))  # moto's BackendRequest
    request.headers = _HeadersReadOnce(environ)
    try:
        recorder._record_request(request)
        # Its items (walked once, _HeadersReadOnce): dict() of the headers would look each name
        # up in the environ again.
        result = view.callback(request, request.raw_url, dict(request.headers.items()))
    except ClientError as exc:
        result = 400, {}, exc.response["Error"]["Message"]
    except BadRequestKeyError:
        raise
    except HTTPException as exc:
        return app.response_class.force_type(exc, environ)  # type: ignore[arg-type]
    status, headers, content = result if len(result) == 3 else (200, {}, result)
    response = app.response_class(response=content, status=status, headers=headers)
    if request.method == "HEAD" and "content-length" in headers:
        response.headers["Content-Length"] = headers["content-length"]
    return response


# moto's S3 backend is not thread-safe: a listing iterates a bucket's keys while another request
# deletes one (KeyError, TypeError: a 500 to the caller, seen under the janitor's deletes). S3
# requests run one at a time; they are short, and the GIL ran them one at a time anyway.
_S3_LOCK = threading.Lock()


class RecordWrites:
    """A count of the S3 writes this process's server applied that may have written a job
    record (a ``.json`` key under outbox/), and a wait for the next one.

    A watcher of the outbox in this process (``pagefleet run``'s, the bench's) reads the count
    before it looks: a look whose count is the previous look's would find no record that one
    did not, and between looks it waits here rather than sleeping through a record that lands.
    Counted once applied (under ``_S3_LOCK``): every write whose path is a ``.json`` key that
    names outbox, and every POST (a multipart upload completes by one), but not the Markdown
    and pictures a job publishes before its record, which would wake a watcher for nothing.
    """

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition(_S3_LOCK)

    def __call__(self) -> int:
        return self._count

    def wait(self, past: int, timeout_s: float) -> None:
        """Return once the count is no longer ``past``, or after ``timeout_s``."""
        with self._changed:
            self._changed.wait_for(lambda: self._count != past, timeout_s)

    def applied(self, environ: dict[str, Any]) -> None:
        """Count the request of ``environ``, just applied, if it may have written a record;
        called holding ``_S3_LOCK``."""
        method = environ.get("REQUEST_METHOD")
        if method in ("GET", "HEAD", "OPTIONS"):
            return
        path = environ.get("PATH_INFO", "")  # the key, unquoted
        if method == "POST" or ("outbox" in path and path.endswith(".json")):
            self._count += 1
            self._changed.notify_all()


record_writes = RecordWrites()


class _RequestHeaders(http.client.HTTPMessage):
    """The headers of a request to this server (see :func:`_parse_headers`)."""


# A header line as the email parser reads one into a name and a value (email/feedparser.py:
# headerRE, _parse_headers; Compat32.header_source_parse): a name of printable ASCII but the
# colon, the value without the blanks before it and the line end after it.
_HEADER_LINE = re.compile(r"([\041-\071\073-\176]+):[ \t]*([^\r\n]*)\r?\n")
_stdlib_parse_headers = http.client.parse_headers


def _parse_headers(fp: Any, _class: type[http.client.HTTPMessage] = http.client.HTTPMessage) -> Any:
    """``http.client.parse_headers``, which http.server reads a request's headers with: its
    lines run through the email package's feed parser (0.04 ms of the ~1.1 ms of server CPU
    a request, timed with the clients' own parsing beside it: 0.15 -> 0.11 ms). A request to
    this server whose header lines are each a plain ``Name: value`` gets the same message
    built from them directly; any other (a folded line, a stray CR, no name), and every other
    caller in the process (the clients' replies), goes to the parser itself."""
    if _class is not _RequestHeaders:
        return _stdlib_parse_headers(fp, _class)
    lines = http.client._read_headers(fp)  # type: ignore[attr-defined]
    text = b"".join(lines).decode("iso-8859-1")
    body = lines[:-1] if lines and lines[-1] in (b"\r\n", b"\n", b"") else lines
    found = [_HEADER_LINE.fullmatch(line.decode("iso-8859-1")) for line in body]
    if not all(found):
        return email.parser.Parser(_class=_class).parsestr(text)
    message = _class()
    for match in found:
        if match:
            message.set_raw(match[1], match[2])  # what the parser does with each header
    message.set_payload("")
    return message


http.client.parse_headers = _parse_headers  # type: ignore[assignment]


class _KeepAliveHandler(MotoRequestHandler):
    """moto's request handler (its environ keeps header names with underscores, which S3
    metadata needs) with a request cycle that keeps the connection: the body is read whole
    before the application runs and the reply is sent whole with its length. werkzeug's own
    cycle closes every connection and, after each reply, waits 10 ms for stray request bytes."""

    MessageClass = _RequestHeaders  # read by _parse_headers
    # Headers and a small body leave in one segment (http.server flushes after each request);
    # a large body follows at once instead of waiting out the client's delayed ACK.
    wbufsize = -1

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def run_wsgi(self) -> None:
        if self.headers.get("Expect", "").strip().lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.wfile.flush()  # the client holds the body back until it reads this
        self.environ = environ = self.make_environ()
        stream = environ["wsgi.input"]
        if environ.get("wsgi.input_terminated"):  # chunked: werkzeug's reader finds the end
            body = stream.read()
        else:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = stream.read(length) if length > 0 else b""
        # The body is read whole: its stream ends where the body does, which werkzeug reads
        # directly (an unterminated one it wraps in a LimitedStream, copying 64 kB at a time).
        environ["wsgi.input"] = io.BytesIO(body)
        environ["wsgi.input_terminated"] = True
        reply: dict[str, Any] = {}

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            reply["status"], reply["headers"] = status, headers
            return lambda data: reply.setdefault("early", []).append(data)

        try:
            if "/sqs/aws4_request" in environ.get("HTTP_AUTHORIZATION", ""):
                chunks = self.server.app(environ, start_response)  # long polls wait in here
            else:
                with _S3_LOCK:
                    chunks = self.server.app(environ, start_response)  # the view has run
                    record_writes.applied(environ)
            try:
                payload = b"".join([*reply.get("early", []), *chunks])
            finally:
                if hasattr(chunks, "close"):
                    chunks.close()
        except Exception:
            logging.getLogger("werkzeug").exception("error on request %s", self.requestline)
            reply = {"status": "500 Internal Server Error", "headers": []}
            payload = b"Internal Server Error"
            self.close_connection = True
        code, _, message = reply["status"].partition(" ")
        self.send_response(int(code), message)
        declared = None
        for name, value in reply["headers"]:
            lowered = name.lower()
            if lowered == "content-length":
                declared = value
            elif lowered not in {"connection", "transfer-encoding", "server", "date"}:
                self.send_header(name, value)
        head = self.command == "HEAD" or int(code) in {204, 304} or 100 <= int(code) < 200
        # A HEAD reply declares the object's length; any other declares its own body's.
        self.send_header("Content-Length", declared if head and declared else str(len(payload)))
        self.end_headers()
        if not head:
            self.wfile.write(payload)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # one line per request otherwise


class BackgroundServer:
    """An HTTP server (``http.server`` or werkzeug) serving on a daemon thread of its own,
    for the embedded stack and for test doubles that stand beside it."""

    def __init__(self, server: HTTPServer, name: str) -> None:
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        # The serving loop looks for a shutdown only between requests or every 0.5 s
        # (socketserver's poll interval): a quarter of a second at the end of every `pagefleet
        # run`. A listening socket shut down reads as ready at once and at every look after,
        # its accept failing (socketserver drops that), so the loop sees the request now.
        # (Linux; where a listening socket cannot be shut down, the poll interval it is.)
        with contextlib.suppress(OSError):
            self.server.socket.shutdown(socket.SHUT_RDWR)
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()


class StopOnExit:
    """A ``with`` block stops it, however the block ends."""

    def stop(self) -> None:
        raise NotImplementedError

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class Served(StopOnExit):
    """Owns the :class:`BackgroundServer` it started, if any; ``url`` is where it serves."""

    _serving: BackgroundServer | None = None
    url = ""

    def _serve(self, server: HTTPServer, name: str) -> str:
        self._serving = BackgroundServer(server, name)
        self.url = self._serving.url
        return self.url

    def stop(self) -> None:
        if self._serving is not None:
            self._serving.stop()
            self._serving = None


class MotoServer(Served):
    """``with MotoServer() as url:`` — moto keeps its state per process, so one server per
    process is enough; tests share it and keep apart by bucket and queue names. ``port`` 0: a
    free one."""

    def __init__(self, port: int = 0) -> None:
        self.port = port

    def start(self) -> str:
        use_fake_credentials()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        # Bound here, so that a port in use raises OSError (werkzeug would print and exit).
        with socket.create_server(("127.0.0.1", self.port)) as bound:
            server = make_server(
                "127.0.0.1",
                bound.getsockname()[1],
                _HostCachingDispatcher(),
                threaded=True,
                request_handler=_KeepAliveHandler,
                fd=bound.fileno(),  # werkzeug serves a duplicate of it
            )
        return self._serve(server, "moto-server")

    def release_polls(self, region: str, queue_urls: list[str]) -> None:
        """:func:`release_polls`: moto keeps its state per process, and this server's with it."""
        release_polls(region, queue_urls)

    def __enter__(self) -> str:
        return self.start()
