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

from pydantic import BaseModel, ValidationError

from localeval.cache import Cache, judge_label
from localeval.errors import JudgeCallError
from localeval.judge.base import Judge, JudgeReply, JudgeRequest, Usage, declared

__all__ = ["CachedJudge", "request_key", "with_cache"]


@functools.lru_cache(maxsize=512)
def _schema_json(schema: type[BaseModel]) -> Any:
    return schema.model_json_schema()


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
    Only what the judge decided is cached: a reply, or a deterministic
    per-sample failure (output cut at the budget, grammar-constrained output
    that does not parse), marked ``decided`` by the judge and stored so;
    it is raised again on a hit (``cached``), counted as a cache hit.
    Failures of the transport or the server (unreachable, 5xx, a reply of the
    wrong shape, off-schema content from a server that ignored the grammar)
    and those that depend on settings outside the fingerprint (prompt longer
    than the context) are not cached: the next run asks again. Every
    ``JudgeCallError`` leaving ``ask`` counts at least the call in its ``usage``.
    """

    def __init__(self, judge: Judge, cache: Cache | None = None) -> None:
        self.judge = declared(judge)
        self.cache = cache if cache is not None else Cache()
        self.fingerprint = judge.fingerprint
        self.name = judge.name
        #: the cache entries' judge: one per fingerprint, however the file was named
        self.label = judge_label(judge.name, judge.fingerprint)

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
            if not e.usage.calls:  # the judge made no call (prompt too long...): still one asked
                e.usage = Usage(calls=1)
            if e.decided:
                self.cache.put_call(key, self.label, request.step,
                                    {"error": str(e), "decided": True})
            raise
        self.cache.put_call(key, self.label, request.step, {
            "output": reply.output.model_dump(mode="json"),
            "raw": reply.raw,
            "probs": reply.probs,
            "usage": reply.usage.to_dict(),
        })
        return reply

    def _from_cache(self, hit: dict[str, Any], request: JudgeRequest) -> JudgeReply | None:
        """The stored reply, the stored decided error raised, or None to ask again.

        An entry of the wrong shape (hand-edited, damaged, or an error stored
        before errors were marked ``decided``, which may have been a server
        failure) is a miss: asked again and overwritten.
        """
        if "error" in hit:
            if hit.get("decided") is not True or not isinstance(hit["error"], str):
                return None
            raise JudgeCallError(hit["error"], usage=Usage(calls=1, cache_hits=1),
                                 decided=True, cached=True)
        raw, probs = hit.get("raw", ""), hit.get("probs")
        if not isinstance(raw, str) or not _valid_probs(probs):
            return None
        try:
            output = request.schema.model_validate(hit["output"])
        except (KeyError, ValidationError):
            return None  # a stale entry: ask again and overwrite it
        return JudgeReply(output=output, raw=raw, usage=Usage(calls=1, cache_hits=1),
                          probs=probs, cached=True)

    # -- the rest of the protocol: the wrapped judge's, by name (nothing else passes) --
    @property
    def capacity(self) -> int:
        return self.judge.capacity

    @property
    def batches(self) -> bool:
        return self.judge.batches

    def signature(self) -> dict[str, Any]:
        return self.judge.signature()

    def close(self) -> None:
        self.judge.close()

    def interrupt(self) -> None:
        self.judge.interrupt()

    def resume(self) -> None:
        self.judge.resume()


def with_cache(judge: Judge, cache: Cache) -> Judge:
    """``judge`` answering from ``cache``: wrapped once (a ``CachedJudge`` is kept as it is)."""
    return judge if isinstance(judge, CachedJudge) else CachedJudge(judge, cache)


def _valid_probs(probs: Any) -> bool:
    """None, or a list of {value: probability} dicts with finite numbers in [0, 1]."""
    if probs is None:
        return True
    if not isinstance(probs, list):
        return False
    return all(isinstance(d, dict) and all(
        isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
        and 0.0 <= v <= 1.0 for k, v in d.items()) for d in probs)
