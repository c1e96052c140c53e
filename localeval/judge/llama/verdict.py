"""Verdict probabilities: how sure the judge was of each verdict it wrote.

A grammar-forced verdict hides how close the call was. The probability of
each allowed value is read from the logits at the position where the value
starts, which needs no ``logits_all`` (n_ctx x vocab floats): the KV cache
already holds the output, so each position costs one token's evaluation.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable, Sequence

import numpy as np

from localeval.judge.base import Usage
from localeval.judge.llama.sampler import Generation

__all__ = ["VerdictProbabilities"]


class VerdictProbabilities:
    """Mixin for ``LlamaJudge``: P(value) at each verdict in a generation.

    The host provides ``_llm``, ``_eval_to`` and ``_logits`` (``TokenSampler``).
    """

    _llm: Any
    _eval_to: Callable[[Sequence[int]], int]
    _logits: Callable[[], np.ndarray]

    def _verdict_probs(self, prompt: list[int], gen: Generation, field_name: str,
                       values: list[Any]) -> tuple[list[dict[str, float]], Usage]:
        """P(value) for each occurrence of ``"field":`` in the output.

        For each occurrence the model is placed right where the value starts
        (prompt + output up to there; the KV cache already holds it, so this
        is a one-token evaluation) and the last-position logits are
        softmaxed over the first token of each allowed value. The order of
        the result is the order in the output.
        """
        texts = [json.dumps(v, ensure_ascii=False) for v in values]
        common = os.path.commonprefix(texts)
        firsts = []
        for t in texts:
            ids = self._llm.tokenize(t[len(common):].encode("utf-8"), add_bos=False,
                                     special=False)
            firsts.append(ids[0])
        if len(set(firsts)) != len(firsts):
            raise ValueError(f"allowed values of {field_name!r} share a first token; "
                             "verdict probabilities need distinct first tokens")
        raw: bytes = gen.raw
        text = raw.decode("utf-8")
        ends = np.cumsum([0] + [len(p) for p in gen.pieces])  # byte offset of token k
        usage = Usage()
        out: list[dict[str, float]] = []
        # Last occurrence first: each step only trims the KV cache back and
        # re-runs one token, instead of re-evaluating the output in between.
        matches = list(re.finditer(r'"' + re.escape(field_name) + r'"\s*:\s*', text))
        for m in reversed(matches):
            start = m.end()
            if not text.startswith(common, start):
                continue
            off = len(text[: start + len(common)].encode("utf-8"))
            k = int(np.searchsorted(ends, off, side="right") - 1)  # token holding byte `off`
            prefix = list(prompt) + gen.tokens[:k]
            rest = raw[ends[k]:off]
            if rest:
                prefix += self._llm.tokenize(rest, add_bos=False, special=False)
            reused = self._eval_to(prefix)
            usage.prompt_tokens += len(prefix)
            usage.reused_tokens += reused
            logits = self._logits()[firsts].astype(np.float64)
            e = np.exp(logits - logits.max())
            p = e / e.sum()
            out.append({str(v): float(x) for v, x in zip(values, p)})
        out.reverse()
        return out, usage
