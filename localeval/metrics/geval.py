"""GEval: a criterion in the user's words, scored on an integer scale by
evaluation steps (Liu et al. 2023, "G-Eval"; deepeval's GEval).

The steps are the user's (``evaluation_steps``) or written by the judge once
per criterion, from the criterion alone, and reused for every sample: they
are kept for the process and, like every judge call, in the run cache, so
the next run reads them back instead of asking again. The score call shows
the sample, the criterion and the steps; the grammar allows only the
integers of ``scale``.

deepeval weights the score by the judge's token probabilities, but only for
OpenAI models. A local judge has the logits, so ``--verdicts soft`` gives
every user the expected score over the scale's values, with the distribution
in the details (``localeval.metrics.rubrics.rate``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field, StrictStr

from localeval.errors import InvalidArgument
from localeval.lang import resolve_lang
from localeval.metrics.criteria import UserDefined, definition_hash
from localeval.metrics.model_access import Judging
from localeval.metrics.output_bounds import merge_duplicates
from localeval.metrics.parameters import MAX_LEVEL, Level, Parameters, Texts, refuse
from localeval.metrics.rubrics import rate
from localeval.metrics.schemas import MAX_SCALE_POINTS, MAX_STEPS, EvaluationSteps
from localeval.types import Sample, Score

__all__ = ["GEval", "GEVAL_FIELDS"]

#: Sample fields a GEval criterion may name.
GEVAL_FIELDS = ("question", "answer", "contexts", "reference")
#: The blank sample the steps are written for: they depend on the criterion only.
_NO_SAMPLE = Sample(id="geval-steps")
_NUMBERED = re.compile(r"^\s*(?:step\s*)?\d+\s*[.):：、]\s*", re.IGNORECASE)
_steps_lock = threading.Lock()
_steps_memo: dict[tuple[Any, ...], tuple[str, ...]] = {}


class GEvalParameters(Parameters):
    criteria: StrictStr = Field(description="text (the criterion in your words)")
    evaluation_steps: Texts | None = Field(description="a list of texts, one per step")
    scale: tuple[Level, Level] = Field(
        description=f"a list of two integers [low, high] from -{MAX_LEVEL} to {MAX_LEVEL}")
    fields: Texts = Field(description="a list of field names: " + ", ".join(GEVAL_FIELDS))


@dataclass(frozen=True)
class GEval(UserDefined):
    """Score 0-1 from the judge's rating on ``scale`` (default 1-5) by evaluation steps."""

    name: str = ""  # type: ignore[misc]  # a dataclass field where Metric has a ClassVar: set per criterion
    criteria: str = ""
    evaluation_steps: tuple[str, ...] | None = None
    scale: tuple[int, int] = (1, 5)
    fields: tuple[str, ...] = ("question", "answer")

    step: ClassVar[str] = "geval"
    description: ClassVar[str] = "G-Eval rating on the criterion's scale, scaled to 0-1"
    parameters: ClassVar[type[Parameters]] = GEvalParameters

    def __post_init__(self) -> None:
        self.check()
        if not self.criteria.strip():
            raise InvalidArgument(f"GEval {self.name!r} needs criteria")
        lo, hi = self.scale
        if not lo < hi or hi - lo + 1 > MAX_SCALE_POINTS:
            refuse(self, "scale", f"must be [low, high] with low < high and at most "
                                  f"{MAX_SCALE_POINTS} values, not [{lo}, {hi}]")
        bad = [f for f in self.fields if f not in GEVAL_FIELDS]
        if bad or not self.fields:
            refuse(self, "fields", f"must be some of {', '.join(GEVAL_FIELDS)}; got "
                                   f"{', '.join(bad) or 'none'}")
        if self.evaluation_steps is not None:
            steps = tuple(s.strip() for s in self.evaluation_steps if s.strip())
            if not steps:
                refuse(self, "evaluation_steps", "is empty")
            object.__setattr__(self, "evaluation_steps", steps)

    @property
    def requires(self) -> tuple[str, ...]:  # type: ignore[override]  # per criterion, a ClassVar on Metric
        return self.fields

    @property
    def on_empty(self) -> tuple[tuple[str, float | None], ...]:  # type: ignore[override]  # per criterion, a ClassVar on Metric
        """An empty answer is the scale's lowest point when the criterion reads the answer;
        other empty fields go to the judge (the criterion may be about their absence)."""
        return (("answer", 0.0),) if "answer" in self.fields else ()

    def steps_for(self, ctx: Judging, lang: str) -> tuple[tuple[str, ...], bool]:
        """The evaluation steps and whether the judge wrote them (once per criterion)."""
        if self.evaluation_steps is not None:
            return self.evaluation_steps, False
        key = (getattr(ctx.judge, "fingerprint", None), lang, self.criteria, self.fields,
               ctx.seed)
        with _steps_lock:
            hit = _steps_memo.get(key)
        if hit is not None:
            return hit, True
        writer = ctx.for_sample(lang=lang)
        out = writer.ask("geval_steps", EvaluationSteps, _NO_SAMPLE, criteria=self.criteria,
                         fields=list(self.fields), min_steps=3, max_steps=MAX_STEPS).output
        # The template numbers the steps itself; a repeated step is one step.
        steps = tuple(merge_duplicates([_NUMBERED.sub("", s)
                                        for s in out.steps])[0])
        if not steps:  # a judge that wrote nothing still gets the criterion itself
            steps = (self.criteria,)
        with _steps_lock:
            _steps_memo[key] = steps
        return steps, True

    def known_version(self) -> str | None:
        """As ``record`` writes it: with the steps, known only when the user gave them."""
        if not self.evaluation_steps:
            return None
        return definition_hash(type(self).__name__, *self.definition_parts(),
                               self.evaluation_steps)

    def score(self, sample: Sample, ctx: Judging) -> Score:
        lang = resolve_lang(ctx.lang, sample.question, sample.answer)
        steps, generated = self.steps_for(ctx, lang)
        self.record(ctx, steps)
        lo, hi = self.scale
        sc = rate(ctx, sample, self.step, tuple(range(lo, hi + 1)), criteria=self.criteria,
                  steps=list(steps), low=lo, high=hi, fields=list(self.fields))
        sc.details["evaluation_steps"] = list(steps)
        sc.details["steps_generated"] = generated
        return sc
