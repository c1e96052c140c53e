"""scripts/bench_quality.py's ragas baseline without ragas: the clear refusal when ragas is
absent, the judge server's start/stop/timeout logic against real local processes (and a
real llama_cpp.server on the tiny GGUF), the per-row bookkeeping of NaN, failures and the
time budget, and ragas's figures merged beside localeval's in quality.json/quality.md.

ragas itself is not installed in the test environment (it is installed apart, by design);
what needs it (its prompts on a judge) is measured in docs/judge-quality.md."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))  # the script's own modules, as the script imports them

from quality.data import SETS  # noqa: E402
from quality.ragas_baseline import (BaselineError, CallLog, check_server_deps,  # noqa: E402
                                    judge_endpoint, load_ragas,
                                    merge_baseline, score_task_rows, score_value)
from quality.report import RAGAS_COLUMN, to_markdown  # noqa: E402
from quality.server import (ServerError, ServerProcess, free_port,  # noqa: E402
                            llama_server_args, missing_modules)
from quality.stats import measure_values  # noqa: E402


def _gone(pid: int, wait: float = 10.0) -> bool:
    """True once ``pid`` has exited (a zombie awaiting its reaper counts as exited)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "\nState:\tZ" in state:
            return True
        time.sleep(0.1)
    return False


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=2).close()
        return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


# -- ragas absent: one clear message, exit 2, before any judging ---------------------------------
def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, str(SCRIPTS / "bench_quality.py"), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)


def test_ragas_absent_is_one_clear_message_and_exit_2(tmp_path):
    # "--judge nowhere": the check comes before the judge is even looked for
    p = _cli("--judge", "nowhere", "--ragas-path", str(tmp_path / "empty"))
    assert p.returncode == 2
    assert "no ragas package there" in p.stderr and "pip install --target" in p.stderr
    assert "Traceback" not in p.stderr and p.stderr.count("error:") == 1


def test_a_broken_ragas_install_is_exit_2_with_the_import_error(tmp_path):
    (tmp_path / "ragas").mkdir()
    (tmp_path / "ragas" / "__init__.py").write_text("import ragas_dependency_not_here\n")
    p = _cli("--judge", "nowhere", "--ragas-path", str(tmp_path))
    assert p.returncode == 2
    assert "ragas not importable" in p.stderr and "ragas_dependency_not_here" in p.stderr
    assert "Traceback" not in p.stderr
    with pytest.raises(BaselineError) as e:
        load_ragas(tmp_path / "missing")
    assert e.value.code == 2


# -- the judge server: start, stop, time out, die with its parent --------------------------------
def test_server_starts_answers_and_is_stopped(tmp_path):
    port = free_port()
    srv = ServerProcess("http.server", ["--bind", "127.0.0.1", "--directory", str(tmp_path),
                                        str(port)], port, probe_path="/", start_timeout=60)
    with srv:
        pid = srv.proc.pid
        assert _answers(srv.url) and srv.started_s is not None
    assert srv.proc is None and _gone(pid)
    assert not _answers(srv.url)
    srv.stop()  # twice is harmless


def test_server_that_never_answers_times_out_and_is_killed(tmp_path):
    (tmp_path / "silent.py").write_text(
        "import os, sys, time\n"
        "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "print('loading a model that never loads', flush=True)\n"
        "time.sleep(600)\n")
    pidfile = tmp_path / "pid"
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(ServerError, match=r"did not answer .* within 2 s: loading a model"):
        with ServerProcess("silent", [str(pidfile)], port, apart=[tmp_path],
                           start_timeout=2):
            pytest.fail("the server should not have come up")
    assert time.monotonic() - t0 < 30
    assert _gone(int(pidfile.read_text()))


def test_server_that_exits_early_reports_its_status_and_output(tmp_path):
    (tmp_path / "broken.py").write_text("import sys\nprint('cannot load model')\nsys.exit(3)\n")
    with pytest.raises(ServerError, match=r"exited with status 3 .*cannot load model"):
        with ServerProcess("broken", [], free_port(), apart=[tmp_path], start_timeout=60):
            pass


_CHILD = """
import sys, time
sys.path.insert(0, {scripts!r})
from quality.server import ServerProcess, free_port
port = free_port()
srv = ServerProcess("http.server", ["--bind", "127.0.0.1", "--directory", {tmp!r}, str(port)],
                    port, probe_path="/")
srv.__enter__()
print(srv.proc.pid, flush=True)
{ending}
"""


@pytest.mark.parametrize("ending,status", [
    ("import os; os._exit(0)", 0),  # the benchmark dies without cleaning up (as on SIGKILL)
    ("time.sleep(600)", 128 + signal.SIGTERM),  # the benchmark gets SIGTERM
])
def test_server_does_not_outlive_the_benchmark(tmp_path, ending, status):
    code = _CHILD.format(scripts=str(SCRIPTS), tmp=str(tmp_path), ending=ending)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(child.stdout.readline())
        if "sleep" in ending:
            child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == status
        assert _gone(server_pid), "the judge server outlived the benchmark"
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def test_llama_cpp_server_on_the_same_gguf(tiny_gguf):
    port = free_port()
    args = llama_server_args(tiny_gguf, port, n_ctx=512, n_threads=1, chat_format="chatml",
                             alias="tiny-judge")
    assert args[args.index("--chat_format") + 1] == "chatml"
    with ServerProcess("llama_cpp.server", args, port, start_timeout=120) as srv:
        models = json.loads(urllib.request.urlopen(srv.url + "/v1/models", timeout=10).read())
        assert [m["id"] for m in models["data"]] == ["tiny-judge"]
        pid = srv.proc.pid
    assert _gone(pid)


def test_missing_server_extras_are_named_with_the_install_line(tmp_path):
    assert missing_modules([tmp_path], ["json", "h8_not_a_module"]) == ["h8_not_a_module"]
    with pytest.raises(BaselineError, match=r"needs h8_not_a_module; install them apart "
                                            r"\(pip install --target DIR fastapi") as e:
        check_server_deps([tmp_path], ["json", "h8_not_a_module"])
    assert e.value.code == 2
    (tmp_path / "h8_not_a_module.py").write_text("")  # found in the apart folder
    assert missing_modules([tmp_path], ["json", "h8_not_a_module"]) == []
    check_server_deps([tmp_path], ["json", "h8_not_a_module"])


def test_judge_endpoint_serves_a_gguf_or_uses_the_judges_url(tiny_gguf):
    class Llama:  # what localeval's LlamaJudge exposes, under its CachedJudge
        path, n_ctx, n_threads, chat_format = tiny_gguf, 2048, 2, None

    class Cached:
        judge = Llama()

    e = judge_endpoint(str(tiny_gguf), Cached())
    assert (e["model_path"], e["n_ctx"], e["n_threads"]) == (str(tiny_gguf), 2048, 2)
    assert "url" not in e

    class Http:
        model = "qwen"

    e = judge_endpoint("http://127.0.0.1:8080/,http://127.0.0.1:8081", Http())
    assert (e["url"], e["model"]) == ("http://127.0.0.1:8080", "qwen")
    with pytest.raises(BaselineError, match="GGUF judge"):
        judge_endpoint("scripted", object())


# -- rows: NaN, failures and the time budget are unscored with their reasons ---------------------
class _Result:
    def __init__(self, value):
        self.value = value


def test_score_value_counts_nan_as_unscored():
    assert score_value(_Result(0.25)) == (0.25, None)
    assert score_value(_Result(float("nan")))[1].startswith("ragas returned NaN")
    assert "not a number" in score_value(_Result(None))[1]


def test_rows_end_scored_or_with_a_reason(capsys):
    rows = [{"id": i} for i in ("ok", "nan", "raises", "slow", "late")]

    async def ascore(row):
        if row["id"] == "raises":
            raise ValueError("Invalid JSON: EOF while parsing\nthe model's output ...")
        if row["id"] == "slow":
            await asyncio.sleep(30)
        return _Result({"ok": 0.75, "nan": float("nan")}.get(row["id"], 1.0))

    t0 = time.monotonic()
    values, reasons = asyncio.run(score_task_rows(rows, ascore, time.monotonic() + 1.5,
                                                  label="ragas t"))
    assert time.monotonic() - t0 < 10
    assert values == {"ok": 0.75, "nan": None, "raises": None, "slow": None, "late": None}
    assert reasons["ok"] is None
    assert reasons["nan"].startswith("ragas returned NaN")
    assert reasons["raises"] == "ragas raised ValueError: Invalid JSON: EOF while parsing"
    assert reasons["slow"] == reasons["late"] == "the ragas baseline's time budget was spent"
    assert "ragas t: 5/5 late unscored" in capsys.readouterr().err


class _Response:
    """The two things CallLog reads of an httpx response."""

    def __init__(self, status, body):
        self.status_code, self._body = status, body

    async def aread(self):
        return b""

    def json(self):
        if self._body is None:
            raise ValueError("not JSON")
        return self._body


def test_call_log_says_how_ragas_calls_ended():
    log = CallLog()

    async def traffic():
        for finish, tokens in (("length", 1024), ("stop", 9), ("length", 1024)):
            await log.on_request(None)
            await log.on_response(_Response(200, {"choices": [{"finish_reason": finish}],
                                                  "usage": {"completion_tokens": tokens}}))
        before = log.snapshot()
        await log.on_request(None)  # timed out: no response
        await log.on_request(None)
        await log.on_response(_Response(500, None))
        return before

    before = asyncio.run(traffic())
    assert log.since((0, Counter(), 0)) == {
        "calls": 5, "finish_reasons": {"length": 2, "stop": 1, "HTTP 500": 1},
        "calls_unanswered": 1, "completion_tokens": 2057}
    assert log.since(before) == {"calls": 2, "finish_reasons": {"HTTP 500": 1},
                                 "calls_unanswered": 1, "completion_tokens": 0}


# -- ragas's figures beside localeval's ----------------------------------------------------------
def test_merged_figures_and_the_ragas_column():
    spec = SETS["wikieval"]
    rows = [{"id": f"{p}{s}", "pair_id": p, "label": int(s == "g")}
            for p in ("a", "b", "c") for s in "gb"]
    local = measure_values(spec, "context_relevance", "nv_context_relevance", rows,
                           {"ag": 1.0, "ab": 0.0, "bg": 1.0, "bb": 0.0, "cg": 0.5, "cb": 0.5},
                           {}, n_boot=100, seed=0)
    legacy = measure_values(spec, "context_relevance", "context_relevancy", rows,
                            {r["id"]: 0.5 for r in rows}, {}, n_boot=0, seed=0)
    # ragas: pair a right, pair b wrong, pair c has a NaN row (left out, counted)
    rg = measure_values(spec, "context_relevance", "nv_context_relevance", rows,
                        {"ag": 1.0, "ab": 0.5, "bg": 0.0, "bb": 1.0, "cg": None, "cb": 0.5},
                        {"cg": "ragas returned NaN (it turns judge output it cannot use "
                               "into NaN)"}, n_boot=100, seed=0)
    results = [{**r, "verdicts": "hard"} for r in local + legacy]
    ragas = {"version": "0.4.3", "metrics": {"nv_context_relevance": "ContextRelevance"},
             "server": {"kind": "llama_cpp.server", "url": "http://127.0.0.1:1"},
             "embedder": None, "call_timeout_s": 300, "budget_s": 900, "error": None,
             "results": [{**r, "ragas_metric": "ContextRelevance"} for r in rg],
             "runs": [{"set": "wikieval", "label_metric": "context_relevance",
                       "ragas_metric": "ContextRelevance", "rows": 6, "unscored": 1,
                       "calls": 24, "finish_reasons": {"length": 3, "stop": 20},
                       "calls_unanswered": 1, "completion_tokens": 3200,
                       "seconds": 12.0}]}
    merge_baseline(results, ragas)
    assert results[0]["value"] == pytest.approx(2.5 / 3)
    g = results[0]["ragas"]
    assert (g["ragas_metric"], g["value"], g["n"], g["rows_unscored"]) == (
        "ContextRelevance", 0.5, 2, 1)
    assert results[1]["ragas"] == {"note": "no ragas counterpart"}
    report = {"judge_name": "j", "judge": "demo", "verdicts": ["hard"], "limit": {"": 3},
              "seed": 0, "n_boot": 100, "localeval_version": "0", "git_commit": "x",
              "date": "d", "results": results, "runs": [], "ragas": ragas}
    md = to_markdown(report)
    assert f"| distinct scores | {RAGAS_COLUMN} | published (gpt-3.5) |" in md
    assert "| 0.500 [" in md and "; n 2; unscored 1/6 (ContextRelevance) | 0.70 |" in md
    assert "| no ragas counterpart | 0.70 |" in md
    assert "ragas unscored rows by reason (all tasks): ragas returned NaN" in md
    assert ("6 rows, 1 unscored, 24 judge calls (3 cut at max_tokens, 1 unanswered, 3200 "
            "tokens written)") in md
    failed = to_markdown({**report, "ragas": {"error": "llama_cpp.server exited", "results": []}})
    assert "ragas baseline: not run to the end: llama_cpp.server exited" in failed


def _stand_in_ragas(folder: Path) -> Path:
    """Just enough of ragas's (and openai's) import surface to pass the install check: the
    test is of what happens when the judge server fails, which needs no ragas code."""
    files = {"ragas/__init__.py": "__version__ = '0.0-stand-in'\n",
             "ragas/llms/__init__.py": "def llm_factory(*a, **k):\n    raise AssertionError\n",
             "ragas/embeddings/__init__.py": "",
             "ragas/embeddings/base.py": "class BaseRagasEmbedding:\n    pass\n",
             "ragas/metrics/__init__.py": "", "ragas/metrics/collections.py": "",
             "openai/__init__.py": "class AsyncOpenAI:\n    pass\n"}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_server_failure_keeps_localevals_figures_and_exits_3(tiny_gguf, tmp_path):
    data = tmp_path / "labelled"
    data.mkdir()
    rows = [{"id": f"m_{s}", "question": "Where is Paris?", "label_metric": "context_relevance",
             "contexts": ["Paris is in France." if s == "pos" else "Rome is in Italy."],
             "answer": None, "reference": None, "label": int(s == "pos"), "pair_id": "q"}
            for s in ("pos", "neg")]
    (data / "msmarco_trulens_ctxrel.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    apart = _stand_in_ragas(tmp_path / "apart")
    out = tmp_path / "q"
    p = _cli("--judge", str(tiny_gguf), "--data", str(data), "--sets", "msmarco",
             "--metrics", "nv_context_relevance", "--n-boot", "50", "--threads", "1",
             "--no-cache", "--ragas-path", str(apart), "--server-timeout", "0.2", "-q",
             "-o", str(out), timeout=300)
    assert p.returncode == 3, p.stderr[-2000:]
    assert "error: ragas baseline: llama_cpp.server did not answer" in p.stderr
    assert "Traceback" not in p.stderr
    rep = json.loads((out / "quality.json").read_text())
    assert rep["results"][0]["metric"] == "nv_context_relevance"  # localeval's figures kept
    assert rep["results"][0]["ragas"] == {"note": "not scored by ragas"}
    assert "did not answer" in rep["ragas"]["error"]
    assert rep["ragas"]["server"]["model_path"] == str(tiny_gguf)
    md = (out / "quality.md").read_text()
    assert "ragas baseline: not run to the end: llama_cpp.server did not answer" in md
