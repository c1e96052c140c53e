"""The OpenAI-compatible HTTP judge: a real llama-cpp-python server, and a scripted one
for the failure paths a real server will not produce on demand."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from localeval.errors import JudgeCallError, ModelError
from localeval.judge import JudgeRequest
from localeval.judge.http import HttpJudge
from localeval.metrics.schemas import ALL_SCHEMAS, ContextVerdict, Rating012


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def msgs(i: int):
    return ({"role": "system", "content": "You are a judge. JSON only."},
            {"role": "user", "content": f"Question {i}: where is the Eiffel Tower?"})


# -- a real server ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tiny_gguf):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(tiny_gguf),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1",
         "--n_threads_batch", "1", "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                err = (proc.stderr.read() or "")[-2000:]
                pytest.fail("llama_cpp.server did not start: " + err)
            time.sleep(0.2)
    yield url
    proc.kill()
    proc.wait(timeout=30)
    proc.stderr.close()


def quote_bias_for(model_path) -> dict[int, float]:
    """Favour closing quotes so the random model's strings stay short (keeps the test fast)."""
    from localeval.judge import LlamaJudge
    from localeval.testing import quote_bias

    j = LlamaJudge(model_path, n_threads=1)
    bias = quote_bias(j)
    j.close()
    return bias


def test_real_server_schemas_parse_strictly(server, tiny_gguf):
    judge = HttpJudge(server, timeout=60, logit_bias=quote_bias_for(tiny_gguf))
    assert judge.constraint == "grammar"  # llama-cpp-python: our GBNF, not its converter
    n = 0
    for schema in ALL_SCHEMAS:
        for i in range(2):
            r = judge.ask(JudgeRequest(step=schema.__name__, messages=msgs(i), schema=schema,
                                       seed=i, temperature=0.9 * i))
            assert schema.model_validate(json.loads(r.raw)) == r.output
            assert r.usage.calls == 1 and r.usage.prompt_tokens > 0
            n += 1
    assert n == 2 * len(ALL_SCHEMAS) and len(ALL_SCHEMAS) >= 9


def test_real_server_same_seed_same_output_and_logprob_verdicts(server):
    judge = HttpJudge(server, timeout=60, top_logprobs=600)
    req = JudgeRequest(step="v", messages=msgs(3), schema=ContextVerdict, seed=7,
                       temperature=0.9, prob_field="verdict")
    a, b = judge.ask(req), judge.ask(req)
    assert a.raw == b.raw
    assert a.probs is not None and len(a.probs) == 1
    assert set(a.probs[0]) == {"0", "1"} and abs(sum(a.probs[0].values()) - 1) < 1e-9


def test_real_server_context_overflow_is_a_per_sample_error(server):
    judge = HttpJudge(server, timeout=60)
    long = ({"role": "user", "content": "Eiffel " * 3000},)
    with pytest.raises(JudgeCallError, match="maximum context length is 2048 tokens"):
        judge.ask(JudgeRequest(step="s", messages=long, schema=Rating012))


# -- a scripted server ------------------------------------------------------------------
class Scripted:
    """Serves /v1/models and replays queued /v1/chat/completions replies."""

    def __init__(self, owner: str = "vllm"):
        self.owner = owner
        self.replies: list[tuple[int, dict] | str] = []
        self.bodies: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"data": [{"id": "m1", "owned_by": outer.owner}]})

            def do_POST(self):
                n = int(self.headers["Content-Length"])
                outer.bodies.append(json.loads(self.rfile.read(n)))
                reply = outer.replies.pop(0)
                if reply == "hang":
                    time.sleep(2)
                    return
                self._send(*reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(content: str, finish: str = "stop", logprobs=None) -> tuple[int, dict]:
    choice = {"index": 0, "message": {"role": "assistant", "content": content},
              "finish_reason": finish}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return 200, {"choices": [choice], "usage": {"prompt_tokens": 50, "completion_tokens": 9,
                                                  "prompt_tokens_details": {"cached_tokens": 40}}}


@pytest.fixture
def scripted():
    s = Scripted()
    yield s
    s.close()


def ask(judge, schema=Rating012, **kw):
    return judge.ask(JudgeRequest(step="step one", messages=msgs(0), schema=schema, **kw))


def test_openai_style_server_gets_a_strict_json_schema(scripted):
    judge = HttpJudge(scripted.url, backoff=0.01)
    assert (judge.model, judge.constraint, judge.name) == ("m1", "json_schema",
                                                         f"m1@{scripted.url}")
    scripted.replies.append(completion('{"rating": 2}'))
    r = ask(judge)
    assert r.output.rating == 2 and r.probs is None
    assert (r.usage.prompt_tokens, r.usage.reused_tokens, r.usage.generated_tokens) == (50, 40, 9)
    body = scripted.bodies[-1]
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["name"] == "step_one"
    assert rf["json_schema"]["schema"] == Rating012.model_json_schema()
    assert "grammar" not in body and body["temperature"] == 0.0 and body["max_tokens"] > 0


def test_llama_cpp_servers_get_the_grammar():
    s = Scripted(owner="llamacpp")
    try:
        judge = HttpJudge(s.url + "/", backoff=0.01)  # root or /v1, trailing slash or not
        s.replies.append(completion('{"rating": 0}'))
        ask(judge)
        assert "char ::=" in s.bodies[-1]["grammar"] or "root ::=" in s.bodies[-1]["grammar"]
        assert "response_format" not in s.bodies[-1]
    finally:
        s.close()


def test_retries_with_backoff_then_success(scripted):
    judge = HttpJudge(scripted.url, retries=3, backoff=0.01)
    scripted.replies += [(503, {"error": {"message": "busy"}}), (502, {}),
                         completion('{"rating": 1}')]
    assert ask(judge).output.rating == 1
    assert len(scripted.bodies) == 3


def test_server_that_keeps_failing_is_a_model_error(scripted):
    judge = HttpJudge(scripted.url, retries=1, backoff=0.01)
    scripted.replies += [(503, {"error": {"message": "overloaded"}})] * 2
    with pytest.raises(ModelError, match="kept failing: HTTP 503: overloaded") as e:
        ask(judge)
    assert e.value.exit_code == 3


def test_timeouts_are_bounded(scripted):
    judge = HttpJudge(scripted.url, timeout=0.3, retries=1, backoff=0.01)
    scripted.replies += ["hang", "hang"]
    t0 = time.time()
    with pytest.raises(ModelError, match="unreachable after 2 attempts"):
        ask(judge)
    assert time.time() - t0 < 3


def test_truncated_reply_is_retried_with_double_budget_then_reported(scripted):
    judge = HttpJudge(scripted.url, backoff=0.01, max_tokens=5)
    scripted.replies += [completion('{"rating"', "length"), completion('{"rating": ', "length")]
    with pytest.raises(JudgeCallError, match="^judge output truncated at 9 tokens$"):
        ask(judge)
    assert [b["max_tokens"] for b in scripted.bodies] == [5, 10]


def test_invalid_replies_are_per_sample_errors(scripted):
    judge = HttpJudge(scripted.url, backoff=0.01)
    scripted.replies += [completion('{"rating": 7}'), completion('{"rating": 1,}'),
                         (400, {"error": {"message": "bad things"}})]
    with pytest.raises(JudgeCallError, match="does not match Rating012: rating"):
        ask(judge)
    with pytest.raises(JudgeCallError, match="not valid JSON"):
        ask(judge)
    with pytest.raises(JudgeCallError, match=r"HTTP 400\): bad things"):
        ask(judge)


def test_auth_failure_is_a_model_error(scripted):
    judge = HttpJudge(scripted.url, backoff=0.01, api_key="k")
    scripted.replies.append((401, {"error": {"message": "bad key"}}))
    with pytest.raises(ModelError, match="HTTP 401: bad key"):
        ask(judge)


def test_logprobs_are_renormalised_over_allowed_values(scripted):
    judge = HttpJudge(scripted.url, backoff=0.01)
    content = '{"reason": "ok", "verdict": 1}'
    toks = ['{"', 'reason', '":', ' "', 'ok', '",', ' "', 'verdict', '":', ' 1', '}']
    assert "".join(toks) == content
    lp = [{"token": t, "logprob": -0.1, "top_logprobs": []} for t in toks]
    lp[9]["top_logprobs"] = [{"token": " 1", "logprob": -0.5}, {"token": " 0", "logprob": -1.5},
                             {"token": " maybe", "logprob": -0.1}, {"token": "1", "logprob": -3.0}]
    scripted.replies.append(completion(content, logprobs=lp))
    r = ask(judge, schema=ContextVerdict, prob_field="verdict")
    import math

    p1 = math.exp(-0.5) + math.exp(-3.0)
    p0 = math.exp(-1.5)
    assert r.probs == [pytest.approx({"1": p1 / (p0 + p1), "0": p0 / (p0 + p1)})]
    assert scripted.bodies[-1]["logprobs"] is True


def test_server_without_logprobs_gives_no_probabilities(scripted):
    judge = HttpJudge(scripted.url, backoff=0.01)
    scripted.replies += [
        (500, {"error": {"message": "logprobs is not supported for models created with "
                                    "logits_all=False"}}),
        completion('{"reason": "ok", "verdict": 0}'),
        completion('{"reason": "ok", "verdict": 1}'),
    ]
    r = ask(judge, schema=ContextVerdict, prob_field="verdict")
    assert r.output.verdict == 0 and r.probs is None
    assert "logprobs" not in scripted.bodies[1]
    r = ask(judge, schema=ContextVerdict, prob_field="verdict")  # not asked again
    assert "logprobs" not in scripted.bodies[2] and r.probs is None


def test_unreachable_server_is_a_model_error_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ModelError) as e:
        HttpJudge(url, retries=1, backoff=0.01)
    assert e.value.exit_code == 3
    assert f"{url}/v1/models" in str(e.value) and "unreachable" in str(e.value)
