"""CSV and TSV text as numbered records: the one CSV reader of every table localeval reads.

Datasets, corpora, result exports (a ragas ``to_csv``), label tables and the
labelling sheet all come through :func:`csv_records`, so they share one set of
rules:

- a cell may be as long as the file (a retrieved context of 200,000
  characters): the csv module's 128 KiB cap is raised once, to the largest
  value this platform takes (:func:`raise_field_limit`);
- quoting is strict: a quote in the wrong place or one never closed is one
  ``DataError`` naming the file, the line and the column, never rows merged
  in silence;
- a NUL byte, a duplicate column name or a row with more cells than the
  header is an error naming the line; a short row is one too, unless the
  caller pads it (``pad_short``: tables a spreadsheet or another tool wrote,
  where a missing trailing cell means an empty one);
- :func:`csv_separator` recognises a sheet a spreadsheet saved with ``;``
  (the default where ``,`` is the decimal mark) by its header.

Each record comes with the line its row starts on (1-based; a quoted cell may
span lines). Cells stay text: what a cell means is its reader's business.
"""

from __future__ import annotations

import csv
import functools
import io
import sys
from typing import Callable, Iterator

from localeval.errors import DataError

__all__ = ["csv_records", "csv_separator", "raise_field_limit"]


@functools.cache
def raise_field_limit() -> int:
    """Raise the csv module's cell-size limit to the largest this platform takes; once.

    ``sys.maxsize`` overflows the C ``long`` the csv module stores the limit in
    where that is 32 bits (Windows), so the value is halved until it is
    taken. The limit is process-wide; it is only ever raised, never lowered.
    Returns the limit now in force.
    """
    limit = sys.maxsize
    while limit > csv.field_size_limit():
        try:
            csv.field_size_limit(limit)
            break
        except OverflowError:
            limit //= 2
    return csv.field_size_limit()


def csv_separator(text: str, recognise: Callable[[str], bool],
                  candidates: tuple[str, ...] = (",", ";")) -> str:
    """The first of ``candidates`` whose header row has a column ``recognise`` knows.

    The first candidate when none does: a header that names nothing known is
    read as the usual CSV, and its reader reports what is missing.
    """
    raise_field_limit()
    for sep in candidates:
        header = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
        if (sep == candidates[0] or len(header) > 1) and any(recognise(c) for c in header):
            return sep
    return candidates[0]


def csv_records(text: str, src: str, delim: str = ",", *, pad_short: bool = False
                ) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the record starts, {column: cell text}); damage is an error, never a guess.

    ``pad_short``: a row with fewer cells than the header gets empty ones
    (else it is refused, naming the line). Blank lines are skipped.
    """
    raise_field_limit()
    nul = text.find("\x00")
    if nul >= 0:  # the csv module passes NUL through; in a text file it means damage
        raise DataError("contains a NUL byte; is this a text file?", file=src,
                        row=text.count("\n", 0, nul) + 1)
    # strict: a quote in the wrong place is an error instead of silently merged rows.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    start, header = 1, list[str]()
    try:
        header = next(reader, [])
        if not any(h.strip() for h in header):
            raise DataError("no header row", file=src)
        _check_header(header, src)
        start = reader.line_num + 1
        for cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):  # a blank line
                start = reader.line_num + 1
                continue
            if pad_short and len(cells) < len(header):
                cells += [""] * (len(header) - len(cells))
            _check_row(cells, header, delim, src, start, reader.line_num)
            yield start, dict(zip(header, cells))
            start = reader.line_num + 1
    except csv.Error as e:
        line, cell = _fault(text, delim, start)
        column = header[cell] if header and cell is not None and cell < len(header) else None
        raise DataError(_csv_problem(str(e), delim), file=src, row=line,
                        column=column) from None


def _check_header(header: list[str], src: str) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(header, 1):
        if name in seen and name.strip():  # nameless columns (pandas' index, a sheet's
            # trailing empty cells) are never looked up by name: several may stand
            raise DataError(f"duplicate column {name!r} in the header (columns {seen[name]} "
                            f"and {i}); rename one", file=src, row=1)
        seen.setdefault(name, i)


def _check_row(cells: list[str], header: list[str], delim: str, src: str, start: int,
               end: int) -> None:
    if len(cells) != len(header):
        more = len(cells) > len(header)
        raise DataError(f"{len(cells)} cell{'s' * (len(cells) != 1)}, but the header has "
                        f"{len(header)} columns"
                        + ("" if more else "; a missing cell must still be written, "
                           f"empty, between its {'tabs' if delim == chr(9) else 'commas'}"),
                        file=src, row=start)
    if delim == "\t" and end > start:
        for col, cell in zip(header, cells):
            if "\n" in cell and "\t" in cell:
                # TSV cells hold no tabs: a quoted cell with both a tab and a line
                # break has swallowed the rows after it.
                raise DataError(f"a cell that starts with a quote runs on to line {end}, "
                                "taking in the rows between: close the quote, or, if the "
                                "quote is part of the text, quote the whole cell and double "
                                "the quotes inside it",
                                file=src, row=start, column=col)


def _csv_problem(msg: str, delim: str) -> str:
    if "unexpected end of data" in msg:
        return ("a quoted cell is never closed (unterminated quote): it runs to the end "
                "of the file")
    if "expected after" in msg:
        sep = "tab" if delim == "\t" else "comma"
        return (f"a quote in the wrong place (after a closing quote the cell must end "
                f"with a {sep}); quote the whole cell and double the quotes inside it, "
                'e.g. "He said ""yes"""')
    return f"cannot parse: {msg}"


def _fault(text: str, delim: str, start: int) -> tuple[int, int | None]:
    """(line, cell index) of the quote the csv module refused in the record on line ``start``.

    Written by hand because the csv module's error names neither the cell nor
    the line inside a record that spans lines. It walks the record as the
    module's strict dialect does: a cell that starts with a quote runs to the
    next lone quote, which must be followed by the separator or a line end.
    ``(start, None)`` when it finds no such fault (another kind of error).
    """
    i = 0
    for _ in range(start - 1):
        i = text.find("\n", i) + 1
        if i == 0:
            return start, None
    line, cell, n, at_start = start, 0, len(text), True
    while i < n:
        ch = text[i]
        if at_start and ch == '"':
            opened = line
            i += 1
            while True:
                j = text.find('"', i)
                if j < 0:
                    return opened, cell  # never closed
                line += text.count("\n", i, j)
                if text.startswith('""', j):
                    i = j + 2
                    continue
                i = j + 1
                break
            if i < n and text[i] not in (delim, "\r", "\n"):
                return line, cell
            at_start = False
            continue
        if ch == delim:
            cell += 1
            at_start = True
        elif ch in "\r\n":
            return start, None
        else:
            at_start = False
        i += 1
    return start, None
