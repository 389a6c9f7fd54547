"""Tables without rules: columns of short cells whose whitespace gaps line up over rows.

They are found from a page's layout lines alone. Ruled tables are found at extraction, from the
page's rules and characters, by :mod:`runner.converters.text_layer.tables`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import pairwise
from statistics import median

from pagefleet.layout.schema import Bbox

# Lines this many font sizes apart (about two characters' width) are two cells.
_CELL_GAP = 1.0
# A line this many times taller than wide is set rotated.
_ROTATED = 3.0
# Cells whose x ranges come this close (points) share a column.
_TOL = 2.0
# A table needs this many rows in a row, and its cells this short on average (characters).
_MIN_ROWS = 3
_MAX_MEAN_CELL = 28
_MAX_CELL_WORDS = 10
# Codes and flags ("A", "Y", "N/A") are cells this many characters long at most.
_CODE = 3
# Cells this many words long on average are a paragraph's lines where most go on below.
_LONG_CELL = 5
# A cell that is a number (or a nil's dash), in a row that is no head.
_NUMBER = re.compile(r"[-\u2013\u2212(+$]?\d[\d.,]*%?\)?|[-\u2013\u2014]")
# A head stands at most this many font sizes above its body; the lines of one head, and of
# a wrapped cell, at most this share of a line's height apart.
_HEAD_GAP = 4.0
_WRAP_GAP = 0.5
# Head rows follow one another at most this many times the body's row pitch.
_PITCH = 1.1
# Lines of one cell align within this many font sizes.
_ALIGN = 0.5
# A line this short alone in an outer column beside a table's first or last row is not the
# table's (a page number).
_MAX_STRAY = 4
# Words of a line that spaces, three or more, part from the next.
_SPACED = re.compile(r"\S+(?: {1,2}\S+)*")
# A dot leader ending a row's label ("Total . . . .", "Robbery. . . ."): dots a space apart, two or
# more (an abbreviation's dot before them goes too: "etc. ." is a leader of two).
_LEADER = re.compile(r"\s*\.(?: \.)+\s*$")
# A year, as a column's label ("2017  2016"): a head's, not a number of the body.
_YEAR = re.compile(r"(?:19|20)\d\d")


def find_unruled(
    boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> list[tuple[list[int], list[list[str]]]]:
    """Tables without rules among a page's lines: (indexes of its lines, rows of cell texts).

    Lines are grouped into rows by vertical overlap; a row with two or more cells apart by a
    gap of two characters' width (a font size) is a table row. Three or more such rows, one
    under the other, make a table when their cells fall into columns that no cell crosses
    (the x ranges of the cells, merged where they overlap, stay apart) and the cells are
    short: two columns of running text have long lines, a table has short cells. A head of
    words over the body's numbers (in the run, or set apart just above it), a cell's text
    wrapped onto a line of its own, and a total row set apart below the body are the
    table's too. A label's dot leader is no part of its cell, and a label wrapped onto the
    line of its leader is one cell with it (see :func:`_leading_into`); a contents page's
    entries, a title, its leader and a page number, are no table.
    """
    led = {i for i, text in enumerate(texts) if _LEADER.search(text)}
    texts = [_LEADER.sub("", text) if i in led else text for i, text in enumerate(texts)]
    # A line set rotated (a column's head turned upright) stands beside rows it is no cell
    # of: its box, as tall as the whole head, would join them into one. (One character, a
    # nil's dash, is narrow upright too.)
    order = sorted(
        (
            i
            for i in range(len(boxes))
            if boxes[i][3] - boxes[i][1] <= _ROTATED * (boxes[i][2] - boxes[i][0])
            or len(texts[i].strip()) < 2
        ),
        key=lambda i: (boxes[i][1], boxes[i][0]),
    )
    rows: list[list[int]] = []
    bottom = -1e9
    for i in order:
        y0, y1 = boxes[i][1], boxes[i][3]
        if rows and (y0 + y1) / 2 < bottom:
            rows[-1].append(i)
            bottom = max(bottom, y1)
        else:
            rows.append([i])
            bottom = y1
    for k in range(len(rows) - 2, -1, -1):
        if _leading_into(rows[k], rows[k + 1], led, boxes, texts):
            rows[k + 1] = rows[k] + rows[k + 1]
            del rows[k]
    runs: list[list[list[int]]] = []
    for row in rows:
        row.sort(key=lambda i: boxes[i][0])
        cells = _cells(row, boxes, texts, sizes)
        if len(cells) < 2:
            if runs and runs[-1] and _wraps_on(row, runs[-1][-1], boxes, texts, sizes):
                # The next line of a cell's text: the cell's, not a row of its own.
                runs[-1][-1].extend(row)
                runs[-1][-1].sort(key=lambda i: boxes[i][0])
                row.clear()
                continue
            runs.append([])
            continue
        if runs and runs[-1]:
            prev = runs[-1][-1]
            height = max(boxes[i][3] - boxes[i][1] for i in row)
            gap = min(boxes[i][1] for i in row) - max(boxes[i][3] for i in prev)
            if gap > 2.5 * height:
                runs.append([])
        if not runs:
            runs.append([])
        runs[-1].append(row)
    tables: list[tuple[list[int], list[list[str]]]] = []
    taken: set[int] = set()
    for at, whole in enumerate(runs):
        # A head of words over columns of numbers: the columns are the body's, the head's
        # lines are placed in them (see _with_head).
        head, run = _head(whole, boxes, texts, sizes)
        if len(run) < _MIN_ROWS:
            head, run = [], whole
        if len(run) < _MIN_ROWS:
            continue
        if not head:
            # A head set apart from the body by more than rows are (a statement's column
            # heads over a gap): the rows just above, all words (see _head_above).
            # (Only rows below the last table found: a row is one table's at most.)
            first = next(k for k, row in enumerate(rows) if row is run[0])
            free = max(
                (k + 1 for k, row in enumerate(rows[:first]) if taken.intersection(row)), default=0
            )
            head = _head_above(rows[free:first], run, boxes, texts, sizes)
        table = _table(run, boxes, texts, sizes)
        if table is None:
            # A stray line level with the first or last row (a page number beside the last
            # row) makes a column no other row fills: try the run without that line.
            stray = _stray_lines(run, boxes, texts, sizes)
            if stray:
                table = _table(
                    [[i for i in row if i not in stray] for row in run], boxes, texts, sizes
                )
        if table is None and len(run) > _MIN_ROWS:
            # A head whose labels each stand over a group of columns ("Redemption" over
            # its handgun, long gun and other columns) fits no column: the table is the rows
            # under it, the head stays text above them.
            table = _table(run[1:], boxes, texts, sizes)
        if table is not None and _prose_column(table[1]):
            continue  # no table without the column either: a paragraph beside figures
        if table is not None and len(table[2]) < 3 and led.intersection(table[0]):
            continue  # a contents page
        if table is not None:
            members, grid, bands = table
            after = runs[at + 1] if at + 1 < len(runs) else []
            if 0 < len(after) < _MIN_ROWS and run[-1] is whole[-1]:
                # A total row set apart below the body (too few rows for a table of its
                # own): the table's last row, where its cells fit the columns.
                foot = _foot(after, run, bands, boxes, texts, sizes)
                if foot is not None:
                    members = [*members, *(i for row in after for i in row)]
                    grid = [*grid, *foot]
            if head:
                members, grid = _with_head(head, members, grid, bands, boxes, texts, sizes)
            tables.append((members, grid))
            taken.update(members)
    return tables


def _leading_into(
    row: list[int], below: list[int], led: set[int], boxes: list[Bbox], texts: list[str]
) -> bool:
    """Whether ``row``, one line of words, is the first line of the label of the row ``below``,
    whose label ends in a dot leader (in ``led``), its values level with the leader's line:
    just above the label's top line, aligned with it within a few characters, and too long
    for that line's first word to fit after it before the leader's end (a stub's heading over
    its items, "Property crime:" over "Burglary. . . .", is short)."""
    if len(row) != 1 or _is_number(texts[row[0]]) or row[0] in led:
        return False
    label = [i for i in below if not _is_number(texts[i])]
    if not led.intersection(label) or len(label) == len(below):
        return False
    i, top = row[0], min(label, key=lambda j: boxes[j][1])
    words = texts[top].split()
    x0, y0, x1, y1 = boxes[i]
    pitch = (x1 - x0) / max(len(texts[i]), 1)
    end = max(boxes[j][2] for j in label)
    return (
        bool(words)
        and abs(boxes[top][0] - x0) <= 3 * pitch
        and boxes[top][1] - y1 <= _WRAP_GAP * (y1 - y0)
        and x1 + pitch * (1 + len(words[0])) > end
    )


def _spaced_apart(
    head: list[list[int]], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> list[list[int]]:
    """The ``head`` rows with each line cut where spaces part its words (a monospaced line,
    whose gaps the text layer writes as spaces: see runner.converters.text_layer.lines; it
    cuts a line there itself, but not after a mark, "Year to Date*       2 Year"): the pieces
    are appended to ``boxes``, ``texts`` and ``sizes``, their boxes from their characters'
    places, all as wide."""
    out: list[list[int]] = []
    for row in head:
        pieces: list[int] = []
        for i in row:
            found = list(_SPACED.finditer(texts[i]))
            if len(found) < 2:
                pieces.append(i)
                continue
            x0, y0, x1, y1 = boxes[i]
            pitch = (x1 - x0) / len(texts[i])
            for piece in found:
                boxes.append([x0 + piece.start() * pitch, y0, x0 + piece.end() * pitch, y1])
                texts.append(piece.group())
                sizes.append(sizes[i])
                pieces.append(len(boxes) - 1)
        out.append(pieces)
    return out


def _wraps_on(
    row: list[int], above: list[int], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> bool:
    """Whether the one cell of ``row`` is the next line of a cell of the body row ``above``
    (a head's lines are joined in :func:`_with_head`): as
    tight as lines of text, aligned with that cell, between its neighbours, words in the
    same size (a label wrapped in its cell, the values level with its first line). A body
    row holds numbers; or, three cells or more of words, codes and flags before the last (a
    description beside them wraps), its last cell wraps: a paragraph's lines beside a table
    or a listing, a head's labels, are no body cell's."""
    if len(row) != 1 or _is_number(texts[row[0]]):
        return False
    i = row[0]
    numbers = any(_is_number(texts[j]) for j in above)
    if not numbers and len(above) < 3:
        return False
    cells = _cells(above, boxes, texts, sizes)
    if numbers:
        wrapping = range(len(cells))
    elif len(cells) >= 3 and all(len(texts[j].strip()) <= _CODE for c in cells[:-1] for j in c):
        wrapping = range(len(cells) - 1, len(cells))
    else:
        return False
    for k in wrapping:
        cell = cells[k]
        if any(_is_number(texts[j]) for j in cell) or abs(sizes[cell[0]] - sizes[i]) > 0.5:
            continue
        start = boxes[cells[k - 1][-1]][2] if k else float("-inf")
        end = boxes[cells[k + 1][0]][0] if k + 1 < len(cells) else float("inf")
        if start < boxes[i][0] and boxes[i][2] < end and _wrapped(cell, [i], boxes, sizes):
            return True
    return False


def _foot(
    rows: list[list[int]],
    run: list[list[int]],
    bands: list[list[float]],
    boxes: list[Bbox],
    texts: list[str],
    sizes: list[float],
) -> list[list[str]] | None:
    """``rows`` as the last rows of the table of ``run`` (its columns ``bands``): each holds
    numbers, two or more and no fewer than its other lines, and puts at most one cell in each
    column, within the table's width, the first of them a few lines below the body; None
    where one does not."""
    bottom = max(boxes[i][3] for i in run[-1])
    size = max(sizes[i] for i in run[-1])
    if min(boxes[i][1] for i in rows[0]) - bottom > _HEAD_GAP * size:
        return None
    starts = [band[0] for band in bands]
    out: list[list[str]] = []
    for row in rows:
        numbers = sum(1 for i in row if _is_number(texts[i]))
        if numbers < 2 or 2 * numbers < len(row):
            return None  # a footer level with the foot of the table (its date, page number)
        if any(boxes[i][0] < bands[0][0] - size or boxes[i][2] > bands[-1][1] + size for i in row):
            return None
        cells = ["" for _ in bands]
        for cell in _cells(row, boxes, texts, sizes):
            col = _column(bands, starts, boxes[cell[0]][0])
            if cells[col]:
                return None
            cells[col] = " ".join(texts[i].strip() for i in cell)
        out.append(cells)
    return out


def numeric(rows: list[list[str]]) -> bool:
    """Whether most cells right of the first column are numbers: a table of figures, even
    set in a monospaced font (a listing's columns, its comments, are words)."""
    cells = [cell for row in rows for cell in row[1:] if cell]
    return 2 * sum(1 for cell in cells if _is_number(cell)) > len(cells)


def _is_number(text: str) -> bool:
    """Whether ``text`` is numbers only (one, or a row of them the text layer left whole)."""
    words = text.split()
    return bool(words) and all(_NUMBER.fullmatch(word) for word in words)


def _head(
    run: list[list[int]], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> tuple[list[list[int]], list[list[int]]]:
    """``run`` parted into its head and its body: the head is the rows before the first
    that holds a number (not a year, which labels a column), the body those up to the last
    that holds one (a table of words only has no head told apart so)."""
    numeric = [k for k, row in enumerate(run) if any(_is_number(texts[i]) for i in row)]
    while numeric and _years(run[numeric[0]], texts):
        numeric.pop(0)
    if not numeric:
        return [], run
    # Rows of words after the last row of numbers are no body rows either: a footer level
    # with the table's columns (a slide's author and date), a note.
    return run[: numeric[0]], run[numeric[0] : numeric[-1] + 1]


def _years(row: list[int], texts: list[str]) -> bool:
    """Whether the numbers of ``row`` are years, two or more: the columns' labels."""
    years = [i for i in row if _YEAR.fullmatch(texts[i].strip())]
    return len(years) >= 2 and not any(_is_number(texts[i]) for i in row if i not in years)


def _head_above(
    above: list[list[int]],
    run: list[list[int]],
    boxes: list[Bbox],
    texts: list[str],
    sizes: list[float],
) -> list[list[int]]:
    """The rows just above the body ``run`` that head it: rows of words within the body's
    width, stacked as close as the body's rows or as the lines of one cell, the lowest of them
    at most a few lines above the body. A row of one line is a head's only where it wraps onto
    the row under it or from the row above (a title above the head is no part of it)."""
    top = min(boxes[i][1] for i in run[0])
    left = min(boxes[i][0] for row in run for i in row)
    right = max(boxes[i][2] for row in run for i in row)
    size = max(sizes[i] for i in run[0])
    # Head rows follow one another as the body's rows do (top to top), or as lines of one
    # cell.
    pitch = median(
        min(boxes[i][1] for i in lower) - min(boxes[i][1] for i in upper)
        for upper, lower in pairwise(run)
    )
    head: list[list[int]] = []
    for row in reversed(above):
        if not row:
            continue  # a line joined to the row above it (see _wraps_on)
        bottom = max(boxes[i][3] for i in row)
        height = max(boxes[i][3] - boxes[i][1] for i in row)
        step = top - min(boxes[i][1] for i in row)
        if (
            (step > max((1 + _WRAP_GAP) * height, _PITCH * pitch) if head else False)
            or top - bottom > _HEAD_GAP * size
            or any(_is_number(texts[i]) for i in row)
            or any(boxes[i][0] < left - size or boxes[i][2] > right + size for i in row)
        ):
            break
        head.insert(0, sorted(row, key=lambda i: boxes[i][0]))
        top = min(boxes[i][1] for i in row)

    def wraps(upper: list[int], lower: list[int]) -> bool:
        return any(_wrapped([a], [b], boxes, sizes) for a in upper for b in lower)

    while head and len(head[0]) == 1 and not (len(head) > 1 and wraps(head[0], head[1])):
        head.pop(0)
    for k in range(1, len(head) - 1):
        if len(head[k]) == 1 and not (wraps(head[k - 1], head[k]) or wraps(head[k], head[k + 1])):
            return head[k + 1 :]
    return head


def _with_head(
    head: list[list[int]],
    members: list[int],
    grid: list[list[str]],
    bands: list[list[float]],
    boxes: list[Bbox],
    texts: list[str],
    sizes: list[float],
) -> tuple[list[int], list[list[str]]]:
    """The table with its ``head`` rows on top: each head line in the column its middle
    falls in (or the nearest one), a label over a group of columns in the group's first; a
    head's text wrapped onto the next row (the lines of one cell: as tight as lines of text,
    aligned left, right or on their middles) one cell, in the lowest row it reaches; a head
    with nothing under it heads its column from the last row of labels."""
    members = [i for row in head for i in row] + members
    if any("   " in texts[i] for row in head for i in row):
        boxes, texts, sizes = list(boxes), list(texts), list(sizes)
        head = _spaced_apart(head, boxes, texts, sizes)
    starts = [band[0] for band in bands]
    cells: list[list[list[int]]] = [[[] for _ in bands] for _ in head]
    for r, row in enumerate(head):
        row = sorted(row, key=lambda i: boxes[i][0])
        centres = [(boxes[i][0] + boxes[i][2]) / 2 for i in row]
        below = [(boxes[j][0] + boxes[j][2]) / 2 for lower in head[r + 1 :] for j in lower]
        for k, i in enumerate(row):
            col = _column(bands, starts, centres[k])
            if len(row) > 1:
                # A label over a group of columns stands in the middle of the labels under
                # it: those nearer to it than to the labels beside it, and no farther from its
                # middle than the nearest of those begins (a column's label wrapped onto the
                # row under it, "Under 18" over "years", has only its own column there). It
                # heads the group's first column.
                reach = min(
                    boxes[row[n]][0] - centres[k] if n > k else centres[k] - boxes[row[n]][2]
                    for n in (k - 1, k + 1)
                    if 0 <= n < len(row)
                )
                group = {
                    _column(bands, starts, x)
                    for x in below
                    if abs(x - centres[k]) < reach
                    and min(range(len(row)), key=lambda n: abs(x - centres[n])) == k
                }
                if len(group) > 1:
                    col = min(group)
            cells[r][col].append(i)
    for r in range(len(head) - 1):
        for c in range(len(bands)):
            upper, lower = cells[r][c], cells[r + 1][c]
            if upper and lower and _wrapped(upper, lower, boxes, sizes):
                cells[r + 1][c] = upper + lower
                cells[r][c] = []
    # A head with nothing under it heads its column from the head's last row of labels (not
    # from a section's title under them).
    last = max(
        (r for r in range(len(head)) if sum(1 for cell in cells[r] if cell) > 1),
        default=len(head) - 1,
    )
    for c in range(len(bands)):
        filled = [r for r in range(len(head)) if cells[r][c]]
        if len(filled) == 1 and filled[0] < last:
            cells[last][c], cells[filled[0]][c] = cells[filled[0]][c], []
    rows = [[" ".join(texts[i].strip() for i in cell) for cell in row] for row in cells if any(row)]
    return members, rows + grid


def _wrapped(upper: list[int], lower: list[int], boxes: list[Bbox], sizes: list[float]) -> bool:
    """Whether the lines ``lower`` go on the text of ``upper`` in one cell."""
    a = [min(boxes[i][0] for i in upper), max(boxes[i][2] for i in upper)]
    b = [min(boxes[i][0] for i in lower), max(boxes[i][2] for i in lower)]
    height = max(boxes[i][3] - boxes[i][1] for i in upper)
    gap = min(boxes[i][1] for i in lower) - max(boxes[i][3] for i in upper)
    tol = _ALIGN * max(sizes[i] for i in upper)
    aligned = (
        abs(a[0] - b[0]) <= tol
        or abs(a[1] - b[1]) <= tol
        or abs(a[0] + a[1] - b[0] - b[1]) <= 2 * tol
    )
    return aligned and gap <= _WRAP_GAP * height


def _stray_lines(
    run: list[list[int]], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> set[int]:
    """The stray lines of ``run``: each a short one (a page number) in the first or last row,
    alone in the first or last column; empty unless every column that only one row fills is
    such a line."""
    row_cells = [_cells(row, boxes, texts, sizes) for row in run]
    bands = _bands([cell for cells in row_cells for cell in cells], boxes)
    fillers: list[list[tuple[int, list[int]]]] = [[] for _ in bands]
    for k, cells in enumerate(row_cells):
        for cell in cells:
            x0 = boxes[cell[0]][0]
            at = next(b for b, (b0, b1) in enumerate(bands) if b0 <= x0 <= b1)
            fillers[at].append((k, cell))
    stray: set[int] = set()
    for b, filled in enumerate(fillers):
        if len({k for k, _ in filled}) != 1:
            continue
        k, cell = filled[0]
        text = " ".join(texts[i].strip() for i in cell)
        if (
            b not in (0, len(bands) - 1)
            or k not in (0, len(run) - 1)
            or len(filled) > 1
            or len(row_cells[k]) < 3
            or len(text) > _MAX_STRAY
        ):
            return set()
        stray.update(cell)
    return stray


def _cells(
    row: list[int], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> list[list[int]]:
    """The row's lines grouped into cells: lines closer than two characters' width are one
    cell. Words or numbers that far apart are two cells already: a table's columns stand
    that close, and the text layer cuts a line there (see runner.converters.text_layer.lines)."""
    cells: list[list[int]] = []
    for i in row:
        if cells:
            last = cells[-1][-1]
            gap = boxes[i][0] - boxes[last][2]
            size = max(sizes[i], 1.0)
            if gap < _CELL_GAP * size:
                cells[-1].append(i)
                continue
        cells.append([i])
    return cells


def _table(
    run: list[list[int]], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> tuple[list[int], list[list[str]], list[list[float]]] | None:
    row_cells = [_cells(row, boxes, texts, sizes) for row in run]
    bands = _bands([cell for cells in row_cells for cell in cells], boxes)
    widest = max(len(cells) for cells in row_cells)
    if len(bands) < widest:
        # A few lines run over two or more columns (the text layer left no gap between the
        # cells of a row: "0.639 particularly agitated"), and their ranges merge the columns
        # into one. The columns are those of the rows with the most cells, when they are
        # three or more and most rows have them all; a wide line goes to the column where it
        # starts, or the nearest one.
        # (The most cells that two thirds of the rows have: a total row may fill a column
        # or two that the body leaves empty.)
        common = sorted((len(cells) for cells in row_cells), reverse=True)[(2 * len(run) - 1) // 3]
        full = [cells for cells in row_cells if len(cells) >= common]
        if common >= 3 and 3 * len(full) >= 2 * len(run):
            bands = _bands([cell for cells in full for cell in cells], boxes)
        # Or those of the widest rows, when every other cell starts in one of them and those
        # that run on over the next are words: a head's labels, a row's codes run together
        # ("# N"). (Figures run together with nils' dashes line up in no columns: see
        # pagefleet.layout.rows.rejoined.)
        if len(bands) < widest:
            bands = _widest_bands(row_cells, widest, boxes, texts) or bands
    if len(bands) < 2:
        return None
    grid: list[list[str]] = []
    lengths: list[int] = []
    starts = [band[0] for band in bands]
    last = len(bands) - 1
    for cells_of_row in row_cells:
        cells = ["" for _ in bands]
        for cell in cells_of_row:
            text = " ".join(texts[i].strip() for i in cell)
            col = _column(bands, starts, boxes[cell[0]][0])
            if len(cell) == 1 and col < last and boxes[cell[0]][2] > starts[col + 1] + _TOL:
                # A line run on past the next column's start.
                for k, piece in _across(cell[0], col, starts, boxes, texts, sizes):
                    cells[k] = f"{cells[k]} {piece}".strip()
            else:
                cells[col] = f"{cells[col]} {text}".strip()
            lengths.append(len(text))
            # (A row's label, first, may run longer: an indicator beside its values; so may a
            # description, last, beside a row's codes and flags.)
            if len(text.split()) > _MAX_CELL_WORDS * (2 if col in (0, last) else 1):
                return None
        grid.append(cells)
    if sum(lengths) / len(lengths) > _MAX_MEAN_CELL or _running_text(grid):
        return None
    # Every column holds something in at least two rows: not one stray wide line. A total
    # row (or a head) may fill inner columns the body leaves empty: an inner column only the
    # first or last row fills is the table's when that row fills more than half the columns
    # (an outer one is a page number level with the row, see _stray_lines).
    full_edges = [
        row for row in (grid[0], grid[-1]) if 2 * sum(1 for cell in row if cell) > len(bands)
    ]
    for k in range(len(bands)):
        inner = 0 < k < len(bands) - 1
        if sum(1 for row in grid if row[k]) < 2 and not (
            inner and any(row[k] for row in full_edges)
        ):
            return None
    return [i for row in run for i in row], grid, bands


def _widest_bands(
    row_cells: list[list[list[int]]], widest: int, boxes: list[Bbox], texts: list[str]
) -> list[list[float]] | None:
    """The columns of the rows with the most cells (``widest``), if every other cell starts
    in one of them and those that run on over the next are words; None otherwise."""
    wide = _bands([c for cells in row_cells if len(cells) == widest for c in cells], boxes)
    if len(wide) != widest:
        return None
    starts = [band[0] for band in wide]
    for cells in row_cells:
        for cell in cells:
            x0, x1 = boxes[cell[0]][0], boxes[cell[-1]][2]
            if not any(b0 - _TOL <= x0 <= b1 + _TOL for b0, b1 in wide):
                return None
            runs_on = bisect_right(starts, x1 - _TOL) != bisect_right(starts, x0 + _TOL)
            if runs_on and any(_NUMBER.fullmatch(w) for i in cell for w in texts[i].split()):
                return None
    return wide


def _across(
    i: int, col: int, starts: list[float], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> list[tuple[int, str]]:
    """The words of line ``i``, which starts in column ``col`` and runs on past the next
    column's start, by column: cut before each word that stands at a later column's start,
    its characters taken as evenly wide (labels of a head set closer than the gap the text
    layer cuts at: "Tax Per Result" over two columns), within half a font size; a figure
    within a size (values run together: "6,922,900 12,664,000"; a word may go on a label
    that runs long). Cells run together with one space between them ("0.639 particularly
    agitated") stand nowhere near the columns' starts: they stay whole."""
    x0, x1 = boxes[i][0], boxes[i][2]
    pitch = (x1 - x0) / len(texts[i])
    out = [(col, "")]
    for word in re.finditer(r"\S+", texts[i]):
        x = x0 + word.start() * pitch
        tol = sizes[i] * (1.0 if _NUMBER.fullmatch(word.group()) else _ALIGN)
        later = range(out[-1][0] + 1, len(starts))
        k = next((k for k in later if abs(x - starts[k]) <= tol), None)
        if k is None:
            out[-1] = (out[-1][0], f"{out[-1][1]} {word.group()}".strip())
        else:
            out.append((k, word.group()))
    return [(k, piece) for k, piece in out if piece]


def _running_text(grid: list[list[str]]) -> bool:
    """Whether the columns are running text set side by side (cards, boxes): most cells go on
    in the cell under them, a line ending mid-sentence over one starting in lower case. A
    table's rows are each whole; a label wrapped in its cell was joined already."""
    pairs = going_on = 0
    for upper, lower in pairwise(grid):
        for a, b in zip(upper, lower, strict=True):
            if a and b:
                pairs += 1
                going_on += _goes_on(a, b)
    return pairs > 0 and 2 * going_on >= pairs


def _prose_column(grid: list[list[str]]) -> bool:
    """Whether a column of the table is a paragraph's lines set beside it (or beside a
    listing): long cells, most going on in the cell under them (see :func:`_running_text`),
    let in by the length a description beside codes may run to."""
    for column in zip(*grid, strict=True):
        cells = [cell for cell in column if cell]
        if sum(cell.count(" ") + 1 for cell in cells) < _LONG_CELL * len(cells):
            continue
        pairs = [(a, b) for a, b in pairwise(column) if a and b]
        if len(pairs) >= _MIN_ROWS and 2 * sum(_goes_on(a, b) for a, b in pairs) >= len(pairs):
            return True
    return False


def _goes_on(upper: str, lower: str) -> bool:
    """Whether the cell ``upper`` ends mid-sentence over ``lower`` starting in lower case."""
    return upper[-1] not in ".:;!?" and not upper[-1].isdigit() and lower[0].islower()


def _column(bands: list[list[float]], starts: list[float], x0: float) -> int:
    """The band (of :func:`_bands`, apart and in order; ``starts`` their left ends) that holds
    ``x0``, or the nearest one (the left one of two as near)."""
    k = bisect_right(starts, x0) - 1
    if k < 0:
        return 0
    if x0 <= bands[k][1] or k + 1 == len(bands):
        return k
    return k if x0 - bands[k][1] <= bands[k + 1][0] - x0 else k + 1


def _bands(cells: list[list[int]], boxes: list[Bbox]) -> list[list[float]]:
    """The x ranges of the cells, merged where they overlap: a table's columns."""
    bands: list[list[float]] = []
    for x0, x1 in sorted((boxes[c[0]][0], boxes[c[-1]][2]) for c in cells):
        if bands and x0 <= bands[-1][1] + _TOL:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    return bands
