"""Judge steps shared by several metric families: statements and their verdicts.

Statement extraction is one step (``statements``) with one set of inputs per
source text, so faithfulness, answer_correctness and noise_sensitivity asking
for the answer's statements send byte-identical requests and ``Judging``
answers all but the first from its per-sample memo. Its output is bounded by
the source (``output_bounds.statement_bounds``) and repeated statements are merged
before any verdict is asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from localeval.lang import resolve_lang
from localeval.metrics.model_access import Judging
from localeval.metrics.output_bounds import merge_duplicates, reason_chars, source, statement_bounds
from localeval.metrics.schemas import reason_room, statements_schema, verdicts_schema
from localeval.types import Sample

#: The two texts a sample's statements come from.
Side = Literal["answer", "reference"]
SIDES: tuple[Side, Side] = ("answer", "reference")

__all__ = [
    "SIDES",
    "Side",
    "Extracted",
    "statements",
    "statement_verdicts",
    "verdict_row",
    "reason_of",
    "verdict_values",
    "judged_verdict",
    "judged_verdicts",
]


@dataclass(frozen=True)
class Extracted:
    """A source's statements after blank and repeated ones were dropped."""

    statements: list[str] = field(default_factory=list)
    #: Normalised repeats merged into their first occurrence.
    merged: int = 0


def statements(ctx: Judging, sample: Sample, target: Literal["answer", "reference"]) -> Extracted:
    """Self-contained statements of the answer or the reference, repeats merged.

    The schema allows a few statements per source sentence, each about as long
    as the longest sentence, so a looping judge stops early instead of
    writing the same sentence until the context is full.
    """
    text = sample.answer if target == "answer" else sample.reference
    items, chars = statement_bounds(source(text, resolve_lang(ctx.lang, text)))
    reply = ctx.ask("statements", statements_schema(items, chars), sample, target=target)
    kept, merged = merge_duplicates(reply.output.statements)
    return Extracted(kept, merged)


def statement_verdicts(ctx: Judging, sample: Sample, step: str, stmts: Sequence[str], *,
                       soft: bool = False, **inputs: Any) -> tuple[list[dict[str, Any]], list[float]]:
    """Ask ``step`` for one verdict per statement; return the details and the verdict values.

    The schema is sized to exactly ``len(stmts)`` items, so a grammar-driven
    judge cannot skip or add verdicts; a reason is bounded by the statements'
    length and the run's reason mode (none at all in ``--reasons none``).
    Values are 0/1, or P(verdict=1) when ``soft`` and the judge returned
    probabilities.
    """
    schema = verdicts_schema(len(stmts), reason_room(ctx.reasons, reason_chars(stmts)))
    reply = ctx.ask(step, schema, sample,
                    prob_field="verdict" if soft else None, statements=list(stmts), **inputs)
    return judged_verdicts(reply, "statement", stmts)


def judged_verdicts(reply: Any, key: str, judged: Sequence[Any]
                    ) -> tuple[list[dict[str, Any]], list[float]]:
    """A verdicts-list reply's details rows (``{key: item, reason, verdict}``, with
    ``p_verdict_1`` when probabilities came back) and values, one per judged item."""
    verdicts = reply.output.verdicts
    values = verdict_values([v.verdict for v in verdicts], reply.probs)
    rows = [verdict_row(v, **{key: item}) for item, v in zip(judged, verdicts)]
    if reply.probs is not None:
        for row, p in zip(rows, values):
            row["p_verdict_1"] = round(p, 6)
    return rows, values


def judged_verdict(reply: Any, **first: Any) -> tuple[dict[str, Any], float]:
    """A single-verdict reply's details row (``first``, reason, verdict, and
    ``p_verdict_1`` when probabilities came back) and its value."""
    value = verdict_values([reply.output.verdict], reply.probs)[0]
    row = verdict_row(reply.output, **first)
    if reply.probs is not None:
        row["p_verdict_1"] = round(value, 6)
    return row, value


def verdict_row(item: Any, **first: Any) -> dict[str, Any]:
    """A verdict's details row: ``first`` (what was judged), its reason when the
    judge wrote one (not in ``--reasons none``), then the verdict."""
    return {**first, **reason_of(item), "verdict": item.verdict}


def reason_of(item: Any) -> dict[str, str]:
    """``{"reason": ...}`` of a verdict item, or ``{}`` when its schema has no reason."""
    reason = getattr(item, "reason", None)
    return {} if reason is None else {"reason": reason}


def verdict_values(hard: Sequence[int], probs: list[dict[Any, float]] | None) -> list[float]:
    """Hard verdicts as floats, or P(1) per verdict when probabilities came back.

    The expected value of a 0/1 verdict is P(1), so soft scores are the
    expectation of the hard score's numerator under the judge's distribution.
    """
    if probs is None:
        return [float(v) for v in hard]
    if len(probs) != len(hard):
        raise ValueError(f"judge returned {len(probs)} verdict probabilities for "
                         f"{len(hard)} verdicts")
    out = []
    for p in probs:
        p1 = p.get("1", p.get(1, 0.0))
        total = sum(p.values())
        out.append(float(p1) / total if total > 0 else 0.0)
    return out
