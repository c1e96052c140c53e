"""A judge wrapper that answers repeated requests from the SQLite cache.

Every finished call is committed at once (``Cache.put_call``), so a run
killed at any point and started again repeats no finished call, and a second
run over the same data with the same judge costs no generation at all. The
key covers everything that can change an answer: the judge's fingerprint
(model file hash and sampling settings), the rendered messages, the output
schema, seed, temperature and the verdict-probability field.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from pydantic import ValidationError

from localeval.cache import Cache
from localeval.errors import JudgeCallError
from localeval.judge.base import Judge, JudgeReply, JudgeRequest, Usage

__all__ = ["CachedJudge", "request_key"]


@functools.lru_cache(maxsize=512)
def _schema_json(schema: type) -> Any:
    return schema.model_json_schema()  # type: ignore[attr-defined]


def request_key(fingerprint: str, request: JudgeRequest) -> str:
    """sha256 identifying ``request`` put to the judge with ``fingerprint``."""
    payload = {
        "judge": fingerprint,
        "messages": [dict(m) for m in request.messages],
        "schema": _schema_json(request.schema),
        "seed": request.seed,
        "temperature": request.temperature,
        "prob_field": request.prob_field,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedJudge:
    """Wrap any Judge; hits return ``cached=True`` with ``usage.cache_hits == 1``.

    A hit counts as a call (``calls == 1``, so ``cache_hits / calls`` is the
    hit rate) that cost no tokens and no time.
    Deterministic per-sample failures (truncated or invalid output, marked
    ``cacheable`` by the judge) are cached too and raised again on a hit;
    failures that depend on settings outside the fingerprint (prompt longer
    than the context, server errors) are not.
    """

    def __init__(self, judge: Judge, cache: Cache | None = None) -> None:
        self.judge = judge
        self.cache = cache if cache is not None else Cache()
        self.fingerprint = judge.fingerprint
        self.name = judge.name

    def key(self, request: JudgeRequest) -> str:
        return request_key(self.fingerprint, request)

    def ask(self, request: JudgeRequest) -> JudgeReply:
        key = self.key(request)
        hit = self.cache.get_call(key)
        if hit is not None:
            reply = self._from_cache(hit, request)
            if reply is not None:
                return reply
        try:
            reply = self.judge.ask(request)
        except JudgeCallError as e:
            if getattr(e, "cacheable", False):
                self.cache.put_call(key, self.name, request.step, {"error": str(e)})
            raise
        self.cache.put_call(key, self.name, request.step, {
            "output": reply.output.model_dump(mode="json"),
            "raw": reply.raw,
            "probs": reply.probs,
            "usage": reply.usage.to_dict(),
        })
        return reply

    def _from_cache(self, hit: dict[str, Any], request: JudgeRequest) -> JudgeReply | None:
        if "error" in hit:
            err = JudgeCallError(hit["error"])
            err.cacheable = True  # type: ignore[attr-defined]
            err.cached = True  # type: ignore[attr-defined]
            raise err
        try:
            output = request.schema.model_validate(hit["output"])
        except (KeyError, ValidationError):
            return None  # a stale entry: ask again and overwrite it
        return JudgeReply(output=output, raw=hit.get("raw", ""),
                          usage=Usage(calls=1, cache_hits=1), probs=hit.get("probs"),
                          cached=True)

    def __getattr__(self, name: str) -> Any:
        # count_tokens, signature, close... of the wrapped judge
        if name == "judge":  # not set yet (copy/unpickle): avoid recursing
            raise AttributeError(name)
        return getattr(self.judge, name)
