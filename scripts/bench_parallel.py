"""Batched judging: samples/s and tokens/s at ``parallel`` = N against N = 1, and two floors.

For each N the judge metrics run on the same samples through
``localeval.evaluate`` with ``LlamaJudge(parallel=N)`` (N = 1 is the
sequential loop; N > 1 scores N samples at once in threads, one
``llama_decode`` per step over all live sequences). Every N must give the
scores of N = 1, and the script says whether they did.

Floors, from llama.cpp's own speeds on the same model in the same process
(the speeds of shared cores drift between runs, so they are taken per run):

- sequential: evaluated prompt tokens / pp + generated tokens / tg(1)
- batched at N: evaluated prompt tokens / pp + generated tokens / tg(N), where
  tg(N) is llama.cpp's own aggregate generation speed with N sequences in one
  ``llama_decode`` per step (no grammar, no sampling, no Python between steps).
  wall / floor says what the engine, the grammar, Python and any step with
  fewer than N sequences cost on top of the model.

Two sets of speeds. "Fresh", just before the run: pp on a 512-token prompt at
position 0 and tg after a ``--floor-prefix``-token prompt. "Shaped", just
after it, at the shapes the run had: pp on a suffix of the run's mean evaluated
length after a cached prefix of its mean reused length (a judge call evaluates
a few hundred tokens after a long cached prefix, which llama.cpp does 10-20 %
slower than a fresh prompt), and tg(N) after a prefix of the run's mean
position during generation. The shaped floor (``floor_batched_s``) is the
one the targets use; the fresh one is kept beside it.

    .venv/bin/python scripts/bench_parallel.py --model M.gguf --samples 16 \\
        --parallel 1,2,4,8,16 --metrics context_precision,nv_answer_accuracy

(``scripts/bench_suite.py --parallel 1,2,4,8,16 ...`` calls this.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

__all__ = ["llama_batched_tg", "llama_pp", "run_shape", "shaped_speeds", "run_parallel", "main"]


def _fill(lc: Any, batch: Any, items: Sequence[tuple[int, int, int, bool]]) -> None:
    """Write (token, pos, seq_id, wants_logits) rows into a ``llama_batch``."""
    for i, (tok, pos, seq, out) in enumerate(items):
        batch.token[i] = tok
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = int(out)
    batch.n_tokens = len(items)


def _eval_prompt(lc: Any, ctx: Any, batch: Any, tokens: Sequence[int], start: int, end: int
                 ) -> None:
    """Decode ``tokens[start:end]`` into sequence 0 in the judge's 512-token chunks."""
    for i in range(start, end, 512):
        chunk = tokens[i:min(i + 512, end)]
        _fill(lc, batch, [(t, i + k, 0, i + k == end - 1) for k, t in enumerate(chunk)])
        if lc.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed on the prompt")


def _repeated(tokens: Sequence[int], n: int) -> list[int]:
    """``tokens`` repeated until it holds at least ``n`` tokens (text for a long prompt)."""
    out = list(tokens)
    while len(out) < n:
        out += out
    return out


def llama_batched_tg(judge: Any, n_seq: int, prefix: Sequence[int], steps: int = 24
                     ) -> float:
    """Aggregate tokens/s of llama.cpp decoding ``n_seq`` sequences, one token each per step.

    ``judge`` is a ``LlamaJudge`` made with ``parallel >= n_seq`` (one KV
    stream per sequence, as the engine uses). Every sequence first holds
    ``prefix`` (decoded once, copied), then ``steps`` decodes of ``n_seq`` tokens are timed.
    """
    import llama_cpp as lc  # the benchmark times llama.cpp's own loops

    ctx = judge.llm.ctx
    mem = lc.llama_get_memory(ctx)
    batch = lc.llama_batch_init(max(512, n_seq), 0, 1)
    try:
        for s in range(n_seq):
            lc.llama_memory_seq_rm(mem, s, -1, -1)
        _eval_prompt(lc, ctx, batch, prefix, 0, len(prefix))
        for s in range(1, n_seq):  # the same prefix in every sequence's KV stream
            lc.llama_memory_seq_cp(mem, 0, s, -1, -1)
        tok, pos = int(prefix[-1]), len(prefix)
        t0 = time.perf_counter()
        for k in range(steps):
            _fill(lc, batch, [(tok, pos + k, s, True) for s in range(n_seq)])
            if lc.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
        seconds = time.perf_counter() - t0
        for s in range(n_seq):
            lc.llama_memory_seq_rm(mem, s, -1, -1)
    finally:
        lc.llama_batch_free(batch)
    return n_seq * steps / seconds


def llama_pp(judge: Any, tokens: Sequence[int], repeats: int = 2, prefix: int = 0) -> float:
    """Prompt tokens/s of llama.cpp on ``tokens[prefix:]`` (median of ``repeats``).

    ``prefix`` > 0: the first ``prefix`` tokens are in the KV cache already
    (evaluated once, not timed), as a judge call finds its sample's prefix;
    only the suffix is timed, in the judge's 512-token chunks.
    """
    import llama_cpp as lc  # the benchmark times llama.cpp's own loops

    ctx = judge.llm.ctx
    mem = lc.llama_get_memory(ctx)
    batch = lc.llama_batch_init(512, 0, 1)
    speeds = []
    try:
        lc.llama_memory_seq_rm(mem, 0, -1, -1)
        _eval_prompt(lc, ctx, batch, tokens, 0, prefix)
        for _ in range(repeats):
            lc.llama_memory_seq_rm(mem, 0, prefix, -1)
            t0 = time.perf_counter()
            _eval_prompt(lc, ctx, batch, tokens, prefix, len(tokens))
            speeds.append((len(tokens) - prefix) / (time.perf_counter() - t0))
        lc.llama_memory_seq_rm(mem, 0, -1, -1)
    finally:
        lc.llama_batch_free(batch)
    return statistics.median(speeds)


def run_shape(usage: dict[str, Any]) -> dict[str, int]:
    """The mean judge call of a run: cached prefix, evaluated suffix, position while generating."""
    calls = max(1, int(usage.get("calls", 0)))
    sent, reused = int(usage.get("prompt_tokens", 0)), int(usage.get("reused_tokens", 0))
    gen = int(usage.get("generated_tokens", 0))
    return {"prefix": reused // calls, "suffix": max(1, (sent - reused) // calls),
            "gen_position": (sent + gen // 2) // calls}


def shaped_speeds(judge: Any, tokens: Sequence[int], shape: dict[str, int], n: int
                  ) -> tuple[float, dict[int, float]]:
    """pp and tg(1), tg(n) of llama.cpp at the run's shape (``run_shape``)."""
    prefix, suffix = shape["prefix"], shape["suffix"]
    tokens = _repeated(tokens, max(prefix + suffix, shape["gen_position"]) + 1)
    pp = llama_pp(judge, tokens[:prefix + suffix], repeats=3, prefix=prefix)
    at = tokens[:max(1, shape["gen_position"])]
    return pp, {1: llama_batched_tg(judge, 1, at), n: llama_batched_tg(judge, n, at)}


def _judge(path: Path, parallel: int, args: argparse.Namespace, bias: Any) -> Any:
    from localeval.judge import LlamaJudge

    return LlamaJudge(path, n_threads=args.threads, n_ctx=args.n_ctx, parallel=parallel,
                      logit_bias=bias)


def run_parallel(path: Path, samples: Sequence[Any], metrics: Sequence[str],
                 levels: Sequence[int], args: argparse.Namespace) -> dict[str, Any]:
    """Run the metrics at each ``parallel`` level; figures, floors and score identity."""
    from localeval.embed import CachedEmbedder
    from localeval.run import evaluate
    from localeval.testing import HashEmbedder, quote_bias

    probe = _judge(path, 1, args, None)
    bias = quote_bias(probe) if args.quote_bias else None
    text = " ".join(" ".join(s.contexts or []) + " " + (s.answer or "") for s in samples)
    toks = probe._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    probe.close()
    toks = _repeated(toks, 512)
    prefix = toks[: args.floor_prefix]
    embedder = CachedEmbedder(HashEmbedder(), None)
    rows, base = [], None

    def one_level(n: int) -> dict[str, Any]:
        judge = _judge(path, n, args, bias)
        # Speeds just before this run: on shared cores they drift between runs. Timed on
        # the thread that decodes the run (``exclusive``): llama.cpp called from this
        # thread too would leave a second OpenMP team that slows the run's decodes.
        pp, tg = judge.exclusive(lambda: (
            llama_pp(judge, toks[:512], repeats=1),
            {1: llama_batched_tg(judge, 1, prefix), n: llama_batched_tg(judge, n, prefix)}))
        print(f"N={n}: llama.cpp (fresh) pp {pp:.0f} tok/s, generation {tg[1]:.1f} tok/s "
              f"alone, {tg[n]:.1f} tok/s over {n} sequences", flush=True)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        res = evaluate(list(samples), ",".join(metrics), judge=judge, embedder=embedder,
                       cache=False, out_dir=None, progress=False, judge_check=False)
        wall = time.perf_counter() - t0
        stats = judge.batch_stats
        u = res.summary.get("usage") or {}
        shape = run_shape(u)
        # Just after the run, at its shapes: what llama.cpp alone does with such calls.
        pp_run, tg_run = judge.exclusive(lambda: shaped_speeds(judge, toks, shape, n))
        judge.close()
        scores = [{k: (v.value, v.reason) for k, v in sc.items()} for sc in res.scores]
        gen = int(u.get("generated_tokens", 0))
        evaluated = int(u.get("prompt_tokens", 0)) - int(u.get("reused_tokens", 0))
        floor_b = evaluated / pp_run + gen / tg_run[n]
        floor_s = evaluated / pp_run + gen / tg_run[1]
        floor_fresh = evaluated / pp + gen / tg[n]
        row = {"parallel": n, "wall_s": round(wall, 2), "pp_tok_s": round(pp_run, 1),
               "tg1_tok_s": round(tg_run[1], 1), "tgN_tok_s": round(tg_run[n], 1),
               "shape": shape, "fresh_pp_tok_s": round(pp, 1),
               "fresh_tg1_tok_s": round(tg[1], 1), "fresh_tgN_tok_s": round(tg[n], 1),
               "samples_per_s": round(len(samples) / wall, 4),
               "gen_tokens_per_s": round(gen / wall, 1), "generated": gen,
               "evaluated_prompt": evaluated, "prompt_sent": int(u.get("prompt_tokens", 0)),
               "calls": int(u.get("calls", 0)),
               "floor_batched_s": round(floor_b, 1), "wall_over_floor": round(wall / floor_b, 2),
               "floor_sequential_s": round(floor_s, 1),
               "floor_batched_fresh_s": round(floor_fresh, 1),
               "wall_over_fresh_floor": round(wall / floor_fresh, 2),
               "scores": scores, "load_avg_1m": round(load, 1),
               # Where the decode thread's time went: llama_decode of prompts and of
               # generated tokens, and the per-token Python work after it (grammar check,
               # UTF-8 check, pick) that the next decode waits on.
               "engine": stats,
               "tokens_per_decode": (round(stats["batch_tokens"] / stats["decodes"], 2)
                                     if stats and stats["decodes"] else None),
               "rows_per_generation_decode": (round(stats["gen_rows"] / stats["gen_decodes"], 2)
                                              if stats and stats["gen_decodes"] else None)}
        return row

    for n in levels:
        # Each level in a thread of its own that ends with it: libgomp keeps a team of
        # OpenMP workers per thread that has called llama.cpp, and a team left by an
        # earlier level (the sequential one runs on its calling thread) would slow this
        # level's decode thread ("Where the decodes run" in docs/performance.md).
        with ThreadPoolExecutor(1) as ex:
            row = ex.submit(one_level, n).result()
        scores = row.pop("scores")
        row["scores_identical_to_n1"] = None if base is None else scores == base
        if base is None:
            base = scores
        rows.append(row)
        print(json.dumps(row), flush=True)
    t1 = rows[0]["wall_s"] if rows and rows[0]["parallel"] == 1 else None
    for r in rows:
        r["speedup_vs_n1"] = round(t1 / r["wall_s"], 2) if t1 else None
    return {"model": str(path), "samples": [s.id for s in samples], "metrics": list(metrics),
            "floor_prefix": len(prefix), "rows": rows}


def format_rows(report: dict[str, Any]) -> str:
    """The Markdown table docs/performance.md shows."""
    head = ("| N | wall s | samples/s | gen tok/s | x N=1 | llama.cpp pp / tg(N) tok/s "
            "| batched floor s | wall/floor | rows per decode | wall/fresh floor "
            "| identical scores | load |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    lines = [head]
    for r in report["rows"]:
        lines.append(f"| {r['parallel']} | {r['wall_s']} | {r['samples_per_s']} | "
                     f"{r['gen_tokens_per_s']} | {r['speedup_vs_n1']} | "
                     f"{r['pp_tok_s']:.0f} / {r['tgN_tok_s']} | {r['floor_batched_s']} | "
                     f"{r['wall_over_floor']} | {r.get('rows_per_generation_decode') or 1} | "
                     f"{r['wall_over_fresh_floor']} | {r['scores_identical_to_n1']} | "
                     f"{r['load_avg_1m']} |")
    return "\n".join(lines)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--parallel", help="comma-separated N to measure, e.g. 1,2,4,8,16 "
                    "(N=1 first: the sequential reference)")
    ap.add_argument("--parallel-metrics", default="context_precision,context_recall,"
                    "nv_answer_accuracy,faithfulness",
                    help="judge metrics of the parallel sweep; 'suite' (bench_suite.py): "
                    "every judge metric (default: %(default)s)")
    ap.add_argument("--n-ctx", type=int, default=4096,
                    help="judge context per sequence in the sweep (default: %(default)s)")
    ap.add_argument("--floor-prefix", type=int, default=600,
                    help="prompt tokens before the timed steps of the batched floor")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="the GGUF judge")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--data", help="dataset (default: the bundled example)")
    ap.add_argument("--quote-bias", action="store_true")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", help="write the figures here")
    add_arguments(ap)
    args = ap.parse_args(argv)
    return sweep(Path(args.model), args)


def sweep(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Load the samples, run the sweep, print the table, write ``args.json``."""
    from localeval.cli.example import example_path
    from localeval.dataset import load_dataset

    data = args.data or str(example_path())
    samples = load_dataset(data).samples[: args.samples]
    levels = sorted({int(x) for x in (args.parallel or "1,2,4,8,16").split(",")})
    if levels[0] != 1:
        levels = [1] + levels
    report = run_parallel(path, samples, args.parallel_metrics.split(","), levels, args)
    report["uptime"] = os.getloadavg()
    print(format_rows(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
