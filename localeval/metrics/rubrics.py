"""Rubric scores: RubricsScore (one rubric for the dataset) and InstanceRubrics
(a rubric per sample, from a column), as in ragas; ``rate`` is the scoring
call they share with GEval.

The judge writes a reason, then a score the grammar restricts to the
rubric's levels. ragas returns the raw level (1-5); localeval scales it to
0-1 like every metric, ``(level - lowest) / (highest - lowest)``, and keeps
the level in the details (``rating``), so ``--fail-under`` and the report
treat it like the built-in metrics. With ``--verdicts soft`` the level is
replaced by its expectation under the judge's probabilities of the levels,
and the distribution is in the details: a judge torn between 3 and 4 scores
3.5 instead of flipping.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from pydantic import Field, StrictStr

from localeval.errors import InvalidArgument
from localeval.metrics.criteria import UserDefined
from localeval.metrics.model_access import Judging
from localeval.metrics.parameters import MAX_LEVEL, Parameters, refuse, shown
from localeval.metrics.schemas import MAX_SCALE_POINTS, rating_schema
from localeval.types import Sample, Score

__all__ = ["RubricsScore", "InstanceRubrics", "rate", "parse_rubric", "DEFAULT_RUBRIC"]

#: ragas's reference-free default in spirit: five levels of correctness and completeness.
DEFAULT_RUBRIC: tuple[tuple[int, str], ...] = (
    (1, "The answer is wrong and does not address the question."),
    (2, "The answer is partly right but has major errors or omissions."),
    (3, "The answer is mostly right but unclear, thin or slightly inaccurate."),
    (4, "The answer is right and clear, with only minor omissions."),
    (5, "The answer is fully right, clear and complete."),
)
#: A level key: an integer, its text ("3"), or ragas's "score3_description".
_LEVEL = re.compile(r"(?:score)?(-?\d+)(?:_description)?", re.IGNORECASE)


def _level(key: Any, where: str) -> int:
    """The level a rubric key names; ValueError for anything but an integer or its text.

    Strict on purpose: reading the first number of any key made "1.5" and "1.7"
    (or "1" and "01") the same level, and one description silently replaced the other.
    """
    if isinstance(key, int) and not isinstance(key, bool):
        level = key
    else:
        m = _LEVEL.fullmatch(key.strip()) if isinstance(key, str) else None
        if m is None:
            raise ValueError(f"{where}: level {key!r} is not an integer (write 1 = \"...\" "
                             "or score1_description = \"...\")")
        level = int(m.group(1))
    if abs(level) > MAX_LEVEL:
        raise ValueError(f"{where}: level {key!r} is not between -{MAX_LEVEL} and {MAX_LEVEL}")
    return level


def parse_rubric(rubric: Any, where: str = "rubric") -> tuple[tuple[int, str], ...]:
    """``{1: "...", "5": "...", "score3_description": "..."}`` (or a JSON text of it)
    as sorted (level, description) pairs; ValueError naming ``where`` otherwise."""
    if isinstance(rubric, str):
        try:
            rubric = json.loads(rubric)
        except ValueError:
            raise ValueError(f"{where}: expected a mapping of levels to descriptions "
                             "(or its JSON text)") from None
    if isinstance(rubric, Mapping):
        items = list(rubric.items())
    elif isinstance(rubric, (list, tuple)) and all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in rubric):
        items = list(rubric)
    else:
        raise ValueError(f"{where}: expected a mapping of levels to descriptions, got "
                         f"{shown(rubric)}")
    out: dict[int, str] = {}
    keys: dict[int, Any] = {}
    for key, text in items:
        level = _level(key, where)
        if isinstance(text, Mapping):  # TOML reads `1.5 = "..."` as {"1": {"5": "..."}}
            raise ValueError(f"{where}: level {key!r} holds a table, not a description (a "
                             "dotted key such as 1.5 is a table in TOML; levels are integers)")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}: level {key!r} needs a description (text), got "
                             f"{shown(text)}")
        if level in out:
            raise ValueError(f"{where}: levels {keys[level]!r} and {key!r} are both level "
                             f"{level}; give each level once")
        out[level], keys[level] = text.strip(), key
    if not 2 <= len(out) <= MAX_SCALE_POINTS:
        raise ValueError(f"{where}: needs 2 to {MAX_SCALE_POINTS} levels, got {len(out)}")
    return tuple(sorted(out.items()))


def rate(ctx: Judging, sample: Sample, step: str, levels: tuple[int, ...],
         **inputs: Any) -> Score:
    """Ask ``step`` for a reason and a score among ``levels``; scale it to 0-1.

    Soft mode: the expected level under the judge's probabilities of the
    levels (renormalised over them), with the distribution in the details.
    """
    reply = ctx.ask(step, rating_schema(levels), sample, prob_field="score", **inputs)
    out = reply.output
    level = int(out.score)
    details: dict[str, Any] = {"rating": level, "reason": out.reason,
                               "scale": [levels[0], levels[-1]]}
    value = float(level)
    if reply.probs:
        raw = {int(k): float(v) for k, v in reply.probs[0].items()}
        total = sum(raw.get(v, 0.0) for v in levels)
        if total > 0:
            dist = {v: raw.get(v, 0.0) / total for v in levels}
            value = sum(v * p for v, p in dist.items())
            details["distribution"] = {str(v): round(p, 6) for v, p in dist.items()}
            details["expected_rating"] = round(value, 6)
    lo, hi = levels[0], levels[-1]
    return Score(min(max((value - lo) / (hi - lo), 0.0), 1.0), details=details)


@dataclass(frozen=True)
class RubricsScore(UserDefined):
    """A score from a rubric of levels, each with a description (ragas's RubricsScore)."""

    name: str = "rubrics_score"  # type: ignore[misc]  # a field where Metric has a ClassVar: renamable
    rubrics: Any = DEFAULT_RUBRIC

    requires: ClassVar[tuple[str, ...]] = ("answer",)
    # An empty answer is at the rubric's lowest level.
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", 0.0),)
    step: ClassVar[str] = "rubric_score"
    description: ClassVar[str] = "judge's rubric level, scaled to 0-1"

    def __post_init__(self) -> None:
        self.check()
        try:
            rubric = parse_rubric(self.rubrics, "rubrics")
        except ValueError as e:
            refuse(self, "rubrics", str(e).removeprefix("rubrics: "))
        object.__setattr__(self, "rubrics", rubric)

    def score(self, sample: Sample, ctx: Judging) -> Score:
        self.record(ctx)
        levels = tuple(level for level, _ in self.rubrics)
        return rate(ctx, sample, self.step, levels, rubric=list(self.rubrics))


class InstanceParameters(Parameters):
    column: StrictStr = Field(description="text (the name of the column holding the rubric)")


@dataclass(frozen=True)
class InstanceRubrics(UserDefined):
    """A score from each sample's own rubric, read from a data column (ragas's InstanceRubrics).

    The column holds a mapping of levels to descriptions, or its JSON text. A
    sample without it, or with a malformed one, is unscored with the reason.
    """

    name: str = "instance_rubrics"  # type: ignore[misc]  # a field where Metric has a ClassVar: renamable
    column: str = "rubrics"

    requires: ClassVar[tuple[str, ...]] = ("answer",)
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", 0.0),)
    step: ClassVar[str] = "rubric_score"
    description: ClassVar[str] = "judge's level on the sample's own rubric, scaled to 0-1"
    parameters: ClassVar[type[Parameters]] = InstanceParameters

    def __post_init__(self) -> None:
        self.check()
        if not self.column:
            raise InvalidArgument("InstanceRubrics needs a column")

    def score(self, sample: Sample, ctx: Judging) -> Score:
        row = f"row {sample.row}" if sample.row is not None else f"sample {sample.id!r}"
        raw = sample.metadata.get(self.column)
        if raw is None:
            return Score.unscored(f"{row}: no {self.column!r} column (the sample's rubric)")
        try:
            rubric = parse_rubric(raw, f"{row}: column {self.column!r}")
        except ValueError as e:
            return Score.unscored(str(e))
        self.record(ctx)
        levels = tuple(level for level, _ in rubric)
        return rate(ctx, sample, self.step, levels, rubric=list(rubric))
