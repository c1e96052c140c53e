"""Metrics that judge the answer: faithfulness, answer_relevancy,
answer_similarity, answer_correctness and noise_sensitivity.

Arithmetic follows ragas 0.4's ``evaluate()`` path (docs/metrics.md lists
the deliberate differences); the judge steps go through ``Judging.ask`` with
the prompt templates in ``localeval/prompts/``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from localeval.embed import prep_text
from localeval.metrics.base import Metric
from localeval.metrics.degenerate import extracted_nothing
from localeval.metrics.model_access import Judging
from localeval.metrics.output_bounds import reason_chars
from localeval.metrics.schemas import (
    MAX_QUESTIONS,
    GeneratedQuestions,
    correctness_schema,
    reason_room,
    sized,
)
from localeval.metrics.specs import register
from localeval.metrics.steps import SIDES, reason_of, statement_verdicts, statements
from localeval.types import Sample, Score

__all__ = [
    "Faithfulness",
    "AnswerRelevancy",
    "AnswerSimilarity",
    "AnswerCorrectness",
    "cosine_rows",
    "embed_text",
    "NoiseSensitivity",
    "fbeta",
]


@register
@dataclass(frozen=True)
class Faithfulness(Metric):
    """Share of the answer's statements that the retrieved contexts support."""

    name: ClassVar[str] = "faithfulness"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer", "contexts")
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = "supported statements / statements of the answer"
    # No statement to check (0/0, as ragas's NaN); no context supports nothing.
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", None),
                                                                 ("contexts", 0.0))

    def score(self, sample: Sample, ctx: Judging) -> Score:
        got = statements(ctx, sample, "answer")
        stmts = got.statements
        if not stmts:
            return extracted_nothing("answer", statements=[], duplicates_merged=got.merged)
        verdicts, values = statement_verdicts(ctx, sample, "faithfulness_verdicts", stmts,
                                              soft=True)
        return Score(sum(values) / len(values),
                     details={"statements": stmts, "verdicts": verdicts,
                              "duplicates_merged": got.merged})


@register
@dataclass(frozen=True)
class AnswerRelevancy(Metric):
    """Mean cosine between the question and n questions generated from the answer alone.

    The n questions come from ONE judge call that must return exactly n
    (distinct, by instruction) items; ragas instead samples n generations,
    and silently uses 1 when the LLM cannot return several.
    """

    name: ClassVar[str] = "answer_relevancy"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer")
    uses_judge: ClassVar[bool] = True
    uses_embedder: ClassVar[bool] = True
    description: ClassVar[str] = "mean cos(question, questions generated from the answer)"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", 0.0),)
    #: Its prompt omits the sample block (it must not see the question), so
    #: running it first or last among a sample's metrics keeps the others'
    #: calls back to back on the shared KV prefix.
    shares_sample_prefix: ClassVar[bool] = False

    strictness: int = 3

    def __post_init__(self) -> None:
        if not 1 <= self.strictness <= MAX_QUESTIONS:
            raise ValueError(f"strictness must be between 1 and {MAX_QUESTIONS}")

    def texts_to_embed(self, sample: Sample) -> list[str]:
        return [embed_text(sample.question)]

    def score(self, sample: Sample, ctx: Judging) -> Score:
        reply = ctx.ask("answer_relevancy", sized(GeneratedQuestions, self.strictness), sample,
                        n=self.strictness)
        gens = reply.output.questions
        texts = [g.question.strip() for g in gens]
        flags = [int(g.noncommittal) for g in gens]
        details: dict = {"generated": [{"question": t, "noncommittal": f}
                                       for t, f in zip(texts, flags)]}
        if all(not t for t in texts):
            return Score.unscored("the judge generated only empty questions", **details)
        vecs = ctx.embed([embed_text(sample.question)] + [embed_text(t) for t in texts])
        cos = _cosines(vecs)[1:]
        for d, c in zip(details["generated"], cos):
            d["cosine"] = round(float(c), 6)
        all_noncommittal = all(flags)
        details["all_noncommittal"] = all_noncommittal
        details["distinct_questions"] = len(set(texts))
        return Score(0.0 if all_noncommittal else float(np.mean(cos)), details=details)


def embed_text(text: str | None) -> str:
    """A sample's text as embedded: a missing one as the empty string (``prep_text``'s rule)."""
    return prep_text(text or "")


def cosine_rows(vectors: np.ndarray, anchor: int = 0) -> np.ndarray:
    """Cosine of every row with row ``anchor``, after L2 normalisation (raw, unclipped)."""
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms == 0, 1.0, norms)
    return v @ v[anchor]


def _cosines(vecs: np.ndarray) -> np.ndarray:
    """Cosines with row 0, clamped to [-1, 1].

    Rounding in the normalisation can give 1.0000000000000002 for identical
    texts; a score outside its documented range breaks bounded histograms
    and any ``>= 1`` check downstream, so it is clamped here, once.
    """
    return np.clip(cosine_rows(vecs), -1.0, 1.0)


def _similarity(ctx: Judging, sample: Sample) -> float:
    vecs = ctx.embed([embed_text(sample.answer), embed_text(sample.reference)])
    return float(_cosines(vecs)[1])


@register
@dataclass(frozen=True)
class AnswerSimilarity(Metric):
    """Cosine of the answer and reference embeddings; optionally thresholded to 0/1."""

    name: ClassVar[str] = "answer_similarity"
    aliases: ClassVar[tuple[str, ...]] = ("semantic_similarity",)
    requires: ClassVar[tuple[str, ...]] = ("answer", "reference")
    uses_embedder: ClassVar[bool] = True
    description: ClassVar[str] = "cos(embed(answer), embed(reference))"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("answer", 0.0))

    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and not self.threshold > 0:
            raise ValueError("threshold must be > 0 (or omitted)")

    def texts_to_embed(self, sample: Sample) -> list[str]:
        return [embed_text(sample.answer), embed_text(sample.reference)]

    def score(self, sample: Sample, ctx: Judging) -> Score:
        cos = _similarity(ctx, sample)
        if self.threshold is None:
            return Score(cos, details={"cosine": cos})
        return Score(1.0 if cos >= self.threshold else 0.0,
                     details={"cosine": cos, "threshold": self.threshold})


def fbeta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float:
    """F-beta with precision/recall 0 on a zero denominator, and 0 when both are 0."""
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    if precision == 0.0 and recall == 0.0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


@register
@dataclass(frozen=True)
class AnswerCorrectness(Metric):
    """Weighted mean of statement-level F-beta against the reference and answer_similarity."""

    name: ClassVar[str] = "answer_correctness"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer", "reference")
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = "(w0*F_beta(TP,FP,FN) + w1*similarity) / (w0+w1)"
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("reference", None),
                                                                 ("answer", 0.0))

    weights: tuple[float, float] = (0.75, 0.25)
    beta: float = 1.0

    def __post_init__(self) -> None:
        w = tuple(float(x) for x in self.weights)
        if len(w) != 2:
            raise ValueError("weights must be two numbers: factuality, similarity")
        if any(x < 0 or math.isnan(x) for x in w):
            raise ValueError("weights must not be negative")
        if sum(w) == 0:
            raise ValueError("at least one weight must be positive")
        if not self.beta > 0:
            raise ValueError("beta must be > 0")
        object.__setattr__(self, "weights", w)

    @property
    def uses_embedder(self) -> bool:  # type: ignore[override]  # per instance (no embedder when w1 == 0), a ClassVar on Metric
        return self.weights[1] != 0

    def texts_to_embed(self, sample: Sample) -> list[str]:
        if self.weights[1] == 0:
            return []
        return [embed_text(sample.answer), embed_text(sample.reference)]

    def score(self, sample: Sample, ctx: Judging) -> Score:
        a_got, g_got = ctx.map(lambda t: statements(ctx, sample, t), SIDES)
        a_st, g_st = a_got.statements, g_got.statements
        details: dict = {"answer_statements": a_st, "reference_statements": g_st,
                         "duplicates_merged": a_got.merged + g_got.merged}
        # Both texts hold text (empty ones are decided before): no statement from
        # one of them is a failed extraction, not agreement and not a zero.
        if not a_st:
            return extracted_nothing("answer", **details)
        if not g_st:
            return extracted_nothing("reference", **details)
        factuality = self._classify(ctx, sample, a_st, g_st, details)
        details["factuality"] = factuality
        w0, w1 = self.weights
        if w1 == 0:
            return Score(factuality, details=details)
        sim = _similarity(ctx, sample)
        details["similarity"] = sim
        return Score((w0 * factuality + w1 * sim) / (w0 + w1), details=details)

    def _classify(self, ctx: Judging, sample: Sample, a_st: list[str], g_st: list[str],
                  details: dict) -> float:
        """F-beta from one verdict per answer and per reference statement.

        The grammar sizes both lists, so TP + FP is the number of answer
        statements and each reference statement is covered or FN, once; the
        TP/FP/FN lists in the details are the input statements themselves.
        """
        schema = correctness_schema(len(a_st), len(g_st),
                                    reason_room(ctx.reasons, reason_chars(a_st + g_st)))
        out = ctx.ask("answer_correctness", schema, sample,
                      answer_statements=a_st, reference_statements=g_st).output
        a_v, g_v = out.answer, out.reference

        def rows(stmts: list[str], items: list, verdict: int) -> list[dict]:
            # statement and reason (none in --reasons none); the class names the verdict
            return [{"statement": s, **reason_of(i)} for s, i in zip(stmts, items)
                    if i.verdict == verdict]

        details["TP"] = rows(a_st, a_v, 1)
        details["FP"] = rows(a_st, a_v, 0)
        details["FN"] = rows(g_st, g_v, 0)
        return fbeta(len(details["TP"]), len(details["FP"]), len(details["FN"]), self.beta)


@register
@dataclass(frozen=True)
class NoiseSensitivity(Metric):
    """Share of answer statements that are wrong and supported by a retrieved context.

    ``relevant`` mode counts errors taken from relevant contexts (those that
    support some reference statement); ``irrelevant`` mode counts errors
    taken only from irrelevant ones. Lower is better.
    """

    name: ClassVar[str] = "noise_sensitivity"
    requires: ClassVar[tuple[str, ...]] = ("question", "answer", "reference", "contexts")
    uses_judge: ClassVar[bool] = True
    gives_reasons: ClassVar[bool] = True
    lower_is_better: ClassVar[bool] = True
    description: ClassVar[str] = "incorrect answer statements supported by (ir)relevant contexts"
    # Lower is better, so 0.0 would be the best score: every empty input is unscored.
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (
        ("answer", None), ("reference", None), ("contexts", None))

    mode: Literal["relevant", "irrelevant"] = "relevant"

    def __post_init__(self) -> None:
        if self.mode not in ("relevant", "irrelevant"):
            raise ValueError("mode must be 'relevant' or 'irrelevant'")

    def score(self, sample: Sample, ctx: Judging) -> Score:
        a_got, g_got = ctx.map(lambda t: statements(ctx, sample, t), SIDES)
        a_st, g_st = a_got.statements, g_got.statements
        details: dict = {"answer_statements": a_st, "reference_statements": g_st,
                         "duplicates_merged": a_got.merged + g_got.merged}
        if not a_st:
            return extracted_nothing("answer", **details)
        if not g_st:
            return extracted_nothing("reference", **details)
        contexts = sample.contexts or []
        r2g_cols, r2a_cols = [], []
        per_context = []
        # Every verdict call below is independent of the others: one batch when the judge allows.
        asks: list[tuple[list[str], int | str]] = [
            (st, k) for k in range(1, len(contexts) + 1) for st in (g_st, a_st)]
        asks.append((a_st, "reference"))
        got = ctx.map(lambda a: statement_verdicts(ctx, sample, "noise_verdicts", a[0],
                                                   source=a[1]), asks)
        for k in range(1, len(contexts) + 1):
            (g_det, g_val), (a_det, a_val) = got[2 * k - 2], got[2 * k - 1]
            r2g_cols.append(g_val)
            r2a_cols.append(a_val)
            per_context.append({"context": k, "reference_verdicts": g_det,
                                "answer_verdicts": a_det})
        ref_det, g2a = got[-1]
        details.update(per_context=per_context, answer_vs_reference=ref_det)
        bad = [len(c) != len(g_st) for c in r2g_cols] + [len(c) != len(a_st) for c in r2a_cols]
        if any(bad) or len(g2a) != len(a_st):
            return Score.unscored("judge returned a verdict count that does not match the "
                                  "statements", **details)
        r2g = np.array(r2g_cols, dtype=bool).T  # [G, K]
        r2a = np.array(r2a_cols, dtype=bool).T  # [A, K]
        incorrect = ~np.array(g2a, dtype=bool)  # [A]
        relevant = r2g.any(axis=0)  # [K]
        faithful_rel = (r2a & relevant).any(axis=1)  # [A]
        if self.mode == "relevant":
            hits = faithful_rel & incorrect
        else:
            faithful_irr = (r2a & ~relevant).any(axis=1)
            hits = faithful_irr & ~faithful_rel & incorrect
        details.update(relevant_contexts=[int(k) for k in np.flatnonzero(relevant) + 1],
                       incorrect_statements=[s for s, x in zip(a_st, incorrect) if x],
                       counted_statements=[s for s, x in zip(a_st, hits) if x])
        return Score(float(hits.mean()), details=details)
