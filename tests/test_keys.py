from __future__ import annotations

import itertools

import pytest

from pagefleet import keys


@pytest.mark.parametrize(
    ("key", "rel"),
    [("inbox/a.pdf", "a"), ("inbox/x/y z/Ünï+.PDF", "x/y z/Ünï+"), ("inbox/b.Pdf", "b")],
)
def test_inbox_keys_map_to_outbox_paths(key: str, rel: str) -> None:
    assert keys.is_upload(key)
    assert keys.rel_of(key) == rel
    assert keys.outbox_markdown(rel) == f"outbox/{rel}.md"
    assert keys.outbox_record(rel) == f"outbox/{rel}.json"


@pytest.mark.parametrize("key", ["inbox/a.txt", "outbox/a.pdf", "jobs/x/a.pdf"])
def test_other_keys_are_not_inputs(key: str) -> None:
    assert not keys.is_upload(key)


def test_an_upload_without_a_name_is_an_input_whose_name_is_refused() -> None:
    assert keys.is_upload("inbox/.pdf")
    assert keys.key_problem(keys.rel_of("inbox/.pdf")) is not None


def test_result_keys_parse_back_and_nothing_else_does() -> None:
    key = keys.chunk_result("abc", 7)
    assert keys.job_of_result(key) == ("abc", 7)
    assert keys.job_of_result(keys.manifest("abc")) is None
    assert keys.job_of_result("jobs/abc/results/x.result.json") is None


def test_every_letter_case_of_pdf_is_an_upload() -> None:
    assert len(set(keys.PDF_SUFFIXES)) == 8
    assert {s.lower() for s in keys.PDF_SUFFIXES} == {".pdf"}


def test_result_keys_take_ascii_digits_and_a_job_id_only() -> None:
    # str.isdigit() takes "²³", which int() refuses: a user's key must not raise.
    assert keys.job_of_result("jobs/x/results/²³.result.json") is None
    assert keys.job_of_result("jobs/x/results/٣.result.json") is None
    assert keys.job_of_result("jobs//results/00001.result.json") is None


# Segments that look like what the outbox names are made of, marks included.
_SEGMENTS = ["a", "a.assets", "a.assets~", "_refused", "_refused~", "a.pdf", "a.PDF~", "a~"]
_RELS = [
    "/".join(parts)
    for n in (1, 2, 3)
    for parts in itertools.product(_SEGMENTS, repeat=n)
    if keys.key_problem("/".join(parts)) is None
]


def _outputs(rel: str) -> list[str]:
    return [
        keys.outbox_markdown(rel),
        keys.outbox_record(rel),
        keys.outbox_assets(rel) + "page-00001-picture-0.png",
    ]


def test_no_two_inbox_names_share_an_outbox_object_or_assets_folder() -> None:
    owner: dict[str, str] = {}
    for rel in _RELS:
        for key in _outputs(rel):
            assert owner.setdefault(key, rel) == rel, f"{rel} and {owner[key]} share {key}"
            assert not key.startswith(keys.REFUSED), f"{rel} reaches {key}"
    for rel in _RELS:
        folder = keys.outbox_assets(rel)
        for key, other in owner.items():
            assert other == rel or not key.startswith(folder), f"{key} of {other} is in {folder}"


def test_ordinary_names_are_the_inbox_names() -> None:
    assert keys.outbox_assets("x/a") == "outbox/x/a.assets/"
    assert keys.asset_dir_name("x/a") == "a.assets"
    assert keys.outbox_markdown("x/a.assets/child") == "outbox/x/a.assets~/child.md"
    assert keys.outbox_record("_refused/abc") == "outbox/_refused~/abc.json"


def test_variant_names_are_apart_from_every_name_and_all_map_back() -> None:
    owner: dict[str, tuple[str, str]] = {}
    for rel in _RELS:
        for variant in ("", ".pdf", ".PDF"):
            outputs = {
                "markdown": keys.outbox_markdown(rel, variant),
                "record": keys.outbox_record(rel, variant),
                "asset": keys.outbox_assets(rel, variant) + "a.png",
            }
            for kind, key in outputs.items():
                assert owner.setdefault(key, (rel, variant)) == (rel, variant), key
                assert keys.parse_outbox(key) == (rel, variant, kind)
    assert keys.outbox_markdown("x/Case", ".PDF") == "outbox/x/Case.PDF~.md"
    assert keys.parse_outbox("outbox/notes.txt") is None
    assert keys.parse_outbox("outbox/x/a.assets/child.json") == ("x/a", "", "asset")
    assert not keys.is_outbox_record("outbox/x/a.assets/child.json")
