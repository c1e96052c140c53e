"""FactualCorrectness with ragas's arithmetic: claims of the answer checked
against the reference (TP / FP), claims of the reference checked against the
answer (FN), then precision, recall or F-beta.

As in ragas (``_factual_correctness.py`` and its 0.4 rewrite):

- ``precision`` = TP / (TP + FP + 1e-8), ``recall`` = TP / (TP + FN + 1e-8),
  ``f1`` = F-beta(TP, FP, FN) with ``beta`` (0 when precision and recall are 0);
  the reference's claims are decomposed only when the mode needs FN;
- TP counts the *answer's* supported claims also in recall (ragas's own
  definition, kept so that numbers agree);
- an empty answer scores 0.0 and an empty reference is unscored, without a
  judge call (``degenerate``); a non-empty text from which the judge extracted
  no claim is unscored ("judge extracted nothing ..."), where ragas counts
  nothing (TP = FP = 0, or FN = 0, and a perfect recall);
- the score is rounded to 2 decimals (the unrounded value is in the details).

Claims come at ragas's four levels of ``atomicity`` and ``coverage``. At
high/high the claims are exactly the shared ``statements`` step (one fact
each, every fact), so FactualCorrectness reuses what faithfulness,
answer_correctness and noise_sensitivity extracted for the sample. Claims are
checked with ``claim_verdicts``, which reads the source with the question (a
reference "Completed in 1958." names no subject), like answer_correctness.
Soft verdicts give TP = sum of P(supported), FP = sum of 1 - P.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from localeval.lang import resolve_lang
from localeval.metrics.answer import fbeta
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import extracted_nothing
from localeval.metrics.model_access import Judging
from localeval.metrics.output_bounds import merge_duplicates, source, statement_bounds
from localeval.metrics.schemas import statements_schema
from localeval.metrics.specs import register
from localeval.metrics.steps import SIDES, statement_verdicts, statements
from localeval.types import Sample, Score

__all__ = ["FactualCorrectness", "factual_score"]

#: ragas's epsilon in precision and recall.
EPS = 1e-8


def factual_score(tp: float, fp: float, fn: float, mode: str = "f1", beta: float = 1.0) -> float:
    """ragas's FactualCorrectness value (before rounding) from the claim counts."""
    if mode == "precision":
        return tp / (tp + fp + EPS)
    if mode == "recall":
        return tp / (tp + fn + EPS)
    return fbeta(tp, fp, fn, beta)


@register
@dataclass(frozen=True)
class FactualCorrectness(Metric):
    """Claim-level precision / recall / F-beta of the answer against the reference."""

    name: ClassVar[str] = "factual_correctness"
    requires: ClassVar[tuple[str, ...]] = ("answer", "reference")
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = "claims of answer vs reference: precision, recall or F-beta"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("answer", 0.0))

    mode: Literal["precision", "recall", "f1"] = "f1"
    beta: float = 1.0
    atomicity: Literal["low", "high"] = "low"
    coverage: Literal["low", "high"] = "low"

    def __post_init__(self) -> None:
        if self.mode not in ("precision", "recall", "f1"):
            raise ValueError("mode must be precision, recall or f1")
        if not isinstance(self.beta, (int, float)) or not self.beta > 0:
            raise ValueError("beta must be a number > 0 (> 1 favours recall, < 1 precision)")
        object.__setattr__(self, "beta", float(self.beta))
        for what in ("atomicity", "coverage"):
            if getattr(self, what) not in ("low", "high"):
                raise ValueError(f"{what} must be low or high")

    def claims(self, ctx: Judging, sample: Sample, target: Literal["answer", "reference"]
               ) -> tuple[list[str], int]:
        """The target's claims at this metric's level, repeats merged (and how many)."""
        if self.atomicity == "high" and self.coverage == "high":
            got = statements(ctx, sample, target)
            return got.statements, got.merged
        text = sample.answer if target == "answer" else sample.reference
        items, chars = statement_bounds(source(text, resolve_lang(ctx.lang, text)))
        reply = ctx.ask("claims", statements_schema(items, chars), sample, target=target,
                        atomicity=self.atomicity, coverage=self.coverage)
        return merge_duplicates(reply.output.statements)

    def score(self, sample: Sample, ctx: Judging) -> Score:
        # The answer's side and the reference's side are independent chains
        # (claims, then verdicts): asked together when the judge batches.
        sides = SIDES[:1] if self.mode == "precision" else SIDES
        got = ctx.map(lambda side: self._side(ctx, sample, side), sides)
        (a_claims, merged, a_verdicts, a_values) = got[0]
        details: dict[str, Any] = {"answer_claims": a_claims}
        if not a_claims:
            return extracted_nothing("answer", **details, duplicates_merged=merged)
        details["answer_vs_reference"] = a_verdicts
        tp, fp, fn = sum(a_values), sum(1.0 - v for v in a_values), 0.0
        if len(got) > 1:
            r_claims, r_merged, r_verdicts, r_values = got[1]
            merged += r_merged
            details["reference_claims"] = r_claims
            if not r_claims:
                return extracted_nothing("reference", **details, duplicates_merged=merged)
            details["reference_vs_answer"] = r_verdicts
            fn = sum(1.0 - v for v in r_values)
        raw = factual_score(tp, fp, fn, self.mode, self.beta)
        details.update(TP=tp, FP=fp, FN=fn, unrounded=raw, duplicates_merged=merged)
        return Score(float(np.round(raw, 2)), details=details)  # ragas rounds with numpy

    def _side(self, ctx: Judging, sample: Sample, side: Literal["answer", "reference"]
              ) -> tuple[list[str], int, list[dict[str, Any]], list[float]]:
        """One side's claims and their verdicts against the other side."""
        claims, merged = self.claims(ctx, sample, side)
        if not claims:
            return claims, merged, [], []
        verdicts, values = statement_verdicts(
            ctx, sample, "claim_verdicts", claims, soft=True,
            source="reference" if side == "answer" else "answer")
        return claims, merged, verdicts, values
