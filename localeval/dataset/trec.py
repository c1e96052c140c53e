"""TREC run and qrels files -> localeval samples, with trec_eval's reading rules.

A run file has six whitespace-separated columns per line,
``qid Q0 docid rank score tag``; a qrels file four, ``qid iter docid grade``.
trec_eval ignores the rank column and orders each query's documents by score,
highest first, breaking ties by docid in *descending* byte order
(``strcmp(b, a)`` in its ``form_res_rels.c``); ``load_trec_run`` does the
same, so metrics computed on the returned lists equal trec_eval's on the file.

Where trec_eval would silently read garbage (``atof`` of a non-number is 0)
this module stops with a ``DataError`` naming the file and the 1-based line.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterator

from localeval.dataset.samples import relevance_grade
from localeval.errors import DataError
from localeval.types import Sample

__all__ = ["load_trec_run", "load_qrels", "trec_samples"]


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, fields) for every non-blank line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read file: {e.strerror or e}", file=str(path)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad_line = data[: e.start].count(b"\n") + 1
        raise DataError("not UTF-8 text", file=str(path), row=bad_line) from None
    for n, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            yield n, fields


def _number(text: str, what: str, path: str | os.PathLike[str], line: int) -> float:
    try:
        v = float(text)
    except ValueError:
        raise DataError(f"{what} {text!r} is not a number", file=str(path), row=line) from None
    if math.isnan(v):
        raise DataError(f"{what} is NaN", file=str(path), row=line)
    return v


def load_trec_run(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Read a TREC run: ``{qid: [docid, ...]}``, best first, in trec_eval's order.

    Queries keep the order of their first line. A docid listed twice for one
    query is an error (trec_eval refuses such runs too).
    """
    entries: dict[str, list[tuple[float, str]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, f in _lines(path):
        if len(f) != 6:
            raise DataError(f"expected 6 columns (qid Q0 docid rank score tag), found {len(f)}",
                            file=str(path), row=line)
        qid, _q0, docid, _rank, score_text, _tag = f
        score = _number(score_text, "score", path, line)
        if (qid, docid) in seen:
            raise DataError(f"document {docid!r} listed twice for query {qid!r} "
                            f"(first on line {seen[qid, docid]})", file=str(path), row=line)
        seen[qid, docid] = line
        entries.setdefault(qid, []).append((score, docid))
    if not entries:
        raise DataError("run file has no lines", file=str(path))
    run: dict[str, list[str]] = {}
    for qid, docs in entries.items():
        # Two stable sorts: docid descending, then score descending; ties in
        # score keep the docid order (trec_eval's comparator).
        docs.sort(key=lambda e: e[1], reverse=True)
        docs.sort(key=lambda e: e[0], reverse=True)
        run[qid] = [d for _, d in docs]
    return run


def load_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """Read TREC qrels: ``{qid: {docid: grade}}``.

    Grades may be negative or zero (judged non-relevant) or fractional (kept
    as is; trec_eval would truncate them to integers). A (qid, docid) pair
    judged twice is an error.
    """
    qrels: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, f in _lines(path):
        if len(f) != 4:
            raise DataError(f"expected 4 columns (qid iter docid grade), found {len(f)}",
                            file=str(path), row=line)
        qid, _iter, docid, grade_text = f
        try:
            grade = relevance_grade(docid, _number(grade_text, "relevance grade", path, line))
        except ValueError as e:
            raise DataError(str(e), file=str(path), row=line) from None
        if (qid, docid) in seen:
            raise DataError(f"document {docid!r} judged twice for query {qid!r} "
                            f"(first on line {seen[qid, docid]})", file=str(path), row=line)
        seen[qid, docid] = line
        qrels.setdefault(qid, {})[docid] = grade
    if not qrels:
        raise DataError("qrels file has no lines", file=str(path))
    return qrels


def trec_samples(run_path: str | os.PathLike[str], qrels_path: str | os.PathLike[str], *,
                 complete: bool = False) -> list[Sample]:
    """One Sample per query of the run (``id`` = qid), judged from the qrels.

    A run query absent from the qrels gets ``relevant_ids={}`` and is
    therefore unscored by the retrieval metrics (trec_eval skips it).
    ``complete=True`` is trec_eval's ``-c``: qrels queries the run lacks are
    added with an empty ranking, so they score 0 instead of being left out.
    """
    run = load_trec_run(run_path)
    qrels = load_qrels(qrels_path)
    samples = [Sample(id=qid, retrieved_ids=docs, relevant_ids=dict(qrels.get(qid, {})))
               for qid, docs in run.items()]
    if complete:
        samples += [Sample(id=qid, retrieved_ids=[], relevant_ids=dict(judged))
                    for qid, judged in qrels.items() if qid not in run]
    return samples
