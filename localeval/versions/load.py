"""One version as the diff reads it: its scores (any format ``agreement`` reads) and,
where they can be found, the texts of its samples (answer, contexts) for the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError
from localeval.lang import normalise
from localeval.report import sample_question
from localeval.resultsets import ResultSet, load_result_set
from localeval.types import Sample

__all__ = ["Version", "load_version"]

EXAMPLE = "example"


@dataclass
class Version:
    """A run's scores and, by the run's sample id, the samples' texts (may be empty)."""

    results: ResultSet
    texts: dict[str, Sample] = field(default_factory=dict)
    text_note: str = ""
    #: metric -> lower is better, as the run's summary.json recorded it (localeval runs)
    directions: dict[str, bool] = field(default_factory=dict)


def _dataset_path(data: Any) -> Any:
    if data == EXAMPLE:
        from importlib.resources import files

        return str(files("localeval.data") / "example.jsonl")
    return data


def load_version(source: Any, *, data: Any = None, name: str | None = None) -> Version:
    """Read a version: a localeval run folder / results.jsonl, a RAGAS or deepeval export,
    or a ResultSet. ``data``: the data set the run evaluated (path, ``"example"`` or a
    Dataset); it gives the texts, and the questions of a run that did not record them.
    Without it, an export is read as a data set too, for its answers and contexts.
    """
    data = _dataset_path(data)
    if isinstance(source, Version):
        return source
    rs = source if isinstance(source, ResultSet) else load_result_set(source, dataset=data,
                                                                      name=name)
    if name:
        rs.name = name
    note = ""
    texts_from = data
    if texts_from is None and rs.format in ("ragas", "table") and Path(rs.source).is_file():
        texts_from = rs.source  # an export holds its inputs beside its scores
    samples: list[Sample] = []
    if texts_from is not None:
        try:
            from localeval.dataset import load_dataset

            samples = list(load_dataset(texts_from))
        except LocalevalError as e:
            if data is not None:
                raise
            note = f"answers not shown: the export could not be read as a data set ({e})"
    elif rs.format in ("localeval", "deepeval"):
        note = "answers and contexts not shown: the results hold scores only; pass the " \
               "data set each run evaluated (--base-data / --new-data)"
    return Version(rs, _by_run_id(rs, samples), note, dict(rs.directions))


def _by_run_id(rs: ResultSet, samples: list[Sample]) -> dict[str, Sample]:
    """The samples keyed by the run's ids: by id where they match, else by question (a
    conversation's first user turn)."""
    out = {s.id: s for s in samples if s.id in rs.scores}
    if len(out) < len(rs.scores):
        by_q = {normalise(q): s for s in samples if (q := sample_question(s))}
        for sid, q in rs.questions.items():
            if sid not in out and normalise(q) in by_q:
                out[sid] = by_q[normalise(q)]
    return out
