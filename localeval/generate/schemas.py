"""The output schema of the question-writing steps: one question and its answer.

The judge turns the model into a JSON-schema grammar, so both strings carry a
``max_length`` (docs/architecture.md; ``localeval.metrics.schemas`` does the same
for the metrics' steps). The question comes first, so the answer is written for
it. ``qa_schema`` bounds the answer by the source: an answer taken from a
300-character chunk needs no 600 characters, and a looping model stops sooner.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["QuestionAnswer", "qa_schema", "QUESTION_CHARS", "ANSWER_CHARS", "ANSWER_FLOOR_CHARS"]

#: A question longer than this is no question a user types.
QUESTION_CHARS = 300
#: The ceiling of an answer, however long its sources.
ANSWER_CHARS = 600
#: The least an answer may hold, however short its source (a name, a date, a clause).
ANSWER_FLOOR_CHARS = 120


class QuestionAnswer(BaseModel):
    """One question the shown contexts answer, and that answer, taken from them."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(max_length=QUESTION_CHARS)
    answer: str = Field(max_length=ANSWER_CHARS)


@lru_cache(maxsize=64)
def _sized(answer_chars: int) -> type[QuestionAnswer]:
    text = Annotated[str, Field(max_length=answer_chars)]
    return create_model(
        f"QuestionAnswer{answer_chars}", __base__=QuestionAnswer,
        __doc__=QuestionAnswer.__doc__, answer=(text, ...))


def qa_schema(source_chars: int) -> type[QuestionAnswer]:
    """``QuestionAnswer`` with the answer bounded by its sources' length.

    The bound is the sources' length, at least ``ANSWER_FLOOR_CHARS`` and at most
    ``ANSWER_CHARS``, rounded up to a multiple of 20 so that few classes are made
    (the same bound is the same class, for the grammar caches).
    """
    chars = min(ANSWER_CHARS, max(ANSWER_FLOOR_CHARS, int(source_chars)))
    return _sized(-(-chars // 20) * 20)
