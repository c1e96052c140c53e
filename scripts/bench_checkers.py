"""Benchmark the checker backend against the in-process GGUF judge, on random weights.

Builds random-weight checker folders of the published models' shapes
(``localeval.testing.tiny_checkers``: HHEM-2.1-open's Flan-T5-base encoder,
110M; a RoBERTa-base pair classifier, 125M; ModernBERT-large as LettuceDetect
uses it, 395M; Flan-T5-large as MiniCheck uses it, 783M), loads each with
``localeval.checker.load_checker`` and measures:

1. sentences per second: (context, answer sentence) pairs of the bundled
   example, scored in batches (``--pairs``, ``--batch-size``);
2. seconds per sample: each of the first ``--samples`` samples' answers cut
   into sentences, each sentence checked against the windows of the sample's
   contexts (the span checker: one ``spans`` call per answer), as the
   checker-backed faithfulness scores a sample;
3. the same samples' faithfulness by the in-process GGUF judge
   (``localeval.evaluate(..., "faithfulness")``) on the Qwen2-0.5B-shaped
   random-weight GGUF the cost benches share (``scripts/suite/qwen_shape.py``,
   with its quote bias), and with ``--judge-1b`` a Llama-3.2-1B-shaped one built
   the same way; the ratio of judge to checker seconds per sample.

Random weights: every figure is speed, never quality. The tokenizers are small
ones trained on the tests' corpus, so a text takes more tokens than with the
published tokenizers (a slower, not a faster, measure).

    .venv/bin/python scripts/bench_checkers.py [--device cpu|cuda] [--out FILE.json]
        [--models hhem,roberta-base,modernbert-large,flan-t5-large] [--samples 3]
        [--pairs 32] [--judge-1b] [--skip-judge] [--keep DIR] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from localeval.checker import load_checker, windows  # noqa: E402
from localeval.lang import detect_lang, split_sentences  # noqa: E402
from localeval.testing.tiny_checkers import Kind, build_tiny_checker  # noqa: E402

#: name -> (builder kind, shape, what it stands for)
MODELS: dict[str, tuple[Kind, str, str]] = {
    "hhem": ("hhem", "hhem", "HHEM-2.1-open shape (Flan-T5-base encoder)"),
    "roberta-base": ("roberta", "roberta-base", "RoBERTa-base pair classifier"),
    "modernbert-large": ("modernbert", "modernbert-large", "LettuceDetect-large shape"),
    "flan-t5-large": ("t5", "flan-t5-large", "MiniCheck-Flan-T5-Large shape"),
}
#: Llama-3.2-1B's shape (16 layers, 2048 wide, 32/8 heads, 128,256 tokens), Q8_0
LLAMA_1B = dict(layers=16, embd=2048, heads=32, kv_heads=8, ff=8192, vocab=128256, ctx=8192,
                tie_embeddings=True, dtype="f16", quant="q8_0", pad_tokens="random")


def example_rows() -> list[dict[str, Any]]:
    path = ROOT / "localeval" / "data" / "example.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def sentences(text: str) -> list[str]:
    return split_sentences(text, detect_lang(text)) or [text]


def sample_pairs(checker: Any, row: dict[str, Any]) -> tuple[list[tuple[str, str]], list[int]]:
    """(window, sentence) pairs of one sample and, per pair, its sentence's index."""
    document = "\n\n".join(row["contexts"])
    pairs, owner = [], []
    for i, s in enumerate(sentences(row["answer"])):
        for w in windows(document, s, checker):
            pairs.append((w, s))
            owner.append(i)
    return pairs, owner


def score_sample(checker: Any, row: dict[str, Any]) -> float:
    """The share of the answer's sentences supported (span checker: without spans)."""
    if checker.marks_spans:
        spans = checker.spans(row["contexts"], row["question"], row["answer"])
        return 1.0 if not spans else 0.0
    pairs, owner = sample_pairs(checker, row)
    best: dict[int, float] = {}
    for i, p in zip(owner, checker.support(pairs)):
        best[i] = max(best.get(i, 0.0), p)
    return sum(p > 0.5 for p in best.values()) / max(len(best), 1)


def synced(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def bench_checker(name: str, folder: Path, rows: list[dict[str, Any]],
                  args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    checker = load_checker(folder, device=args.device, batch_size=args.batch_size,
                           dtype=args.dtype)
    load_s = time.perf_counter() - t0
    params = sum(p.numel() for p in checker.model.parameters())
    pairs = [p for r in rows for p in sample_pairs(checker, r)[0]][:args.pairs]
    checker.support(pairs[:2])  # warm up (first call allocates)
    synced(checker.device)
    rates = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        checker.support(pairs)
        synced(checker.device)
        rates.append(len(pairs) / (time.perf_counter() - t0))
    per_sample = []
    for row in rows[:args.samples]:
        t0 = time.perf_counter()
        score_sample(checker, row)
        synced(checker.device)
        per_sample.append(time.perf_counter() - t0)
    tokens = statistics.mean(checker.count_tokens(d) + checker.count_tokens(c)
                             for d, c in pairs)
    out = {"model": name, "stands_for": MODELS[name][2], "family": checker.family,
           "params_m": round(params / 1e6, 1), "device": checker.device,
           "dtype": checker.dtype, "load_s": round(load_s, 1),
           "pairs": len(pairs), "mean_tokens_per_pair": round(tokens),
           "sentences_per_s": round(statistics.median(rates), 2),
           "seconds_per_sample": round(statistics.mean(per_sample), 3)}
    print(f"  {name:17s} {out['params_m']:6.1f}M {out['family']:9s} "
          f"{out['sentences_per_s']:8.2f} sentences/s  {out['seconds_per_sample']:7.3f} s/sample "
          f"(load {out['load_s']} s, {len(pairs)} pairs of ~{out['mean_tokens_per_pair']} tokens)",
          flush=True)
    del checker
    return out


def judge_seconds(path: Path, rows: list[dict[str, Any]], args: argparse.Namespace,
                  label: str) -> dict[str, Any]:
    """Faithfulness of ``rows`` by the in-process GGUF judge at ``path``, per sample."""
    from suite.qwen_shape import qwen_shape_bias

    from localeval.judge import LlamaJudge
    from localeval.run import evaluate

    bias = qwen_shape_bias(path, args.threads)
    judge = LlamaJudge(path, n_threads=args.threads, logit_bias=bias)
    t0 = time.perf_counter()
    res = evaluate(rows, "faithfulness", judge=judge, cache=False, judge_check=False,
                   embedder=False, progress=False)
    wall = time.perf_counter() - t0
    gpu_layers, threads = judge.n_gpu_layers, judge.n_threads
    judge.close()
    usage, n = res.summary["usage"], res.summary["n_samples"]
    out = {"judge": label, "samples": n, "calls": usage.get("calls"),
           "n_gpu_layers": gpu_layers, "threads": threads,
           "generated_tokens_per_sample": round(usage.get("generated_tokens", 0) / n, 1),
           "judge_seconds_per_sample": round(usage.get("seconds", 0.0) / n, 2),
           "wall_seconds_per_sample": round(wall / n, 2)}
    print(f"  {label:30s} {out['judge_seconds_per_sample']:8.2f} s/sample judge time "
          f"({out['calls']} calls, {out['generated_tokens_per_sample']} generated tokens "
          "per sample)", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto (default cpu)")
    ap.add_argument("--dtype", default="float32", help="float32, or bfloat16/float16 on cuda")
    ap.add_argument("--models", default=",".join(MODELS), help="which shapes, comma-separated")
    ap.add_argument("--samples", type=int, default=3, help="example samples timed per model")
    ap.add_argument("--pairs", type=int, default=32, help="pairs in the throughput batch")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=1, help="throughput repeats (median)")
    ap.add_argument("--threads", type=int, default=None, help="torch and llama.cpp threads")
    ap.add_argument("--keep", help="folder to build the checkers in and reuse (default: temp)")
    ap.add_argument("--cache-dir", help="folder of the shared Qwen2-0.5B-shaped GGUF")
    ap.add_argument("--skip-judge", action="store_true", help="no GGUF judge comparison")
    ap.add_argument("--judge-1b", action="store_true", help="also a Llama-3.2-1B-shaped judge")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        ap.error(f"unknown model {unknown[0]!r}; choose from {', '.join(MODELS)}")
    rows = example_rows()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-checkers-"))
    import os

    import torch

    result: dict[str, Any] = {"device": args.device, "dtype": args.dtype,
                              "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                              "samples": args.samples, "checkers": [], "judges": []}
    print(f"checkers ({args.device}, {args.dtype}; random weights: speed only)", flush=True)
    for name in names:
        kind, shape, _ = MODELS[name]
        folder = work / name
        if not (folder / "config.json").is_file():
            t0 = time.perf_counter()
            build_tiny_checker(kind, folder, shape=shape)
            print(f"  built {name} in {time.perf_counter() - t0:.1f} s", flush=True)
        result["checkers"].append(bench_checker(name, folder, rows, args))
        if not args.keep:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)  # a 3 GB folder need not wait
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    if not args.skip_judge:
        from suite.qwen_shape import qwen_shape_path

        print("GGUF judge (in-process llama.cpp), faithfulness on the same samples", flush=True)
        judged = rows[:args.samples]
        result["judges"].append(judge_seconds(qwen_shape_path(None, args.cache_dir), judged,
                                              args, "Qwen2-0.5B shape, Q8_0"))
        if args.judge_1b:
            from localeval.testing import TinyModelSpec, build_tiny_gguf

            path = Path(args.cache_dir or Path(tempfile.gettempdir()) / "localeval-bench") \
                / "llama-1b-shape-q8_0.gguf"
            if not path.exists():
                build_tiny_gguf(path, TinyModelSpec(**LLAMA_1B))
            result["judges"].append(judge_seconds(path, judged, args, "Llama-3.2-1B shape, Q8_0"))
        for j in result["judges"]:
            j["times_slower_than"] = {
                c["model"]: round(j["judge_seconds_per_sample"] / c["seconds_per_sample"], 1)
                for c in result["checkers"] if c["seconds_per_sample"] > 0}
            print(f"  {j['judge']}: x slower than each checker per sample: "
                  f"{j['times_slower_than']}", flush=True)
    if args.out:
        from localeval.output import write_text

        write_text(args.out, json.dumps(result, indent=2))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
