"""Fault catalogue, judge half: a damaged cache, broken model files, judge
servers that misbehave.

Every case is a hostile state and its contract:

- exit-code class: 0 when localeval recovers (and says so), 3 for a model, judge or
  environment fault it cannot get round, 2 for a bad option or path;
- no traceback, and one ``localeval: error:`` line naming the file or the server;
- no score recorded from a failed call, nothing from a failed call cached as if the
  judge had decided it, and a recovered run scores exactly what an undisturbed run does.

Cache cases use real SQLite files damaged on disk; server cases a real HTTP server on
127.0.0.1 (started here, in the test process) and the CLI as a real subprocess; model
cases real GGUF files through real llama.cpp.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from pydantic import BaseModel

import localeval.metrics.schemas as schemas
from localeval.cache import Cache
from localeval.errors import JudgeCallError, ModelError
from localeval.judge import CachedJudge, JudgeRequest
from localeval.judge.http import MAX_FAILED_CALLS, BadReply, HttpJudge
from localeval.judge.pool import JudgePool
from localeval.metrics.schemas import Rating012
from localeval.testing import RandomJudge

SCHEMAS = {n: c for n, c in vars(schemas).items()
           if isinstance(c, type) and issubclass(c, BaseModel)}
DATA = [
    {"id": f"s{i}", "question": f"Where is landmark {i}?", "answer": f"In city {i}.",
     "reference": f"Landmark {i} is in city {i}.",
     "contexts": [f"Landmark {i} stands in city {i}.", f"City {i} has a river."]}
    for i in range(4)
]
METRIC = "context_precision"  # judge only: 2 calls per sample (one per context)
CALLS = 2 * len(DATA)


# -- a judge server whose every reply can be scripted -------------------------------------
Action = Any  # "good" | "badstatus" | "incomplete" | ("json", status, obj) | ("raw", status,
# bytes) | ("hang", seconds)


def good_content(body: dict[str, Any]) -> str:
    """A schema-valid answer to the request (RandomJudge: same request, same answer)."""
    schema = SCHEMAS[body["response_format"]["json_schema"]["schema"]["title"]]
    reply = RandomJudge(0).ask(JudgeRequest(step="x", messages=tuple(body["messages"]),
                                            schema=schema))
    return json.dumps(reply.output.model_dump(mode="json"))


def completion(content: Any, usage: Any = None, finish: str = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": usage if usage is not None else {"prompt_tokens": 30,
                                                      "completion_tokens": 7}}


class FaultServer:
    """/v1/models answers; each chat completion does what ``behaviour(n, body)`` says."""

    def __init__(self, behaviour: Callable[[int, dict], Action] = lambda n, b: "good",
                 models: bytes = json.dumps({"data": [{"id": "m1", "owned_by": "vllm"}]}).encode()):
        self.behaviour = behaviour
        self.models = models
        self.requests = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status: int, data: bytes, length: int | None = None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, outer.models)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    n = outer.requests
                    outer.requests += 1
                act = outer.behaviour(n, body)
                if act == "good":
                    self._send(200, json.dumps(completion(good_content(body))).encode())
                elif act == "badstatus":
                    self.wfile.write(b"HTTP/1.1 two hundred OK\r\n\r\n")
                elif act == "incomplete":
                    self._send(200, b'{"choices": [', length=4000)
                elif act[0] == "hang":
                    time.sleep(act[1])
                elif act[0] == "json":
                    self._send(act[1], json.dumps(act[2]).encode())
                else:
                    self._send(act[1], act[2])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    servers: list[FaultServer] = []

    def start(behaviour=lambda n, b: "good", **kw) -> FaultServer:
        servers.append(FaultServer(behaviour, **kw))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def data_file(tmp_path) -> Path:
    p = tmp_path / "data.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in DATA))
    return p


def run_cli(data: Path, judge: str, out: Path, cache: Path, *extra: str,
            timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "LOCALEVAL_JUDGE_CHECK": "0", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "localeval.cli", "run", str(data), "-m", METRIC, "--judge", judge,
         "-o", str(out), "--cache", str(cache), "--quiet", *extra],
        capture_output=True, text=True, timeout=timeout, env=env)


def assert_contract(proc: subprocess.CompletedProcess, code: int, *names: str) -> str:
    """Exit code, no traceback, one error line (when failing) naming ``names``; the error."""
    err = proc.stderr
    assert proc.returncode == code, err
    assert "Traceback" not in err and not re.search(r"^[\w.]+(Error|Exception): ", err, re.M), err
    errors = [ln for ln in err.splitlines() if ln.startswith("localeval: error:")]
    assert len(errors) == (0 if code == 0 else 1), err
    for name in names:
        assert name in err, (name, err)
    return errors[0] if errors else ""


def scores(out: Path) -> dict[str, Any]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {r["id"]: (r["scores"].get(METRIC), r["errors"].get(METRIC)) for r in rows}


# -- cache states ----------------------------------------------------------------------------
def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 3])


def _garbage_header(p: Path) -> None:
    b = bytearray(p.read_bytes())
    b[:100] = bytes(range(100))
    p.write_bytes(bytes(b))


def _garbage_pages(p: Path) -> None:
    b = bytearray(p.read_bytes())
    page = 4096
    b[page:] = bytes((i * 131 + 7) % 256 for i in range(len(b) - page))
    p.write_bytes(bytes(b))


def _sql(*statements: str) -> Callable[[Path], None]:
    def damage(p: Path) -> None:
        db = sqlite3.connect(p)
        for s in statements:
            db.execute(s)
        db.commit()
        db.close()
    return damage


def _wrong_schema(p: Path) -> None:
    p.unlink()
    _sql("CREATE TABLE judge_calls (key TEXT, answer TEXT)")(p)


#: name -> (damage, set aside?, judge calls the rerun must make again, warning names the file?)
#: A stale entry of the wrong shape, or an error stored by a version that cached server
#: failures, is quietly asked again and overwritten; damage the user should know of is said.
CACHE_STATES = {
    "truncated file": (_truncate, True, CALLS, True),
    "garbage header": (_garbage_header, True, CALLS, True),
    "garbage pages": (_garbage_pages, True, CALLS, True),
    "wrong table schema": (_wrong_schema, True, CALLS, True),
    "value not JSON": (_sql("UPDATE judge_calls SET value='{\"output\": ' "
                            "WHERE rowid IN (SELECT rowid FROM judge_calls LIMIT 3)"), False, 3, True),
    "value not an object": (_sql("UPDATE judge_calls SET value='[1, 2]' "
                                 "WHERE rowid IN (SELECT rowid FROM judge_calls LIMIT 2)"), False, 2, True),
    "value of the wrong shape": (_sql("UPDATE judge_calls SET value='{\"output\": 5, "
                                      "\"probs\": \"x\"}' WHERE rowid IN (SELECT rowid FROM "
                                      "judge_calls LIMIT 2)"), False, 2, False),
    "error stored before errors were marked decided": (
        _sql("UPDATE judge_calls SET value='{\"error\": \"judge server error (HTTP 500)\"}' "
             "WHERE rowid IN (SELECT rowid FROM judge_calls LIMIT 1)"), False, 1, False),
}


@pytest.fixture(scope="module")
def one_server():
    """One server for the cache cases: an HTTP judge's fingerprint includes its URL."""
    srv = FaultServer()
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory, one_server):
    """A cache filled by one undisturbed run, and that run's scores."""
    tmp = tmp_path_factory.mktemp("warm")
    data = tmp / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in DATA))
    one_server.requests = 0
    proc = run_cli(data, one_server.url, tmp / "out", tmp / "cache.sqlite")
    assert_contract(proc, 0)
    assert one_server.requests == CALLS
    db = sqlite3.connect(tmp / "cache.sqlite")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return tmp / "cache.sqlite", scores(tmp / "out")


@pytest.mark.parametrize("state", list(CACHE_STATES))
def test_damaged_cache_is_recovered_and_rescored(state, warm_cache, one_server, data_file,
                                                 tmp_path):
    damage, set_aside, recomputed, named = CACHE_STATES[state]
    src, expected = warm_cache
    cache = tmp_path / "cache.sqlite"
    shutil.copy(src, cache)
    damage(cache)
    srv = one_server
    srv.requests = 0
    proc = run_cli(data_file, srv.url, tmp_path / "out", cache)
    assert_contract(proc, 0, *([str(cache)] if named else []))
    assert scores(tmp_path / "out") == expected  # same scores as the undisturbed run
    assert srv.requests == recomputed
    aside = list(tmp_path.glob("cache.sqlite.damaged-*"))
    if set_aside:
        assert "moved it to" in proc.stderr and len([a for a in aside if a.suffix != ""]) >= 1
        assert Cache(cache).stats()["judge_calls"] == CALLS  # the new cache was filled
    else:
        assert aside == []
    # and the repaired cache now serves every call
    srv.requests = 0
    proc = run_cli(data_file, srv.url, tmp_path / "out2", cache)
    assert_contract(proc, 0)
    assert srv.requests == 0 and scores(tmp_path / "out2") == expected


def test_damage_found_mid_run_moves_the_file_aside_and_goes_on(tmp_path):
    path = tmp_path / "c.sqlite"
    c = Cache(path)
    for i in range(200):
        c.put_call(f"k{i}", "j", "s", {"output": {"x": "y" * 300}})
    c.close()
    _sql("PRAGMA wal_checkpoint(TRUNCATE)")(path)
    _garbage_pages(path)  # page 1 (the schema) intact: opening finds nothing wrong
    c = Cache(path, on_warning=(said := []).append)
    assert c.set_aside == []
    assert c.get_call("k150") is None  # found here: a miss, not a traceback
    c.put_call("k1", "j", "s", {"output": {"x": 1}})
    assert c.get_call("k1") == {"output": {"x": 1}}
    assert len(c.set_aside) == 1 and c.set_aside[0].exists() and str(path) in said[0]


def test_cache_that_cannot_be_replaced_is_one_error_exit_3(tmp_path, monkeypatch, capsys):
    from localeval.cli.app import main

    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not a database" * 200)

    def refuse(src, dst):  # as on a read-only folder (the tests run as root)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    assert main(["cache", "stats", "--cache", str(cache)]) == 3
    err = capsys.readouterr().err
    assert err.count("localeval: error:") == 1 and str(cache) in err
    assert "could not be moved aside (permission denied)" in err and "Traceback" not in err
    assert cache.read_bytes().startswith(b"this is not")  # nothing lost


@pytest.mark.parametrize("where, message", [("DIR", "is a directory"),
                                             ("FILE/c.sqlite", "FILE is a file")])
def test_cache_path_that_cannot_be_a_cache_file_is_exit_2(where, message, tmp_path, server,
                                                         data_file):
    (tmp_path / "DIR").mkdir()
    (tmp_path / "FILE").write_text("x")
    cache = tmp_path / where
    proc = run_cli(data_file, server().url, tmp_path / "out", cache)
    line = assert_contract(proc, 2, str(cache))
    assert message.replace("FILE", str(tmp_path / "FILE")) in line


# -- damaged embedding blobs ---------------------------------------------------------------
EMBED_DAMAGE = {
    "short blob": "UPDATE embeddings SET vector = substr(vector, 1, 10)",
    "long blob": "UPDATE embeddings SET vector = CAST(vector || vector AS BLOB)",
    "text, not a blob": "UPDATE embeddings SET vector = 'a vector'",
    "all zeros": "UPDATE embeddings SET vector = zeroblob(length(vector))",
    "dim of another model": "UPDATE embeddings SET dim = 2, vector = x'0000803f00000000'",
    "not finite": "UPDATE embeddings SET vector = CAST(x'0000c07f' || substr(vector, 5) AS BLOB)",
    "value not UTF-8": "UPDATE embeddings SET key = CAST(x'ff' || key AS TEXT)",
}


@pytest.mark.parametrize("kind", list(EMBED_DAMAGE))
def test_damaged_embedding_blobs_are_recomputed_not_scored_zero(kind, tmp_path):
    import localeval
    from localeval.testing import HashEmbedder

    path = tmp_path / "c.sqlite"
    kw = dict(judge=False, embedder=HashEmbedder(), progress=False)
    ref = localeval.evaluate(DATA, "answer_similarity", cache=path, **kw)
    _sql(EMBED_DAMAGE[kind])(path)
    again = localeval.evaluate(DATA, "answer_similarity", cache=path, **kw)
    got = [r["scores"]["answer_similarity"] for r in again.records()]
    assert got == [r["scores"]["answer_similarity"] for r in ref.records()]
    assert all(s > 0.2 for s in got)  # HashEmbedder: shared words, never a silent 0.0
    db = sqlite3.connect(path)
    db.text_factory = bytes
    keys = [k.decode() for (k,) in db.execute("SELECT key FROM embeddings") if k[:1] != b"\xff"]
    db.close()
    healed = Cache(path, on_warning=lambda m: None)
    assert len(healed.get_vectors(HashEmbedder().fingerprint, keys)) == len(keys) > 0
    assert healed.bad_entries == 0  # every damaged vector was overwritten


# -- server behaviours -------------------------------------------------------------------------
def nested(depth: int) -> bytes:
    return b'{"choices": ' + b"[" * depth + b"]" * depth + b"}"


#: name -> (action on every call, message the call's error must contain)
BAD_REPLIES = {
    "content a number": (("json", 200, completion(7)), "'content' is int"),
    "content an object": (("json", 200, completion({"rating": 1})), "'content' is dict"),
    "choices a string": (("json", 200, {"choices": "nope"}), "'choices' is str"),
    "choices empty": (("json", 200, {"choices": []}), "'choices' is list"),
    "choice a string": (("json", 200, {"choices": ["x"]}), "'choices[0]' is str"),
    "message a string": (("json", 200, {"choices": [{"message": "hi"}]}), "'message' is str"),
    "body a list": (("json", 200, [1, 2]), "the body is list"),
    "body not JSON": (("raw", 200, b"<html>oops</html>"), "not JSON"),
    "body not UTF-8": (("raw", 200, b"\xff\xfe{}"), "not JSON"),
    "body nested 100k deep": (("raw", 200, nested(100_000)), "nested too deeply"),
    "incomplete body": ("incomplete", "broken HTTP reply (IncompleteRead"),
    "bad status line": ("badstatus", "broken HTTP reply (BadStatusLine"),
    "off-schema content": (("json", 200, completion('{"rating": 9}')), "does not match"),
    "content not JSON": (("json", 200, completion("Sure! The rating is 2.")), "not valid JSON"),
}


def ask(judge, **kw):
    return judge.ask(JudgeRequest(step="s", messages=({"role": "user", "content": "q"},),
                                  schema=Rating012, **kw))


@pytest.mark.parametrize("case", list(BAD_REPLIES))
def test_bad_reply_is_this_calls_error_never_cached(case, server, tmp_path):
    act, message = BAD_REPLIES[case]
    fixed = False
    srv = server(lambda n, body: "good" if fixed else act)
    cache = Cache(tmp_path / "c.sqlite")
    judge = CachedJudge(HttpJudge(srv.url, retries=1, backoff=0.01), cache)
    with pytest.raises(BadReply, match=re.escape(message)) as e:
        ask(judge)
    assert srv.url in str(e.value) and not e.value.decided
    assert e.value.usage.calls >= 1
    assert cache.stats()["judge_calls"] == 0  # a server fault is not the judge's decision
    fixed = True
    before = srv.requests
    assert ask(judge).output.rating in (0, 1, 2)  # the next try asks again, and is scored
    assert srv.requests == before + 1


@pytest.mark.parametrize("models", [b'{"data": 5}', b'{"data": "m1"}', b"[1, 2]", b"<html>",
                                    b'{"data": [' * 50_000])
def test_a_model_list_of_any_shape_is_exit_3_naming_the_server(models, server, data_file,
                                                               tmp_path):
    srv = server(models=models)
    proc = run_cli(data_file, srv.url, tmp_path / "out", tmp_path / "c.sqlite")
    assert_contract(proc, 3, f"{srv.url}/models")


def test_usage_of_any_shape_is_accounting_not_a_failure(server):
    usages = [[1, 2], {"prompt_tokens": "many", "completion_tokens": None},
              {"prompt_tokens": float("inf"), "completion_tokens": -3,
               "prompt_tokens_details": [1]}, "lots", {"prompt_tokens": True}]
    srv = server(lambda n, body: ("json", 200, completion(good_content(body), usages[n])))
    judge = HttpJudge(srv.url, backoff=0.01)
    for _ in usages:
        r = ask(judge)
        assert r.output is not None and r.usage.calls == 1
        assert (r.usage.prompt_tokens, r.usage.generated_tokens) == (0, 0)


def test_logprobs_of_any_shape_give_no_probabilities(server):
    from localeval.metrics.schemas import ContextVerdict

    shapes = ["x", {"content": "x"}, {"content": [1, 2]},
              {"content": [{"token": '{"', "logprob": "high", "top_logprobs": 5}]}]
    content = '{"reason": "ok", "verdict": 1}'

    def reply(n, body):
        r = completion(content)
        r["choices"][0]["logprobs"] = shapes[n]
        return ("json", 200, r)

    judge = HttpJudge(server(reply).url, backoff=0.01)
    for _ in shapes:
        r = judge.ask(JudgeRequest(step="v", messages=({"role": "user", "content": "q"},),
                                   schema=ContextVerdict, prob_field="verdict"))
        assert r.output.verdict == 1 and r.probs is None


@pytest.mark.parametrize("case", ["content a number", "choices a string", "message a string",
                                  "body nested 100k deep", "off-schema content"])
def test_a_server_that_only_sends_bad_replies_stops_the_run_exit_3(case, server, data_file,
                                                                    tmp_path):
    act, message = BAD_REPLIES[case]
    srv = server(lambda n, body: act)
    proc = run_cli(data_file, srv.url, tmp_path / "out", tmp_path / "c.sqlite")
    line = assert_contract(proc, 3, srv.url, message)
    assert f"failed {MAX_FAILED_CALLS} calls in a row" in line
    assert srv.requests == MAX_FAILED_CALLS
    assert Cache(tmp_path / "c.sqlite").stats()["judge_calls"] == 0
    results = tmp_path / "out" / "results.jsonl"
    if results.exists():  # samples written before the stop carry no score from a failed call
        assert all(s is None for s, _ in scores(tmp_path / "out").values())


def test_http_500_is_retried_and_the_run_is_scored(server, data_file, tmp_path):
    srv = server(lambda n, body: ("json", 500, {"error": {"message": "oops"}}) if n % 3 == 0
                 else "good")
    proc = run_cli(data_file, srv.url, tmp_path / "out", tmp_path / "c.sqlite")
    assert_contract(proc, 0)
    assert all(s is not None and e is None for s, e in scores(tmp_path / "out").values())


def test_a_server_that_always_answers_500_is_exit_3_not_unscored(server, data_file, tmp_path):
    srv = server(lambda n, body: ("json", 500, {"error": {"message": "internal oops"}}))
    proc = run_cli(data_file, srv.url, tmp_path / "out", tmp_path / "c.sqlite")
    line = assert_contract(proc, 3, srv.url)
    assert "kept failing: HTTP 500: internal oops" in line


def test_judge_timeout_bounds_a_hung_server(server, data_file, tmp_path):
    srv = server(lambda n, body: ("hang", 30))
    t0 = time.monotonic()
    proc = run_cli(data_file, srv.url, tmp_path / "out", tmp_path / "c.sqlite",
                   "--judge-timeout", "0.5")
    took = time.monotonic() - t0
    line = assert_contract(proc, 3, srv.url)
    assert "no reply within --judge-timeout 0.5 s" in line
    assert srv.requests == 2 and took < 20  # one retry, not retries x 60 s


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_judge_timeout_must_be_positive(value, server, data_file, tmp_path):
    proc = run_cli(data_file, server().url, tmp_path / "out", tmp_path / "c.sqlite",
                   "--judge-timeout", value)
    assert "--judge-timeout" in assert_contract(proc, 2)


def test_server_faults_are_retried_on_the_next_run_and_replays_are_counted(server, tmp_path):
    fixed = False
    srv = server(lambda n, body: completion_or(fixed, body))
    cache = Cache(tmp_path / "c.sqlite")
    judge = CachedJudge(HttpJudge(srv.url, backoff=0.01, max_tokens=4), cache)
    with pytest.raises(BadReply):
        ask(judge, seed=1)  # off-schema content: the server ignored the schema
    with pytest.raises(JudgeCallError, match="truncated") as trunc:
        ask(judge, seed=2)  # cut at the budget twice: the judge's decision
    assert trunc.value.usage.calls == 2 and trunc.value.usage.generated_tokens == 2 * 7
    assert cache.stats()["judge_calls"] == 1  # only the decided error
    fixed = True
    n = srv.requests
    assert ask(judge, seed=1).output is not None and srv.requests == n + 1
    with pytest.raises(JudgeCallError, match="truncated") as replay:
        ask(judge, seed=2)
    assert srv.requests == n + 1  # replayed from the cache...
    assert replay.value.usage.cache_hits == 1 and replay.value.usage.calls == 1  # ...counted


def completion_or(fixed: bool, body: dict) -> Action:
    if body["seed"] == 2:
        return ("json", 200, completion('{"rating"', finish="length"))
    return "good" if fixed else ("json", 200, completion('{"rating": 5}'))


# -- a pool with a bad replica -----------------------------------------------------------------
def test_one_bad_replica_does_not_end_a_pool_run(server, data_file, tmp_path):
    bad = server(lambda n, body: ("json", 200, {"choices": "garbage"}))
    good = server()
    proc = run_cli(data_file, f"{bad.url},{good.url}", tmp_path / "out", tmp_path / "c.sqlite",
                   "--judge-concurrency", "1")
    assert_contract(proc, 0)
    assert all(s is not None and e is None for s, e in scores(tmp_path / "out").values())
    assert good.requests == CALLS and bad.requests >= 1


def test_a_5xx_replica_is_failed_over(server, data_file, tmp_path):
    bad = server(lambda n, body: ("json", 503, {"error": {"message": "overloaded"}}))
    good = server()
    proc = run_cli(data_file, f"{bad.url},{good.url}", tmp_path / "out", tmp_path / "c.sqlite")
    assert_contract(proc, 0)
    assert all(s is not None for s, _ in scores(tmp_path / "out").values())
    assert good.requests == CALLS


def test_every_replica_failing_gives_up_after_give_up_after_seconds(server):
    # Replicas that list their model but fail every call: probes bring them back,
    # calls fail again; the call fails after give_up_after, not after a fixed number of
    # rounds (which ended the run after ~23 s where the docs promise a minute).
    srvs = [server(lambda n, body: ("json", 500, {"error": {"message": "down"}}))
            for _ in range(2)]
    pool = JudgePool([s.url for s in srvs], health_interval=0.2, give_up_after=3, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(ModelError, match="every judge server in the pool failed for 3 s") as e:
        ask(pool)
    took = time.monotonic() - t0
    assert 3 <= took < 6 and e.value.exit_code == 3
    assert all(s.requests >= 4 for s in srvs)  # re-tried after each probe, on both replicas


# -- model files ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gguf")


@pytest.mark.parametrize("claim", [2**28, 2**31, 2**32 - 1, 0])
def test_absurd_context_length_is_capped_before_llama_cpp_sees_it(claim, gguf_dir):
    from localeval.errors import LocalevalWarning
    from localeval.judge import LlamaJudge
    from localeval.testing import TinyModelSpec, build_tiny_gguf

    path = build_tiny_gguf(gguf_dir / f"ctx{claim}.gguf", TinyModelSpec(ctx=claim))
    with pytest.warns(LocalevalWarning) as said:  # the command line prints it, escaped
        judge = LlamaJudge(path, n_threads=1)
    try:
        assert judge.n_ctx == 8192 and judge._llm._model.n_ctx_train() == 8192
        t0 = time.perf_counter()
        for _ in range(20):
            judge.count_tokens("the Eiffel Tower is in Paris")
        assert time.perf_counter() - t0 < 1.0  # no 1 GiB buffer per tokenize call
    finally:
        judge.close()
    err = " ".join(str(w.message) for w in said)
    assert f"claims a context length of {claim} tokens" in err and path.name in err
    assert "using a context of 8192 tokens" in err


@pytest.mark.parametrize("template", [
    "{% for m in messages %}{{ m.content | no_such_filter }}{% endfor %}",  # assertion error
    "{% for m in messages %}{{ m.content }}",                               # syntax error
])
def test_chat_template_that_does_not_compile_is_exit_3(template, gguf_dir, data_file, tmp_path):
    from localeval.testing import TinyModelSpec, build_tiny_gguf

    path = build_tiny_gguf(gguf_dir / f"tpl{len(template)}.gguf",
                           TinyModelSpec(chat_template=template))
    proc = run_cli(data_file, str(path), tmp_path / "out", tmp_path / "c.sqlite")
    assert "cannot be compiled" in assert_contract(proc, 3, str(path))


def test_recovered_vectors_equal_fresh_ones(tmp_path):
    """The validity check accepts what the embedder writes (unit norm float32)."""
    c = Cache(tmp_path / "c.sqlite")
    v = np.random.default_rng(0).normal(size=384).astype(np.float32)
    v /= np.linalg.norm(v)
    c.put_vectors("e", {"k": v})
    assert np.array_equal(c.get_vectors("e", ["k"])["k"], v) and c.bad_entries == 0


# -- a pool counts the unusable replies it tried ------------------------------------------
def _first_replies_unusable(n_bad: int) -> Callable[[int, dict], Action]:
    """Behaviour for two servers at once: the first ``n_bad`` completions either serves are off-schema."""
    seen = {"n": 0}
    lock = threading.Lock()

    def behaviour(_n: int, body: dict) -> Action:
        with lock:
            seen["n"] += 1
            bad = seen["n"] <= n_bad
        return ("json", 200, completion('{"rating": 9}')) if bad else "good"
    return behaviour


def test_a_pool_counts_an_unusable_reply_in_the_call_that_succeeds_elsewhere(server):
    behaviour = _first_replies_unusable(1)
    a, b = server(behaviour), server(behaviour)
    pool = JudgePool([a.url, b.url], retries=1, backoff=0.01)
    reply = ask(pool)
    # one unusable reply on one server, then the answer on the other: two calls paid
    assert (reply.usage.calls, reply.usage.prompt_tokens, reply.usage.generated_tokens) == (2, 60, 14)


def test_a_pool_whose_every_server_sent_unusable_replies_counts_them_all(server):
    behaviour = _first_replies_unusable(2)
    a, b = server(behaviour), server(behaviour)
    pool = JudgePool([a.url, b.url], retries=1, backoff=0.01)
    with pytest.raises(BadReply) as e:
        ask(pool)
    assert (e.value.usage.calls, e.value.usage.prompt_tokens, e.value.usage.generated_tokens) == (
        2, 60, 14)


def test_an_http_call_refused_for_its_request_counts_the_call(server, tmp_path):
    srv = server(lambda n, body: ("json", 400, {"error": {"message": "prompt too long"}}))
    with pytest.raises(JudgeCallError) as e:
        ask(CachedJudge(HttpJudge(srv.url, retries=1, backoff=0.01), Cache(tmp_path / "c.sqlite")))
    assert e.value.usage.calls == 1 and not e.value.decided


# -- batched judging: option ranges, interrupts, many contexts; a cache table dropped ----------
@pytest.mark.parametrize("extra, says", [
    (("--parallel", "300"), ("--parallel 300", "1 to 256")),             # llama.cpp's max sequences
    (("--parallel", "100", "--n-ctx", "64"), ("--parallel 100", "1 to 64", "--n-ctx")),
], ids=["above llama.cpp's sequences", "above what --n-ctx holds"])
def test_parallel_out_of_range_is_exit_2_before_the_model_loads(extra, says, tiny_gguf, data_file,
                                                                tmp_path):
    """Before: exit 3 "could not load the model", or GGML_ASSERT, a backtrace and a stale lock."""
    out = tmp_path / "out"
    proc = run_cli(data_file, str(tiny_gguf), out, tmp_path / "c.sqlite", *extra)
    err = assert_contract(proc, 2, *says)
    assert "GGML" not in proc.stderr and "could not load" not in err
    assert not (out / ".localeval.lock").exists()


def test_parallel_at_the_limit_of_n_ctx_loads(tiny_gguf):
    from localeval.judge import LlamaJudge

    LlamaJudge(tiny_gguf, n_ctx=64, parallel=64, n_threads=1).close()


def test_cache_table_dropped_mid_run_is_recreated_once_with_a_warning(tmp_path):
    """Before: ``no such table: judge_calls`` was a CacheError (exit 3)."""
    path = tmp_path / "c.sqlite"
    c = Cache(path, on_warning=(said := []).append)
    c.put_call("k1", "j", "s", {"output": {"x": 1}})
    c.put_vectors("e", {"v": np.ones(4, np.float32) / 2})
    _sql("DROP TABLE judge_calls", "DROP TABLE embeddings")(path)
    assert c.get_call("k1") is None  # a miss: the call is asked again
    c.put_call("k2", "j", "s", {"output": {"x": 2}})
    assert c.get_call("k2") == {"output": {"x": 2}}
    assert c.get_vectors("e", ["v"]) == {}
    _sql("DROP TABLE judge_calls")(path)
    c.put_call("k3", "j", "s", {"output": {"x": 3}})
    assert c.get_call("k3") == {"output": {"x": 3}}
    assert len(said) == 1 and str(path) in said[0] and "recreated" in said[0], said


class _OversizeJudge:
    """Refuses every prompt over ``limit`` characters as ``LlamaJudge`` does; counts asks."""

    name = fingerprint = "oversize"
    capacity = 8

    def __init__(self, limit: int) -> None:
        self.limit, self.asks = limit, 0
        self._lock = threading.Lock()

    def ask(self, request: JudgeRequest):
        with self._lock:
            self.asks += 1
        size = sum(len(m["content"]) for m in request.messages)
        if size > self.limit:
            raise JudgeCallError(f"prompt is {size} tokens, longer than the judge context of "
                                 f"{self.limit} tokens")
        return RandomJudge(0).ask(request)


def test_many_contexts_with_fanout_stop_at_the_first_failure(monkeypatch):
    """One sample, 300 contexts, a prompt too long for the judge, 8 calls at once: a handful
    of renders and calls, not one per context (before: 300 of each, all failing)."""
    import localeval.prompts as prompting
    from localeval.metrics import Judging, parse_metrics, score_one
    from localeval.types import Sample

    renders = 0
    real = prompting.render

    def counted(*a: Any, **k: Any):
        nonlocal renders
        renders += 1
        return real(*a, **k)

    monkeypatch.setattr(prompting, "render", counted)
    judge = _OversizeJudge(limit=2000)
    sample = Sample(id="big", question="Where is it?", answer="In Paris.", reference="Paris.",
                    contexts=[f"Context number {i} says something about Paris." for i in range(300)])
    ctx = Judging(judge=judge, fanout=8)
    for metric in parse_metrics("context_precision,faithfulness"):
        ctx.begin_sample()
        score = score_one(metric, sample, ctx)
        assert score.value is None and "longer than the judge context" in score.reason
    assert judge.asks <= 2 * 8 and renders <= 2 * 8, (judge.asks, renders)


def test_sigterm_with_parallel_cancels_the_calls_in_flight(tiny_gguf, tmp_path):
    """--parallel 4: SIGTERM while three samples of 30 contexts each are being judged ends the
    run at once (exit 130) with the finished sample recorded. Before: it waited for every
    sample in flight (here about a minute), then recorded none of them."""
    rows = [{"id": "s0", "question": "Where?", "answer": "In Paris.", "reference": "Paris.",
             "contexts": ["Paris."]}] + [
        {"id": f"s{i}", "question": f"Where is landmark {i}?", "answer": f"In city {i}.",
         "reference": f"City {i}.",
         "contexts": [f"Landmark {i} fact {k} about city {k}." for k in range(30)]}
        for i in range(1, 6)]
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # No logit bias: the untrained model fills each string to its bound, so calls are slow.
    proc = subprocess.Popen([sys.executable, "-m", "localeval.cli", "run", str(data), "-m", METRIC,
                             "--judge", str(tiny_gguf), "--parallel", "4", "--n-ctx", "2048",
                             "-o", str(out), "--no-cache", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "LOCALEVAL_JUDGE_CHECK": "0"})
    results = out / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not (
            results.exists() and results.read_text().count("\n") >= 1):
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before the signal; test data too small"
    proc.send_signal(signal.SIGTERM)
    t0 = time.perf_counter()
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the run did not stop within 30 s of SIGTERM")
    took = time.perf_counter() - t0
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert took < 10, took
    summary = json.loads((out / "summary.json").read_text())
    finished = summary["interrupted"]["finished"]
    assert 1 <= finished < 6
    records = [json.loads(x) for x in results.read_text().splitlines()]
    assert [r["id"] for r in records] == [f"s{i}" for i in range(finished)]
    assert all(METRIC in r["scores"] or "interrupt" not in str(r["errors"]) for r in records)
    assert not (out / ".localeval.lock").exists()


def test_an_interrupted_batched_judge_refuses_calls_until_resumed(tiny_gguf, bias):
    """``interrupt`` (what the run calls on Ctrl-C) fails calls at once and caches none of them;
    ``resume`` serves again: a Python caller's judge survives an interrupted run."""
    from localeval.judge import LlamaJudge
    from localeval.judge.llama.batch import CANCELLED

    judge = LlamaJudge(tiny_gguf, n_ctx=1024, parallel=2, n_threads=1, logit_bias=bias)
    cached = CachedJudge(judge, Cache(Path(os.environ["LOCALEVAL_CACHE"])))
    req = JudgeRequest(step="x", messages=({"role": "user", "content": "Is Paris in France?"},),
                       schema=Rating012)
    try:
        judge.interrupt()
        with pytest.raises(JudgeCallError, match=CANCELLED):
            cached.ask(req)
        judge.resume()
        assert cached.ask(req).cached is False  # the cancelled call was not stored
    finally:
        judge.close()
