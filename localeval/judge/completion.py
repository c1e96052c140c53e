"""Reading an OpenAI-style chat completion, whatever shape the server sent.

Servers differ and some misbehave (``choices`` a string, ``content`` a number,
``usage`` a list, logprobs of any shape). Every field is checked here before
use, so a reply of the wrong shape is one ``BadReply`` for that call, never a
traceback; ``http`` (the transport) and ``pool`` (failover) act on it.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from localeval.errors import BadReply

__all__ = ["reply_parts", "probs_from_logprobs"]


def _token_count(v: Any) -> int:
    """A token count from the server's ``usage``; anything but a finite number >= 0 is 0."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0
    if isinstance(v, float) and not math.isfinite(v):
        return 0
    return max(0, int(v))


def reply_parts(data: Any, where: str) -> tuple[str, str | None, dict[str, int], Any]:
    """Content, finish reason, token counts and logprobs of a chat completion.

    Checked field by field because servers differ and some misbehave: a reply
    of any other shape is the call's ``BadReply``, never a traceback. Token
    counts of the wrong type are taken as 0 (accounting, not a verdict).
    """
    def bad(what: str, value: Any) -> BadReply:
        return BadReply(f"judge server {where} sent a reply of unexpected shape: {what} is "
                        f"{type(value).__name__} {str(value)[:80]!r}")

    if not isinstance(data, dict):
        raise bad("the body", data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad("'choices'", choices)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise bad("'choices[0]'", choice)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise bad("'message'", message)
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise bad("'content'", content)
    finish = choice.get("finish_reason")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    counts = {"prompt": _token_count(usage.get("prompt_tokens")),
              "cached": _token_count(details.get("cached_tokens")),
              "completion": _token_count(usage.get("completion_tokens"))}
    return content, finish if isinstance(finish, str) else None, counts, choice.get("logprobs")


def probs_from_logprobs(logprobs: Any, field: str, values: list[Any]
                         ) -> list[dict[str, float]] | None:
    """Renormalise the server's top logprobs at each verdict position over the allowed values.

    The server's numbers ignore the grammar, hence the renormalisation. A
    candidate token counts for a value when its stripped text is a non-empty
    prefix of exactly that value. None when the server sent no logprobs or a
    position has no candidate for any allowed value.
    """
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    toks = [str(c.get("token", "")) for c in content]
    starts, pos = [], 0
    for t in toks:
        starts.append(pos)
        pos += len(t)
    text = "".join(toks)
    texts = [json.dumps(v, ensure_ascii=False) for v in values]
    common = os.path.commonprefix(texts)
    rests = [t[len(common):] for t in texts]
    out: list[dict[str, float]] = []
    for m in re.finditer(r'"' + re.escape(field) + r'"\s*:\s*', text):
        at = m.end() + len(common)
        k = max(i for i, s in enumerate(starts) if s <= at) if starts else 0
        if k >= len(content):
            return None
        mass = [0.0] * len(values)
        for cand in content[k].get("top_logprobs") or []:
            s = str(cand.get("token", "")).strip()
            if common and s.startswith(common):
                s = s[len(common):]
            hits = [i for i, r in enumerate(rests) if s and r.startswith(s)]
            if len(hits) == 1:
                mass[hits[0]] += math.exp(float(cand.get("logprob", -math.inf)))
        total = sum(mass)
        if total <= 0:
            return None
        out.append({str(v): m_ / total for v, m_ in zip(values, mass)})
    return out or None  # no verdict position found in the tokens: no probabilities
