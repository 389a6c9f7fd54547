"""outbox/ per key: the newest upload owns every object of its key, whichever job finishes
first (rule 3), and each object is written once (rule 2). Driven directly against moto."""

from __future__ import annotations

from typing import Any

import pytest

from embedded.provision import create_stack
from pagefleet import keys, status
from pagefleet.models import ErrorInfo, JobRecord, Source
from pagefleet.outbox import Stored, Superseded, publish
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records, put_upload, upload

REL = "reports/q3"


@pytest.fixture
def bucket(settings: Settings) -> Bucket:
    stack = create_stack(settings)
    return Bucket(stack.s3, settings.bucket)


def _source(uploaded_at: str) -> Source:
    return Source(bucket="b", key=f"inbox/{REL}.pdf", etag=uploaded_at, event_time=uploaded_at)


OLDER, NEWER = _source("2026-12-01T10:00:00.000Z"), _source("2026-12-01T10:00:05.000Z")


def _done(source: Source) -> JobRecord:
    return JobRecord(
        status="done",
        job_id=source.job_id,
        source=source,
        pages=1,
        markdown=keys.outbox_markdown(REL),
    )


def _failed(source: Source) -> JobRecord:
    error = ErrorInfo(code="not_pdf", message="the file does not start with a PDF header")
    return JobRecord(status="failed", job_id=source.job_id, source=source, pages=0, error=error)


def _outbox(bucket: Bucket) -> dict[str, bytes]:
    return {key: bucket.get(key) for key in bucket.list_keys(f"{keys.OUTBOX}{REL}")}


def _record(bucket: Bucket) -> JobRecord:
    return JobRecord.model_validate_json(bucket.get(keys.outbox_record(REL)))


def test_a_newer_failed_upload_removes_the_older_markdown_and_assets(bucket: Bucket) -> None:
    publish(bucket, REL, _done(OLDER), "# older", {"page-00001-picture-0.png": b"png"})
    assert len(_outbox(bucket)) == 3
    publish(bucket, REL, _failed(NEWER))
    assert list(_outbox(bucket)) == [keys.outbox_record(REL)]
    assert _record(bucket).job_id == NEWER.job_id


def test_an_older_job_finishing_late_leaves_nothing_beside_the_newer_record(
    bucket: Bucket,
) -> None:
    publish(bucket, REL, _failed(NEWER))
    with pytest.raises(Superseded):
        publish(bucket, REL, _done(OLDER), "# older", {"page-00001-picture-0.png": b"png"})
    assert list(_outbox(bucket)) == [keys.outbox_record(REL)]
    assert _record(bucket).job_id == NEWER.job_id


def test_an_older_job_that_wrote_its_markdown_before_losing_takes_it_back(
    bucket: Bucket,
) -> None:
    # The older job's Markdown and asset land, then the newer job's record does, then the
    # older job reaches its own record write: it must not leave its Markdown behind.
    publish(bucket, REL, _done(OLDER), "# older", {"a.png": b"png"})
    bucket.delete(keys.outbox_record(REL))
    publish(bucket, REL, _failed(NEWER))
    assert list(_outbox(bucket)) == [keys.outbox_record(REL)]
    with pytest.raises(Superseded):
        publish(bucket, REL, _done(OLDER), "# older", {"a.png": b"png"})
    assert list(_outbox(bucket)) == [keys.outbox_record(REL)]


def test_an_older_job_losing_among_its_many_assets_takes_back_every_one_it_wrote(
    bucket: Bucket,
) -> None:
    """A job's assets are written several at a time (outbox._write_assets): when some of them
    meet a newer upload's, the job loses, and the ones written beside them are taken back."""
    publish(bucket, REL, _done(NEWER), "# newer", {"p1.png": b"new", "p2.png": b"new"})
    newer = _outbox(bucket)
    bucket.delete(keys.outbox_record(REL))  # the newer record not there yet: the older goes on
    del newer[keys.outbox_record(REL)]
    many = {f"p{n}.png": b"old" for n in range(1, 13)}
    with pytest.raises(Superseded):
        publish(bucket, REL, _done(OLDER), "# older", many)
    assert _outbox(bucket) == newer


def test_a_newer_done_upload_replaces_markdown_and_drops_assets_it_lacks(bucket: Bucket) -> None:
    publish(bucket, REL, _done(OLDER), "# older", {"old.png": b"1", "both.png": b"1"})
    publish(bucket, REL, _done(NEWER), "# newer", {"both.png": b"2", "new.png": b"2"})
    assets = keys.outbox_assets(REL)
    assert _outbox(bucket) == {
        f"{assets}both.png": b"2",
        f"{assets}new.png": b"2",
        keys.outbox_markdown(REL): b"# newer",
        keys.outbox_record(REL): _outbox(bucket)[keys.outbox_record(REL)],
    }
    assert _record(bucket).job_id == NEWER.job_id


def test_publishing_the_same_job_twice_writes_each_object_once(bucket: Bucket) -> None:
    for _ in range(2):
        publish(bucket, REL, _done(OLDER), "# older", {"a.png": b"png"})
    for key in _outbox(bucket):
        versions = bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=key)["Versions"]
        assert len([v for v in versions if v["Key"] == key]) == 1, key


def test_an_owner_read_before_assembling_saves_the_look_and_a_stale_one_still_loses(
    bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    heads: list[str] = []
    head = bucket.head
    monkeypatch.setattr(bucket, "head", lambda key: heads.append(key) or head(key))
    # Completion read "no record yet" before it rendered, and the newer upload published since.
    publish(bucket, REL, _failed(NEWER), owner=None)
    assert keys.outbox_record(REL) not in heads
    with pytest.raises(Superseded):
        publish(bucket, REL, _done(OLDER), "# older", {"a.png": b"png"}, owner=None)
    assert list(_outbox(bucket)) == [keys.outbox_record(REL)]
    assert _record(bucket).job_id == NEWER.job_id


class _DiesBeforeRecord(Bucket):
    """The bucket as a completion sees it that dies (a Lambda timeout, an OOM) between its
    Markdown and its record."""

    def put(self, key: str, body: bytes, **kwargs: Any) -> str:
        if keys.is_outbox_record(key):
            raise TimeoutError(f"died before writing {key}")
        return super().put(key, body, **kwargs)


def test_an_older_job_that_died_after_its_markdown_takes_it_back_when_it_retries(
    bucket: Bucket,
) -> None:
    publish(bucket, REL, _failed(NEWER))
    # The older job read "no record" before the newer one landed, wrote its Markdown, and died.
    with pytest.raises(TimeoutError):
        dying = _DiesBeforeRecord(bucket.s3, bucket.name)
        publish(dying, REL, _done(OLDER), "# older", {"a.png": b"png"}, owner=None)
    assert keys.outbox_markdown(REL) in _outbox(bucket)
    with pytest.raises(Superseded):  # its retry finds the newer record at once
        publish(bucket, REL, _done(OLDER), "# older", {"a.png": b"png"})
    assert list(_outbox(bucket)) == [keys.outbox_record(REL)]
    assert _record(bucket).job_id == NEWER.job_id


def _upload_of(key: str, uploaded_at: str) -> Source:
    return Source(bucket="b", key=key, etag=uploaded_at, event_time=uploaded_at)


def _done_at(source: Source, markdown_key: str) -> JobRecord:
    return _done(source).model_copy(update={"markdown": markdown_key})


def _all(bucket: Bucket) -> dict[str, bytes]:
    return {key: bucket.get(key) for key in bucket.list_keys(keys.OUTBOX)}


def _record_of(bucket: Bucket, inbox_key: str) -> tuple[str, JobRecord]:
    found = status.find_record(bucket, keys.Document(keys.rel_of(inbox_key), inbox_key))
    assert found is not None, inbox_key
    return found


def test_a_document_in_a_folder_named_like_an_assets_folder_keeps_its_outputs(
    bucket: Bucket,
) -> None:
    child = _upload_of("inbox/x/a.assets/child.pdf", OLDER.event_time or "")
    child_md = keys.outbox_markdown("x/a.assets/child")
    publish(bucket, "x/a.assets/child", _done_at(child, child_md), "# child", {"c.png": b"c"})
    before = _all(bucket)
    parent = _upload_of("inbox/x/a.pdf", NEWER.event_time or "")
    parent_md = keys.outbox_markdown("x/a")
    publish(bucket, "x/a", _done_at(parent, parent_md), "# parent", {"p.png": b"p"})
    # A newer upload of x/a that fails removes x/a's Markdown and images, nothing of the child's.
    later = _upload_of("inbox/x/a.pdf", "2026-12-01T10:00:09.000Z")
    publish(bucket, "x/a", _failed(later))
    after = _all(bucket)
    assert {key: after.get(key) for key in before} == before
    assert set(after) - set(before) == {keys.outbox_record("x/a")}
    record = JobRecord.model_validate_json(bucket.get(keys.outbox_record("x/a.assets/child")))
    assert record.job_id == child.job_id


def test_status_lists_a_record_whose_name_holds_an_assets_folder(bucket: Bucket) -> None:
    child = _upload_of("inbox/x/a.assets/child.pdf", OLDER.event_time or "")
    publish(bucket, "x/a.assets/child", _failed(child))
    bucket.put("outbox/x/b.assets/notes.json", b"{}")  # a user's file among a document's assets
    assert [record.source.key for record in status.jobs_finished(bucket)] == [child.key]


def test_two_keys_that_differ_in_the_case_of_pdf_keep_their_own_outputs(bucket: Bucket) -> None:
    lower = _upload_of("inbox/x/Case.pdf", "2026-12-01T10:00:00.000Z")
    upper = _upload_of("inbox/x/Case.PDF", "2026-12-01T10:00:05.000Z")
    link = keys.ASSET_LINK_PREFIX
    publish(bucket, "x/Case", _done(lower), f"# lower ![]({link}l.png)", {"l.png": b"l"})
    publish(bucket, "x/Case", _done(upper), f"# upper ![]({link}u.png)", {"u.png": b"u"})
    plain = JobRecord.model_validate_json(bucket.get(keys.outbox_record("x/Case")))
    assert plain.job_id == lower.job_id
    lower_key, lower_record = _record_of(bucket, lower.key)
    assert lower_key == keys.outbox_record("x/Case") and lower_record.job_id == lower.job_id
    upper_key, upper_record = _record_of(bucket, upper.key)
    assert upper_record.job_id == upper.job_id and upper_key != keys.outbox_record("x/Case")
    assert bucket.get(keys.outbox_markdown("x/Case")) == b"# lower ![](Case.assets/l.png)"
    assert bucket.list_keys(keys.outbox_assets("x/Case")) == ["outbox/x/Case.assets/l.png"]
    # The upper one's Markdown links to its own images, where its record says.
    assert upper_record.markdown is not None
    upper_md = bucket.get(upper_record.markdown).decode()
    [image] = bucket.list_keys(upper_record.markdown.removesuffix(".md") + keys.ASSETS + "/")
    assert upper_md == f"# upper ![]({image.rsplit('/', 2)[-2]}/u.png)"
    # Newer uploads of either key stay where their key's outputs are, and touch nothing else.
    newer_upper = _upload_of(upper.key, "2026-12-01T10:00:09.000Z")
    publish(bucket, "x/Case", _failed(newer_upper))
    assert _record_of(bucket, upper.key)[0] == upper_key
    assert _record_of(bucket, upper.key)[1].job_id == newer_upper.job_id
    assert bucket.get(keys.outbox_markdown("x/Case")) == b"# lower ![](Case.assets/l.png)"
    assert bucket.head(upper_record.markdown) is None
    assert _record_of(bucket, lower.key)[1].job_id == lower.job_id


def test_of_two_case_keys_publishing_at_once_the_one_that_wrote_first_keeps_the_name(
    bucket: Bucket,
) -> None:
    lower = _upload_of("inbox/x/Case.pdf", "2026-12-01T10:00:00.000Z")
    upper = _upload_of("inbox/x/Case.PDF", "2026-12-01T10:00:05.000Z")
    # The lower one's first try writes its Markdown and dies; the upper one publishes meanwhile.
    with pytest.raises(TimeoutError):
        publish(_DiesBeforeRecord(bucket.s3, bucket.name), "x/Case", _done(lower), "# lower")
    publish(bucket, "x/Case", _done(upper), "# upper", {"u.png": b"u"})
    publish(bucket, "x/Case", _done(lower), "# lower")  # the lower one's retry
    plain = JobRecord.model_validate_json(bucket.get(keys.outbox_record("x/Case")))
    assert plain.job_id == lower.job_id
    assert _record_of(bucket, lower.key)[0] == keys.outbox_record("x/Case")
    assert bucket.get(keys.outbox_markdown("x/Case")) == b"# lower"
    upper_key, upper_record = _record_of(bucket, upper.key)
    assert upper_key != keys.outbox_record("x/Case") and upper_record.markdown is not None
    assert bucket.get(upper_record.markdown) == b"# upper"
    assert bucket.list_keys(keys.outbox_assets("x/Case")) == []


def test_awaiting_many_records_lists_their_folders_not_their_assets(bucket: Bucket) -> None:
    """await_records (pagefleet/submission.py) with more records pending than it HEADs: a LIST
    per folder of records, one level deep, finds them, nested folders too, and reads no asset
    key (a LIST costs a key's parsing per key it returns)."""
    rels = [f"many/doc{n}" for n in range(4)] + ["many/sub/doc4", "many/sub/doc5"]
    for n, rel in enumerate(rels):
        source = Source(bucket="b", key=keys.inbox_key(rel), etag=f"e{n}", event_time=f"t{n}")
        record = JobRecord(status="done", job_id=source.job_id, source=source, pages=1)
        assets = {f"page-{page:05d}-picture-0.png": b"png" for page in range(5)}
        publish(bucket, rel, record, f"# {rel}", assets)
    listed: list[str] = []
    list_keys = bucket.list_keys

    def spy(prefix: str, *, one_level: bool = False) -> list[str]:
        found = list_keys(prefix, one_level=one_level)
        listed.extend(found)
        return found

    bucket.list_keys = spy  # type: ignore[method-assign]
    records = await_records(bucket, rels, timeout_s=0)
    assert sorted(records) == sorted(rels)
    assert listed and not [key for key in listed if ".assets/" in key]
    assert len(listed) == 2 * len(rels)  # each document's record and its Markdown


def test_an_asset_is_copied_from_where_it_is_stored_exactly_once(bucket: Bucket) -> None:
    """A Stored asset becomes an outbox object by a conditional copy: a twin writes nothing."""
    bucket.put("jobs/j/assets/page-00001-picture-0.png", b"png")
    assets = {"page-00001-picture-0.png": Stored("jobs/j/assets/page-00001-picture-0.png")}
    assert publish(bucket, REL, _done(OLDER), "# older", assets) is not None
    asset = keys.outbox_assets(REL) + "page-00001-picture-0.png"
    first = bucket.head(asset)
    assert first is not None and bucket.get(asset) == b"png"
    assert first["Metadata"]["pagefleet-job"] == OLDER.job_id
    assert publish(bucket, REL, _done(OLDER), "# older", assets) is None  # a twin
    again = bucket.head(asset)
    assert again is not None and again["LastModified"] == first["LastModified"]
    assert again.get("VersionId") == first.get("VersionId")


def test_an_upload_is_one_put_and_an_awaited_upload_reads_the_record_first(
    bucket: Bucket,
) -> None:
    """upload() is what the bench and the rehearsals submit with, and nothing of it reads what
    the key's record says: one request. put_upload() reads it first (an HEAD per record name
    it looks at), so that the record of an earlier upload is not taken for this one's."""
    calls: list[str] = []
    for name in ("head", "put", "get", "list_etags"):
        method = getattr(bucket, name)

        def spy(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            calls.append(_name)
            return _method(*args, **kwargs)

        setattr(bucket, name, spy)
    assert upload(bucket, "once/a", b"%PDF-1.4") == keys.inbox_key("once/a")
    assert calls == ["put"]
    calls.clear()
    published = put_upload(bucket, "once/a", b"%PDF-1.4")
    assert calls[-1] == "put" and set(calls[:-1]) == {"head"}
    assert published.key == keys.inbox_key("once/a") and published.replaces is None
