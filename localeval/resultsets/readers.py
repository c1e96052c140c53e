"""Read a scored result set from a file, whatever tool wrote it: :func:`load_result_set`.

"Judging the judges" compares two sets of scores for the same samples, or one
set with human labels. This module finds the format from the file and hands
it to its reader, each of which returns a :class:`ResultSet`:

* a localeval run directory, or its ``results.jsonl`` (``read_localeval``);
* a RAGAS ``EvaluationResult.to_pandas()`` export written with ``to_csv`` /
  ``to_json`` (any orient) / ``to_json(orient="records", lines=True)``
  (``read_ragas``);
* a deepeval result as JSON (``read_deepeval``).

See docs/judging-the-judges.md. Ids: an ``id`` column (or ``sample_id`` /
``qid``; for deepeval ``additional_metadata.id`` or a test-case name other
than deepeval's automatic ``test_case_N``) gives each sample its id;
otherwise samples are numbered by row order ("1", "2", ... as localeval
numbers a dataset without ids). :func:`localeval.resultsets.alignment.align`
decides which sample of one set is which of the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localeval.dataset import load_dataset, read_jsonl_rows
from localeval.errors import DataError
from localeval.report import sample_question
from localeval.results import SUMMARY_FILE, content_fields, whole_lines
from localeval.resultsets.read_deepeval import from_deepeval, looks_deepeval
from localeval.resultsets.read_localeval import add_summary_next_to, from_localeval
from localeval.resultsets.read_ragas import from_table
from localeval.resultsets.resultset import ResultSet
from localeval.resultsets.tables import csv_rows, decode_utf8, json_load, json_table_rows

__all__ = ["load_result_set"]


def load_result_set(path: str | Path, *, dataset: Any = None, name: str | None = None,
                    format: str | None = None) -> ResultSet:
    """Read a result set from ``path`` (format from the contents; ``format`` forces one).

    ``dataset``: the evaluated dataset (path or localeval Dataset); its
    question texts and content hashes are attached by id, so that a run
    written before results.jsonl recorded them can be aligned by content
    with an export whose ids differ. ``format``: ``localeval``,
    ``ragas`` (any table) or ``deepeval``.
    """
    p = Path(path)
    if not p.exists():
        raise DataError("file not found", file=str(p))
    if p.is_dir():
        if (p / "results.jsonl").is_file():
            p = p / "results.jsonl"
        else:
            raise DataError("directory has no results.jsonl: pass a localeval run directory "
                            "or a results file", file=str(p))
    elif p.name == SUMMARY_FILE and (p.parent / "results.jsonl").is_file():
        p = p.parent / "results.jsonl"
    raw = p.read_bytes()
    if not raw.strip():
        raise DataError("file is empty", file=str(p))
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        raw = whole_lines(raw, p)  # a last line cut short by a stopped write: skipped, said
    text = decode_utf8(raw, p)
    src = str(p)
    if suffix in (".jsonl", ".ndjson"):
        rows = list(read_jsonl_rows(text, src, allow_non_finite=True))
        is_local = (format == "localeval" or
                    (format is None and rows and isinstance(rows[0][1].get("scores"), dict)))
        rs = from_localeval(rows, src) if is_local else from_table(rows, src, "line")
        if is_local:
            add_summary_next_to(rs, p)
    elif suffix == ".json":
        obj = json_load(text, src)
        if format == "deepeval" or (format is None and looks_deepeval(obj)):
            rs = from_deepeval(obj, src)
        else:
            rs = from_table(list(json_table_rows(obj, src)), src, "row")
    elif suffix in (".csv", ".tsv"):
        rs = from_table(list(csv_rows(text, src, "\t" if suffix == ".tsv" else ",")), src,
                        "row")
    else:
        raise DataError(f"unknown result file type {p.suffix!r}: pass a localeval run "
                        "directory, results.jsonl, or a RAGAS/deepeval export (.csv, .json, "
                        ".jsonl)", file=src)
    if not rs.scores:
        raise DataError("no samples in the file", file=src)
    if not rs.metrics:
        raise DataError("no metric columns found: expected numeric columns such as "
                        "'faithfulness' next to user_input/response/...", file=src)
    rs.check_scores()
    if name:
        rs.name = name
    if dataset is not None:
        _attach_questions(rs, dataset)
    return rs


def _attach_questions(rs: ResultSet, dataset: Any) -> None:
    """Question text and content hashes from the evaluated dataset, by id (for runs written
    before results.jsonl recorded them); what the file holds wins. A conversation's question
    is its first user turn (``report.sample_question``), which pairs two versions' runs of
    conversations whose ids differ."""
    ds = load_dataset(dataset)
    for s in ds:
        if s.id not in rs.scores:
            continue
        q = sample_question(s)
        if q:
            rs.questions.setdefault(s.id, q)
        h = content_fields(None, s.contexts, s.answer)
        if h:
            rs.hashes[s.id] = {**h, **rs.hashes.get(s.id, {})}
