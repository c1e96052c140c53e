"""Benchmark ``localeval history`` over a large history: the time to write the page, its size.

    .venv/bin/python scripts/bench_history.py [--runs 1000] [--repeat 3] [--keep DIR]

Writes ``--runs`` synthetic run folders into a temporary folder (summary.json
only, in the shape ``localeval run`` writes: six metrics with means, 95%
intervals and counts, the signature with its dataset and test-set hashes, a
name and tags, a start time an hour apart), over three test sets, with the
judge changed every 150 runs and the prompts once, and a few damaged
summaries. Then it runs ``localeval history DIR -o PAGE`` as a subprocess (the
wall time a user waits, interpreter start included) and reports the wall and
CPU time (user + system of the child: on a shared machine, what it would take
alone; ``--repeat N`` keeps the best of N) and the page's size. Targets: under
10 s on 2 cores and under 5 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCALEVAL = [sys.executable, "-m", "localeval.cli"]
METRICS = {"faithfulness": 0.82, "answer_relevancy": 0.77, "rougeL": 0.54, "bleu": 0.34,
           "hit_rate": 0.9, "mrr": 0.83}
JUDGED = ("faithfulness", "answer_relevancy")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def synthetic_summary(i: int, n: int, rng: random.Random, start: datetime) -> dict:
    """Run ``i`` of ``n``'s summary.json, shaped as ``localeval run`` writes it (also used by
    scripts/history_screenshot.py)."""
    version = i * 3 // n
    rows = (40, 60, 80)[version]
    judge = ("qwen2.5-7b-instruct-q4_k_m" if (i * 20 // (3 * n)) % 2 == 0
             else "llama-3.1-8b-q4_k_m")  # changed every 150 runs of 1,000
    prompts_hash = _hash("prompts-1" if i < n // 2 else "prompts-2")
    metrics = {}
    for key, base in METRICS.items():
        drift = 0.05 * i / n + (0.04 if key in JUDGED and "llama" in judge else 0.0)
        mean = min(1.0, max(0.0, base + drift - 0.03 * version + rng.gauss(0, 0.02)))
        half = 0.1 * rng.uniform(0.7, 1.3)
        unscored = rng.choice((0, 0, 0, 1, 2)) if key in JUDGED else 0
        metrics[key] = {"mean": mean, "ci95": [max(0.0, mean - half), min(1.0, mean + half)],
                        "n": rows - unscored, "unscored": unscored}
    sig = {"localeval": "0.1.0", "judge": judge, "judge_fingerprint": _hash(judge),
           "embedder": "bge-small-en-v1.5", "embedder_fingerprint": _hash("bge"),
           "prompts": {"faithfulness.statements": prompts_hash[:12]},
           "prompts_hash": prompts_hash, "seed": 0, "verdicts": "hard", "lang": "auto",
           "repeats": 1, "dataset_hash": _hash(f"data-{i}"),
           "testset_hash": _hash(f"testset-{version}"), "dataset_rows": rows}
    return {"metrics": metrics, "n_samples": rows, "signature": sig,
            "signature_line": f"judge:{judge}@{_hash(judge)[:12]}|data:{sig['dataset_hash'][:12]}",
            "run": {"started": (start + timedelta(hours=i)).isoformat(timespec="seconds")
                    .replace("+00:00", "Z"), "data": f"data/v{version}.jsonl",
                    "name": f"nightly-{i:04d}", "tags": {"branch": "main", "pr": str(i)}},
            "usage": {"calls": rows * 8, "prompt_tokens": rows * 9000, "seconds": rows * 2.5}}


def write_runs(top: Path, n: int) -> None:
    """``n`` run folders under ``top``; every 200th summary damaged."""
    rng = random.Random(0)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for i in range(n):
        d = top / f"run-{i:04d}"
        d.mkdir(parents=True, exist_ok=True)
        text = ("{cut short" if i % 200 == 199 else
                json.dumps(synthetic_summary(i, n, rng, start), indent=2))
        (d / "summary.json").write_text(text, encoding="utf-8")


def time_history(top: Path, page: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``localeval history`` subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([*LOCALEVAL, "history", str(top), "-o", str(page)], check=True,
                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1, help="keep the best of N timings")
    ap.add_argument("--keep", metavar="DIR", help="write the runs and page here, not a temp dir")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        base = Path(a.keep) if a.keep else Path(tmp)
        top, page = base / "runs", base / "history.html"
        t0 = time.perf_counter()
        write_runs(top, a.runs)
        print(f"wrote {a.runs} run folders in {time.perf_counter() - t0:.1f} s")
        times = [time_history(top, page) for _ in range(max(1, a.repeat))]
        wall, cpu = min(times)
        size = page.stat().st_size
        print(f"localeval history over {a.runs} runs: {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"(best of {len(times)}); page {size / 1e6:.2f} MB ({size} bytes); "
              f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        ok = wall < 10 and size < 5e6
        print("targets (< 10 s, < 5 MB):", "met" if ok else "NOT met")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
