"""One record of a run: ``summary.json`` read once, checked, upgraded, and asked by every verb.

Every view of a finished run (``report``, ``runs``, ``history``, ``diff``,
``rank``, ``estimate``, the folder rule) reads the run through
:class:`RunRecord`: its identity (``identity.Identity``: what makes it the run
it is), its judge fitness (``fitness.JudgeFitness``), its name and its
metrics, typed (``schema``). Reading (:func:`read_record`, :func:`record_of`):

1. the JSON is parsed strictly (a lone surrogate, a nesting bomb, a file that
   is not UTF-8 are one error naming the file);
2. ``summary_keys.current_summary`` brings a summary of any earlier localeval
   to today's names and shapes (the one place that knows them; the stored
   summaries of earlier releases under ``tests/data/releases/`` are read back
   by ``tests/unit/test_run_record.py``);
3. ``schema.SummaryModel`` checks every field it knows: a damaged or
   hand-edited summary is one ``DataError`` naming the file and the field
   (``metrics.faithfulness.mean``), exit 2, never a traceback.

``RunRecord.summary`` keeps the upgraded mapping for the writers of pages and
tables, which show what the file holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from localeval.errors import DataError
from localeval.results.files import SUMMARY_FILE
from localeval.results.fitness import JudgeFitness, judged_keys
from localeval.results.identity import Identity
from localeval.results.schema import MetricEntry, RunSection, SignatureEntry, SummaryModel

__all__ = ["RunRecord", "record_of", "read_record", "read_summary_json", "run_title",
           "new_summary"]


@dataclass(frozen=True, eq=False)
class RunRecord:
    """A run's summary, read and checked (see the module docstring)."""

    #: summary.json under today's names (``current_summary``), as the pages show it
    summary: dict[str, Any]
    model: SummaryModel
    #: the file it was read from (None: built in memory)
    file: str | None = None

    @property
    def metrics(self) -> dict[str, MetricEntry]:
        return self.model.metrics

    @property
    def signature(self) -> SignatureEntry | None:
        return self.model.signature

    @property
    def run(self) -> RunSection | None:
        return self.model.run

    @property
    def name(self) -> str | None:
        """The run's ``--name`` (None: unnamed, or an earlier localeval)."""
        return self.model.run.name if self.model.run is not None and self.model.run.name \
            else None

    @cached_property
    def identity(self) -> Identity:
        return Identity.of_summary(self.model.signature, list(self.model.metrics))

    @cached_property
    def fitness(self) -> JudgeFitness:
        return JudgeFitness.of_sections(self.summary.get("judge_check"),
                                        self.summary.get("judge_health"))

    @property
    def had_judge(self) -> bool:
        """A judge scored something in this run (a user-defined metric counts as judged)."""
        sig = self.model.signature
        return bool(self.model.judge_health or (sig is not None and sig.judge)
                    or self.model.usage.get("calls"))

    @cached_property
    def judged(self) -> frozenset[str]:
        """The metric keys a judge scored."""
        return frozenset(judged_keys(self.summary.get("metrics") or {},
                                     had_judge=self.had_judge))

    def caveat(self, metric: str) -> str | None:
        """The marker beside ``metric``'s number ("judge unfit"), None when it needs none:
        the judge passed its check, or the metric is not judged."""
        return self.fitness.marker if metric in self.judged else None

    def line(self) -> str:
        """The signature line (recomputed from the identity; "" without a signature)."""
        return self.identity.line() if self.identity.recorded else ""


def record_of(summary: Mapping[str, Any], file: str | os.PathLike[str] | None = None
              ) -> RunRecord:
    """The record of a summary mapping (any earlier version's): DataError naming ``file``
    and the field when it is not a run's summary."""
    from localeval.results.summary_keys import current_summary

    where = os.fspath(file) if file is not None else None
    if not isinstance(summary, Mapping):
        raise DataError("not a JSON object", file=where)
    if not isinstance(summary.get("metrics"), Mapping):
        raise DataError("no 'metrics' object", file=where)
    current = current_summary(summary)
    try:
        model = SummaryModel.model_validate(current)
    except ValidationError as e:
        raise DataError(_first_error(e), file=where) from None
    return RunRecord(current, model, where)


def new_summary(*, metrics: Mapping[str, Mapping[str, Any]], n_samples: int,
                signature: Mapping[str, Any], usage: Mapping[str, Any],
                run: Mapping[str, Any] | None = None,
                judge_health: Mapping[str, Any] | None = None,
                judge_check: Mapping[str, Any] | None = None,
                notes: list[str] | None = None) -> dict[str, Any]:
    """A finished run's summary, in the order summary.json has always had, checked against
    ``schema.SummaryModel`` before anything is written (a wrong type is a bug here, never
    a file that cannot be read back). The signature line is the identity's."""
    out: dict[str, Any] = {"metrics": {k: dict(v) for k, v in metrics.items()},
                           "n_samples": n_samples, "signature": dict(signature)}
    out["signature_line"] = Identity.of_summary(SignatureEntry.model_validate(out["signature"]),
                                                None).line()
    if run:
        out["run"] = dict(run)
    out["usage"] = dict(usage)
    if judge_health is not None:
        out["judge_health"] = dict(judge_health)
    if judge_check is not None:
        out["judge_check"] = dict(judge_check)
    if notes:
        out["notes"] = list(notes)
    SummaryModel.model_validate(out)
    return out


def read_record(folder: str | os.PathLike[str]) -> RunRecord:
    """The record of the run in ``folder`` (its ``summary.json``); a DataError naming the
    file, and the field where one is wrong, on anything unreadable."""
    path = Path(folder) / SUMMARY_FILE
    return record_of(read_summary_json(path), path)


def read_summary_json(sp: Path) -> dict[str, Any]:
    """A summary.json file parsed, as written: a missing file, invalid JSON or UTF-8, and
    anything but a JSON object are each a DataError naming the file."""
    if not sp.is_file():
        raise DataError("not found", file=str(sp))
    from localeval.dataset import loads_strict

    try:
        summary = loads_strict(sp.read_text(encoding="utf-8"), allow_non_finite=True)
    except (ValueError, OSError) as e:  # JSONDecodeError, UnicodeDecodeError, nesting
        raise DataError(f"not valid JSON: {e}", file=str(sp)) from None
    if not isinstance(summary, dict):
        raise DataError("not a JSON object", file=str(sp))
    return summary


def run_title(folder: str | os.PathLike[str], record: RunRecord | None = None) -> str:
    """What a view calls a run: its ``--name``, else its folder's name after resolving a
    link (``localeval-out/latest`` is titled by the run it points to, never "latest")."""
    if record is not None and record.name:
        return record.name
    p = Path(folder)
    try:
        p = p.resolve()
    except (OSError, RuntimeError):  # a link loop: keep the name as given
        pass
    return p.name or str(folder)


def _first_error(e: ValidationError) -> str:
    """``field 'metrics.faithfulness.mean': a number is expected, got 'high'`` (the first
    of pydantic's errors, with how many more there are)."""
    from localeval.errors import printable

    errs = e.errors(include_url=False)
    first = errs[0]
    path = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
    got = first.get("input")
    shown = printable(repr(got))
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    more = f" ({len(errs) - 1} more field{'s' if len(errs) > 2 else ''} wrong)" \
        if len(errs) > 1 else ""
    return f"field '{printable(path)}': {first.get('msg', 'wrong')}, got {shown}{more}"
