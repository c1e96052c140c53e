"""A pool of OpenAI-compatible judge servers used as one judge.

vLLM or llama.cpp server replicas each serve the same model; throughput grows
with the number of replicas only if calls are spread over them and several
are in flight at once. ``JudgePool`` picks the least-loaded healthy endpoint
for each call (at most ``per_endpoint_concurrency`` in flight per endpoint),
marks an endpoint down when it cannot be reached and retries the call on
another, and re-probes downed endpoints (``GET /v1/models``) every
``health_interval`` seconds so a restarted replica comes back into use.

Written by hand because no small, well-kept library does "least-loaded
failover over N OpenAI endpoints with per-endpoint limits" without pulling a
proxy server (LiteLLM's router) into an offline evaluator; the transport and
parsing stay in ``HttpJudge``.

The fingerprint covers the served model id and the sampling settings, not the
URLs, so one cache serves any number or order of replicas.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

from localeval.errors import BadReply, EndpointDown, JudgeCallError, ModelError, ServerBroken
from localeval.judge.base import JudgeBackend, JudgeReply, JudgeRequest, Usage
from localeval.judge.http import HttpJudge

__all__ = ["JudgePool", "EndpointDown", "split_urls"]


class _Endpoint(HttpJudge):
    """An ``HttpJudge`` whose transport failures say "this server is down"."""

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            return super()._request(method, path, body)
        except EndpointDown:
            raise
        except ModelError as e:  # unreachable, or kept answering 5xx / 429
            raise EndpointDown(str(e)) from None

    def ask(self, request: JudgeRequest) -> JudgeReply:
        try:
            return super().ask(request)
        except ServerBroken as e:  # MAX_FAILED_CALLS unusable replies in a row
            raise EndpointDown(str(e)) from None


@dataclass
class _Slot:
    url: str
    judge: _Endpoint | None = None
    healthy: bool = False
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    next_probe: float = 0.0
    error: str = ""
    probing: bool = field(default=False, repr=False)


def split_urls(spec: str) -> list[str]:
    """``"http://a:1,http://b:2"`` -> the URLs, stripped, empty parts dropped."""
    return [u.strip() for u in spec.split(",") if u.strip()]


class JudgePool(JudgeBackend):
    """Judge protocol over several servers; thread-safe.

    ``http_opts`` go to each ``HttpJudge`` (timeout, seed, temperature,
    logit_bias, constraint, api_key, retries...). Construction contacts every
    URL; unreachable ones start out down and are re-probed, but at least one
    must answer or ``ModelError`` is raised (exit 3). All endpoints must serve
    ``model`` (default: the first healthy endpoint's first model) under the
    same output constraint. A call waits up to ``give_up_after`` seconds for
    some endpoint to come back before failing the run with ``ModelError``.
    """

    def __init__(self, urls: Sequence[str], model: str | None = None,
                 per_endpoint_concurrency: int = 4, health_interval: float = 5.0,
                 give_up_after: float = 60.0, **http_opts: Any) -> None:
        urls = list(dict.fromkeys(u.rstrip("/") for u in urls))
        if not urls:
            raise ModelError("judge pool: no server URL given")
        if per_endpoint_concurrency < 1:
            raise ModelError("judge pool: per_endpoint_concurrency must be at least 1")
        self.per_endpoint_concurrency = int(per_endpoint_concurrency)
        self.health_interval = float(health_interval)
        self.give_up_after = float(give_up_after)
        # One quick retry per endpoint: failing over beats waiting on a dead server.
        http_opts.setdefault("retries", 1)
        http_opts.setdefault("backoff", 0.2)
        self._opts = http_opts
        self._cond = threading.Condition()
        self._slots = [_Slot(u) for u in urls]
        self.model = model
        c = http_opts.get("constraint")
        self.constraint: str | None = None if c in (None, "auto") else c
        errors = []
        for slot in self._slots:
            try:
                self._connect(slot)
            except ModelError as e:
                errors.append(f"{slot.url}: {e}")
        if not any(s.healthy for s in self._slots):
            raise ModelError("no judge server in the pool answered: " + "; ".join(errors))
        first = next(s.judge for s in self._slots if s.healthy and s.judge is not None)
        ident = {"pool_model": self.model, "temperature": first.temperature,
                 "seed": first.seed, "constraint": self.constraint,
                 "logit_bias": sorted(first.logit_bias.items())}
        self.fingerprint = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
        self.name = f"{self.model}@pool"

    # -- endpoints ---------------------------------------------------------------------
    def _connect(self, slot: _Slot) -> None:
        """(Re)build the endpoint's judge; raises ModelError if it does not answer."""
        try:
            j = _Endpoint(slot.url, model=self.model, **self._opts)
        except ModelError as e:
            slot.healthy, slot.error = False, str(e)
            slot.next_probe = time.monotonic() + self.health_interval
            raise
        if self.model is None:
            self.model = j.model
        if self.constraint is None:
            self.constraint = j.constraint
        elif j.constraint != self.constraint:
            slot.healthy = False
            raise ModelError(f"judge pool: {slot.url} needs constraint {j.constraint!r}, "
                             f"the pool uses {self.constraint!r}; do not mix server kinds")
        slot.judge, slot.healthy, slot.error = j, True, ""

    def _probe(self, slot: _Slot) -> None:
        """GET /v1/models on a downed endpoint; back into service when it answers."""
        try:
            if slot.judge is None:
                self._connect(slot)
            else:
                req = urllib.request.Request(slot.judge.base_url + "/models")
                with urllib.request.urlopen(req, timeout=min(5.0, slot.judge.timeout)) as r:
                    r.read()
                slot.healthy, slot.error = True, ""
        except (OSError, ModelError, http.client.HTTPException) as e:
            slot.error = str(e)
        with self._cond:
            slot.probing = False
            if not slot.healthy:
                slot.next_probe = time.monotonic() + self.health_interval
            self._cond.notify_all()

    def _mark_down(self, slot: _Slot, err: Exception) -> None:
        with self._cond:
            slot.healthy = False
            slot.failures += 1
            slot.error = str(err)
            slot.next_probe = time.monotonic() + self.health_interval
            self._cond.notify_all()

    def _acquire(self, avoid: set[str], deadline: float) -> _Slot:
        """The least-loaded healthy endpoint with a free slot; waits while all are busy.

        Raises ModelError when no endpoint is healthy at ``deadline``.
        """
        while True:
            due: _Slot | None = None
            with self._cond:
                now = time.monotonic()
                for s in self._slots:
                    if not s.healthy and not s.probing and now >= s.next_probe:
                        s.probing, due = True, s
                        break
                if due is None:
                    live = [s for s in self._slots if s.healthy and s.url not in avoid]
                    if not live:
                        live = [s for s in self._slots if s.healthy]
                    free = [s for s in live if s.in_flight < self.per_endpoint_concurrency]
                    if free:
                        slot = min(free, key=lambda s: (s.in_flight, s.calls))
                        slot.in_flight += 1
                        slot.calls += 1
                        return slot
                    if not live and now > deadline:
                        raise ModelError("every judge server in the pool is down: " +
                                         "; ".join(f"{s.url}: {s.error}" for s in self._slots))
                    self._cond.wait(timeout=0.5)
            if due is not None:
                self._probe(due)

    def _release(self, slot: _Slot) -> None:
        with self._cond:
            slot.in_flight -= 1
            self._cond.notify_all()

    # -- the Judge protocol ---------------------------------------------------------------
    def ask(self, request: JudgeRequest) -> JudgeReply:
        """Answer on some endpoint, failing over until one answers.

        An endpoint that is down (unreachable, kept answering 5xx, or sent
        ``MAX_FAILED_CALLS`` unusable replies in a row) is marked down and the
        call goes to another; the call fails the run (ModelError) once no
        endpoint has answered it for ``give_up_after`` seconds, as
        docs/scale-out.md says. A reply that is merely unusable (``BadReply``)
        is tried once on every other endpoint, then is this call's error. The
        unusable replies cost calls and tokens too: they are added to the
        usage of the reply or error that ends the call.
        """
        spent = Usage()  # what the replies tried and found unusable cost
        tried: set[str] = set()
        last: Exception | None = None
        deadline = time.monotonic() + self.give_up_after
        while True:
            try:
                slot = self._acquire(tried, deadline)
            except ModelError:
                if last is not None:
                    raise ModelError(f"every judge server in the pool failed for "
                                     f"{self.give_up_after:g} s; last: {last}") from None
                raise
            try:
                assert slot.judge is not None
                reply = slot.judge.ask(request)
                reply.usage.add(spent)
                return reply
            except EndpointDown as e:
                if last is None:  # "no answer for give_up_after s" counts from the first failure
                    deadline = max(deadline, time.monotonic() + self.give_up_after)
                last = e
                tried.add(slot.url)
                self._mark_down(slot, e)
            except BadReply as e:
                spent.add(e.usage)
                with self._cond:
                    slot.failures += 1
                    slot.error = str(e)
                    tried.add(slot.url)
                    others = [s for s in self._slots if s.healthy and s.url not in tried]
                if not others:
                    e.usage = spent
                    raise
            except JudgeCallError as e:  # this request's own failure, after the unusable ones
                e.usage.add(spent)
                raise
            finally:
                self._release(slot)
            if last is not None and time.monotonic() > deadline:
                raise ModelError(f"every judge server in the pool failed for "
                                 f"{self.give_up_after:g} s; last: {last}")

    def ask_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        """Answer ``requests`` concurrently (up to ``capacity`` at once), in order.

        The first exception raised by any call is raised here.
        """
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=min(self.capacity, len(requests))) as ex:
            return list(ex.map(self.ask, requests))

    @property
    def capacity(self) -> int:
        """Calls the pool can run at once when every endpoint is up."""
        return self.per_endpoint_concurrency * len(self._slots)

    def stats(self) -> list[dict[str, Any]]:
        """Per endpoint: url, healthy, calls sent, failures, in flight, last error."""
        with self._cond:
            return [{"url": s.url, "healthy": s.healthy, "calls": s.calls,
                     "failures": s.failures, "in_flight": s.in_flight, "error": s.error}
                    for s in self._slots]
