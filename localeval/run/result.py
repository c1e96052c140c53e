"""What ``evaluate`` returns: per-sample scores and the summary, in the shapes RAGAS users expect.

A result whose judge failed its judge check says so where its judged numbers are
shown (``repr``, ``to_pandas()``, ``scores``), not only in a warning a notebook
may filter: the verdict is read from the summary by ``results.record_of``, the
one reader every view of a run uses, so text, retrieval and embedding metrics
never carry it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Sequence

from localeval.errors import OutputError
from localeval.metrics import Metric
from localeval.results import JudgeFitness, RunRecord, RunWriter, record_of, sample_record
from localeval.types import MultiTurnSample, Sample, Score

__all__ = ["EvaluationResult", "ScoreRow", "write_reports", "SummaryHook", "add_sections"]

#: ``to_pandas().attrs`` key of the judge's fitness (``JudgeFitness.to_dict()``).
JUDGE_CHECK_ATTR = "judge_check"
#: ``evaluate(summary_sections=...)``: the run's records -> sections added to its summary.
SummaryHook = Callable[[Sequence[Mapping[str, Any]]], Mapping[str, Any]]


@dataclass(eq=False)
class EvaluationResult(Mapping):
    """Per-sample scores, the summary, and conversions RAGAS users expect.

    A read-only mapping of metric key -> mean (None when no sample was scored), as
    ragas's result is: ``dict(result)``, ``"faithfulness" in result``, ``.keys()``,
    ``result["faithfulness"]``; ``scores`` holds the per-sample scores.

    When the judge failed its judge check, the judged numbers are not evidence:
    ``repr`` puts the marker ("judge unfit") after each judged mean and names the
    check on a last line, ``to_pandas()`` adds a ``<metric>_judge_check`` column,
    and each row of ``scores`` (a :class:`ScoreRow`) shows it after each judged
    score. The numbers themselves stay plain floats and ``Score`` objects, so
    scripts computing with them are unchanged.
    """

    samples: list[Sample]
    metrics: list[Metric]
    scores: list[dict[str, Score]]
    summary: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        caveats = self.caveats
        if caveats:  # rows are copied only when there is something to show
            self.scores = [r if isinstance(r, ScoreRow) else ScoreRow(r, caveats)
                           for r in self.scores]

    @cached_property
    def record(self) -> RunRecord:
        """The summary read as every view of a finished run reads it."""
        return record_of(self.summary)

    @property
    def judge_fitness(self) -> JudgeFitness:
        """The judge check's verdict and line (verdict None: the run had no judge check)."""
        return self.record.fitness

    def caveat(self, metric: str) -> str | None:
        """The marker beside ``metric``'s numbers ("judge unfit"), None when it needs none
        (the judge passed its check, or ``metric`` is not judged)."""
        return self.record.caveat(metric)

    @cached_property
    def caveats(self) -> dict[str, str]:
        """{metric: marker} for the judged metrics whose judge failed its check."""
        return {k: c for k in self.summary["metrics"] if (c := self.caveat(k)) is not None}

    def __getitem__(self, key: str) -> float | None:
        return self.summary["metrics"][key]["mean"]

    def __iter__(self) -> Iterator[str]:
        return iter(self.summary["metrics"])

    def __len__(self) -> int:
        return len(self.summary["metrics"])

    def means(self) -> dict[str, float | None]:
        return {k: v["mean"] for k, v in self.summary["metrics"].items()}

    def __repr__(self) -> str:
        caveats = self.caveats
        inner = ", ".join(f"'{k}': {'nan' if v is None else round(v, 4)}"
                          + (f" ({caveats[k]})" if k in caveats else "")
                          for k, v in self.means().items())
        return "{" + inner + "}" + (f"\n  {self._check_line()}" if caveats else "")

    def _check_line(self) -> str:
        """The judge check's own line when it says the scores are not evidence, else the
        fitness's sentence that does."""
        fit = self.judge_fitness
        return fit.line if fit.failed and fit.line else fit.caveat

    def records(self) -> list[dict[str, Any]]:
        """The ``results.jsonl`` lines, one per sample."""
        return [sample_record(s, sc) for s, sc in zip(self.samples, self.scores)]

    def to_pandas(self) -> Any:
        """One row per sample: the inputs, one column per metric (NaN when unscored), then
        ``<metric>_reason`` columns saying why a score is missing (None when scored).

        When the judge failed its check, each judged metric also gets a
        ``<metric>_judge_check`` column holding the verdict ("unfit") on every row,
        so a table cut from the frame keeps it; ``df.attrs["judge_check"]`` holds
        the fitness (``JudgeFitness.to_dict()``) whenever the run had a check.
        """
        try:
            import pandas as pd
        except ImportError:  # in the default install; absent only after --no-deps
            from localeval.errors import UsageError

            raise UsageError("to_pandas() needs pandas, part of localeval's default install: "
                             "pip install pandas") from None
        rows = []
        for s, sc in zip(self.samples, self.scores):
            # a conversation's user_input is its messages, as in ragas's multi-turn results
            row: dict[str, Any] = {"id": s.id, "user_input": [
                m.to_dict() for m in s.messages] if isinstance(s, MultiTurnSample) else s.question,
                                   "retrieved_contexts": s.contexts, "response": s.answer,
                                   "reference": s.reference}
            reasons: dict[str, Any] = {}
            for m in self.metrics:
                got = sc.get(m.key)
                v = got.value if got is not None else None
                row[m.key] = math.nan if v is None else v
                reasons[f"{m.key}_reason"] = (None if v is not None else
                                              (got.reason if got is not None else "not scored"))
            checks = {f"{m.key}_judge_check": self.judge_fitness.verdict
                      for m in self.metrics if m.key in self.caveats}
            rows.append({**row, **reasons, **checks})
        df = pd.DataFrame(rows)
        if self.judge_fitness.verdict is not None:
            df.attrs[JUDGE_CHECK_ATTR] = self.judge_fitness.to_dict()
        return df

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write the run folder a CLI run writes: ``results.jsonl``, ``results.csv``,
        ``summary.json``, ``summary.md`` and ``report.html``."""
        import warnings

        writer = RunWriter(out_dir)
        for r in self.records():
            writer.write(r)
        writer.close(self.summary)
        write_reports(writer.dir, self.summary, self.samples, self.scores,
                      lambda msg: warnings.warn(msg, stacklevel=3))
        return writer.dir


def write_reports(out: Path, summary: Mapping[str, Any], samples: Sequence[Sample],
                  scores: Sequence[Mapping[str, Score]],
                  warn: Callable[[str], None], *, from_file: bool = False) -> None:
    """report.html (self-contained) and summary.md next to the results.

    ``from_file``: the report reads each record from ``results.jsonl`` when it
    needs it (``results.ResultLines``), for a run that keeps no records.

    The results and summary are on disk by now: a report that fails to render
    is a warning (``localeval report DIR`` can retry it), never a lost run.
    """
    from localeval.report import write_html_report, write_markdown_report
    from localeval.results import RESULTS_FILE, ResultLines

    try:
        records: Sequence[Mapping[str, Any]] = (ResultLines(out / RESULTS_FILE) if from_file
                                                else _Records(samples, scores))
        write_html_report(out, dict(summary), records, samples)
        write_markdown_report(out, dict(summary))
    except OutputError as e:  # a full disk: the message names the file
        warn(f"{e}; results.jsonl and summary.json are complete in {out}")
    except (RecursionError, ValueError, TypeError, OSError) as e:
        warn(f"report.html/summary.md not written ({type(e).__name__}: {e}); "
             f"results.jsonl and summary.json are complete in {out}")


def add_sections(summary: dict[str, Any], hook: SummaryHook, writer: RunWriter | None,
                 samples: Sequence[Sample], scores: Sequence[Mapping[str, Score]]
                 ) -> BaseException | None:
    """Add the sections ``hook`` returns for the finished run's records to ``summary``.

    The records are the ``results.jsonl`` lines: read back from the file one at a
    time (``results.ResultLines``) when the run writes one, else built from the
    scores kept. What the hook raises is returned, not raised, so that the run's
    files are written (without its sections) before it reaches the caller.
    """
    from localeval.results import ResultLines

    try:
        records: Sequence[Mapping[str, Any]] = (ResultLines(writer.results_path)
                                                if writer is not None else _Records(samples, scores))
        extra = dict(hook(records))
    except BaseException as e:  # Ctrl-C too: raised by evaluate once the files are written
        return e
    reserved = sorted(set(extra) & set(summary))
    if reserved:
        from localeval.errors import UsageError

        return UsageError(f"summary_sections may not replace the summary's own "
                          f"{', '.join(reserved)}")
    summary.update(extra)
    return None


class ScoreRow(dict[str, Score]):
    """One sample's scores (metric key -> ``Score``), a plain dict whose ``repr`` puts the
    marker ("judge unfit") after each judged score of a judge that failed its check:
    ``print(result.scores)`` is where ragas users read per-sample numbers."""

    def __init__(self, scores: Mapping[str, Score], caveats: Mapping[str, str]) -> None:
        super().__init__(scores)
        self.caveats = caveats  # shared by the rows of one result

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" + (f" ({self.caveats[k]})" if k in self.caveats
                                                  else "") for k, v in self.items()) + "}"


class _Records(Sequence[Mapping[str, Any]]):
    """The ``results.jsonl`` lines of ``samples``, each built when it is read.

    The report reads every record a few times but keeps only the few it shows;
    building them all at once for it took most of a million-sample run's memory.
    """

    def __init__(self, samples: Sequence[Sample], scores: Sequence[Mapping[str, Score]]) -> None:
        self.samples, self.scores = samples, scores

    def __len__(self) -> int:
        return min(len(self.samples), len(self.scores))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return sample_record(self.samples[i], self.scores[i])
