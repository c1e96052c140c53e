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

The code lives in ``scripts/suite/`` (accounting, ragas_prompts, tables);
this file is the command line and the run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the suite package, bench_parallel

from suite.accounting import (STEP_METRIC, SUITE, CallRecord, MeteredJudge,  # noqa: E402
                              MetricAttribution, Speeds, calls_of, compute_floor,
                              group_totals, measure_speeds, no_shared_statements,
                              simulate_prefix_reuse, totals)
from suite.qwen_shape import qwen_shape_path  # noqa: E402
from suite.ragas_prompts import (import_ragas, ragas_calls, ragas_section,  # noqa: E402
                                 statements_for)
from suite.tables import COLUMNS, format_table, targets  # noqa: E402

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
    "import_ragas",
    "statements_for",
    "targets",
    "calls_of",
    "main",
]

#: ``import_ragas`` is imported from here by ``quality/ragas_baseline.py``.

# -- the run ----------------------------------------------------------------------------------
def _model_path(args: argparse.Namespace) -> Path:
    return qwen_shape_path(args.model, args.cache_dir)


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
                       on_warning=lambda m: None, observer=observer,
                       # The judge check would run before every sample (no cache)
                       # and its calls would be counted as the sample's.
                       judge_check=False)
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
        if args.parallel_metrics == "suite":  # the full judge suite, as the default run
            args.parallel_metrics = ",".join(SUITE)
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
        ragas_tot = ragas_section(args, chosen, details, judge, report)
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

    ragas_tot = ragas_section(args, samples, main_pass["details"], judge, report)
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
