"""Core value types: a sample to evaluate and the score a metric gives it.

Both round-trip through JSON so that results files can be re-read (resume,
``compare``) without the objects that produced them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Sample", "Score", "SAMPLE_FIELDS"]

#: Canonical sample fields a metric may require (RAGAS v1 names are aliases).
SAMPLE_FIELDS = (
    "question",
    "answer",
    "contexts",
    "reference",
    "reference_contexts",
    "retrieved_ids",
    "relevant_ids",
)


@dataclass(slots=True)  # no per-sample __dict__: a million samples are held at once
class Sample:
    """One RAG interaction. Field names follow RAGAS v1; v2 names are accepted on load.

    ``relevant_ids`` is always a mapping id -> graded relevance (a plain list
    loads as grade 1 each). ``row`` is the 1-based line or row in the source,
    kept so that error messages can point at it.
    """

    id: str
    question: str | None = None
    answer: str | None = None
    contexts: list[str] | None = None
    reference: str | None = None
    reference_contexts: list[str] | None = None
    retrieved_ids: list[str] | None = None
    relevant_ids: dict[str, float] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    row: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("row")
        return {k: v for k, v in d.items() if v is not None and v != {}}

    def has(self, name: str) -> bool:
        """True when the field is present (empty strings and lists count as present)."""
        return getattr(self, name, None) is not None


@dataclass(slots=True)
class Score:
    """A metric's value for one sample, or the reason there is none.

    ``value`` is None when unscored; ``reason`` then says why. ``details``
    carries the working (statements, verdicts, generated questions...), which
    ``results.jsonl`` exposes.
    """

    value: float | None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.value is not None:
            v = float(self.value)
            if math.isnan(v):
                # A bare NaN is never allowed: it must carry a reason.
                self.value = None
                self.reason = self.reason or "metric returned NaN"
            else:
                self.value = v

    @classmethod
    def unscored(cls, reason: str, **details: Any) -> "Score":
        return cls(None, reason, dict(details))

    @property
    def scored(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "reason": self.reason, "details": self.details}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Score":
        return cls(d.get("value"), d.get("reason"), dict(d.get("details") or {}))
