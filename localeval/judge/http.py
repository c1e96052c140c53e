"""A judge behind an OpenAI-compatible ``/v1/chat/completions`` server.

For teams that already serve their judge (llama.cpp's ``llama-server``,
``python -m llama_cpp.server``, vLLM, ...). Only the standard library is used
(urllib), so the HTTP judge adds no dependency.

Output is constrained by the server: servers built on llama.cpp get our own
GBNF (the ``grammar`` request field, which carries the corrected string rule
and the bounds; llama-cpp-python's own ``response_format`` conversion has
the control-character bug and silently falls back to free JSON); any other
server gets ``response_format`` ``json_schema`` in strict mode. Either way the
reply is parsed strictly and validated (``localeval.judge.parse``); nothing is trusted.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import re
import socket
import time
import urllib.error
import urllib.request
from typing import Any

from localeval.config import env_text
from localeval.errors import BadReply, HttpFailure, JudgeCallError, ModelError, ServerBroken
from localeval.judge.base import JudgeBackend, JudgeReply, JudgeRequest, Usage
from localeval.judge.completion import probs_from_logprobs, reply_parts
from localeval.judge.grammar import allowed_values, max_tokens_for, schema_to_gbnf
from localeval.judge.parse import is_json, parse_reply, truncation_error

__all__ = ["HttpJudge", "BadReply", "ServerBroken", "MAX_FAILED_CALLS"]

#: Retried besides every 5xx: the server is busy or timed out, not refusing this request.
_RETRY_STATUS = {408, 429}
#: Consecutive server-side failures (5xx, replies of the wrong shape or off-schema
#: content) after which the server is taken for broken: ModelError, exit 3 (in a
#: pool the replica is marked down), instead of a run of unscored samples.
MAX_FAILED_CALLS = 3
_NO_LOGPROBS = object()  # what ``_chat`` returns when the server refuses logprobs


def _retryable(status: int, message: str) -> bool:
    # A 500 that names logprobs is llama-cpp-python refusing them: a deterministic
    # answer to this request (see ``_chat``), not a server fault worth retrying.
    if status == 500 and "logprob" in message.lower():
        return False
    return status in _RETRY_STATUS or status >= 500


class HttpJudge(JudgeBackend):
    """Judge over HTTP.

    ``base_url`` is the server root or its ``/v1``. ``constraint`` is
    ``"grammar"`` (llama.cpp servers), ``"json_schema"`` (OpenAI-style) or
    ``"auto"``: ask ``/v1/models`` who owns the model (llama.cpp servers say
    "llamacpp", llama-cpp-python says "me"). The server is contacted once at
    construction, so a wrong URL fails the run at once with exit code 3.

    One call at a time (``capacity`` 1): several calls in flight go through
    ``JudgePool`` (``--judge-concurrency``), which shares them out over servers.
    """

    def __init__(self, base_url: str, model: str | None = None, timeout: float = 60,
                 retries: int = 3, api_key: str | None = None, *, seed: int = 0,
                 temperature: float = 0.0, constraint: str = "auto",
                 max_tokens: int | None = None, max_tokens_cap: int = 4096,
                 backoff: float = 0.5, top_logprobs: int = 20,
                 logit_bias: dict[int, float] | None = None) -> None:
        base = base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else base + "/v1"
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.api_key = api_key if api_key is not None else env_text("LOCALEVAL_API_KEY")
        self.seed = int(seed)
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.max_tokens_cap = max_tokens_cap
        self.backoff = backoff
        self.top_logprobs = top_logprobs
        self.logit_bias = {int(k): float(v) for k, v in (logit_bias or {}).items()}
        self._logprobs_ok: bool | None = None
        self._failed_calls = 0  # consecutive server-side failures (see MAX_FAILED_CALLS)

        models = self._models()
        ids = [m.get("id") for m in models if isinstance(m, dict)]
        if model is None:
            if not ids:
                raise ModelError(f"{self.base_url}/models lists no model; pass the model name")
            model = str(ids[0])
        self.model = model
        owners = {str(m.get("owned_by", "")) for m in models if isinstance(m, dict)}
        if constraint == "auto":
            constraint = "grammar" if owners & {"llamacpp", "me"} else "json_schema"
        if constraint not in ("grammar", "json_schema"):
            raise ValueError("constraint must be 'auto', 'grammar' or 'json_schema'")
        self.constraint = constraint
        self.name = f"{model}@{self.base_url}"
        ident = {"url": self.base_url, "model": model, "temperature": self.temperature,
                 "seed": self.seed, "constraint": constraint,
                 "logit_bias": sorted(self.logit_bias.items())}
        self.fingerprint = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    # -- transport --------------------------------------------------------------------
    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = self.base_url + path
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last: Exception | None = None
        timeouts = 0
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1) * (1 + 0.25 * random.random()))
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as e:
                msg = _error_message(e)
                if _retryable(e.code, msg):
                    last = HttpFailure(e.code, msg)
                    continue
                raise HttpFailure(e.code, msg) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                # HTTPException: a bad status line or a body cut short (IncompleteRead)
                last = e
                if isinstance(getattr(e, "reason", e), (socket.timeout, TimeoutError)):
                    timeouts += 1
                    if timeouts >= 2:  # a hung server stays hung: do not wait out every retry
                        break
                continue
            try:
                return json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError) as e:  # not UTF-8 / not JSON / nested too deep
                why = "nested too deeply" if isinstance(e, RecursionError) else str(e)[:200]
                raise HttpFailure(None, f"server sent a reply that is not JSON ({why})"
                                   ) from None
        if isinstance(last, http.client.HTTPException) and not isinstance(last, ConnectionError):
            # It answered, but not in HTTP (bad status line) or cut its body short.
            raise HttpFailure(None, f"server sent a broken HTTP reply ({type(last).__name__}: "
                                     f"{str(last)[:200]})")
        if isinstance(last, HttpFailure):
            raise ModelError(f"judge server {url} kept failing: HTTP {last.status}: "
                             f"{last.message}")
        reason = getattr(last, "reason", None) or f"{type(last).__name__}: {last}"
        if timeouts and isinstance(getattr(last, "reason", last), (socket.timeout, TimeoutError)):
            reason = f"no reply within --judge-timeout {self.timeout:g} s"
        raise ModelError(f"judge server {url} is unreachable after {attempt + 1} "
                         f"attempts ({reason})")

    def _models(self) -> list[Any]:
        try:
            data = self._request("GET", "/models")
        except HttpFailure as e:
            status = f"HTTP {e.status}: " if e.status is not None else ""
            raise ModelError(f"judge server {self.base_url}/models answered {status}"
                             f"{e.message}") from None
        listed = data.get("data") if isinstance(data, dict) else None
        return listed if isinstance(listed, list) else []

    # -- the Judge protocol ---------------------------------------------------------------
    def ask(self, request: JudgeRequest) -> JudgeReply:
        t0 = time.perf_counter()
        schema = request.schema
        gbnf = schema_to_gbnf(schema)  # also enforces the bounds for json_schema mode
        values = allowed_values(schema, request.prob_field) if request.prob_field else None
        budget = self.max_tokens or min(max_tokens_for(schema), self.max_tokens_cap)
        temp = request.temperature if request.temperature > 0 else self.temperature
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": temp,
            "seed": (self.seed * 1_000_003 + int(request.seed)) & 0xFFFFFFFF,
            "stream": False,
        }
        if self.logit_bias:
            body["logit_bias"] = {str(k): v for k, v in self.logit_bias.items()}
        if self.constraint == "grammar":
            body["grammar"] = gbnf
        else:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": re.sub(r"[^a-zA-Z0-9_-]", "_", request.step)[:64] or "output",
                "schema": schema.model_json_schema(), "strict": True}}
        want_lp = bool(values) and self._logprobs_ok is not False
        usage = Usage()
        try:
            reply = self._exchange(request, body, budget, want_lp, values, usage)
        except BadReply as e:  # the reply's fault: the call still cost what it cost
            usage.seconds = time.perf_counter() - t0
            e.usage = usage
            self._failed_calls += 1
            if self._failed_calls >= MAX_FAILED_CALLS:
                raise ServerBroken(f"judge server {self.base_url} failed {self._failed_calls} "
                                 f"calls in a row; last: {e}") from None
            raise
        except JudgeCallError as e:  # decided (truncation) or this request's own (HTTP 4xx)
            usage.seconds = time.perf_counter() - t0
            e.usage = usage
            self._failed_calls = 0
            raise
        self._failed_calls = 0
        usage.seconds = time.perf_counter() - t0
        reply.usage = usage
        return reply

    def _exchange(self, request: JudgeRequest, body: dict[str, Any], budget: int,
                  want_lp: bool, values: list[Any] | None, usage: Usage) -> JudgeReply:
        """Send, retry once with twice the budget when cut off, parse; adds to ``usage``."""
        for attempt in range(2):
            body["max_tokens"] = budget
            if want_lp:
                body["logprobs"], body["top_logprobs"] = True, self.top_logprobs
            else:
                body.pop("logprobs", None)
                body.pop("top_logprobs", None)
            usage.calls += 1
            data = self._chat(body, want_lp)
            if data is _NO_LOGPROBS:  # the server refused logprobs; ask again without
                self._logprobs_ok = want_lp = False
                body.pop("logprobs", None)
                body.pop("top_logprobs", None)
                data = self._chat(body, False)
            elif want_lp:
                self._logprobs_ok = True
            text, finish, counts, logprobs = reply_parts(data, self.base_url)
            usage.prompt_tokens += counts["prompt"]
            usage.reused_tokens += min(counts["cached"], counts["prompt"])
            usage.generated_tokens += counts["completion"]
            if finish != "length" or is_json(text):
                break
            if attempt == 0:
                budget *= 2
                continue
            raise truncation_error(counts["completion"] or budget, usage=usage)
        try:
            output = parse_reply(text, request.schema)
        except JudgeCallError as e:
            # The server was sent a grammar or a strict schema: content that does not
            # parse means it ignored the constraint, which is its fault, not a verdict.
            raise BadReply(f"judge server {self.base_url}: {e}") from None
        probs = None
        if values and want_lp:
            try:
                probs = probs_from_logprobs(logprobs, request.prob_field or "", values)
            except (TypeError, ValueError, AttributeError, OverflowError):
                probs = None  # logprobs of an unexpected shape: no probabilities
        return JudgeReply(output=output, raw=text, probs=probs)

    def _chat(self, body: dict[str, Any], want_lp: bool) -> Any:
        """The server's decoded reply (any JSON: ``_reply_parts`` checks it), or
        ``_NO_LOGPROBS`` when it refused logprobs."""
        try:
            data = self._request("POST", "/chat/completions", body)
        except HttpFailure as e:
            if e.status in (401, 403, 404):
                raise ModelError(f"judge server {self.base_url} refused the request: HTTP "
                                 f"{e.status}: {e.message}") from None
            if want_lp and e.status in (400, 422, 500) and "logprob" in e.message.lower():
                return _NO_LOGPROBS
            if e.status is None:  # a 200 whose body is not JSON
                raise BadReply(f"judge server {self.base_url}: {e.message}") from None
            raise JudgeCallError(f"judge server error (HTTP {e.status}): {e.message}") from None
        return data

def _error_message(e: urllib.error.HTTPError) -> str:
    try:
        raw = e.read().decode("utf-8", errors="replace")
    except Exception:
        return str(e.reason)
    try:
        data = json.loads(raw)
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or err)[:500]
        return str(err)[:500]
    except (ValueError, RecursionError):
        return raw[:500] or str(e.reason)
