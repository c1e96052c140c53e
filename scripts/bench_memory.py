"""Peak memory of ``localeval run`` at scale: many retrieval-only rows, or one very long line.

Generates the data in a temporary folder, runs the CLI in a child process (no
models: retrieval metrics and a text metric need none) and reports the
child's peak resident set size (``resource.getrusage(RUSAGE_CHILDREN)``)
against the data file's size. The figures in docs/performance.md ("Memory at
scale") come from:

    python scripts/bench_memory.py rows --rows 1000000
    python scripts/bench_memory.py long-line --mb 200

``rows``: ``--rows`` samples with 10 retrieved ids and 3 graded relevant ids
each, scored with ``mrr,ndcg@10``. ``long-line``: one sample whose ``contexts``
hold one ``--mb`` MB text, scored with ``mrr`` (which never reads the contexts).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_rows(path: Path, rows: int) -> None:
    """``rows`` retrieval-only samples, written in chunks (the generator stays small)."""
    with path.open("w", encoding="utf-8") as f:
        chunk: list[str] = []
        for i in range(rows):
            chunk.append(json.dumps({
                "id": f"q{i}",
                "retrieved_ids": [f"d{(i * 7 + k) % 5000}" for k in range(10)],
                "relevant_ids": {f"d{(i * 7 + k) % 5000}": 3 - k for k in (0, 3, 11)},
            }))
            if len(chunk) == 10_000:
                f.write("\n".join(chunk) + "\n")
                chunk = []
        if chunk:
            f.write("\n".join(chunk) + "\n")


def write_long_line(path: Path, mb: int) -> None:
    """One sample whose single context is ``mb`` MB of text."""
    text = ("All work and no play makes a long line. " * (mb * 1_000_000 // 40 + 1))[: mb * 1_000_000]
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"id": "long", "question": "q", "answer": "a",
                            "contexts": [text], "retrieved_ids": ["d1", "d2"],
                            "relevant_ids": {"d1": 1}}) + "\n")


def run(data: Path, metrics: str, out: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in MiB) of ``localeval run`` on ``data``."""
    env = {**os.environ, "LOCALEVAL_JUDGE_CHECK": "0"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "localeval.cli", "run", str(data), "-m", metrics,
                           "-o", str(out), "--no-cache", "--quiet"], env=env,
                          capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    return proc.returncode, took, peak_kib / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=["rows", "long-line"])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--mb", type=int, default=50)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="localeval-bench-memory-") as tmp:
        data = Path(tmp) / "data.jsonl"
        if args.case == "rows":
            write_rows(data, args.rows)
            metrics = "mrr,ndcg@10"
        else:
            write_long_line(data, args.mb)
            metrics = "mrr"
        size = data.stat().st_size / 2**20
        code, took, peak = run(data, metrics, Path(tmp) / "out")
    what = f"{args.rows} rows" if args.case == "rows" else f"one {args.mb} MB line"
    print(f"{what}: file {size:.0f} MiB, exit {code}, {took:.1f} s, peak RSS {peak:.0f} MiB "
          f"({peak / 1024:.2f} GiB, {peak / size:.1f}x the file)")
    return code


if __name__ == "__main__":
    sys.exit(main())
