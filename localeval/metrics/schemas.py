"""Output models of every judge step the RAGAS-style metrics ask.

The judge turns each model into a JSON-schema grammar, so every string has a
``max_length`` and every list a ``max_length`` (JSON ``maxLength`` /
``maxItems``): an unbounded field lets a small model ramble until the token
budget cuts the JSON. Verdicts and ratings are ``Literal`` so the grammar can
only produce allowed values and soft-verdict mode can read their
probabilities. Free-text fields come *before* the verdict they justify, so the
judge reasons first (and the verdict position sees the reason).

The classes below carry the ceilings. A metric asks with a per-call variant
whose bounds come from the inputs (``budgets`` derives them from the source
text): ``sized`` and ``verdicts_schema`` fix a list at exactly ``n`` items
(one verdict per statement), ``statements_schema`` and ``entities_schema``
bound the count and length by the source, ``correctness_schema`` sizes both
verdict lists of answer_correctness, and ``selection_schema`` lets the
grammar produce only the numbers 1..n of the sentences shown. Where a step
selects from its inputs, the output can then hold nothing but the inputs.

A verdict's reason follows the run's reason mode (``config.REASON_MODES``):
``reason_room`` turns the mode and the inputs into a length, and a length of 0
gives verdict items with no ``reason`` field at all (``verdict_only``), so the
grammar ends each item at its verdict.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

__all__ = [
    "ALL_SCHEMAS",
    "MAX_STATEMENTS",
    "MAX_QUESTIONS",
    "MAX_ENTITIES",
    "MAX_SENTENCES",
    "STATEMENT_CHARS",
    "REASON_CHARS",
    "SHORT_REASON_CHARS",
    "reason_room",
    "verdict_only",
    "with_reason",
    "ENTITY_CHARS",
    "Statements",
    "Verdict",
    "Verdicts",
    "ContextVerdict",
    "GeneratedQuestion",
    "GeneratedQuestions",
    "Entities",
    "CorrectnessVerdicts",
    "SentenceSelection",
    "Rating012",
    "Rating024",
    "sized",
    "statements_schema",
    "entities_schema",
    "verdicts_schema",
    "correctness_schema",
    "selection_schema",
    "CriterionVerdict",
    "EvaluationSteps",
    "MAX_SCALE_POINTS",
    "rating_schema",
]

# Ceilings. Characters, not tokens: a CJK character or an escape can cost
# several tokens, which the judge accounts for when it sets max_tokens.
STATEMENT_CHARS = 240
REASON_CHARS = 160
#: A reason in ``--reasons short``: a few words (the longest reason of the prompts' examples fits).
SHORT_REASON_CHARS = 60
QUESTION_CHARS = 200
ENTITY_CHARS = 80
MAX_STATEMENTS = 24
MAX_QUESTIONS = 10
MAX_ENTITIES = 32
#: Ceiling of the base selection class only; a call's list is bounded by the
#: number of sentences it shows.
MAX_SENTENCES = 64
#: GEval: at most this many evaluation steps of at most STEP_CHARS each.
MAX_STEPS = 6
STEP_CHARS = 160
#: A rubric or GEval scale has at most this many integer points (0-100 inclusive).
MAX_SCALE_POINTS = 101


class _Out(BaseModel):
    """Base: unknown keys are errors, so a drifting judge fails loudly."""

    model_config = ConfigDict(extra="forbid")
    #: Name of the list field that ``sized`` constrains (None: not sizeable).
    list_field: ClassVar[str | None] = None


#: A schema class and the sized variants made from it.
O = TypeVar("O", bound=_Out)


StatementText = Annotated[str, Field(max_length=STATEMENT_CHARS)]
EntityText = Annotated[str, Field(max_length=ENTITY_CHARS)]
#: An enum, not a range: the grammar converter ignores minimum/maximum.
if TYPE_CHECKING:  # a Literal of every sentence number, built at run time: an int to mypy
    SentenceNumber = int
else:
    SentenceNumber = Literal[tuple(range(1, MAX_SENTENCES + 1))]


class Statements(_Out):
    """Self-contained statements extracted from the answer or the reference."""

    list_field: ClassVar[str | None] = "statements"
    statements: list[StatementText] = Field(max_length=MAX_STATEMENTS)


class Verdict(_Out):
    """Is one statement supported by the source named in the prompt?"""

    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal[0, 1]


class Verdicts(_Out):
    """One verdict per numbered statement or sentence, in order (faithfulness,
    noise_sensitivity, context_recall)."""

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


class Entities(_Out):
    """Named entities (people, places, dates, numbers, works...) of one text."""

    list_field: ClassVar[str | None] = "entities"
    entities: list[EntityText] = Field(max_length=MAX_ENTITIES)


class CorrectnessVerdicts(_Out):
    """answer_correctness by position: one verdict per answer statement (1: the
    reference supports it, TP; 0: FP) and one per reference statement (1: the
    answer covers it; 0: FN). Each statement lands in exactly one class."""

    answer: list[Verdict] = Field(max_length=MAX_STATEMENTS)
    reference: list[Verdict] = Field(max_length=MAX_STATEMENTS)


class SentenceSelection(_Out):
    """context_relevancy (legacy): the numbers of the context sentences needed; [] if none."""

    list_field: ClassVar[str | None] = "sentences"
    sentences: list[SentenceNumber] = Field(max_length=MAX_SENTENCES)


class Rating012(_Out):
    """NV context relevance / response groundedness: 0 none, 1 partly, 2 fully."""

    rating: Literal[0, 1, 2]


class Rating024(_Out):
    """NV answer accuracy: 0 wrong, 2 partly, 4 fully matches the reference."""

    rating: Literal[0, 2, 4]


class CriterionVerdict(_Out):
    """A user's yes/no criterion (AspectCritic): 1 when the sample meets it."""

    reason: str = Field(max_length=REASON_CHARS)
    verdict: Literal[0, 1]


class EvaluationSteps(_Out):
    """GEval: the steps a judge follows to score one criterion, written once per criterion."""

    list_field: ClassVar[str | None] = "steps"
    steps: list[Annotated[str, Field(max_length=STEP_CHARS)]] = Field(max_length=MAX_STEPS)


ALL_SCHEMAS: list[type[BaseModel]] = [
    Statements,
    Verdicts,
    ContextVerdict,
    GeneratedQuestions,
    Entities,
    CorrectnessVerdicts,
    SentenceSelection,
    Rating012,
    Rating024,
    CriterionVerdict,
    EvaluationSteps,
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
    return _variant(schema, f"{schema.__name__}{n}",
                    **{name: (fld.annotation, Field(min_length=n, max_length=n))})


def _max_items(schema: type[_Out], name: str) -> int:
    for m in schema.model_fields[name].metadata:
        if hasattr(m, "max_length") and m.max_length is not None:
            return int(m.max_length)
    return 10**6


def _variant(base: type[O], name: str, **fields: tuple) -> type[O]:
    return create_model(  # type: ignore[call-overload]  # fields built at run time match no overload
        name, __base__=base, __doc__=base.__doc__, **fields)


def _check(what: str, value: int, ceiling: int | None) -> None:
    if value < 1 or (ceiling is not None and value > ceiling):
        raise ValueError(f"{what} must be between 1 and {ceiling}, got {value}")


@lru_cache(maxsize=256)
def statements_schema(max_items: int, max_chars: int) -> type[Statements]:
    """Statements with at most ``max_items`` statements of at most ``max_chars`` each."""
    _check("max_items", max_items, MAX_STATEMENTS)
    _check("max_chars", max_chars, STATEMENT_CHARS)
    text = Annotated[str, Field(max_length=max_chars)]
    return _variant(Statements, f"Statements{max_items}x{max_chars}",
                    statements=(list[text], Field(max_length=max_items)))


@lru_cache(maxsize=256)
def entities_schema(max_items: int, max_chars: int) -> type[Entities]:
    """Entities with at most ``max_items`` entities of at most ``max_chars`` each."""
    _check("max_items", max_items, MAX_ENTITIES)
    _check("max_chars", max_chars, ENTITY_CHARS)
    text = Annotated[str, Field(max_length=max_chars)]
    return _variant(Entities, f"Entities{max_items}x{max_chars}",
                    entities=(list[text], Field(max_length=max_items)))


def reason_room(mode: str, chars: int = REASON_CHARS) -> int:
    """The reason length a verdict schema allows in reason ``mode``, given the
    length ``chars`` the inputs warrant: all of it ("full"), at most
    ``SHORT_REASON_CHARS`` ("short") or 0, no reason field ("none")."""
    if mode == "none":
        return 0
    return min(chars, SHORT_REASON_CHARS) if mode == "short" else chars


@lru_cache(maxsize=64)
def verdict_only(schema: type[O]) -> type[O]:
    """``schema`` (a verdict item: ``Verdict``, ``ContextVerdict``, ``CriterionVerdict``)
    without its ``reason`` field: the grammar ends the item at the verdict.

    Built on the base class, not on ``schema`` (a subclass cannot drop a field).
    """
    fields = {k: (f.annotation, f) for k, f in schema.model_fields.items() if k != "reason"}
    return create_model(  # type: ignore[call-overload]  # fields built at run time
        f"{schema.__name__}Only", __base__=_Out, __doc__=schema.__doc__, **fields)


@lru_cache(maxsize=64)
def with_reason(schema: type[O], reason_chars: int) -> type[O]:
    """``schema`` (a verdict item) with a reason of at most ``reason_chars``; none at 0."""
    if reason_chars == 0:
        return verdict_only(schema)
    if reason_chars == REASON_CHARS:
        return schema
    _check("reason_chars", reason_chars, REASON_CHARS)
    return _variant(schema, f"{schema.__name__}{reason_chars}",
                    reason=(str, Field(max_length=reason_chars)))


def _verdict(reason_chars: int) -> type[Verdict]:
    return with_reason(Verdict, reason_chars)


@lru_cache(maxsize=256)
def verdicts_schema(n: int, reason_chars: int = REASON_CHARS) -> type[Verdicts]:
    """Verdicts with exactly ``n`` verdicts whose reasons hold at most ``reason_chars``
    (0: verdicts without reasons)."""
    _check("n", n, MAX_STATEMENTS)
    if reason_chars == REASON_CHARS:
        return sized(Verdicts, n)  # type: ignore[return-value]  # sized() returns the base's subclass
    item = _verdict(reason_chars)
    return _variant(Verdicts, f"Verdicts{n}r{reason_chars}",
                    verdicts=(list[item], Field(min_length=n, max_length=n)))  # type: ignore[valid-type]  # a type built at run time


@lru_cache(maxsize=256)
def correctness_schema(n_answer: int, n_reference: int,
                       reason_chars: int = REASON_CHARS) -> type[CorrectnessVerdicts]:
    """CorrectnessVerdicts with exactly ``n_answer`` and ``n_reference`` verdicts.

    The grammar fixes both counts, so every answer statement is TP or FP and
    every reference statement covered or FN, once each: the judge can neither
    invent a statement nor count one twice.
    """
    _check("n_answer", n_answer, MAX_STATEMENTS)
    _check("n_reference", n_reference, MAX_STATEMENTS)
    item = _verdict(reason_chars)
    return _variant(
        CorrectnessVerdicts, f"CorrectnessVerdicts{n_answer}x{n_reference}r{reason_chars}",
        answer=(list[item], Field(min_length=n_answer, max_length=n_answer)),  # type: ignore[valid-type]  # a type built at run time
        reference=(list[item], Field(min_length=n_reference,  # type: ignore[valid-type]  # a type built at run time
                                     max_length=n_reference)))


@lru_cache(maxsize=256)
def selection_schema(n: int) -> type[SentenceSelection]:
    """SentenceSelection whose items can only be the numbers 1..``n``, at most ``n`` of them.

    The numbers are a Literal, so the grammar offers exactly the sentences
    shown; a repeated number is possible and is counted once by the metric.
    """
    if n < 1:
        raise ValueError(f"cannot select from {n} sentences")
    values = tuple(range(1, n + 1))
    # Written as an enum even for n == 1 (pydantic would write "const"), so
    # every selection schema has the same form for grammar and test judges.
    number = Annotated[Literal[values], WithJsonSchema(  # type: ignore[valid-type]  # a type built at run time
        {"type": "integer", "enum": list(values)})]
    return _variant(SentenceSelection, f"SentenceSelection{n}",
                    sentences=(list[number], Field(max_length=n)))


@lru_cache(maxsize=256)
def rating_schema(values: tuple[int, ...], reason_chars: int = REASON_CHARS) -> type[_Out]:
    """A reason, then an integer ``score`` that can only be one of ``values``.

    For RubricsScore (the rubric's levels) and GEval (every integer of its
    scale). The score is an enum, so the grammar offers exactly these values
    and soft-verdict mode reads their probabilities; the reason comes first
    so the score sees it.
    """
    vals = tuple(sorted({int(v) for v in values}))
    if not 1 < len(vals) <= MAX_SCALE_POINTS:
        raise ValueError(f"a score needs 2 to {MAX_SCALE_POINTS} allowed values, got {len(vals)}")
    _check("reason_chars", reason_chars, REASON_CHARS)
    # An enum even where pydantic would write "const" (as in selection_schema).
    score = Annotated[Literal[vals], WithJsonSchema(  # type: ignore[valid-type]  # a type built at run time
        {"type": "integer", "enum": list(vals)})]
    name = f"Rating{vals[0]}to{vals[-1]}n{len(vals)}r{reason_chars}"
    return create_model(
        name, __base__=_Out, __doc__="A reason, then a score from the allowed values.",
        reason=(str, Field(max_length=reason_chars)), score=(score, ...))
