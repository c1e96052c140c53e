"""The judge door: ``Judging``, the one way from a metric to the models.

A metric never holds a model. It is handed a ``Judging`` per run and calls
``ask`` (render the step's prompt, ask the judge, check the reply against the
prompt's example, memoise the reply for the sample), ``embed``, or ``map`` (a
sample's independent calls, fanned out when the judge serves several at once).
The run's settings are one frozen ``JudgingSettings``; what the run cost (usage,
prompt versions, the workers' judge) is counted in its ``Accounting``. Nothing
outside this package changes a door: ``for_sample`` gives a door for one sample
(another seed, fan-out or accounting). Not to be confused with ``rag_context``,
the metrics that judge a sample's retrieved contexts.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
from pydantic import BaseModel

from localeval.concurrency import ordered_map
from localeval.errors import JudgeCallError, NoEmbedder, NoJudge
from localeval.judge import Judge, JudgeReply, JudgeRequest, Usage
from localeval.types import Sample

__all__ = ["Judging", "JudgingSettings", "Accounting", "COPIED_EXAMPLE"]

T = TypeVar("T")
R = TypeVar("R")

#: The unscored reason when a judge copies the prompt's example even without it.
COPIED_EXAMPLE = "judge copied the prompt's example"


@dataclass(frozen=True)
class JudgingSettings:
    """How a run asks: language, seed, temperature, hard or soft verdicts, and
    whether the judge writes a reason before each binary verdict."""

    lang: str = "auto"
    seed: int = 0
    temperature: float = 0.0
    verdicts: str = "hard"  # "hard" | "soft"
    #: "full" | "short" | "none" (``config.REASON_MODES``): the steps' schemas and prompts follow it.
    reasons: str = "full"
    #: Check every reply against the prompt's few-shot example (see ``Judging.ask``).
    copy_check: bool = True


@dataclass
class Accounting:
    """What a run's judge calls cost: usage, the prompt versions used and, when
    workers loaded the judge, the name and fingerprint they report (``judge``).
    Thread-safe: calls of one sample may run at once."""

    usage: Usage = field(default_factory=Usage)
    prompt_versions: dict[str, str] = field(default_factory=dict)
    #: The judge other processes used (``run.workers.JudgeInfo``), for the signature.
    judge: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_usage(self, usage: Usage) -> None:
        with self._lock:
            self.usage.add(usage)

    def record_prompt(self, step: str, version: str) -> None:
        with self._lock:
            self.prompt_versions[step] = version

    def merge(self, usage: Usage, prompt_versions: dict[str, str], judge: Any = None) -> None:
        """Add another door's (a worker's, a sample's) cost to this run's."""
        with self._lock:
            self.usage.add(usage)
            self.prompt_versions.update(prompt_versions)
            if self.judge is None and getattr(judge, "name", None) is not None:
                self.judge = judge


class _RunKey:
    """The identity of one run's doors (``Judging.run_key``): weakly referenceable,
    shared by every ``for_sample`` door, so per-run caches survive them."""

    __slots__ = ("__weakref__",)


class Judging:
    """The judge door: what a metric may use (judge, embedder) and how (settings).

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

    A door's attributes are fixed once built (assigning one raises): a caller
    that needs another seed, fan-out or accounting asks ``for_sample``.
    """

    # Declared for the type checker; set once in __init__ (object.__setattr__).
    judge: Judge | None
    embedder: Any
    settings: JudgingSettings
    fanout: int
    accounting: Accounting
    run_key: _RunKey
    _memo: dict[Any, Any]
    _lock: threading.Lock

    def __init__(self, judge: Judge | None = None, embedder: Any = None, *,
                 settings: JudgingSettings | None = None, fanout: int = 1,
                 accounting: Accounting | None = None, run_key: _RunKey | None = None,
                 **setting: Any) -> None:
        """``setting``: ``JudgingSettings`` fields (lang, seed, ...) instead of ``settings``."""
        base = settings or JudgingSettings()
        init = object.__setattr__
        init(self, "judge", judge)
        init(self, "embedder", embedder)  # localeval.embed.Embedder
        init(self, "settings", replace(base, **setting) if setting else base)
        init(self, "fanout", fanout)
        init(self, "accounting", accounting if accounting is not None else Accounting())
        init(self, "run_key", run_key if run_key is not None else _RunKey())
        init(self, "_memo", {})
        init(self, "_lock", threading.Lock())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Judging door is not changed after it is built ({name}); "
                             "use for_sample(...)")

    def __repr__(self) -> str:
        return f"Judging(judge={self.judge!r}, settings={self.settings!r}, fanout={self.fanout})"

    # -- read-only views of the settings and the accounting ----------------------------
    @property
    def lang(self) -> str:
        return self.settings.lang

    @property
    def seed(self) -> int:
        return self.settings.seed

    @property
    def temperature(self) -> float:
        return self.settings.temperature

    @property
    def verdicts(self) -> str:
        return self.settings.verdicts

    @property
    def reasons(self) -> str:
        return self.settings.reasons

    @property
    def copy_check(self) -> bool:
        return self.settings.copy_check

    @property
    def usage(self) -> Usage:
        return self.accounting.usage

    @property
    def prompt_versions(self) -> dict[str, str]:
        return self.accounting.prompt_versions

    def for_sample(self, *, fanout: int | None = None, accounting: Accounting | None = None,
                   **setting: Any) -> "Judging":
        """A door for one sample (or one round of it): the same models and run, an
        empty memo; ``fanout`` and settings (seed, lang, temperature...) replaced when
        given; its cost counted in ``accounting`` (default: this door's, the run's)."""
        settings = replace(self.settings, **setting) if setting else self.settings
        return Judging(self.judge, self.embedder, settings=settings,
                       fanout=self.fanout if fanout is None else fanout,
                       accounting=self.accounting if accounting is None else accounting,
                       run_key=self.run_key)

    def begin_sample(self) -> None:
        """Forget memoised replies (between samples of one door)."""
        with self._lock:
            self._memo.clear()

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(x) for x in items]``; in up to ``fanout`` threads when the judge allows.

        Results come back in order, and the first exception in item order is
        raised, so a metric scores the same either way. With fan-out at most
        ``fanout`` items are in flight, and once one has failed no further item
        starts: a failure that every call of the sample would meet (a prompt
        longer than the judge's context, an interrupted judge) costs a few
        calls, not one per context, as in sequence it costs one.
        """
        items = list(items)
        # every item is submitted at once; the threads bound what runs (``ordered_map``)
        return list(ordered_map(fn, items, workers=min(self.fanout, len(items)),
                                window=len(items), stop_on_failure=True,
                                name="localeval-step"))

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
        from localeval.output import hash_bytes  # a lone surrogate in data hashes too

        mkey = hashlib.sha256(hash_bytes(json.dumps(
            [step, lang, sample.to_dict(), inputs, prob_field, self.seed, self.temperature,
             self.reasons], ensure_ascii=False, sort_keys=True, default=str))).hexdigest()
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

        # Each prompt is rendered once and passed along: the one sent, the copy
        # check's pair and the retry's prompt are the same messages.
        # The reason mode changes the prompt's instruction and example (and the
        # schema), so the two modes' requests, and their cache keys, differ.
        with_example, version = prompting.render(step, sample, lang=lang, examples=True,
                                                 reasons=self.reasons, **inputs)
        self.accounting.record_prompt(step, version)
        reply = self._send(step, schema, sample, prob_field, inputs, with_example)
        if not self.copy_check:
            return reply
        bare, _ = prompting.render(step, sample, lang=lang, examples=False,
                                   reasons=self.reasons, **inputs)
        if prompting.copies_in(reply.output, with_example, bare):
            self.accounting.add_usage(Usage(copied_calls=1))
            reply = self._send(step, schema, sample, prob_field, inputs, bare)
            if prompting.copies_in(reply.output, with_example, bare):
                self.accounting.add_usage(Usage(copy_failures=1))
                return JudgeCallError(COPIED_EXAMPLE)
        return reply

    def _send(self, step: str, schema: type[BaseModel], sample: Sample, prob_field: str | None,
              inputs: dict[str, Any], messages: list[dict[str, str]]) -> JudgeReply:
        judge = self.judge
        if judge is None:
            raise NoJudge()
        req = JudgeRequest(step=step, messages=tuple(messages), schema=schema, seed=self.seed,
                           temperature=self.temperature, prob_field=prob_field,
                           sample=sample, inputs=dict(inputs))
        try:
            reply = judge.ask(req)
        except JudgeCallError as e:
            # A failed call still cost a call (and its tokens, when the judge says so).
            self.accounting.add_usage(e.usage if e.usage.calls else Usage(calls=1))
            raise
        self.accounting.add_usage(reply.usage)
        return reply

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.embedder is None:
            raise NoEmbedder()
        return self.embedder.embed(list(texts))
