"""An HTTP judge with parallel slots gets one sample's independent calls at once.

A scripted OpenAI-compatible server on 127.0.0.1 answers every request with
the smallest output its JSON schema allows and counts how many requests are
open at the same moment; asked to, it holds each request until that many are
open together (an event, not a sleep, so a slow machine cannot fake the overlap). With ``--judge-concurrency``
(here ``per_endpoint_concurrency``) a single sample's metrics, per-context
verdicts and dual ratings overlap; without it they go one by one. Scores are
the same either way.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import localeval
from localeval.types import Sample


def minimal(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The smallest instance of a pydantic JSON schema (what a terse judge would say)."""
    if "$ref" in schema:
        return minimal(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "enum" in schema:
        return schema["enum"][-1]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return minimal(schema[key][0], defs)
    kind = schema.get("type")
    if kind == "object":
        return {k: minimal(v, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [minimal(schema.get("items", {}), defs)
                for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "integer":
        return schema.get("maximum", schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "number":
        return 1.0
    return "ok"


class SlotServer:
    """A server that takes several requests at once, like llama-server with parallel slots."""

    def __init__(self, patience: float = 10.0) -> None:
        self.lock = threading.Lock()
        self.open = self.peak = self.requests = 0
        #: Hold requests until this many are open at once (0: answer at once).
        self.meet, self.met = 0, threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send({"data": [{"id": "m1", "owned_by": "vllm"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.open += 1
                    outer.requests += 1
                    outer.peak = max(outer.peak, outer.open)
                    if outer.meet and outer.open >= outer.meet:
                        outer.met.set()
                try:
                    if outer.meet:
                        outer.met.wait(patience)
                    schema = body["response_format"]["json_schema"]["schema"]
                    out = minimal(schema, schema.get("$defs", {}))
                finally:
                    # closed before the reply goes out: once the client has it, it may send
                    # its next call, which must not find this one still counted as open
                    with outer.lock:
                        outer.open -= 1
                self._send({"choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": json.dumps(out)}}],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 9}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = SlotServer()
    yield s
    s.close()


SAMPLE = Sample(id="one", question="Where is the Eiffel Tower?",
                answer="The Eiffel Tower is in Paris. It opened in 1889.",
                contexts=["The Eiffel Tower stands in Paris.", "It opened in 1889.",
                          "Paris is the capital of France."],
                reference="It is in Paris.")
METRICS = ("faithfulness,context_precision,context_utilization,noise_sensitivity,"
           "nv_context_relevance,nv_answer_accuracy")


def scores(server: SlotServer, **opts: Any) -> dict:
    res = localeval.evaluate([SAMPLE.to_dict()], METRICS, judge=server.url, embedder=False,
                             cache=False, progress=False, judge_check=False, judge_options=opts)
    return {k: (v.value, v.reason) for k, v in res.scores[0].items()}


def test_one_samples_calls_reach_a_server_with_slots_together(server):
    alone = scores(server)
    assert server.peak == 1, "without --judge-concurrency calls go one at a time"
    asked = server.requests
    server.peak = server.requests = 0
    server.meet = 4
    together = scores(server, per_endpoint_concurrency=8)
    assert together == alone and all(v is not None for v, _ in together.values()), together
    assert server.requests == asked
    # One sample only: the overlap is that sample's own independent calls.
    assert server.met.is_set(), server.peak
