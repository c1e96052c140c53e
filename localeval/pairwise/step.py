"""The pairwise judge step: its output schema and one pair asked in both orders.

The template is ``prompts/pairwise_preference.j2``. The verdict is a
three-valued ``Literal`` ("A", "B", "tie"): the door's ``prob_field`` reads
the probability of every allowed value of a ``Literal`` field from the logits
(the in-process judge walks the values' token tree; values need only tokenise
to distinct sequences), so soft mode gets P(A), P(B) and P(tie) at the verdict
position, not just a sampled letter.

Each pair is asked twice, base as A and then new as A. The sample the door
sees carries the question, the reference and the contexts when both answers
saw the same ones, and no answer: both orders then share the prompt up to the
answers (the KV prefix), and a per-pair memo key differs by the swapped inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localeval.errors import JudgeCallError
from localeval.metrics import REASON_CHARS, Judging
from localeval.types import Sample

__all__ = ["STEP", "PairwiseVerdict", "OrderReply", "ask_order"]

STEP = "pairwise_preference"


class PairwiseVerdict(BaseModel):
    """One order's verdict: which labelled answer is better ("tie": neither).

    The reason comes first so that the verdict position sees it, as in every
    verdict schema of ``metrics.schemas``; unknown keys are errors.
    """

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal["A", "B", "tie"]


@dataclass(frozen=True)
class OrderReply:
    """One order's outcome: the verdict letter (None when the call failed), its
    probabilities over "A"/"B"/"tie" (None in hard mode or when the judge gave
    none), the reason, and why the call failed."""

    verdict: str | None
    probs: dict[str, float] | None = None
    reason: str = ""
    error: str = ""


def ask_order(door: Judging, question: str | None, reference: str | None,
              first: Sample, second: Sample, *, criterion: str | None) -> OrderReply:
    """Ask which of ``first`` (shown as A) and ``second`` (B) answers better.

    Contexts shared by both go into the sample block; differing ones are shown
    beside each answer (``contexts_a``/``contexts_b``), so swapping the order
    swaps them with their answers and nothing else changes.
    """
    same = first.contexts == second.contexts or first.contexts is None or second.contexts is None
    shared = (first.contexts if first.contexts is not None else second.contexts) if same else None
    sample = Sample(id=f"{first.id}|{second.id}", question=question, contexts=shared,
                    reference=reference)
    inputs: dict[str, Any] = {
        "answer_a": first.answer or "", "answer_b": second.answer or "",
        "contexts_a": None if same else list(first.contexts or []),
        "contexts_b": None if same else list(second.contexts or []),
        "criterion": criterion}
    try:
        reply = door.ask(STEP, PairwiseVerdict, sample, prob_field="verdict", **inputs)
    except JudgeCallError as e:
        return OrderReply(None, error=str(e) or type(e).__name__)
    out = reply.output
    assert isinstance(out, PairwiseVerdict)
    probs = dict(reply.probs[0]) if reply.probs else None
    return OrderReply(out.verdict, probs, out.reason)
