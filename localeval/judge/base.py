"""The judge door: what a metric asks and what it gets back.

Metrics never touch llama_cpp or HTTP. They build a ``JudgeRequest`` (via
``Context.ask``) naming a step, the rendered chat messages and a pydantic
output model; any ``Judge`` answers with a validated object, token usage and,
when asked, the probability of each allowed value of a verdict field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

from pydantic import BaseModel

__all__ = ["Message", "Usage", "JudgeRequest", "JudgeReply", "Judge"]

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass
class Usage:
    """Token and time accounting for one call or a sum of calls.

    ``reused_tokens`` are prompt tokens served from the KV cache of the
    previous prompt (prefix reuse); ``evaluated_tokens`` is what was computed.
    ``copied_calls`` counts replies that copied the prompt's few-shot example
    (asked again without it) and ``copy_failures`` those whose second reply
    copied too (the metric is then unscored): the run's judge health reads them.
    """

    calls: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    copied_calls: int = 0
    copy_failures: int = 0
    #: Prompt-lookup drafting (in-process judge): tokens guessed ahead, guesses the
    #: model confirmed, and generation decodes run (one token each without drafting).
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    decode_steps: int = 0

    @property
    def evaluated_tokens(self) -> int:
        return self.prompt_tokens - self.reused_tokens

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.reused_tokens += other.reused_tokens
        self.generated_tokens += other.generated_tokens
        self.seconds += other.seconds
        self.cache_hits += other.cache_hits
        self.copied_calls += other.copied_calls
        self.copy_failures += other.copy_failures
        self.drafted_tokens += other.drafted_tokens
        self.accepted_tokens += other.accepted_tokens
        self.decode_steps += other.decode_steps

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "reused_tokens": self.reused_tokens,
            "evaluated_tokens": self.evaluated_tokens,
            "generated_tokens": self.generated_tokens,
            "seconds": round(self.seconds, 3),
            "cache_hits": self.cache_hits,
            "copied_calls": self.copied_calls,
            "copy_failures": self.copy_failures,
            "drafted_tokens": self.drafted_tokens,
            "accepted_tokens": self.accepted_tokens,
            "decode_steps": self.decode_steps,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Usage":
        return cls(**{k: d[k] for k in ("calls", "prompt_tokens", "reused_tokens",
                                        "generated_tokens", "seconds", "cache_hits", "copied_calls",
                                        "copy_failures", "drafted_tokens", "accepted_tokens",
                                        "decode_steps") if k in d})


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

        A failure's cost goes on the error as ``err.usage`` (a ``Usage``: the
        calls made and the tokens generated before it failed), so that usage
        counts the calls that ended in an error too; ``CachedJudge`` sets
        ``Usage(calls=1)`` where a judge did not, and ``Usage(calls=1,
        cache_hits=1)`` on a replayed error. ``err.cacheable`` marks a failure
        the judge decided (see ``CachedJudge``).
        """
        ...
