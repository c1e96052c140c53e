"""Benchmark the full judge metric suite on a Qwen2-0.5B-shaped random-weight GGUF.

Runs every judge metric (plus answer_similarity) on the bundled example
dataset through ``localeval.evaluate`` with a ``LlamaJudge`` and reports, per
sample and per metric: judge calls, prompt tokens sent, prompt tokens
actually evaluated (after KV prefix reuse), tokens generated and seconds.
It also measures, on the same model in the same process, prompt-processing
speed (a fresh long prompt) and generation speed (unconstrained, the judge's
own loop), and from them the *compute floor*:

    floor = evaluated prompt tokens / pp speed + generated tokens / tg speed

i.e. what the run would cost if nothing but the model's matrix work took
time. wall / floor says how much is lost to grammar checks, small prompt
suffixes, Python and embeddings.

With ragas importable (``pip install ragas``, or ``--ragas-path DIR`` for a
``pip install --target DIR ragas``), the same samples are rendered with
ragas 0.4's own prompt objects (no LLM involved: the prompts are filled with
the statements localeval's run extracted, so both sides see the same
inputs), counted with the same GGUF tokenizer, and compared.

Random weights: the numbers measure cost, never judgement quality.

    .venv/bin/python scripts/bench_suite.py --samples 3 --quote-bias --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

__all__ = [
    "SUITE",
    "STEP_METRIC",
    "CallRecord",
    "MeteredJudge",
    "MetricAttribution",
    "Speeds",
    "compute_floor",
    "totals",
    "group_totals",
    "format_table",
    "simulate_prefix_reuse",
    "ragas_calls",
    "targets",
    "calls_of",
    "main",
]

#: Every judge metric, plus answer_similarity (embedding only): the "full suite".
SUITE = (
    "faithfulness", "answer_relevancy", "context_precision", "context_utilization",
    "context_recall", "context_entity_recall", "noise_sensitivity", "answer_correctness",
    "context_relevancy", "nv_context_relevance", "nv_answer_accuracy",
    "nv_response_groundedness", "answer_similarity",
)

#: Which metric a judge step belongs to when no metric is known (``statements`` is shared).
STEP_METRIC = {
    "faithfulness_verdicts": "faithfulness", "answer_relevancy": "answer_relevancy",
    "context_precision": "context_precision", "context_utilization": "context_utilization",
    "context_recall": "context_recall", "entities": "context_entity_recall",
    "noise_verdicts": "noise_sensitivity", "answer_correctness": "answer_correctness",
    "context_relevancy": "context_relevancy", "statements": "(shared statements)",
}

DEFAULT_MODEL_NAME = "qwen2-05b-shape-q8_0.gguf"


# -- accounting ------------------------------------------------------------------------
@dataclass
class CallRecord:
    """One judge call as the judge accounted for it."""

    sample: str
    metric: str
    step: str
    calls: int
    prompt_tokens: int
    reused_tokens: int
    generated_tokens: int
    seconds: float

    @property
    def evaluated_tokens(self) -> int:
        return self.prompt_tokens - self.reused_tokens


class MeteredJudge:
    """Wraps a judge: records every call, and can switch prefix reuse off.

    ``prefix_reuse=False`` empties llama.cpp's KV cache before each call, so
    every prompt is evaluated from its first token: the "fast path off"
    baseline. Everything else is forwarded to the wrapped judge, so the run
    signature names the real model.
    """

    def __init__(self, inner: Any, *, prefix_reuse: bool = True) -> None:
        self.inner = inner
        self.prefix_reuse = prefix_reuse
        self.records: list[CallRecord] = []
        self.sample = ""
        self.metric = ""

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, item: str) -> Any:  # signature(), n_ctx, ...
        return getattr(self.inner, item)

    def ask(self, request: Any) -> Any:
        if not self.prefix_reuse:
            self.inner._llm.reset()
        # A failed call (JudgeCallError) has no usage to record: its time shows only
        # in the sample's wall seconds, and the run prints the sample's errors.
        reply = self.inner.ask(request)
        u = reply.usage
        self.records.append(CallRecord(
            sample=self.sample, metric=self.metric or STEP_METRIC.get(request.step, request.step),
            step=request.step, calls=u.calls, prompt_tokens=u.prompt_tokens,
            reused_tokens=u.reused_tokens, generated_tokens=u.generated_tokens,
            seconds=u.seconds))
        return reply


class MetricAttribution:
    """Tells ``judge`` which metric is scoring, and times each metric (embeddings included).

    A ``localeval.run.MetricObserver``, passed as ``evaluate(..., observer=...)``:
    the run announces each model metric of each sample before scoring it,
    which is exactly the unit this benchmark attributes judge calls and
    seconds to. Calls made outside a metric fall back to attribution by step.
    """

    def __init__(self, judge: MeteredJudge,
                 metric_seconds: dict[tuple[str, str], float]) -> None:
        self.judge = judge
        self.metric_seconds = metric_seconds

    def started(self, sample: Any, metric: Any) -> None:
        self.judge.metric = metric.key

    def finished(self, sample: Any, metric: Any, score: Any, seconds: float) -> None:
        key = (sample.id, metric.key)
        self.metric_seconds[key] = self.metric_seconds.get(key, 0.0) + seconds
        self.judge.metric = ""


@contextlib.contextmanager
def no_shared_statements() -> Iterator[None]:
    """Switch off ``Context``'s per-sample memo, so repeated steps are asked again.

    The memo is what lets faithfulness, answer_correctness and
    noise_sensitivity share one ``statements`` call; without it each asks.
    """
    from localeval.metrics import Context

    original = Context.ask

    def ask(self: Any, *a: Any, **kw: Any) -> Any:
        self._memo.clear()
        return original(self, *a, **kw)

    Context.ask = ask  # type: ignore[method-assign]
    try:
        yield
    finally:
        Context.ask = original  # type: ignore[method-assign]


def totals(records: Iterable[CallRecord]) -> dict[str, float]:
    """Summed calls / tokens / seconds of ``records``."""
    out = {"calls": 0, "prompt_tokens": 0, "evaluated_tokens": 0, "generated_tokens": 0,
           "judge_seconds": 0.0}
    for r in records:
        out["calls"] += r.calls
        out["prompt_tokens"] += r.prompt_tokens
        out["evaluated_tokens"] += r.evaluated_tokens
        out["generated_tokens"] += r.generated_tokens
        out["judge_seconds"] += r.seconds
    return out


def group_totals(records: Sequence[CallRecord], key: Callable[[CallRecord], str]
                 ) -> dict[str, dict[str, float]]:
    """``totals`` per group, groups in first-seen order."""
    groups: dict[str, list[CallRecord]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return {k: totals(v) for k, v in groups.items()}


# -- speeds and the compute floor -----------------------------------------------------------
@dataclass
class Speeds:
    """Prompt-processing and generation speed of the judge, tokens per second."""

    pp: float
    tg: float
    pp_tokens: int
    tg_tokens: int


def compute_floor(evaluated_tokens: float, generated_tokens: float, speeds: Speeds) -> float:
    """Seconds the model's own work needs: evaluated / pp + generated / tg."""
    return evaluated_tokens / speeds.pp + generated_tokens / speeds.tg


def measure_speeds(judge: Any, text: str, *, pp_tokens: int = 512, tg_tokens: int = 64,
                   repeats: int = 3) -> Speeds:
    """Median pp speed on a fresh ``pp_tokens`` prompt and tg speed, unconstrained.

    pp: the KV cache is emptied and the prompt evaluated in one go, as a
    judge's first call of a sample is. tg: the judge's own token loop with
    no grammar (its ``logit_bias`` applies, as in the run).
    """
    toks = judge._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    while len(toks) < pp_tokens:
        toks = toks + toks
    toks = toks[:pp_tokens]
    judge.generate(toks[:16], None, 2)  # warm-up: first decode allocates
    pp, tg = [], []
    n_gen = tg_tokens
    for _ in range(repeats):
        judge._llm.reset()
        t0 = time.perf_counter()
        judge._eval_to(toks)
        pp.append(len(toks) / (time.perf_counter() - t0))
        # The prompt is cached now: generate() evaluates one token, then generates.
        g = judge.generate(toks, None, tg_tokens)
        n_gen = max(1, len(g.tokens))
        tg.append(n_gen / g.seconds)
    judge._llm.reset()
    return Speeds(pp=statistics.median(pp), tg=statistics.median(tg), pp_tokens=len(toks),
                  tg_tokens=n_gen)


# -- ragas 0.4's prompts ------------------------------------------------------------------
def simulate_prefix_reuse(prompts: Sequence[Sequence[int]]) -> list[int]:
    """Tokens a single-slot KV cache would evaluate for ``prompts`` issued in order.

    Same rule as ``LlamaJudge._eval_to``: the longest common prefix with the
    previous prompt is kept, except the last token (its logits are needed).
    """
    out, prev = [], []
    for p in prompts:
        m = min(len(prev), len(p) - 1)
        lcp = 0
        while lcp < m and prev[lcp] == p[lcp]:
            lcp += 1
        out.append(len(p) - lcp)
        prev = list(p)
    return out


def _statements_for(details: Mapping[str, Any], sample: Any) -> tuple[list[str], list[str]]:
    """The answer's and the reference's statements localeval's run extracted.

    Falls back to the texts' sentences when a metric stopped before asking
    (so ragas is still charged for prompts of a realistic size).
    """
    from localeval.lang import split_sentences

    a = (details.get("answer_correctness", {}).get("answer_statements")
         or details.get("noise_sensitivity", {}).get("answer_statements")
         or details.get("faithfulness", {}).get("statements"))
    g = (details.get("answer_correctness", {}).get("reference_statements")
         or details.get("noise_sensitivity", {}).get("reference_statements"))
    if not a:
        a = split_sentences(sample.answer or "", "en") or [sample.answer or ""]
    if not g:
        g = split_sentences(sample.reference or "", "en") or [sample.reference or ""]
    return list(a), list(g)


def ragas_calls(sample: Any, answer_statements: Sequence[str],
                reference_statements: Sequence[str]) -> list[tuple[str, str, str]]:
    """(metric, prompt name, prompt text) of every LLM call ragas 0.4 makes for ``sample``.

    Uses ragas's own prompt objects (``PydanticPrompt.to_string``) and the
    NVIDIA metrics' string templates, in ragas's per-metric order. Each
    metric is separate in ragas: statement generation is repeated by
    faithfulness, answer_correctness and noise_sensitivity. answer_relevancy
    is ONE call with n=3 (``generate_multiple`` passes n to the LLM; a server
    that ignores n gives one generation); a backend that loops would send it
    3 times. context_relevancy (legacy) has no ragas 0.4 counterpart.
    """
    # import_module, not "from ragas.metrics import _faithfulness": ragas.metrics has
    # attributes of those names (metric instances) that shadow the submodules.
    mod = lambda name: importlib.import_module(f"ragas.metrics.{name}")  # noqa: E731
    ac, ar, ce = mod("_answer_correctness"), mod("_answer_relevance"), mod("_context_entities_recall")
    cp, cr, fa, nv = (mod("_context_precision"), mod("_context_recall"), mod("_faithfulness"),
                      mod("_nv_metrics"))

    q, a, ref = sample.question or "", sample.answer or "", sample.reference or ""
    ctxs = list(sample.contexts or [])
    joined = "\n".join(ctxs)
    A, G = list(answer_statements), list(reference_statements)
    calls: list[tuple[str, str, str]] = []

    def add(metric: str, prompt: Any, data: Any) -> None:
        calls.append((metric, type(prompt).__name__, prompt.to_string(data)))

    stmt = fa.StatementGeneratorPrompt()
    nli = fa.NLIStatementPrompt()
    # faithfulness: statements of the answer, then NLI against the joined contexts
    add("faithfulness", stmt, fa.StatementGeneratorInput(question=q, answer=a))
    add("faithfulness", nli, fa.NLIStatementInput(context=joined, statements=A))
    # answer_relevancy: one generation call (n=strictness=3)
    add("answer_relevancy", ar.ResponseRelevancePrompt(), ar.ResponseRelevanceInput(response=a))
    # context_precision / utilization: one call per context
    cpp = cp.ContextPrecisionPrompt()
    for c in ctxs:
        add("context_precision", cpp, cp.QAC(question=q, context=c, answer=ref))
    for c in ctxs:
        add("context_utilization", cpp, cp.QAC(question=q, context=c, answer=a))
    # context_recall: one classification call over the joined contexts
    add("context_recall", cr.ContextRecallClassificationPrompt(),
        cr.QCA(question=q, context=joined, answer=ref))
    # context_entity_recall: entities of the reference, then of the joined contexts
    ent = ce.ExtractEntitiesPrompt()
    add("context_entity_recall", ent, ce.StringIO(text=ref))
    add("context_entity_recall", ent, ce.StringIO(text=joined))
    # noise_sensitivity: both statement sets, NLI per context for each, answer vs reference
    add("noise_sensitivity", stmt, fa.StatementGeneratorInput(question=q, answer=ref))
    add("noise_sensitivity", stmt, fa.StatementGeneratorInput(question=q, answer=a))
    for c in ctxs:
        add("noise_sensitivity", nli, fa.NLIStatementInput(context=c, statements=G))
        add("noise_sensitivity", nli, fa.NLIStatementInput(context=c, statements=A))
    add("noise_sensitivity", nli, fa.NLIStatementInput(context=ref, statements=A))
    # answer_correctness: both statement sets, then the TP/FP/FN classifier
    add("answer_correctness", stmt, fa.StatementGeneratorInput(question=q, answer=a))
    add("answer_correctness", stmt, fa.StatementGeneratorInput(question=q, answer=ref))
    add("answer_correctness", ac.CorrectnessClassifier(),
        ac.QuestionAnswerGroundTruth(question=q, answer=A, ground_truth=G))
    # NVIDIA metrics: two plain string templates each
    for metric, names, kw in (
        ("nv_context_relevance", ("template_relevance1", "template_relevance2"),
         {"query": q, "context": joined}),
        ("nv_answer_accuracy", ("template_accuracy1", "template_accuracy2"), None),
        ("nv_response_groundedness", ("template_groundedness1", "template_groundedness2"),
         {"response": a, "context": joined}),
    ):
        for i, name in enumerate(names):
            tpl = getattr(nv.ContextRelevance if metric == "nv_context_relevance"
                          else nv.AnswerAccuracy if metric == "nv_answer_accuracy"
                          else nv.ResponseGroundedness, name)
            if kw is None:  # accuracy: the second judge swaps answer and reference
                kw_i = ({"query": q, "answer0": "User Answer", "answer1": "Reference Answer",
                         "sentence_inference": a, "sentence_true": ref} if i == 0 else
                        {"query": q, "answer0": "Reference Answer", "answer1": "User Answer",
                         "sentence_inference": ref, "sentence_true": a})
            else:
                kw_i = kw
            calls.append((metric, name, tpl.format(**kw_i)))
    return calls


# -- output ---------------------------------------------------------------------------------
def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    """A plain right-aligned text table; first column left-aligned."""
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v)

    head = [h for _, h in columns]
    body = [[cell(r.get(k, "")) for k, _ in columns] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = []
    for i, line in enumerate([head] + body):
        parts = [line[0].ljust(widths[0])] + [x.rjust(w) for x, w in zip(line[1:], widths[1:])]
        lines.append("  ".join(parts))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


COLUMNS = [("name", ""), ("calls", "calls"), ("prompt_tokens", "prompt sent"),
           ("evaluated_tokens", "evaluated"), ("generated_tokens", "generated"),
           ("judge_seconds", "judge s"), ("seconds", "wall s"), ("floor", "floor s")]


def targets(per_sample: Mapping[str, float], ragas: Mapping[str, float] | None,
            wall: float, floor: float, same_scores: bool | None) -> list[dict[str, Any]]:
    """The issue's four targets, each with the measured figure and pass/fail (None: not run)."""
    out = []
    if ragas:
        sent = per_sample["prompt_tokens"] / ragas["prompt_tokens"]
        ev = per_sample["evaluated_tokens"] / ragas["prompt_tokens"]
        ev_reuse = per_sample["evaluated_tokens"] / ragas["evaluated_tokens"]
        out.append({"target": "prompt tokens sent <= 50% of ragas", "value": sent,
                    "pass": sent <= 0.50})
        out.append({"target": "prompt tokens evaluated <= 30% of ragas (ragas without a "
                    "prefix cache)", "value": ev, "pass": ev <= 0.30})
        out.append({"target": "prompt tokens evaluated <= 30% of ragas (ragas with a "
                    "single-slot prefix cache, sequential)", "value": ev_reuse,
                    "pass": ev_reuse <= 0.30})
    ratio = wall / floor if floor else float("inf")
    out.append({"target": "wall <= 1.15 x compute floor", "value": ratio, "pass": ratio <= 1.15})
    out.append({"target": "same scores with fast paths on/off", "value": same_scores,
                "pass": same_scores})
    return out


# -- the run ----------------------------------------------------------------------------------
def _model_path(args: argparse.Namespace) -> Path:
    if args.model:
        return Path(args.model)
    d = Path(args.cache_dir or Path(tempfile.gettempdir()) / "localeval-bench")
    path = d / DEFAULT_MODEL_NAME
    if not path.exists():
        from localeval.testing import TinyModelSpec, build_tiny_gguf

        t0 = time.perf_counter()
        build_tiny_gguf(path, TinyModelSpec.qwen2_05b())
        print(f"built {path}: {path.stat().st_size / 2**20:.0f} MiB in "
              f"{time.perf_counter() - t0:.1f} s")
    return path


def run_suite(samples: Sequence[Any], judge: MeteredJudge, embedder: Any, metrics: Sequence[str],
              *, seed: int, verdicts: str) -> dict[str, Any]:
    """Evaluate each sample in its own ``evaluate`` call (same judge and embedder).

    One call per sample gives each sample's wall time; the judge and its KV
    cache carry over, so the call order equals one evaluate over all samples.
    """
    from localeval import evaluate

    metric_seconds: dict[tuple[str, str], float] = {}
    walls: dict[str, float] = {}
    scores: dict[str, dict[str, Any]] = {}
    details: dict[str, dict[str, Any]] = {}
    observer = MetricAttribution(judge, metric_seconds)
    for s in samples:
        judge.sample = s.id
        t0 = time.perf_counter()
        res = evaluate([s.to_dict()], list(metrics), judge=judge, embedder=embedder,
                       cache=False, seed=seed, verdicts=verdicts, progress=False,
                       on_warning=lambda m: None, observer=observer)
        walls[s.id] = time.perf_counter() - t0
        rec = res.records()[0]
        scores[s.id] = rec["scores"]
        details[s.id] = rec["details"]
        errs = rec["errors"]
        if errs:
            print(f"  {s.id}: unscored: " + "; ".join(f"{k}: {v[:80]}" for k, v in
                                                      errs.items()), flush=True)
        print(f"  {s.id}: {walls[s.id]:.1f} s", flush=True)
    return {"walls": walls, "metric_seconds": metric_seconds, "scores": scores,
            "details": details}


def _rows(groups: Mapping[str, Mapping[str, float]], seconds: Mapping[str, float],
          speeds: Speeds) -> list[dict[str, Any]]:
    rows = []
    for name, t in groups.items():
        rows.append({"name": name, **t, "seconds": seconds.get(name, t["judge_seconds"]),
                     "floor": compute_floor(t["evaluated_tokens"], t["generated_tokens"],
                                            speeds)})
    return rows


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="an existing GGUF (default: build the Qwen2-0.5B shape "
                    "once into --cache-dir)")
    ap.add_argument("--cache-dir", help="where the built model is kept "
                    "(default: $TMPDIR/localeval-bench)")
    ap.add_argument("--samples", type=int, default=None, help="first N samples (default all)")
    ap.add_argument("--data", help="dataset (default: the bundled example.jsonl)")
    ap.add_argument("--quote-bias", action="store_true",
                    help="logit_bias toward closing quotes so random-weight output stays short")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verdicts", choices=("hard", "soft"), default="hard")
    ap.add_argument("--embedder", default=None, help="embedder (default all-MiniLM-L6-v2); "
                    "'hash' for the test HashEmbedder")
    ap.add_argument("--no-prefix-reuse", action="store_true",
                    help="empty the KV cache before every judge call")
    ap.add_argument("--no-shared-statements", action="store_true",
                    help="ask repeated steps (statements) again in every metric")
    ap.add_argument("--compare-fast-paths", action="store_true",
                    help="also run with both fast paths off and compare the scores")
    ap.add_argument("--ragas-path", help="extra import path holding ragas "
                    "(e.g. a pip install --target DIR ragas)")
    ap.add_argument("--json", help="write all figures to this JSON file")
    ap.add_argument("--ragas-only", metavar="JSON", help="only (re)do the ragas comparison "
                    "for an earlier run's --json file (updated in place unless --json)")
    import bench_parallel  # the batched-judging sweep (--parallel), kept in its own script

    bench_parallel.add_arguments(ap)
    args = ap.parse_args(argv)
    if args.parallel:
        # Samples/s at each N against N = 1 and llama.cpp's batched floor (bench_parallel.py).
        args.data = args.data or str(Path(__file__).resolve().parents[1] / "localeval" / "data"
                                     / "example.jsonl")
        return bench_parallel.sweep(_model_path(args), args)

    from localeval.dataset import load_dataset
    from localeval.judge import LlamaJudge
    from localeval.testing import quote_bias

    data = args.data or Path(__file__).resolve().parents[1] / "localeval" / "data" / "example.jsonl"
    samples = load_dataset(str(data)).samples[: args.samples]
    path = _model_path(args)

    t0 = time.perf_counter()
    judge = LlamaJudge(path, n_threads=args.threads)
    if args.quote_bias:
        bias = quote_bias(judge)
        judge.close()
        judge = LlamaJudge(path, n_threads=args.threads, logit_bias=bias)
    load_s = time.perf_counter() - t0
    if args.ragas_only:
        # Re-do only the ragas comparison for an earlier run's JSON (same model).
        report = json.loads(Path(args.ragas_only).read_text(encoding="utf-8"))
        ids = report["samples"]
        by_id = {s.id: s for s in load_dataset(str(data)).samples}
        chosen = [by_id[i] for i in ids]
        details = report["run"].get("details") or {}
        if not details:
            print("note: that JSON has no extracted statements; ragas prompts get the "
                  "answer's and reference's sentences instead")
        ragas_tot = _ragas_section(args, chosen, details, judge, report)
        diffs = report.get("fast_paths_off", {}).get("score_differences")
        _finish(report, len(chosen), ragas_tot, None if diffs is None else not diffs,
                args.json or args.ragas_only)
        judge.close()
        return report
    print(f"judge {path.name}: loaded in {load_s:.1f} s, n_ctx={judge.n_ctx}, "
          f"threads={judge.n_threads}/{judge.n_threads_batch}, gpu_layers={judge.n_gpu_layers}"
          + (", quote bias ON (random-weight output kept short; a real model needs none)"
             if args.quote_bias else ", quote bias off"))
    if args.embedder == "hash":
        from localeval.testing import HashEmbedder

        from localeval.embed import CachedEmbedder
        embedder = CachedEmbedder(HashEmbedder(), None)
    else:
        from localeval.embed import load_embedder

        embedder = load_embedder(args.embedder, device="cpu", cache=None)

    speed_text = " ".join(" ".join(c for c in (s.contexts or [])) + " " + (s.answer or "")
                          for s in samples)
    speeds = measure_speeds(judge, speed_text)
    print(f"speeds (same model, this run): prompt processing {speeds.pp:.0f} tok/s "
          f"({speeds.pp_tokens}-token fresh prompt), generation {speeds.tg:.1f} tok/s "
          f"(unconstrained, {speeds.tg_tokens} tokens)")

    report: dict[str, Any] = {"model": str(path), "samples": [s.id for s in samples],
                              "quote_bias": args.quote_bias, "verdicts": args.verdicts,
                              "speeds": asdict(speeds), "machine": _machine()}

    def one_pass(label: str, reuse: bool, shared: bool) -> dict[str, Any]:
        metered = MeteredJudge(judge, prefix_reuse=reuse)
        judge._llm.reset()
        print(f"\n== {label}: prefix reuse {'on' if reuse else 'off'}, shared statements "
              f"{'on' if shared else 'off'} ==", flush=True)
        with (contextlib.nullcontext() if shared else no_shared_statements()):
            run = run_suite(samples, metered, embedder, SUITE, seed=args.seed,
                            verdicts=args.verdicts)
        recs = metered.records
        per_sample = group_totals(recs, lambda r: r.sample)
        per_metric = group_totals(recs, lambda r: r.metric)
        m_secs: dict[str, float] = {}
        for (_, m), v in run["metric_seconds"].items():
            m_secs[m] = m_secs.get(m, 0.0) + v
        for m in SUITE:  # metrics without judge calls (answer_similarity) still get a row
            if m not in per_metric and m in m_secs:
                per_metric[m] = totals([])
        s_rows = _rows(per_sample, run["walls"], speeds)
        m_rows = _rows(per_metric, m_secs, speeds)
        all_t = totals(recs)
        wall = sum(run["walls"].values())
        floor = compute_floor(all_t["evaluated_tokens"], all_t["generated_tokens"], speeds)
        total_row = {"name": "TOTAL", **all_t, "seconds": wall, "floor": floor}
        print("\nper sample")
        print(format_table(s_rows + [total_row], COLUMNS))
        print("\nper metric (wall s: time inside the metric, embeddings included)")
        print(format_table(m_rows + [total_row], COLUMNS))
        n = max(1, len(samples))
        print(f"\nper sample on average: {all_t['calls'] / n:.1f} calls, "
              f"{all_t['prompt_tokens'] / n:.0f} prompt tokens sent, "
              f"{all_t['evaluated_tokens'] / n:.0f} evaluated, "
              f"{all_t['generated_tokens'] / n:.0f} generated; wall {wall / n:.1f} s, "
              f"judge {all_t['judge_seconds'] / n:.1f} s, floor {floor / n:.1f} s "
              f"(wall/floor {wall / floor if floor else float('nan'):.2f}, "
              f"judge/floor {all_t['judge_seconds'] / floor if floor else float('nan'):.2f})")
        return {"per_sample": s_rows, "per_metric": m_rows, "total": total_row,
                "scores": run["scores"], "details": run["details"],
                "calls": [asdict(r) for r in recs]}

    main_pass = one_pass("run", not args.no_prefix_reuse, not args.no_shared_statements)
    report["run"] = dict(main_pass)
    report["run"]["prefix_reuse"] = not args.no_prefix_reuse
    report["run"]["shared_statements"] = not args.no_shared_statements

    ragas_tot = _ragas_section(args, samples, main_pass["details"], judge, report)
    if args.json:  # a partial file now: the fast-paths-off pass can take long
        _dump(args.json, report)
    same: bool | None = None
    if args.compare_fast_paths:
        off = one_pass("fast paths off", False, False)
        diffs = _score_diffs(main_pass["scores"], off["scores"])
        same = not diffs
        print("\nscores with fast paths on vs off: " +
              ("identical" if same else f"{len(diffs)} differ: " + "; ".join(diffs[:8])))
        report["fast_paths_off"] = {k: v for k, v in off.items() if k != "details"}
        report["fast_paths_off"]["score_differences"] = diffs

    _finish(report, len(samples), ragas_tot, same, args.json)
    judge.close()
    return report


def _finish(report: dict[str, Any], n_samples: int, ragas_tot: Mapping[str, float] | None,
            same: bool | None, json_path: str | None) -> None:
    """Check the targets, print them, write the JSON."""
    n = max(1, n_samples)
    t = report["run"]["total"]
    same_metrics = report.get("ragas", {}).get("localeval_same_metrics_per_sample")
    per_sample_avg = same_metrics or {k: t[k] / n for k in ("prompt_tokens", "evaluated_tokens")}
    report["targets"] = targets(per_sample_avg, ragas_tot, t["seconds"], t["floor"], same)
    print("\ntargets")
    for tg in report["targets"]:
        v = tg["value"]
        shown = "not run" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))
        verdict = {True: "PASS", False: "MISS", None: "-"}[tg["pass"]]
        print(f"  {verdict:4s}  {tg['target']}: {shown}")
    if json_path:
        _dump(json_path, report)
        print(f"\nwrote {json_path}")


def _score_diffs(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
                 ) -> list[str]:
    out = []
    for sid, sa in a.items():
        for k, va in sa.items():
            vb = b.get(sid, {}).get(k)
            if va != vb and not (isinstance(va, float) and isinstance(vb, float)
                                 and abs(va - vb) < 1e-9):
                out.append(f"{sid}/{k}: {va} vs {vb}")
    return out


def import_ragas(extra_path: str | None = None) -> Any:
    """``ragas``, or None with a message when it cannot be imported.

    ragas 0.4.3 imports ``langchain_community.chat_models.vertexai``, which
    langchain-community 0.4 (what pip resolves today) no longer has; only
    the LLM wrappers use it, never the prompts rendered here, so a stand-in
    module is put in its place when that one import fails.
    """
    if extra_path:
        sys.path.append(extra_path)  # after site-packages: the venv's versions win
    try:
        import ragas
        return ragas
    except ModuleNotFoundError as e:
        if e.name != "langchain_community.chat_models.vertexai":
            print(f"\nragas not importable ({e}): no comparison")
            return None
    except ImportError as e:
        print(f"\nragas not importable ({e}): no comparison (pip install ragas, "
              "or --ragas-path)")
        return None
    import types

    for name in [n for n in sys.modules if n == "ragas" or n.startswith("ragas.")]:
        del sys.modules[name]  # half-imported
    stub = types.ModuleType("langchain_community.chat_models.vertexai")
    stub.ChatVertexAI = type("ChatVertexAI", (), {})  # type: ignore[attr-defined]
    sys.modules[stub.__name__] = stub
    import ragas
    return ragas


def _ragas_section(args: argparse.Namespace, samples: Sequence[Any],
                   details: Mapping[str, Any], judge: Any, report: dict[str, Any]
                   ) -> dict[str, float] | None:
    """Render ragas's prompts for the same samples; print and record the comparison."""
    ragas = import_ragas(args.ragas_path)
    if ragas is None:
        return None
    import warnings

    print(f"\n== ragas {ragas.__version__}: its own prompts, same samples, same tokenizer ==")
    by_metric: dict[str, dict[str, int]] = {}
    sent = ev = calls = 0
    per_sample = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in samples:
            A, G = _statements_for(details.get(s.id, {}), s)
            rc = ragas_calls(s, A, G)
            toks = [judge.prompt_tokens([{"role": "user", "content": text}])
                    for _, _, text in rc]
            evals = simulate_prefix_reuse(toks)
            s_sent = sum(len(t) for t in toks)
            sent += s_sent
            ev += sum(evals)
            calls += len(rc)
            per_sample.append({"name": s.id, "calls": len(rc), "prompt_tokens": s_sent,
                               "evaluated_tokens": sum(evals)})
            for (metric, _, _), t, e in zip(rc, toks, evals):
                d = by_metric.setdefault(metric, {"name": metric, "calls": 0,
                                                  "prompt_tokens": 0, "evaluated_tokens": 0})
                d["calls"] += 1
                d["prompt_tokens"] += len(t)
                d["evaluated_tokens"] += e
    cols = [("name", ""), ("calls", "calls"), ("prompt_tokens", "prompt sent"),
            ("evaluated_tokens", "evaluated (1-slot prefix cache)")]
    print(format_table(list(by_metric.values()), cols))
    n = max(1, len(samples))
    # Like for like: localeval's calls of the metrics ragas 0.4 also has.
    loc = totals(r for r in calls_of(report["run"]["calls"]) if r.metric not in NO_RAGAS)
    r_tot = {"calls": calls / n, "prompt_tokens": sent / n, "evaluated_tokens": ev / n}
    print(f"\nper sample: ragas {r_tot['calls']:.1f} calls, {r_tot['prompt_tokens']:.0f} "
          f"prompt tokens sent, {r_tot['evaluated_tokens']:.0f} evaluated with a single-slot "
          f"prefix cache (no cache: all {r_tot['prompt_tokens']:.0f})")
    print(f"localeval / ragas: calls {loc['calls'] / n / r_tot['calls']:.2f}, prompt tokens "
          f"sent {loc['prompt_tokens'] / sent:.2f}, evaluated {loc['evaluated_tokens'] / sent:.2f} "
          f"(vs ragas without a prefix cache) / {loc['evaluated_tokens'] / ev:.2f} "
          f"(vs ragas with one)")
    print("note: context_relevancy has no ragas 0.4 counterpart and is left out of these "
          "ratios; ragas prompts are filled with the statements localeval extracted"
          + ("" if details else " (here: the texts' sentences)"))
    report["ragas"] = {"version": ragas.__version__, "per_metric": list(by_metric.values()),
                       "per_sample": per_sample, "per_sample_avg": r_tot,
                       "localeval_same_metrics_per_sample": {k: v / n for k, v in loc.items()}}
    return r_tot


#: Metrics localeval has and ragas 0.4 does not: left out of the like-for-like ratio.
NO_RAGAS = frozenset({"context_relevancy"})


def calls_of(rows: Iterable[Mapping[str, Any]]) -> list[CallRecord]:
    """CallRecords back from their JSON form."""
    return [CallRecord(**r) for r in rows]


def _dump(path: str, report: Mapping[str, Any]) -> None:
    Path(path).write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n",
                          encoding="utf-8")


def _machine() -> dict[str, Any]:
    import platform

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {"cores": cores, "cpu": platform.processor() or platform.machine(),
            "python": platform.python_version()}


if __name__ == "__main__":
    main()
