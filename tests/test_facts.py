"""The facts suite of scripts/quality: its checker on Markdown written here, its facts files,
and the generated documents' facts on the text-layer converter's output."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench.quality import working_set
from bench.quality.facts import FACTS_DIR, FactsError, FactsScore, load_facts, parse_facts
from runner.converters.text_layer import convert_document
from tests import (
    facts_pdfs,
    facts_pdfs_facts31,
    facts_pdfs_furniture,
    facts_pdfs_grid31,
    facts_pdfs_labels31,
    facts_pdfs_ocr,
    facts_pdfs_order,
    facts_pdfs_order31,
    facts_pdfs_order31c,
    facts_pdfs_ruled,
    facts_pdfs_table31c,
    facts_pdfs_tables31,
    facts_pdfs_unruled,
    layout_pdfs,
)

SHARED_REAL = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"

MARKDOWN = """# Annual Survey

Rivers carry sedi-
ment from the mountains to the sea.

12

## Results

| Station | Flow | Silt |
| --- | --- | --- |
| | m3/s | mg/l |
| Aswan | 2830 | 41 |
| Cairo | 2,610 | 57 |

<table>
<tr><th colspan="2">Depth</th><th rowspan="2">Basin</th></tr>
<tr><td>Rosetta</td><td>4.9</td></tr>
<tr><td rowspan="2">Delta &amp; bar</td><td>3.1</td><td>Nile</td></tr>
<tr><td>2.2</td><td>Suez</td></tr>
</table>
"""


def _passes(line: str) -> bool:
    facts = parse_facts("doc.pdf\t" + line)
    return not FactsScore.of(facts, MARKDOWN).failed


def test_present_allows_a_few_words_lost() -> None:
    assert _passes("present\tRivers carry sediment from the mountains to the sea.")
    # One word in ten changed passes at the default ratio; stricter, it does not.
    assert _passes("present\tRivers carry gravel from the mountains to the sea 12 Results")
    assert not _passes("present\tRivers carry gravel from the mountains to the sea 12 Results\t1")
    assert not _passes("present\tLakes hold water from the hills")


def test_absent_counts_runs_and_lines() -> None:
    assert _passes("absent\tAnnual Survey\t1")
    assert not _passes("absent\tAnnual Survey")
    assert not _passes("absent_line\t12")
    # A line of its own only: the same number inside a paragraph or a table is no page number.
    assert _passes("absent_line\t41")
    assert _passes("absent_line\tAnnual")


def test_order_and_headings() -> None:
    assert _passes("order\tAnnual Survey\tResults")
    assert not _passes("order\tResults\tRivers carry sediment from the mountains")
    assert not _passes("order\tAnnual Survey\tnowhere to be found")
    assert _passes("heading\tResults")
    assert not _passes("heading\tRivers carry")


def test_cells_under_their_header_beside_their_row() -> None:
    assert _passes("cell\t2830\tFlow\tAswan")
    # A header row below the first (units) is a cell above it too.
    assert _passes("cell\t2,610\tm3/s\tCairo")
    assert _passes("cell\t57\tSilt")
    assert not _passes("cell\t57\tFlow")
    assert not _passes("cell\t2830\tFlow\tCairo")
    assert not _passes("cell\t283\tFlow")  # a cell's words are all of the value's
    # HTML tables, a cell spanning columns heading each of them.
    assert _passes("cell\t4.9\tDepth\tRosetta")
    # A cell spanning rows sits beside each of them, and heads the column below it.
    assert _passes("cell\t2.2\tDepth\tDelta & bar")
    assert _passes("cell\tSuez\tBasin\tDelta & bar")
    assert not _passes("cell\tSuez\tBasin\tRosetta")
    # An HTML table's tags are no words: its text reads on from cell to cell.
    assert _passes("present\tRosetta 4.9 Delta & bar 3.1 Nile\t1")


def test_malformed_facts_are_refused() -> None:
    for line in (
        "doc.pdf\tnearby\tx",
        "doc.pdf\torder\tonly one",
        "doc.pdf\tpresent\t...",
        "doc.pdf\tpresent\tsome words\t1.5",
        "doc.pdf\tabsent\tsome words\tmany",
    ):
        with pytest.raises(FactsError):
            parse_facts(line)


def test_facts_files_parse_and_cover_the_shared_corpus() -> None:
    facts = load_facts(FACTS_DIR)
    assert sum(map(len, facts.values())) > 100
    if not SHARED_REAL.is_dir():
        pytest.skip(f"{SHARED_REAL} is absent: the shared corpus is not on this machine")
    missing = [p.name for p in SHARED_REAL.glob("*.pdf") if len(facts.get(p.name, ())) < 3]
    assert not missing


GENERATED: list[Callable[[Path], Path]] = [
    layout_pdfs.long_report,
    layout_pdfs.two_columns,
    layout_pdfs.ruled_table,
    layout_pdfs.unruled_table,
    # Furniture that one or two pages cannot show by repetition: a running head below the
    # fixed top band, in a smaller font; a page number just under the body, far above the
    # bottom band; a rotated stamp in the left margin.
    facts_pdfs.short_bulletin,
    facts_pdfs.two_page_bulletin,
    # A statement whose numeric columns stand closer than the gap that parts cells of text.
    facts_pdfs.numeric_statement,
    # A table beside a label set upright, whose tall box joined every row into one.
    facts_pdfs.table_beside_upright_label,
    # A total row that fills a column the body leaves empty.
    facts_pdfs.total_row_statement,
    # A running head repeating the title, which stays a heading; choices set wide apart.
    facts_pdfs.article_with_title_head,
    # Rows of one run each, values set apart from a long label: cut for a table to take,
    # which none does, so each reads back as one line.
    facts_pdfs.indicator_sheet,
    # Bookmarked section titles centred in the body's type, no space above the text under them.
    facts_pdfs_ocr.centred_section_titles,
    # Bookmarked titles set on two lines read as two blocks, the first holding most words.
    facts_pdfs_ocr.split_outline_titles,
    # A ruled table with a title row and a column of cells merged across rows (HTML rowspan).
    facts_pdfs_ruled.ruled_roster,
    # A ruled head of two rows: a label over two columns, their labels under a partial rule.
    facts_pdfs_ruled.ruled_school_head,
    # Rules drawn as thin boxes beside shaded cell boxes, and a cell's text wrapped in it.
    facts_pdfs_ruled.ruled_shaded_wraps,
    # A running foot that a large formula comes close to on one page, no gap setting it off.
    facts_pdfs_furniture.journal_article,
    # Running heads on one page each whose page numbers run with the pages (56, 57).
    facts_pdfs_furniture.numbered_heads,
    # A page label ("GE98") atop each page, as close to the title as the body's lines.
    facts_pdfs_furniture.abstract_book,
    # Section numbers at the margin, their larger, bold titles at a tab stop.
    facts_pdfs_furniture.tab_stop_headings,
    # Arabic whose lam-alef ligatures the text layer gives alef first, a Latin word run in.
    facts_pdfs_furniture.rtl_ligatures,
    # A one-page table whose running foot (page number, chapter) sits right under its notes.
    facts_pdfs_furniture.statistical_table_page,
    # Two justified columns with a gutter under half a line's height: read column by column.
    facts_pdfs_order.narrow_gutter,
    # A 2x2 grid of titled cards: read card by card, row by row (1, 2, 3, 4).
    facts_pdfs_order.card_grid,
    # A slide of two framed boxes of bullets side by side: box by box, not a table.
    facts_pdfs_order.slide_boxes,
    # A form of labels and values side by side: label before value, row by row.
    facts_pdfs_order.label_value_form,
    # A lettered list stays a list; "(b)" and an initial starting a wrapped line do not.
    facts_pdfs_order.letter_enumeration,
    # A table without rules whose labels wrap to a second line inside their cells.
    facts_pdfs_unruled.wrapped_cell_table,
    # A head of two rows, each one run of text: group labels over the columns' own labels.
    facts_pdfs_unruled.two_row_header_table,
    # A statement's column heads, wrapped over two lines, set a few lines above its body.
    facts_pdfs_unruled.statement_column_heads,
    # A table whose upper rows leave a column nil ("-"), one row nil throughout.
    facts_pdfs_unruled.upper_half_lacks_column,
    # A total row set a line's space below the body.
    facts_pdfs_unruled.total_row_apart,
    # Numbers with a magnitude suffix ("459B", "78.7M") in columns set close.
    facts_pdfs_unruled.suffixed_numbers_table,
    # A ruled table filling the left column: read before the prose of the right column.
    facts_pdfs_order31.column_table,
    # Three authors side by side over two columns, the middle one across the gutter.
    facts_pdfs_order31.author_row,
    # A mind map: each branch read whole, depth first, not level by level.
    facts_pdfs_order31.mind_map,
    # TeX's accents set as glyphs of their own over their letters: "Franc¸ois" reads François.
    facts_pdfs_facts31.tex_accents,
    # A data dictionary's entry titles, a bold name then capitals, the description right under.
    facts_pdfs_facts31.data_dictionary,
    # Codes and Y/N flags beside a description that wraps; two head labels set one size apart.
    facts_pdfs_tables31.flag_key_table,
    # A report set all in Courier: its table of figures among the title lines and a note.
    facts_pdfs_tables31.monospaced_report,
    # A table without rules in one column of two, its rows level with the other column's prose.
    facts_pdfs_order31c.table_beside_prose,
    # Two tables without rules side by side, one a column, rows on different pitches.
    facts_pdfs_order31c.tables_side_by_side,
    # A table turned a quarter to the left on a portrait page: read in its own frame.
    facts_pdfs_order31c.sideways_table,
    # The same turned a quarter to the right: its lines read downwards.
    facts_pdfs_order31c.sideways_table_downwards,
    # Grids of cards of labels and values (3 across, 2x2): card by card, not a table's rows.
    facts_pdfs_grid31.voter_cards,
    facts_pdfs_grid31.permit_cards,
    # A diagram of filled boxes and arrows: its labels read after its picture, row by row.
    facts_pdfs_labels31.survey_diagram,
    # Dot-leader labels, three groups of three numeric columns with rules between the groups only.
    facts_pdfs_table31c.licence_table,
]


@pytest.mark.parametrize("generate", GENERATED, ids=lambda g: g.__name__)
def test_generated_documents_hold_their_facts(
    tmp_path: Path, generate: Callable[[Path], Path]
) -> None:
    pdf = generate(tmp_path)
    facts = load_facts(FACTS_DIR)[pdf.name]
    score = FactsScore.of(facts, convert_document(pdf, ocr="off"))
    assert not score.failed, [str(f) for f in score.failed]


def test_working_set_is_listed_with_facts_and_apart_from_the_shared_corpus() -> None:
    listed = working_set.entries()
    facts = load_facts(FACTS_DIR)
    assert len(listed) >= 30
    assert all(len(facts.get(e.name, ())) >= 3 for e in listed)
    assert all(len(e.sha256) == 64 and len(e.commit) == 40 for e in listed)
    manifest = SHARED_REAL.parent / "MANIFEST.tsv"
    if not manifest.is_file():
        pytest.skip(f"{manifest} is absent: the shared corpus is not on this machine")
    shared_repos = {line.split("\t")[4] for line in manifest.read_text().splitlines()[1:]}
    assert not shared_repos & {e.repo for e in listed}


# A results table of a two-column article as the text layer sets it: each row a label, then
# its numbers cut apart (flag 1: cut from the piece before only for a table to take), the
# dashes of models not evaluated left with the number before them. (x0, x1, text, cut.)
_NUMBERS = (352, 394, 429, 472)
RESULTS = [
    [(98, 287, "Single BM25+BERT (Lee et al., 2019)", 0), (310, 329, "26.5", 0)],
    [(98, 256, "Single ORQA (Lee et al., 2019)", 0), (310, 329, "33.3", 0)],
    [(98, 270, "Single HardEM (Min et al., 2019a)", 0), (310, 329, "28.1", 0)],
    [(98, 329, "Single GraphRetriever (Min et al., 2019b) 34.5", 0), (352, 371, "56.0", 1)],
    [(98, 289, "Single PathRetriever (Asai et al., 2020)", 0), (310, 440, "32.6 - - -", 0)],
]
RESULTS[0] += [
    (x, x + 19, v, 1) for x, v in zip(_NUMBERS, ("47.1", "17.7", "21.3", "33.2"), strict=True)
]
RESULTS[1] += [
    (x, x + 19, v, 1) for x, v in zip(_NUMBERS, ("45.0", "36.4", "30.1", "20.2"), strict=True)
]
RESULTS[2].append((352, 484, "50.9 - - -", 1))
RESULTS[3].append((394, 484, "36.4 - -", 1))
RESULTS[4].append((472, 491, "56.5", 1))


def test_rows_whose_cut_pieces_make_no_table_make_one_as_whole_lines() -> None:
    """The numbers' own cells line up in no columns (the dashes run across them), so no table
    takes the pieces; joined back, each row is a label and its numbers, and the rows level
    with one another are a table, read row by row (cut apart, the labels came out as one
    column, then the numbers)."""
    from pagefleet.layout.schema import Line
    from pagefleet.layout.segment import page_blocks

    lines: list[Line] = []
    for k, row in enumerate(RESULTS):
        y = 88.0 + 13.5 * k
        for x0, x1, text, cut in row:
            line: Line = {"bbox": [x0, y, x1, y + 10], "spans": [{"t": text, "s": 10.9}]}
            if cut:
                line["cut"] = True
            lines.append(line)
    blocks = page_blocks(lines)
    tables = [block["rows"] for block in blocks if "rows" in block]
    assert tables and tables[0][:3] == [
        ["Single BM25+BERT (Lee et al., 2019)", "26.5 47.1 17.7 21.3 33.2"],
        ["Single ORQA (Lee et al., 2019)", "33.3 45.0 36.4 30.1 20.2"],
        ["Single HardEM (Min et al., 2019a)", "28.1 50.9 - - -"],
    ]
    assert not any("cut" in line for block in blocks for line in block.get("lines", []))
