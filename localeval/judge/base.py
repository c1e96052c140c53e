"""The judge door: what a metric asks and what it gets back.

Metrics never touch llama_cpp or HTTP. They build a ``JudgeRequest`` (via
``Judging.ask``) naming a step, the rendered chat messages and a pydantic
output model; any ``Judge`` answers with a validated object, token usage and,
when asked, the probability of each allowed value of a verdict field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

from pydantic import BaseModel

from localeval.types import Usage  # a value type (layer 0): errors carry it too

__all__ = ["Message", "Usage", "JudgeRequest", "JudgeReply", "Judge"]

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass(frozen=True)
class JudgeRequest:
    """One judge step.

    ``prob_field`` names a field whose allowed values (a ``Literal`` in the
    schema) the judge should return probabilities for, one dict per
    occurrence of the field in the output, in output order.
    """

    step: str
    messages: tuple[Message, ...]
    schema: type[BaseModel]
    seed: int = 0
    temperature: float = 0.0
    prob_field: str | None = None
    #: What the prompt was rendered from: the sample and the step's inputs. Not
    #: part of the cache key (the messages are); there so that a judge that is not
    #: a language model (a scripted or rule-based test judge) can answer from
    #: structure instead of parsing the prompt text.
    sample: Any = field(default=None, compare=False, repr=False)
    inputs: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass
class JudgeReply:
    output: BaseModel
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    probs: list[dict[str, float]] | None = None
    cached: bool = False


@runtime_checkable
class Judge(Protocol):
    """Anything that answers judge steps: in-process llama.cpp, HTTP, scripted."""

    #: Stable identity of model + sampling settings; part of cache keys and signatures.
    fingerprint: str
    #: Human-readable name (file name, URL or "scripted").
    name: str

    def ask(self, request: JudgeRequest) -> JudgeReply:
        """Answer one step; raise ``JudgeCallError`` for per-sample failures.

        A failure's cost goes on the error as ``JudgeCallError(..., usage=)``
        (the calls made and the tokens evaluated and generated before it
        failed), so that usage counts the calls that ended in an error too;
        the accounting counts a failure with no call in its usage as one call,
        and ``CachedJudge`` replays a cached error as ``Usage(calls=1,
        cache_hits=1)``. ``decided=True`` marks a failure the judge decided
        (deterministic: see ``CachedJudge``).
        """
        ...
