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
import json
import os
import random
import re
import socket
import time
import urllib.error
import urllib.request
from typing import Any

from localeval.errors import JudgeCallError, ModelError
from localeval.judge.base import JudgeReply, JudgeRequest, Usage
from localeval.judge.grammar import allowed_values, max_tokens_for, schema_to_gbnf
from localeval.judge.parse import is_json, parse_reply, truncation_error

__all__ = ["HttpJudge"]

_RETRY_STATUS = {408, 429, 502, 503, 504}


class _HttpFailure(Exception):
    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class HttpJudge:
    """Judge over HTTP.

    ``base_url`` is the server root or its ``/v1``. ``constraint`` is
    ``"grammar"`` (llama.cpp servers), ``"json_schema"`` (OpenAI-style) or
    ``"auto"``: ask ``/v1/models`` who owns the model (llama.cpp servers say
    "llamacpp", llama-cpp-python says "me"). The server is contacted once at
    construction, so a wrong URL fails the run at once with exit code 3.
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
        self.api_key = api_key if api_key is not None else os.environ.get("LOCALEVAL_API_KEY")
        self.seed = int(seed)
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.max_tokens_cap = max_tokens_cap
        self.backoff = backoff
        self.top_logprobs = top_logprobs
        self.logit_bias = {int(k): float(v) for k, v in (logit_bias or {}).items()}
        self._logprobs_ok: bool | None = None

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
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1) * (1 + 0.25 * random.random()))
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                msg = _error_message(e)
                if e.code in _RETRY_STATUS:
                    last = _HttpFailure(e.code, msg)
                    continue
                raise _HttpFailure(e.code, msg) from None
            except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as e:
                last = e
                continue
            except ValueError as e:  # the body was not JSON
                raise _HttpFailure(None, f"server sent a reply that is not JSON ({e})") from None
        if isinstance(last, _HttpFailure):
            raise ModelError(f"judge server {url} kept failing: HTTP {last.status}: "
                             f"{last.message}")
        reason = getattr(last, "reason", last)
        raise ModelError(f"judge server {url} is unreachable after {self.retries + 1} "
                         f"attempts ({reason})")

    def _models(self) -> list[Any]:
        try:
            data = self._request("GET", "/models")
        except _HttpFailure as e:
            raise ModelError(f"judge server {self.base_url}/models answered HTTP {e.status}: "
                             f"{e.message}") from None
        return list(data.get("data") or []) if isinstance(data, dict) else []

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
        for attempt in range(2):
            body["max_tokens"] = budget
            if want_lp:
                body["logprobs"], body["top_logprobs"] = True, self.top_logprobs
            else:
                body.pop("logprobs", None)
                body.pop("top_logprobs", None)
            data = self._chat(body, want_lp)
            if data is None:  # the server refused logprobs; ask again without
                self._logprobs_ok = want_lp = False
                body.pop("logprobs", None)
                body.pop("top_logprobs", None)
                data = self._chat(body, False)
            elif want_lp:
                self._logprobs_ok = True
            u = data.get("usage") or {}
            usage.calls += 1
            usage.prompt_tokens += int(u.get("prompt_tokens") or 0)
            details = u.get("prompt_tokens_details") or {}
            usage.reused_tokens += int(details.get("cached_tokens") or 0)
            usage.generated_tokens += int(u.get("completion_tokens") or 0)
            choice = (data.get("choices") or [{}])[0]
            text = (choice.get("message") or {}).get("content") or ""
            if choice.get("finish_reason") != "length" or is_json(text):
                break
            if attempt == 0:
                budget *= 2
                continue
            raise truncation_error(int(u.get("completion_tokens") or budget))
        output = parse_reply(text, schema)
        probs = None
        if values and want_lp:
            probs = _probs_from_logprobs(choice.get("logprobs"), request.prob_field or "", values)
        usage.seconds = time.perf_counter() - t0
        return JudgeReply(output=output, raw=text, usage=usage, probs=probs)

    def _chat(self, body: dict[str, Any], want_lp: bool) -> dict[str, Any] | None:
        try:
            data = self._request("POST", "/chat/completions", body)
        except _HttpFailure as e:
            if e.status in (401, 403, 404):
                raise ModelError(f"judge server {self.base_url} refused the request: HTTP "
                                 f"{e.status}: {e.message}") from None
            if want_lp and e.status in (400, 422, 500) and "logprob" in e.message.lower():
                return None
            raise JudgeCallError(f"judge server error (HTTP {e.status}): {e.message}") from None
        if not isinstance(data, dict):
            raise JudgeCallError("judge server sent an unexpected reply")
        return data

    def close(self) -> None:
        pass


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
    except ValueError:
        return raw[:500] or str(e.reason)


def _probs_from_logprobs(logprobs: Any, field: str, values: list[Any]
                         ) -> list[dict[str, float]] | None:
    """Renormalise the server's top logprobs at each verdict position over the allowed values.

    The server's numbers ignore the grammar, hence the renormalisation. A
    candidate token counts for a value when its stripped text is a non-empty
    prefix of exactly that value. None when the server sent no logprobs or a
    position has no candidate for any allowed value.
    """
    import math

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
    return out
