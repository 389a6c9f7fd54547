"""The report of ``scripts/quality --converter marker`` (bench/quality/chunk_diff.py): where a
document's chunked Markdown differs from its whole Markdown, and of which kind. No marker
needed: the texts are written here as marker writes them (headings as ``#`` lines, link
targets as ``<span id="page-N-M">`` anchors, marker/renderers/markdown.py)."""

from __future__ import annotations

from bench.quality.chunk_diff import KINDS, ChunkDiff, DocResult, blocks, report

WHOLE = """# Title

Intro paragraph.

## Part one

A paragraph that runs across a page break and on to the next page.

See [the table](#page-3-0) below.

<span id="page-3-0"></span>| a | b |
|---|---|
| 1 | 2 |

Closing words.
"""


def _counts(diff: ChunkDiff) -> dict[str, int]:
    return {kind: n for kind, n in diff.counts.items() if n}


def test_the_same_text_is_identical_and_counts_nothing() -> None:
    diff = ChunkDiff.of(WHOLE, WHOLE)
    assert diff.identical and diff.first_line == 0
    assert _counts(diff) == {}


def test_blocks_are_runs_of_lines_between_blank_lines() -> None:
    assert blocks("a\nb\n\n\n  \nc\n") == ["a\nb", "c"]


def test_each_kind_of_difference_is_counted_where_it_is() -> None:
    chunked = (
        WHOLE.replace("## Part one", "# Part one")  # a heading level
        .replace("page break and on", "page break and-\n\non")  # a paragraph cut in two
        .replace("[the table](#page-3-0)", "the table")  # a link to another chunk
        .replace('<span id="page-3-0"></span>', "")
        .replace("Closing words.", "Closing words.\n\nPage 2 of 9\n\nPage 3 of 9")
        + "\nSomething else.\n"
    )
    diff = ChunkDiff.of(WHOLE, chunked)
    assert not diff.identical
    assert diff.first_line == 5
    assert (diff.first_whole, diff.first_chunked) == ("## Part one", "# Part one")
    assert _counts(diff) == {
        "heading levels": 1,
        "paragraph joins": 1,
        "links": 2,
        "repeated text": 2,
        "other": 1,
    }


def test_a_hyphen_at_the_join_is_a_join_but_other_text_is_not() -> None:
    whole = "Start.\n\nThe word is broken here.\n"
    assert _counts(ChunkDiff.of(whole, "Start.\n\nThe word is bro-\n\nken here.\n")) == {
        "paragraph joins": 1
    }
    assert _counts(ChunkDiff.of(whole, "Start.\n\nThe word is\n\nmended here.\n")) == {"other": 2}


def test_a_link_s_text_is_compared_as_marker_unescapes_it_without_the_link() -> None:
    whole = "As in [\\(Lee et al.,](#page-9-3) [2019\\)](#page-9-3), and [Eq. (1)](#page-2-0).\n"
    chunked = "As in (Lee et al., 2019), and Eq. (1).\n"
    assert _counts(ChunkDiff.of(whole, chunked)) == {"links": 1}


def test_a_shorter_side_reports_its_end_as_the_first_difference() -> None:
    diff = ChunkDiff.of("a\n\nb\n", "a\n")
    assert (diff.first_line, diff.first_whole, diff.first_chunked) == (2, "", "(end)")
    assert _counts(diff) == {"other": 1}


def test_the_report_has_a_row_per_document_and_the_totals() -> None:
    same = DocResult("same.pdf", 3, 1, 4.2, 5.0, ChunkDiff.of(WHOLE, WHOLE))
    differs = DocResult(
        "differs.pdf", 40, 3, 30.0, 31.4, ChunkDiff.of(WHOLE, WHOLE.replace("## ", "### "))
    )
    failed = DocResult("failed.pdf", 2, 1, 1.0, 0.0, None, "SpawnError: docker | run failed")
    text = report([same, differs, failed], [("long.pdf", 400)], 16)
    lines = text.splitlines()
    assert lines[0].count("|") == len(KINDS) + 8
    assert lines[2] == "| same.pdf | 3 | 1 | 4 | 5 | yes | 0 | 0 | 0 | 0 | 0 |  |"
    assert lines[3] == (
        "| differs.pdf | 40 | 3 | 30 | 31 | no | 1 | 0 | 0 | 0 | 0 | "
        "5: `## Part one` / `### Part one` |"
    )
    assert lines[4].startswith("| failed.pdf | 2 | 1 | 1 | 0 | error |")
    assert lines[4].endswith("SpawnError: docker \\| run failed |")  # a cell keeps its pipes
    assert lines[-3:] == [
        "Chunks of 16 pages against the whole document: 1 of 3 documents identical, 1 failed.",
        "Differing blocks: heading levels 1, paragraph joins 0, links 0, repeated text 0, other 0.",
        "Left out (pages): long.pdf (400).",
    ]
