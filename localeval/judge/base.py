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

__all__ = ["Message", "Usage", "JudgeRequest", "JudgeReply", "Judge", "JudgeBackend", "declared"]

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
    """Anything that answers judge steps: in-process llama.cpp, HTTP, scripted.

    Besides ``ask``, a judge declares what the run needs to know to drive it,
    so that the run never looks at which class it is: ``capacity`` (calls it
    serves at once; above 1 the run scores samples in threads and fans each
    sample's calls out), ``batches`` (it decodes those calls together in this
    process, so its slots hold KV prefixes: the run then keeps fewer samples
    in flight), ``signature()`` (what a summary may record about it),
    ``close()``, and ``interrupt()``/``resume()`` (cut calls in flight short
    on Ctrl-C). ``JudgeBackend`` gives each its sequential, no-op default.
    """

    #: Stable identity of model + sampling settings; part of cache keys and signatures.
    fingerprint: str
    #: Human-readable name (file name, URL or "scripted").
    name: str
    @property
    def capacity(self) -> int:
        """Calls this judge serves at once (1: one at a time)."""
        ...

    @property
    def batches(self) -> bool:
        """Whether it decodes concurrent calls together in this process."""
        ...

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

    def signature(self) -> dict[str, Any]:
        """What a run summary may record about this judge (name and fingerprint at least)."""
        ...

    def close(self) -> None:
        """Free what the judge holds (model, connections); it answers no more calls."""
        ...

    def interrupt(self) -> None:
        """Fail the calls in flight (``JudgeCallError``) and refuse new ones until ``resume``."""
        ...

    def resume(self) -> None:
        """Serve calls again after ``interrupt``."""
        ...


class JudgeBackend:
    """The base of a judge backend: the capabilities' defaults, to override where they differ.

    A subclass sets ``name`` and ``fingerprint`` and writes ``ask``; by
    default it serves one call at a time (``capacity = 1``), does not batch,
    and has nothing to close or interrupt. A backend whose ``ask`` is
    thread-safe and can serve N calls at once says ``capacity = N``, and the
    run sends it N (docs/architecture.md, "Where to add").
    """

    fingerprint: str
    name: str

    # Properties, so that a subclass may say ``capacity = 4`` or compute it.
    @property
    def capacity(self) -> int:
        return 1

    @property
    def batches(self) -> bool:
        return False

    def ask(self, request: JudgeRequest) -> JudgeReply:
        raise NotImplementedError

    def signature(self) -> dict[str, Any]:
        return {"judge": self.name, "fingerprint": self.fingerprint}

    def close(self) -> None:
        pass

    def interrupt(self) -> None:
        pass

    def resume(self) -> None:
        pass


class _Undeclared(JudgeBackend):
    """An object with only ``name``, ``fingerprint`` and ``ask``, given the defaults."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.name, self.fingerprint = judge.name, judge.fingerprint

    def ask(self, request: JudgeRequest) -> JudgeReply:
        reply: JudgeReply = self.judge.ask(request)
        return reply


def declared(judge: Any) -> Judge:
    """``judge`` itself when it declares the whole protocol, else it with the defaults.

    A caller's own judge object written before the capabilities existed
    (``name``, ``fingerprint`` and ``ask`` only) keeps working, served one
    call at a time, as it always was.
    """
    if isinstance(judge, Judge):
        return judge
    return _Undeclared(judge)
