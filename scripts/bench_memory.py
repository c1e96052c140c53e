"""Peak memory of ``localeval run`` at scale: many retrieval-only rows, or one very long line.

Generates the data in a temporary folder (in a child process of its own), runs
the CLI in another child process (no models: retrieval metrics and a text metric
need none) and reports that child's peak resident set size (``os.wait4``)
against the data file's size. The figures in docs/performance.md ("Memory at
scale") come from:

    python scripts/bench_memory.py rows --rows 1000000
    python scripts/bench_memory.py long-line --mb 200
    python scripts/bench_memory.py rows --rows 1000000 --labels 500

``rows``: ``--rows`` samples with 10 retrieved ids and 3 graded relevant ids
each, scored with ``mrr,ndcg@10``. ``long-line``: one sample whose ``contexts``
hold one ``--mb`` MB text, scored with ``mrr`` (which never reads the contexts).
``--labels N`` (``rows``): the same run a second time with ``--labels``, N rows
drawn at random and labelled (``label_mrr``, ``--labels-random-draw``), so the
peak with the corrected estimates can be set beside the plain run's.
"""

from __future__ import annotations

import argparse
import json
import os
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


def write_labels(path: Path, rows: int, n: int) -> None:
    """``n`` of the ``rows`` samples drawn uniformly (seed 0), each with a 0/1 ``label_mrr``."""
    import random

    rng = random.Random(0)
    picked = sorted(rng.sample(range(rows), min(n, rows)))
    path.write_text("id,label_mrr\n" + "".join(f"q{i},{rng.randint(0, 1)}\n" for i in picked),
                    encoding="utf-8")


def run(data: Path, metrics: str, out: Path, *extra: str) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in MiB) of ``localeval run`` on ``data``.

    The peak is this child's own (``os.wait4``), not ``RUSAGE_CHILDREN``'s maximum
    over every child waited for, which would include the data-writing child.
    """
    env = {**os.environ, "LOCALEVAL_JUDGE_CHECK": "0"}
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "localeval.cli", "run", str(data), "-m",
                                 metrics, "-o", str(out), "--no-cache", "--quiet", *extra],
                                env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        took = time.perf_counter() - t0
        if code != 0:
            err.seek(0)
            sys.stderr.write(err.read().decode("utf-8", "replace"))
    return code, took, usage.ru_maxrss / 1024  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=["rows", "long-line"])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--labels", type=int, metavar="N",
                    help="rows: run again with --labels, N rows labelled, and report both")
    ap.add_argument("--write", metavar="FILE", help=argparse.SUPPRESS)  # the data-writing child
    args = ap.parse_args(argv)
    if args.write:
        if args.case == "rows":
            write_rows(Path(args.write), args.rows)
        else:
            write_long_line(Path(args.write), args.mb)
        return 0
    with tempfile.TemporaryDirectory(prefix="localeval-bench-memory-") as tmp:
        data = Path(tmp) / "data.jsonl"
        # The data is written by a child process: a child started by vfork (what
        # subprocess uses) inherits its parent's peak RSS through exec, so a parent that
        # built a 200 MB line itself made every later child report that peak.
        subprocess.run([sys.executable, __file__, "--write", str(data), args.case,
                        "--rows", str(args.rows), "--mb", str(args.mb)], check=True)
        metrics = "mrr,ndcg@10" if args.case == "rows" else "mrr"
        size = data.stat().st_size / 2**20
        code, took, peak = run(data, metrics, Path(tmp) / "out")
        what = f"{args.rows} rows" if args.case == "rows" else f"one {args.mb} MB line"
        print(f"{what}: file {size:.0f} MiB, exit {code}, {took:.1f} s, peak RSS {peak:.0f} MiB "
              f"({peak / 1024:.2f} GiB, {peak / size:.1f}x the file)", flush=True)
        if args.labels and args.case == "rows":
            labels = Path(tmp) / "labels.csv"
            write_labels(labels, args.rows, args.labels)
            lcode, ltook, lpeak = run(data, metrics, Path(tmp) / "out-labels", "--labels",
                                      str(labels), "--labels-random-draw")
            print(f"{what} with --labels ({args.labels} labelled): exit {lcode}, {ltook:.1f} s, "
                  f"peak RSS {lpeak:.0f} MiB ({lpeak / 1024:.2f} GiB, {lpeak - peak:+.0f} MiB "
                  "beside the plain run)")
            code = code or lcode
    return code


if __name__ == "__main__":
    sys.exit(main())
