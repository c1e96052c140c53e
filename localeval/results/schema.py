"""The typed shape of ``summary.json``: what a run records, checked field by field on reading.

A summary is read long after it was written, by other verbs (``runs``,
``history``, ``diff``, ``report``) and by a team's own scripts, so reading it
checks every field it knows for its type (pydantic, strict: a number written
as text, a list where an object belongs, a negative count are refused) and
keeps every field it does not know as it is (a section a later localeval or a
caller's ``summary_sections`` added). Each model here is one part of the run's
record; ``record.RunRecord`` puts them together and ``record.read_record`` is
the one reader.

The models describe today's names only: a summary of an earlier localeval is
first brought to today's names by ``summary_keys.current_summary``, the one
place that knows the older spellings.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MetricEntry", "SubsetEntry", "SignatureEntry", "RunSection", "JudgeCheckEntry",
           "GatesEntry", "StopEntry", "SummaryModel"]


class _Part(BaseModel):
    # strict: a summary is localeval's own output, so a value of the wrong type is damage
    # (or a hand edit), never something to coerce; extra: unknown keys are kept as written
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class MetricEntry(_Part):
    """One metric's line in ``metrics``: the mean over scored samples and its 95% interval."""

    mean: float | None = None
    ci95: list[float | None] | None = Field(default=None, min_length=2, max_length=2)
    n: int = Field(default=0, ge=0)
    unscored: int = Field(default=0, ge=0)
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    lower_is_better: bool = False
    #: a corpus-level statistic (BLEU over the corpus), where the metric has one
    corpus: float | None = None
    #: the summary says itself whether a judge scored the metric (else the registry does)
    judged: bool | None = None


class SubsetEntry(_Part):
    """``--limit N`` or ``--sample N --seed S``: the run scored ``kept`` of ``of`` samples."""

    limit: int | None = Field(default=None, ge=0)
    sample: int | None = Field(default=None, ge=0)
    seed: int | None = None
    kept: int | None = Field(default=None, ge=0)
    of: int | None = Field(default=None, ge=0)


class SignatureEntry(_Part):
    """``signature``: every setting that makes two runs' numbers comparable.

    ``reasons`` has a default because runs written before it was recorded wrote full
    reasons; ``current_summary`` fills it in, so a reader never needs the rule.
    """

    localeval: str | None = None
    judge: str | None = None
    judge_fingerprint: str | None = None
    embedder: str | None = None
    embedder_fingerprint: str | None = None
    prompts: dict[str, str] = Field(default_factory=dict)
    prompts_hash: str | None = None
    seed: int | None = None
    verdicts: str | None = None
    reasons: str = "full"
    lang: str | None = None
    repeats: int = Field(default=1, ge=1)
    dataset_hash: str | None = None
    testset_hash: str | None = None
    dataset_rows: int | None = Field(default=None, ge=0)
    subset: SubsetEntry | None = None


class RunSection(_Part):
    """``run``: when the run started, the data it read, its name and tags."""

    started: str | None = None
    data: str | None = None
    name: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)


class JudgeCheckEntry(_Part):
    """``judge_check``: the judge's result on known-answer pairs (``judge_check`` package)."""

    verdict: str | None = None
    line: str | None = None


class GatesEntry(_Part):
    """``gates``: the ``--fail-if-*`` gates the run had, and which failed."""

    passed: bool
    gates: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)


class StopEntry(_Part):
    """``interrupted``: the run stopped after ``finished`` of ``total`` samples."""

    finished: int | None = Field(default=None, ge=0)
    total: int | None = Field(default=None, ge=0)


class SummaryModel(_Part):
    """The whole of ``summary.json`` (today's names)."""

    metrics: dict[str, MetricEntry]
    n_samples: int | None = Field(default=None, ge=0)
    signature: SignatureEntry | None = None
    signature_line: str | None = None
    run: RunSection | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    judge_health: dict[str, Any] | None = None
    judge_check: JudgeCheckEntry | None = None
    gates: GatesEntry | None = None
    interrupted: StopEntry | None = None
    notes: list[str] = Field(default_factory=list)
    corrected: dict[str, Any] | None = None
