"""The baseline: ragas's own metrics and prompts, on the same judge, on the same rows.

localeval's figures alone cannot say whether a weak result is the judge's or
localeval's prompts'. ragas (installed apart: ``pip install --target DIR
ragas``, never into the project's install) scores the rows localeval scored,
through its OpenAI-compatible LLM wrapper (``llm_factory`` over an
``openai.AsyncOpenAI`` client) pointed at the judge: a ``llama_cpp.server``
started on the same GGUF with the judge's context, threads and chat format
(``server.py``), or the judge's own server for an ``http(s)://`` judge.
answer_relevancy uses localeval's embedder: judge, embedder and rows are the
same, and what differs is ragas's prompts, output handling and arithmetic.

ragas turns bad judge output into NaN or an exception; each such row is
counted as unscored with its reason, never dropped. Every HTTP call has a
timeout and the whole baseline a time budget; rows left when it is spent are
unscored with that reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping, Sequence

from quality.server import (SERVER_MODULES, ServerProcess, free_port, llama_server_args,
                            missing_modules)
from quality.stats import measure_values

__all__ = ["RAGAS_METRICS", "BaselineError", "load_ragas", "check_server_deps",
           "judge_endpoint", "score_value", "score_task_rows", "run_baseline", "merge_baseline"]

#: The ragas 0.4 metric (``ragas.metrics.collections``) beside each localeval metric.
RAGAS_METRICS = {"faithfulness": "Faithfulness", "answer_relevancy": "AnswerRelevancy",
                 "nv_context_relevance": "ContextRelevance"}
_COST_ORDER = ("ContextRelevance", "AnswerRelevancy", "Faithfulness")
#: localeval metrics without a ragas 0.4 counterpart, and why.
NO_COUNTERPART = {"context_relevancy": "no counterpart in ragas 0.2+ (its sentence-extraction "
                  "context relevancy was removed; ContextRelevance stands beside "
                  "nv_context_relevance)"}
_SERVER_PIP = "pip install --target DIR " + " ".join(
    m.replace("_", "-") for m in SERVER_MODULES)


class BaselineError(Exception):
    """The baseline cannot run; ``code`` is the exit status (2 options, 3 environment)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def load_ragas(path: str | os.PathLike[str]) -> Any:
    """``ragas`` from the apart folder ``path`` (appended after site-packages), checked.

    Reuses bench_suite's importer (one work-around for ragas 0.4.3's import of a
    langchain-community module that no longer exists). ragas's usage analytics
    are switched off: the benchmark runs offline.
    """
    folder = Path(path).expanduser()
    how = f"install it apart: pip install --target {folder} ragas"
    if not (folder / "ragas" / "__init__.py").is_file():
        raise BaselineError(f"--ragas-path {folder}: no ragas package there ({how})")
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    from bench_suite import import_ragas

    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        ragas = import_ragas(str(folder.resolve()))
    if ragas is None:
        raise BaselineError(f"--ragas-path {folder}: {said.getvalue().strip()} ({how})")
    try:
        from openai import AsyncOpenAI  # noqa: F401 - ragas's dependency, checked here
        from ragas.embeddings.base import BaseRagasEmbedding  # noqa: F401
        from ragas.llms import llm_factory  # noqa: F401
        from ragas.metrics import collections  # noqa: F401
    except ImportError as e:
        raise BaselineError(f"--ragas-path {folder}: ragas {ragas.__version__} lacks what the "
                            f"baseline uses ({e}); ragas 0.4 or later is needed") from None
    return ragas


def check_server_deps(apart: Sequence[str | os.PathLike[str]],
                      modules: Sequence[str] = SERVER_MODULES) -> None:
    """Exit-2 error when ``python -m llama_cpp.server`` would miss its extra dependencies."""
    missing = missing_modules(apart, modules)
    if missing:
        raise BaselineError(
            f"the ragas baseline serves the judge with llama_cpp.server, which needs "
            f"{', '.join(missing)}; install them apart ({_SERVER_PIP}, DIR the --ragas-path "
            "folder or one named by --server-path) or pass an http(s):// --judge")


def judge_endpoint(spec: str, judge: Any) -> dict[str, Any]:
    """How ragas reaches the judge: its own URL, or the GGUF to serve and how."""
    inner = getattr(judge, "judge", judge)  # under localeval's CachedJudge
    if spec.lower().startswith(("http://", "https://")):
        url = spec.split(",")[0].strip().rstrip("/")
        return {"kind": "the judge's own server", "url": url,
                "model": getattr(inner, "model", None) or "judge"}
    path = getattr(inner, "path", None)
    if path is None:
        raise BaselineError("the ragas baseline needs a GGUF judge (path, manifest name, "
                            "demo) or an http(s):// judge")
    return {"kind": "llama_cpp.server (same GGUF, context, threads, chat format)",
            "model_path": str(path), "model": Path(path).name,
            "n_ctx": getattr(inner, "n_ctx", None), "n_threads": getattr(inner, "n_threads", None),
            "chat_format": getattr(inner, "chat_format", None)}


def _embeddings(embedder: Any) -> Any:
    """localeval's embedder behind ragas's embedding interface (same vectors as localeval)."""
    from ragas.embeddings.base import BaseRagasEmbedding

    class LocalevalEmbeddings(BaseRagasEmbedding):  # type: ignore[misc]
        def embed_text(self, text: str, **kw: Any) -> list[float]:
            return [float(x) for x in embedder.embed([text])[0]]

        async def aembed_text(self, text: str, **kw: Any) -> list[float]:
            return self.embed_text(text)

        def embed_texts(self, texts: list[str], **kw: Any) -> list[list[float]]:
            return [[float(x) for x in v] for v in embedder.embed(list(texts))]

        async def aembed_texts(self, texts: list[str], **kw: Any) -> list[list[float]]:
            return self.embed_texts(texts)

    return LocalevalEmbeddings()


def _inputs(kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
    q, a, ctx = row["question"], row.get("answer") or "", list(row["contexts"])
    if kind == "Faithfulness":
        return {"user_input": q, "response": a, "retrieved_contexts": ctx}
    if kind == "AnswerRelevancy":
        return {"user_input": q, "response": a}
    return {"user_input": q, "retrieved_contexts": ctx}


def score_value(result: Any) -> tuple[float | None, str | None]:
    """(value, None) for a number; (None, reason) for ragas's NaN or a missing value."""
    value = getattr(result, "value", result)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None, f"ragas returned {value!r}, not a number"
    if math.isnan(v):
        return None, "ragas returned NaN (it turns judge output it cannot use into NaN)"
    return v, None


async def score_task_rows(rows: Sequence[Mapping[str, Any]],
                          ascore: Callable[[Mapping[str, Any]], Awaitable[Any]],
                          deadline: float, *, label: str = "ragas", quiet: bool = False
                          ) -> tuple[dict[str, float | None], dict[str, str | None]]:
    """Score ``rows`` one by one with ``ascore``; every row ends scored or with a reason.

    ragas's NaN, any exception it raises, and the time budget (``deadline``,
    ``time.monotonic()``) each make the row unscored with its own reason, so
    the figures' coverage shows what ragas could not score.
    """
    values: dict[str, float | None] = {}
    reasons: dict[str, str | None] = {}
    for i, row in enumerate(rows):
        rid = row["id"]
        left = deadline - time.monotonic()
        values[rid], reasons[rid] = None, "the ragas baseline's time budget was spent"
        if left > 0:
            try:
                values[rid], reasons[rid] = score_value(
                    await asyncio.wait_for(ascore(row), left))
            except asyncio.TimeoutError:
                pass  # the budget's reason stands
            except Exception as e:  # noqa: BLE001 - ragas's failure is the row's reason
                first = (str(e).strip() or (type(e).__doc__ or "").strip()
                         ).split("\n")[0][:160]
                reasons[rid] = f"ragas raised {type(e).__name__}: {first}"
        if not quiet:
            v = values[rid]
            print(f"  {label}: {i + 1}/{len(rows)} {rid} "
                  + (f"{v:.3f}" if v is not None else f"unscored ({reasons[rid]})"),
                  file=sys.stderr, flush=True)
    return values, reasons


class CallLog:
    """What ragas's calls to the judge came to, read off the HTTP traffic.

    ragas's metrics swallow most judge failures into NaN (ContextRelevance
    retries a bad rating and then gives NaN), so the row alone cannot say
    why; the calls can: how many, how many answered, how many stopped at
    ragas's ``max_tokens`` (finish reason "length") and how many tokens the
    judge wrote. Calls without an answer timed out or lost the connection.
    """

    def __init__(self) -> None:
        self.calls = 0
        self.finish: Counter[str] = Counter()
        self.tokens = 0

    async def on_request(self, request: Any) -> None:
        self.calls += 1

    async def on_response(self, response: Any) -> None:
        await response.aread()  # buffered: the OpenAI client reads it again
        try:
            body = response.json()
            self.finish[str(body["choices"][0].get("finish_reason"))] += 1
            self.tokens += int((body.get("usage") or {}).get("completion_tokens") or 0)
        except Exception:  # noqa: BLE001 - an error answer is counted by its status
            self.finish[f"HTTP {response.status_code}"] += 1

    def snapshot(self) -> tuple[int, Counter[str], int]:
        return self.calls, Counter(self.finish), self.tokens

    def since(self, before: tuple[int, Counter[str], int]) -> dict[str, Any]:
        """The calls made since ``before`` (a ``snapshot()``), as report fields."""
        calls, finish, tokens = before
        got = self.finish - finish
        return {"calls": self.calls - calls, "finish_reasons": dict(got),
                "calls_unanswered": self.calls - calls - sum(got.values()),
                "completion_tokens": self.tokens - tokens}


async def _score_all(tasks: Sequence[Mapping[str, Any]], url: str, model: str, embedder: Any,
                     call_timeout: float, deadline: float, quiet: bool) -> dict[str, Any]:
    """Every (task, ragas metric, row): value or reason, seconds, and the HTTP calls made."""
    import httpx
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics import collections as rc

    log = CallLog()
    http = httpx.AsyncClient(timeout=call_timeout, event_hooks={
        "request": [log.on_request], "response": [log.on_response]})
    client = AsyncOpenAI(base_url=url.rstrip("/") + ("" if url.endswith("/v1") else "/v1"),
                         api_key="none", timeout=call_timeout, max_retries=0, http_client=http)
    llm = llm_factory(model, provider="openai", client=client)
    emb = _embeddings(embedder) if embedder is not None else None
    out: dict[str, Any] = {"tasks": []}
    # Cheapest metric first (a ContextRelevance row is a few short calls, a
    # Faithfulness row two long generations), so a spent budget costs fewest rows.
    todo = sorted(((task, m, RAGAS_METRICS[m]) for task in tasks for m in task["metrics"]
                   if m in RAGAS_METRICS), key=lambda t: _COST_ORDER.index(t[2]))
    try:
        for task, m, kind in todo:
            cls = getattr(rc, kind)
            metric = (cls(llm=llm, embeddings=emb) if kind == "AnswerRelevancy"
                      else cls(llm=llm))
            t0, before = time.perf_counter(), log.snapshot()
            label = f"ragas {task['set']}/{task['label_metric']} {kind}"
            values, reasons = await score_task_rows(
                task["rows"], lambda row, metric=metric, kind=kind: metric.ascore(
                    **_inputs(kind, row)), deadline,
                label=label, quiet=quiet)
            out["tasks"].append({**task, "metric": m, "ragas_metric": kind,
                                 "values": values, "reasons": reasons,
                                 "seconds": round(time.perf_counter() - t0, 1),
                                 **log.since(before)})
    finally:
        await http.aclose()
    out.update(log.since((0, Counter(), 0)))
    return out


def _llm_defaults() -> str:
    """ragas's own sampling settings for its LLM wrapper (the baseline changes none)."""
    try:
        from ragas.llms.base import InstructorModelArgs

        args = InstructorModelArgs().model_dump()
        return ", ".join(f"{k} {v}" for k, v in args.items() if v is not None)
    except Exception:  # noqa: BLE001 - a description only
        return "unknown"


def run_baseline(tasks: Sequence[Mapping[str, Any]], *, endpoint: Mapping[str, Any],
                 ragas: Any, apart: Sequence[str], embedder: Any, call_timeout: float,
                 budget: float, start_timeout: float, n_boot: int, seed: int,
                 quiet: bool = False) -> dict[str, Any]:
    """Score ``tasks`` (set, label_metric, spec, rows, metrics) with ragas; the report part.

    Starts (and always stops) a llama_cpp.server unless the endpoint is a URL.
    ``ServerError`` (exit 3) when the server does not come up.
    """
    info: dict[str, Any] = {
        "version": ragas.__version__, "path": [str(Path(p).resolve()) for p in apart],
        "metrics": {m: RAGAS_METRICS[m] for t in tasks for m in t["metrics"]
                    if m in RAGAS_METRICS},
        "no_counterpart": {m: NO_COUNTERPART[m] for t in tasks for m in t["metrics"]
                           if m in NO_COUNTERPART},
        "llm": "ragas.llms.llm_factory(provider='openai') over openai.AsyncOpenAI, "
               f"ragas's defaults ({_llm_defaults()})",
        "embedder": getattr(embedder, "name", None), "call_timeout_s": call_timeout,
        "budget_s": budget, "server": dict(endpoint), "error": None}
    t0 = time.perf_counter()
    deadline = time.monotonic() + budget
    server = None
    if "url" not in endpoint:
        port = free_port()
        server = ServerProcess("llama_cpp.server", llama_server_args(
            endpoint["model_path"], port, n_ctx=endpoint.get("n_ctx"),
            n_threads=endpoint.get("n_threads"), chat_format=endpoint.get("chat_format"),
            alias=endpoint["model"]), port, apart=info["path"], start_timeout=start_timeout)
        info["server"]["command"] = server.command
        info["server"]["url"] = server.url
    with server if server is not None else contextlib.nullcontext():
        if server is not None:
            info["server"]["start_seconds"] = server.started_s
            print(f"ragas {ragas.__version__}: llama_cpp.server up on {server.url} in "
                  f"{server.started_s} s", file=sys.stderr, flush=True)
        got = asyncio.run(_score_all(tasks, info["server"]["url"], endpoint["model"],
                                     embedder, call_timeout, deadline, quiet))
    info.update({k: got[k] for k in ("calls", "finish_reasons", "calls_unanswered",
                                     "completion_tokens")})
    info["runs"], info["results"], info["scores"] = [], [], []
    for t in got["tasks"]:
        unscored = sum(v is None for v in t["values"].values())
        info["runs"].append({"set": t["set"], "label_metric": t["label_metric"],
                             "metric": t["metric"], "ragas_metric": t["ragas_metric"],
                             "rows": len(t["rows"]), "unscored": unscored,
                             "seconds": t["seconds"], "calls": t["calls"],
                             "finish_reasons": t["finish_reasons"],
                             "calls_unanswered": t["calls_unanswered"],
                             "completion_tokens": t["completion_tokens"]})
        for res in measure_values(t["spec"], t["label_metric"], t["metric"], t["rows"],
                                  t["values"], t["reasons"], n_boot=n_boot, seed=seed):
            info["results"].append({**res, "ragas_metric": t["ragas_metric"]})
        for r in t["rows"]:
            info["scores"].append({"set": t["set"], "id": r["id"], "metric": t["metric"],
                                   "ragas_metric": t["ragas_metric"], "label": r["label"],
                                   "value": t["values"][r["id"]],
                                   "reason": t["reasons"][r["id"]]})
    info["seconds"] = round(time.perf_counter() - t0, 1)
    return info


def merge_baseline(results: Sequence[dict[str, Any]], ragas: Mapping[str, Any]) -> None:
    """Put each ragas figure beside localeval's (``result["ragas"]``), in place.

    Matched on (set, labelled metric, localeval metric, statistic); a metric
    without a ragas counterpart gets a note instead of a figure.
    """
    by = {(g["set"], g["label_metric"], g["metric"], g["statistic"]): g
          for g in ragas.get("results", [])}
    for r in results:
        g = by.get((r["set"], r["label_metric"], r["metric"], r["statistic"]))
        if g is not None:
            r["ragas"] = {k: g[k] for k in ("ragas_metric", "value", "ci95", "n", "rows",
                                           "rows_unscored", "unscored_reasons",
                                           "distinct_values", "reason")}
        elif r["metric"] in NO_COUNTERPART:
            r["ragas"] = {"note": "no ragas counterpart"}
        else:
            r["ragas"] = {"note": "not scored by ragas"}
