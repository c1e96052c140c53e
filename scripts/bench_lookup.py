"""Benchmark prompt-lookup drafting: the full judge suite with and without it, and the identity check.

For each judge (the demo judge SmolLM2-135M, and the Qwen2-0.5B-shaped
random-weight model that ``bench_suite.py`` builds, with its quote bias) and
each ``--parallel`` N, the metric suite runs on the first samples of the
bundled example once per draft mode (default ``none``, ``lookup``, ``auto``).
Per metric it reports judge calls, generated tokens, generation decodes,
drafted and accepted tokens, generated tokens per decode, generated tokens
per judge second and judge seconds; per mode the wall time, what ``auto``
chose, and whether every reply (output text, verdict probabilities within
1e-6) and every score equals the ``none`` run's. It also times a one-row
against a two-row decode back to back on the judge's context (the price of
the pad row that keeps every generation decode on the same kernel path).

    .venv/bin/python scripts/bench_lookup.py --models demo --samples 3 --threads 2 --json lookup.json
    .venv/bin/python scripts/bench_lookup.py --device gpu --parallel 1,16 --json lookup-gpu.json

What it needs from the judge: ``LlamaJudge(..., draft="none"|"lookup"|"auto")``
(``parallel=N`` and ``n_gpu_layers`` as today), the reply's ``usage`` with
``drafted_tokens``, ``accepted_tokens`` and ``decode_steps`` (generation
decodes), and optionally ``judge.drafting.to_dict()`` (what ``auto`` decided).
Random weights measure cost only; the demo judge shows real acceptance.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_suite import run_suite  # noqa: E402
from suite.accounting import STEP_METRIC, SUITE, MeteredJudge  # noqa: E402
from suite.qwen_shape import qwen_shape_bias, qwen_shape_path  # noqa: E402

MODES = ("none", "lookup", "auto")
COUNTERS = ("generated", "steps", "drafted", "accepted", "seconds")
#: Verdict probabilities (and float scores) are identical within this.
TOLERANCE = 1e-6


class DraftMeter(MeteredJudge):
    """``MeteredJudge`` that also keeps each reply and its drafting counters."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.calls: list[dict[str, Any]] = []

    def ask(self, request: Any) -> Any:
        reply = super().ask(request)
        u = reply.usage
        key = hashlib.sha256(json.dumps([request.step, request.messages], sort_keys=True,
                                        default=str).encode()).hexdigest()[:16]
        self.calls.append({
            "sample": self.sample, "key": key,
            "metric": self.metric or STEP_METRIC.get(request.step, request.step),
            "raw": reply.raw, "probs": reply.probs, "generated": u.generated_tokens,
            "prompt": u.prompt_tokens,
            "steps": getattr(u, "decode_steps", 0), "drafted": getattr(u, "drafted_tokens", 0),
            "accepted": getattr(u, "accepted_tokens", 0), "seconds": u.seconds})
        return reply


#: Decode widths timed by ``row_costs`` (multiples of 4 and their neighbours: llama.cpp's
#: CPU kernels take rows in groups).
WIDTHS = (1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 16, 17)


def row_costs(judge: Any, context: int = 900, repeats: int = 15) -> dict[str, Any]:
    """Seconds of a decode of k rows (all with logits) after ``context`` tokens, as ratios.

    The widths are timed round-robin, ``repeats`` times, so a machine loaded by
    other work slows all alike; each width's cost is the median of its ratio to
    the one-row decode of the same round. ``ratio[2]`` is the pad row's price
    (every generation decode is at least two rows wide, so that a token's logits
    do not depend on whether guesses were decoded with it). Sequential judges
    only (the batched engine owns its batch).
    """
    llm = judge._llm
    text = Path(__file__).resolve().parents[1].joinpath("README.md").read_text("utf-8")
    toks = [int(t) for t in llm.tokenize(text.encode(), add_bos=False)]
    while len(toks) < context + max(WIDTHS):
        toks += toks
    prompt = toks[:context]

    decoder: Any = getattr(judge, "decoder", None)
    if hasattr(decoder, "decode_rows") and hasattr(decoder, "truncate"):
        # The judge's own multi-row decode (it copies the logits: included in the time).
        decode, truncate = decoder.decode_rows, decoder.truncate
    else:  # a judge without that layer: llama-cpp-python's batch, as the prototype did
        def decode(batch: list[int]) -> None:
            llm._batch.set_batch(batch=batch, n_past=context, logits_all=True)
            llm._ctx.decode(llm._batch)

        def truncate(pos: int) -> None:
            llm._ctx.kv_cache_seq_rm(-1, pos, -1)

    def run() -> dict[str, Any]:
        llm.reset()
        llm.eval(prompt)
        secs: dict[int, list[float]] = {k: [] for k in WIDTHS}
        for _ in range(repeats):
            for k in WIDTHS:
                t0 = time.perf_counter()
                decode(toks[context:context + k])
                secs[k].append(time.perf_counter() - t0)
                truncate(context)
        llm.reset()
        return {"context": context, "repeats": repeats,
                "ms": {k: statistics.median(v) * 1000 for k, v in secs.items()},
                "ratio": {k: statistics.median(b / a for a, b in zip(secs[1], v))
                          for k, v in secs.items()}}

    return judge.exclusive(run)


def _cost(ratio: dict[int, float], rows: int) -> float:
    """A decode of ``rows`` rows in one-row decodes (linear between measured widths)."""
    ks = sorted(ratio)
    if rows >= ks[-1]:
        return ratio[ks[-1]] * rows / ks[-1]
    hi = next(k for k in ks if k >= rows)
    lo = max(k for k in ks if k <= rows)
    if hi == lo:
        return ratio[lo]
    return ratio[lo] + (ratio[hi] - ratio[lo]) * (rows - lo) / (hi - lo)


def _record_generations(judge: Any, into: list[dict[str, list[int]]]) -> None:
    """Keep every generation's prompt and output tokens (for ``--simulate``)."""
    generate = judge.generate

    def recorded(prompt: Sequence[int], *a: Any, **kw: Any) -> Any:
        gen = generate(prompt, *a, **kw)
        into.append({"prompt": [int(t) for t in prompt], "output": [int(t) for t in gen.tokens]})
        return gen

    judge.generate = recorded


def simulate(trace: Sequence[dict[str, list[int]]], ngram_max: int, ngram_min: int,
             draft_max: int, ratio: dict[int, float] | None = None,
             by_match: dict[int, int] | None = None) -> dict[str, float]:
    """Decodes and rows drafting would take for the recorded generations, without the model.

    Greedy outputs do not depend on drafting, so a guess is kept exactly when it
    equals the recorded next token; the first refused guess ends the step (the
    model's own pick there is the next output token). Rows counted are the
    uncut draft plus the head (the grammar cut can only shorten a step's rows,
    never its kept guesses: the recorded output obeys the grammar). With
    ``ratio`` (``row_costs``) the decodes' cost is estimated in one-row decodes,
    against today's loop (one row per token) and the padded one (two rows).
    """
    from localeval.judge.llama.ngram import NgramDrafter

    steps = rows = kept = generated = empty = 0
    cost = 0.0
    for call in trace:
        seq = call["output"]
        d = NgramDrafter(call["prompt"], ngram_max, ngram_min, draft_max, by_match)
        i = 0  # output tokens fixed so far; the head seq[i] is decoded next
        while i < len(seq):
            d.extend(seq[len(d.tokens) - len(call["prompt"]):i + 1])
            guess = d.draft(len(seq) - i - 1)
            k = 0
            while k < len(guess) and guess[k] == seq[i + 1 + k]:
                k += 1
            steps += 1
            empty += not guess  # a pad row that a fallback guess could fill
            rows += max(2, 1 + len(guess))
            cost += _cost(ratio, max(2, 1 + len(guess))) if ratio else 0.0
            kept += k
            i += 1 + k
        generated += len(seq)
    out: dict[str, float] = {"ngram_max": ngram_max, "ngram_min": ngram_min, "draft_max": draft_max,
           "generated": generated, "decodes": steps, "empty_drafts": empty, "rows": rows,
           "accepted": kept,
           "tokens_per_decode": generated / max(steps, 1)}
    if ratio:
        out["speedup_vs_one_row"] = generated / cost
        out["speedup_vs_padded"] = generated * _cost(ratio, 2) / cost
    return out


def _demo_judge_path() -> Path:
    """The demo judge's GGUF (the catalog's manifest lookup; older trees named it resolve_model)."""
    from localeval import catalog

    find: Any = getattr(catalog, "manifest_model_path", None) or getattr(catalog, "resolve_model", None)
    return Path(find("demo", "judge"))


def _same(a: Any, b: Any) -> bool:
    """Equal, floats within ``TOLERANCE`` (verdict probabilities, scores)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= TOLERANCE
    return a == b


def identity(base: Sequence[dict[str, Any]], other: Sequence[dict[str, Any]],
             base_scores: Any, scores: Any) -> dict[str, Any]:
    """Replies matched by sample and prompt (batched runs may order calls differently)."""
    def by_key(calls: Sequence[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
        seen: dict[tuple[str, str], int] = defaultdict(int)
        out = {}
        for c in calls:
            k = (c["sample"], c["key"])
            out[(*k, seen[k])] = c
            seen[k] += 1
        return out

    a, b = by_key(base), by_key(other)
    differ = [k for k in a.keys() | b.keys()
              if k not in a or k not in b
              or not (a[k]["raw"] == b[k]["raw"] and _same(a[k]["probs"], b[k]["probs"]))]
    first = next((a.get(k, {}).get("metric") or b[k]["metric"] for k in differ), None)
    return {"identical": not differ and _same(base_scores, scores),
            "replies_differing": len(differ), "first_metric_differing": first,
            "scores_identical": _same(base_scores, scores)}


def one_model(label: str, path: Path, bias: dict[int, float] | None, samples: Sequence[Any],
              args: argparse.Namespace, embedder: Any, parallel: int) -> dict[str, Any]:
    from localeval.judge import LlamaJudge

    out: dict[str, Any] = {"model": str(path), "parallel": parallel, "modes": {}}
    runs: dict[str, Any] = {}
    for mode in args.modes:
        # "off": draft=None, the one-row loop without the pad row (the prototype keeps it
        # for comparison; not a mode of the finished judge).
        judge = LlamaJudge(path, n_threads=args.threads, logit_bias=bias,
                           draft=None if mode == "off" else mode,
                           parallel=parallel, n_gpu_layers=args.n_gpu_layers)
        if mode == args.modes[0] and parallel == 1 and not args.no_pad_cost:
            out["row_costs"] = row_costs(judge)
            print(f"{label}: decode cost by rows {out['row_costs']}", flush=True)
        meter = DraftMeter(judge)
        if args.trace and mode == args.modes[0]:
            _record_generations(judge, out.setdefault("trace", []))
        print(f"\n== {label}: parallel={parallel} draft={mode} ==", flush=True)
        t0 = time.perf_counter()
        run = run_suite(samples, meter, embedder, args.metrics, seed=0, verdicts=args.verdicts)
        wall = time.perf_counter() - t0
        runs[mode] = (run["scores"], meter.calls)
        per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for c in meter.calls:
            for m in (c["metric"], "TOTAL"):
                per[m]["calls"] += 1
                for k in COUNTERS:
                    per[m][k] += c[k]
                per[m]["longest_prompt"] = max(per[m]["longest_prompt"], c["prompt"])
        governor = getattr(judge, "drafting", None)
        out["modes"][mode] = {"wall_seconds": wall,
                              "governor": governor.to_dict() if governor is not None else None,
                              "metrics": {m: dict(r) for m, r in per.items()}}
        judge.close()
    base_scores, base_calls = runs[args.modes[0]]
    for mode in args.modes[1:]:
        scores, calls = runs[mode]
        out["modes"][mode]["identity"] = identity(base_calls, calls, base_scores, scores)
    return out


def table(label: str, res: dict[str, Any]) -> str:
    lines = [f"\n{label}, parallel={res['parallel']}"]
    if "row_costs" in res:
        rc = res["row_costs"]
        lines.append(f"decode cost by rows after {rc['context']} tokens (ms, x one row): " + ", ".join(
            f"{k}: {rc['ms'][k]:.1f} x{rc['ratio'][k]:.2f}" for k in rc["ms"]))
    head = ("metric", "mode", "calls", "longest prompt", "gen tok", "decodes", "tok/decode",
            "drafted", "accepted", "accepted/decode", "gen tok/judge s", "judge s")
    lines.append(" | ".join(head))
    modes = list(res["modes"])
    for m in sorted(res["modes"][modes[0]]["metrics"], key=lambda x: (x == "TOTAL", x)):
        for mode in modes:
            r = res["modes"][mode]["metrics"].get(m)
            if not r:
                continue
            steps = max(r["steps"], 1)
            lines.append(" | ".join(str(x) for x in (
                m, mode, int(r["calls"]), int(r["longest_prompt"]), int(r["generated"]),
                int(r["steps"]),
                f"{r['generated'] / steps:.2f}", int(r["drafted"]), int(r["accepted"]),
                f"{r['accepted'] / steps:.2f}",
                f"{r['generated'] / max(r['seconds'], 1e-9):.1f}", f"{r['seconds']:.1f}")))
    base = res["modes"][modes[0]]
    for mode in modes:
        r = res["modes"][mode]
        t, b = r["metrics"].get("TOTAL", {}), base["metrics"].get("TOTAL", {})
        # A judge without the counters (the prototype's "off") reports no decodes.
        cut = 1 - t["steps"] / b["steps"] if b.get("steps") and t.get("steps") else float("nan")
        speed = b.get("seconds", 0) / t["seconds"] if t.get("seconds") else float("nan")
        lines.append(f"{mode}: wall {r['wall_seconds']:.1f} s, decodes cut {cut:.0%}, judge "
                     f"time x{speed:.2f} faster, identity {r.get('identity', '-')}, "
                     f"governor {r['governor']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=3, help="first N samples (default 3)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--metrics", default=",".join(SUITE), help="default: the full suite")
    ap.add_argument("--verdicts", choices=("hard", "soft"), default="soft")
    ap.add_argument("--models", default="demo,qwen", help="demo, qwen or demo,qwen (default)")
    ap.add_argument("--model", help="a GGUF instead of the built Qwen2-0.5B shape for 'qwen'")
    ap.add_argument("--no-quote-bias", action="store_true",
                    help="run the 'qwen' model without the quote bias (random weights then fill "
                         "every string to its bound: little for a guess to match)")
    ap.add_argument("--qwen-samples", type=int, default=None,
                    help="samples for the larger random model (default: --samples)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="draft modes, the first is the reference (default none,lookup,auto; "
                    "'off' = the prototype's one-row loop without pad row)")
    ap.add_argument("--parallel", default="1", help="sequences decoded together, e.g. 1,16")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                    help="gpu: offload every layer (needs a GPU build of llama-cpp-python)")
    ap.add_argument("--no-pad-cost", action="store_true", help="skip the 1-vs-2-row timing")
    ap.add_argument("--cache-dir", help="where the Qwen-shaped model is kept")
    ap.add_argument("--json", help="write all figures to this JSON file")
    ap.add_argument("--trace", action="store_true",
                    help="record the reference mode's prompts and outputs in the JSON")
    ap.add_argument("--simulate", metavar="JSON", help="instead: replay the traces in a --trace "
                    "JSON through drafter settings (--ngram, --draft-max) without the model")
    ap.add_argument("--ngram", default="1:1,2:1,3:1,4:1,3:2", help="MAX:MIN n-gram sizes to simulate")
    ap.add_argument("--draft-max", default="2,3,4,6,8,12,16", help="draft lengths to simulate")
    ap.add_argument("--by-match", default="default",
                    help="guesses at most after a match of 4,3,2,1 tokens, e.g. 6,4,2,1; 'none': "
                         "no cap; 'default': ngram.DRAFT_BY_MATCH")
    args = ap.parse_args(argv)
    bad = [m for m in args.models.split(",") if m not in ("demo", "qwen")]
    if bad:
        ap.error(f"--models: demo, qwen or demo,qwen, not {bad[0]!r}")
    if args.simulate:
        runs = json.loads(Path(args.simulate).read_text("utf-8"))["runs"]
        trace = [c for r in runs for c in r.get("trace", [])]
        costs = next((r["row_costs"]["ratio"] for r in runs if "row_costs" in r), None)
        ratio = {int(k): v for k, v in costs.items()} if costs else None
        caps = (None if args.by_match == "default" else {} if args.by_match == "none" else
                dict(zip((4, 3, 2, 1), (int(x) for x in args.by_match.split(",")))))
        rows = []
        for ng in args.ngram.split(","):
            hi, lo = (int(x) for x in ng.split(":"))
            for k in (int(x) for x in args.draft_max.split(",")):
                r = simulate(trace, hi, lo, k, ratio, caps)
                rows.append(r)
                print(" ".join(f"{key}={v:.2f}" if isinstance(v, float) else f"{key}={v}"
                               for key, v in r.items()), flush=True)
        return {"simulation": rows}
    args.metrics = [m for m in args.metrics.split(",") if m]
    args.modes = [m for m in args.modes.split(",") if m]
    args.n_gpu_layers = -1 if args.device == "gpu" else 0

    from localeval.cli.example import example_path
    from localeval.dataset import load_dataset
    from localeval.embed import CachedEmbedder
    from localeval.testing import HashEmbedder

    samples = load_dataset(str(example_path())).samples
    # Embeddings are the same with and without drafting: a hash embedder keeps them cheap.
    embedder = CachedEmbedder(HashEmbedder(), None)
    report: dict[str, Any] = {"samples": args.samples, "metrics": args.metrics,
                              "verdicts": args.verdicts, "threads": args.threads,
                              "device": args.device, "runs": []}
    for label in args.models.split(","):
        if label == "demo":
            path, bias, n = _demo_judge_path(), None, args.samples
        else:
            path = qwen_shape_path(args.model, args.cache_dir)
            bias = (None if args.no_quote_bias else
                    qwen_shape_bias(path, args.threads, args.n_gpu_layers))
            n = args.qwen_samples or args.samples
        for parallel in (int(x) for x in args.parallel.split(",")):
            res = one_model(label, Path(path), bias, samples[:n], args, embedder, parallel)
            res.update(label=label, samples=n)
            report["runs"].append(res)
            print(table(label, res), flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
