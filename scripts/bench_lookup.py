"""Benchmark prompt-lookup drafting: the full judge suite with and without it.

For each judge (the demo judge SmolLM2-135M, and the Qwen2-0.5B-shaped
random-weight model that ``bench_suite.py`` builds, with its quote bias)
the default metric suite runs on the first samples of the bundled example
three times: ``draft="none"`` (one token per decode), ``"lookup"`` (always
draft) and ``"auto"`` (draft while measured to pay). Per metric it reports
judge calls, generated tokens, generation decodes, tokens per decode,
drafted and accepted guesses, generated tokens per judge second and judge
seconds; then whether every reply (output text and verdict probabilities)
and every score was identical across the three, and what ``auto`` chose.
It also times decodes of 1, 2, 4, 8, 9 and 16 rows on the judge's context:
the price of a guess, and of the pad row every single-token decode carries.

    .venv/bin/python scripts/bench_lookup.py --samples 3 --threads 2 --json lookup.json

Random weights measure cost only; the demo judge shows real acceptance.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_suite import _model_path, run_suite  # noqa: E402
from suite.accounting import STEP_METRIC, SUITE, MeteredJudge, MetricAttribution  # noqa: E402,F401

MODES = ("none", "lookup", "auto")
ROWS = (1, 2, 4, 8, 9, 16)


class DraftMeter(MeteredJudge):
    """``MeteredJudge`` that also keeps each reply and its drafting counters."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.calls: list[dict[str, Any]] = []

    def ask(self, request: Any) -> Any:
        reply = super().ask(request)
        u = reply.usage
        self.calls.append({
            "metric": self.metric or STEP_METRIC.get(request.step, request.step),
            "step": request.step, "raw": reply.raw, "probs": reply.probs,
            "generated": u.generated_tokens, "steps": u.decode_steps,
            "drafted": u.drafted_tokens, "accepted": u.accepted_tokens, "seconds": u.seconds})
        return reply


def row_costs(judge: Any, repeats: int = 5) -> dict[int, float]:
    """Median seconds of one decode of k rows (all with logits) after a 256-token prompt."""
    llm = judge._llm
    prompt = [int(t) for t in llm.tokenize(b"The Eiffel Tower is in Paris. " * 40,
                                           add_bos=False)][:256]

    def run() -> dict[int, float]:
        llm.reset()
        llm.eval(prompt)
        out: dict[int, float] = {}
        for k in ROWS:
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                llm._batch.set_batch(batch=prompt[:k], n_past=len(prompt), logits_all=True)
                llm._ctx.decode(llm._batch)
                times.append(time.perf_counter() - t0)
                llm._ctx.kv_cache_seq_rm(-1, len(prompt), -1)
            out[k] = statistics.median(times)
        return out

    return judge.exclusive(run)


def one_model(label: str, path: Path, bias: dict[int, float] | None, samples: Sequence[Any],
              args: argparse.Namespace, embedder: Any) -> dict[str, Any]:
    from localeval.judge import LlamaJudge

    out: dict[str, Any] = {"model": str(path), "modes": {}}
    runs: dict[str, Any] = {}
    for mode in MODES:
        judge = LlamaJudge(path, n_threads=args.threads, logit_bias=bias, draft=mode)
        if mode == "none":
            out["row_seconds"] = row_costs(judge)
        meter = DraftMeter(judge)
        print(f"\n== {label}: draft={mode} ==", flush=True)
        t0 = time.perf_counter()
        run = run_suite(samples, meter, embedder, args.metrics, seed=0, verdicts=args.verdicts)
        wall = time.perf_counter() - t0
        runs[mode] = (run, meter.calls)
        per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for c in meter.calls:
            for m in (c["metric"], "TOTAL"):
                row = per[m]
                row["calls"] += 1
                for k in ("generated", "steps", "drafted", "accepted", "seconds"):
                    row[k] += c[k]
        out["modes"][mode] = {"wall_seconds": wall, "governor": judge.drafting.to_dict(),
                              "metrics": {m: dict(r) for m, r in per.items()}}
        judge.close()
    base_run, base_calls = runs["none"]
    for mode in MODES[1:]:
        run, calls = runs[mode]
        same_replies = [(c["raw"], c["probs"]) for c in calls] == [
            (c["raw"], c["probs"]) for c in base_calls]
        out["modes"][mode]["identical"] = bool(same_replies and run["scores"] == base_run["scores"])
    return out


def table(label: str, res: dict[str, Any]) -> str:
    lines = [f"\n{label}: decode seconds by rows " + ", ".join(
        f"{k}: {v * 1000:.1f} ms" for k, v in res["row_seconds"].items())]
    head = ("metric", "mode", "calls", "gen tok", "decodes", "tok/decode", "drafted",
            "accepted", "gen tok/s", "judge s")
    lines.append(" | ".join(head))
    metrics = list(res["modes"]["none"]["metrics"])
    for m in sorted(metrics, key=lambda x: (x == "TOTAL", x)):
        for mode in MODES:
            r = res["modes"][mode]["metrics"].get(m)
            if not r:
                continue
            lines.append(" | ".join(str(x) for x in (
                m, mode, int(r["calls"]), int(r["generated"]), int(r["steps"]),
                f"{r['generated'] / max(r['steps'], 1):.2f}", int(r["drafted"]),
                int(r["accepted"]), f"{r['generated'] / max(r['seconds'], 1e-9):.1f}",
                f"{r['seconds']:.1f}")))
    for mode in MODES:
        r = res["modes"][mode]
        lines.append(f"{mode}: wall {r['wall_seconds']:.1f} s, identical to none: "
                     f"{r.get('identical', '-')}, governor {r['governor']}")
    return "\n".join(lines)


def sweep(args: argparse.Namespace, samples: Sequence[Any], embedder: Any) -> dict[str, Any]:
    """Decodes, guesses kept and judge seconds for each draft length and longest n-gram."""
    from localeval.catalog import resolve_model
    from localeval.judge import LlamaJudge
    from localeval.judge.llama import lookup

    path = resolve_model("demo", "judge")
    out: dict[str, Any] = {}
    for n in (int(x) for x in args.ngram.split(",")):
        for k in (int(x) for x in args.sweep.split(",")):
            lookup.NGRAM_MAX, lookup.DRAFT_MAX = n, k
            judge = LlamaJudge(path, n_threads=args.threads, draft="lookup")
            meter = DraftMeter(judge)
            run_suite(samples[: args.samples], meter, embedder, args.metrics, seed=0,
                      verdicts=args.verdicts)
            judge.close()
            tot = {key: sum(c[key] for c in meter.calls)
                   for key in ("generated", "steps", "drafted", "accepted", "seconds")}
            out[f"n{n}_k{k}"] = tot
            print(f"ngram<={n} draft<={k}: {tot['steps']} decodes for {tot['generated']} "
                  f"tokens, {tot['accepted']}/{tot['drafted']} guesses kept, "
                  f"{tot['seconds']:.1f} judge s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=3, help="first N samples (default 3)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--metrics", default=",".join(SUITE), help="default: the full suite")
    ap.add_argument("--verdicts", choices=("hard", "soft"), default="soft")
    ap.add_argument("--models", default="demo,qwen", help="demo, qwen or both (default)")
    ap.add_argument("--qwen-samples", type=int, default=None,
                    help="samples for the larger random model (default: --samples)")
    ap.add_argument("--cache-dir", help="where the Qwen-shaped model is kept")
    ap.add_argument("--json", help="write all figures to this JSON file")
    ap.add_argument("--sweep", metavar="K,K,...", help="instead: draft lengths to compare "
                    "(draft=lookup, demo judge), e.g. 2,4,8,16; with --ngram N,N")
    ap.add_argument("--ngram", default="3", help="longest n-grams to sweep (default 3)")
    args = ap.parse_args(argv)
    args.metrics = [m for m in args.metrics.split(",") if m]
    args.model = None  # bench_suite._model_path: build the Qwen2-0.5B shape

    from localeval.catalog import resolve_model
    from localeval.cli.example import example_path
    from localeval.dataset import load_dataset
    from localeval.embed import CachedEmbedder
    from localeval.judge import LlamaJudge
    from localeval.testing import HashEmbedder, quote_bias

    samples = load_dataset(str(example_path())).samples
    # Embeddings are the same with and without drafting: a hash embedder keeps them cheap.
    embedder = CachedEmbedder(HashEmbedder(), None)
    report: dict[str, Any] = {"samples": args.samples, "metrics": args.metrics,
                              "verdicts": args.verdicts, "threads": args.threads}
    if args.sweep:
        return sweep(args, samples, embedder)
    for label in args.models.split(","):
        if label == "demo":
            path, bias, n = resolve_model("demo", "judge"), None, args.samples
        else:
            path = _model_path(args)
            probe = LlamaJudge(path, n_threads=args.threads)
            bias = quote_bias(probe)
            probe.close()
            n = args.qwen_samples or args.samples
        res = one_model(label, Path(path), bias, samples[:n], args, embedder)
        res["samples"] = n
        report[label] = res
        print(table(label, res), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
