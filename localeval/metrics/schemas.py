"""Output models of every judge step the RAGAS-style metrics ask.

The judge turns each model into a JSON-schema grammar, so every string has a
``max_length`` and every list a ``max_length`` (JSON ``maxLength`` /
``maxItems``): an unbounded field lets a small model ramble until the token
budget cuts the JSON. Verdicts and ratings are ``Literal`` so the grammar can
only produce allowed values and soft-verdict mode can read their
probabilities. Free-text fields come *before* the verdict they justify, so the
judge reasons first (and the verdict position sees the reason).

``sized(schema, n)`` derives a variant whose list must hold exactly ``n``
items: when the metric knows how many verdicts it needs (one per statement),
the grammar guarantees that count instead of hoping for it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = [
    "ALL_SCHEMAS",
    "MAX_STATEMENTS",
    "MAX_QUESTIONS",
    "Statements",
    "Verdict",
    "Verdicts",
    "ContextVerdict",
    "GeneratedQuestion",
    "GeneratedQuestions",
    "RecallItem",
    "RecallVerdicts",
    "Entities",
    "CorrectnessItem",
    "CorrectnessClassification",
    "RelevantSentences",
    "Rating012",
    "Rating024",
    "sized",
    "correctness_schema",
]

# Bounds. Characters, not tokens: a CJK character or an escape can cost
# several tokens, which the judge accounts for when it sets max_tokens.
STATEMENT_CHARS = 240
REASON_CHARS = 160
QUESTION_CHARS = 200
ENTITY_CHARS = 80
SENTENCE_CHARS = 600
MAX_STATEMENTS = 24
MAX_QUESTIONS = 10
MAX_ENTITIES = 32
MAX_SENTENCES = 24


class _Out(BaseModel):
    """Base: unknown keys are errors, so a drifting judge fails loudly."""

    model_config = ConfigDict(extra="forbid")
    #: Name of the list field that ``sized`` constrains (None: not sizeable).
    list_field: ClassVar[str | None] = None


StatementText = Annotated[str, Field(max_length=STATEMENT_CHARS)]
EntityText = Annotated[str, Field(max_length=ENTITY_CHARS)]
SentenceText = Annotated[str, Field(max_length=SENTENCE_CHARS)]


class Statements(_Out):
    """Self-contained statements extracted from the answer or the reference."""

    list_field: ClassVar[str | None] = "statements"
    statements: list[StatementText] = Field(max_length=MAX_STATEMENTS)


class Verdict(_Out):
    """Is one statement supported by the source named in the prompt?"""

    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal[0, 1]


class Verdicts(_Out):
    """One verdict per numbered statement, in order (faithfulness, noise_sensitivity)."""

    list_field: ClassVar[str | None] = "verdicts"
    verdicts: list[Verdict] = Field(max_length=MAX_STATEMENTS)


class ContextVerdict(_Out):
    """Was one retrieved context useful (context_precision / context_utilization)?"""

    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal[0, 1]


class GeneratedQuestion(_Out):
    question: str = Field(max_length=QUESTION_CHARS)
    noncommittal: Literal[0, 1]


class GeneratedQuestions(_Out):
    """answer_relevancy: n questions the answer answers, each with a noncommittal flag."""

    list_field: ClassVar[str | None] = "questions"
    questions: list[GeneratedQuestion] = Field(max_length=MAX_QUESTIONS)


class RecallItem(_Out):
    """One reference sentence and whether the contexts support it."""

    statement: str = Field(max_length=STATEMENT_CHARS)
    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal[0, 1]


class RecallVerdicts(_Out):
    list_field: ClassVar[str | None] = "classifications"
    classifications: list[RecallItem] = Field(max_length=MAX_STATEMENTS)


class Entities(_Out):
    """Named entities (people, places, dates, numbers, works...) of one text."""

    list_field: ClassVar[str | None] = "entities"
    entities: list[EntityText] = Field(max_length=MAX_ENTITIES)


class CorrectnessItem(_Out):
    statement: str = Field(max_length=STATEMENT_CHARS)
    reason: str = Field(max_length=REASON_CHARS)


class CorrectnessClassification(_Out):
    """answer_correctness: answer statements as TP/FP, reference statements missed as FN."""

    TP: list[CorrectnessItem] = Field(max_length=MAX_STATEMENTS)
    FP: list[CorrectnessItem] = Field(max_length=MAX_STATEMENTS)
    FN: list[CorrectnessItem] = Field(max_length=MAX_STATEMENTS)


class RelevantSentences(_Out):
    """context_relevancy (legacy): context sentences needed, copied unchanged; [] if none."""

    list_field: ClassVar[str | None] = "sentences"
    sentences: list[SentenceText] = Field(max_length=MAX_SENTENCES)


class Rating012(_Out):
    """NV context relevance / response groundedness: 0 none, 1 partly, 2 fully."""

    rating: Literal[0, 1, 2]


class Rating024(_Out):
    """NV answer accuracy: 0 wrong, 2 partly, 4 fully matches the reference."""

    rating: Literal[0, 2, 4]


ALL_SCHEMAS: list[type[BaseModel]] = [
    Statements,
    Verdicts,
    ContextVerdict,
    GeneratedQuestions,
    RecallVerdicts,
    Entities,
    CorrectnessClassification,
    RelevantSentences,
    Rating012,
    Rating024,
]


@lru_cache(maxsize=256)
def sized(schema: type[_Out], n: int) -> type[_Out]:
    """``schema`` with its list field constrained to exactly ``n`` items.

    Cached, so the same (schema, n) is the same class (grammar caches can key
    on it). Validation of a reply with another count fails like any schema
    violation.
    """
    name = schema.list_field
    if name is None:
        raise TypeError(f"{schema.__name__} has no list field to size")
    if not 0 < n <= _max_items(schema, name):
        raise ValueError(f"{schema.__name__}: cannot ask for {n} items")
    fld = schema.model_fields[name]
    new_field = Field(min_length=n, max_length=n)
    model = create_model(  # type: ignore[call-overload]
        f"{schema.__name__}{n}",
        __base__=schema,
        __doc__=schema.__doc__,
        **{name: (fld.annotation, new_field)},
    )
    return model


def _max_items(schema: type[_Out], name: str) -> int:
    for m in schema.model_fields[name].metadata:
        if hasattr(m, "max_length") and m.max_length is not None:
            return int(m.max_length)
    return 10**6


@lru_cache(maxsize=256)
def correctness_schema(n_answer: int, n_reference: int) -> type[CorrectnessClassification]:
    """CorrectnessClassification with TP/FP at most ``n_answer`` and FN at most ``n_reference``.

    Each answer statement lands in TP or FP and each missed reference
    statement in FN, so these bounds never cut a correct reply; they shrink
    the grammar's worst-case output from hundreds of items to the real ones.
    """
    if not (0 < n_answer <= MAX_STATEMENTS and 0 < n_reference <= MAX_STATEMENTS):
        raise ValueError("statement counts out of range")
    items = list[CorrectnessItem]
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"CorrectnessClassification{n_answer}x{n_reference}",
        __base__=CorrectnessClassification,
        __doc__=CorrectnessClassification.__doc__,
        TP=(items, Field(max_length=n_answer)),
        FP=(items, Field(max_length=n_answer)),
        FN=(items, Field(max_length=n_reference)),
    )
