"""Benchmark a large retrieval-only run end to end: validation, scoring, summary, reports.

    .venv/bin/python scripts/bench_report.py [--rows 100000] [--metrics mrr,ndcg@10]

Builds a retrieval dataset of ``--rows`` queries (generated from a fixed seed
into a temporary folder, never committed: 10 retrieved ids per query, one to
three graded relevant ids, a short question), then measures it twice:

1. **end to end**: ``localeval run DATA -m METRICS -o OUT --no-cache --quiet`` as
   a real subprocess, the wall time a user waits (interpreter start included),
   and the sizes of what it wrote;
2. **per phase**: the same run in this process through ``localeval.evaluate``,
   with the runner's phases timed by wrappers around the functions that do them
   (loading and validation, the summary with its bootstrap CIs, report.html,
   summary.md). "scoring and results.jsonl" is the rest of ``evaluate``.

The phase run does the same work as the subprocess, so its total is close to
the end-to-end figure less the interpreter start and imports. Every figure is
given as wall time and as CPU time (user + system of this process or the
child): the run is single-threaded, so on an idle machine the two agree, and
on a shared one the CPU time is what the run would take alone. ``--repeat N``
keeps the best of N end-to-end runs.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

__all__ = ["make_dataset", "run_cli", "run_phases", "main"]

#: (phase label, module, function): each is wrapped with a timer during the phase run.
#: Report functions are imported inside the runner at call time, so they are patched
#: in their own modules (and in the ``localeval.report`` face, which caches names).
PHASES: list[tuple[str, str, str]] = [
    ("load + validate", "localeval.run.runner", "load_dataset"),
    ("summary (all)", "localeval.run.runner", "build_summary"),
    ("  bootstrap CIs", "localeval.report.summary", "bootstrap_cis"),
    ("reports (all)", "localeval.run.runner", "write_reports"),
    ("  report.html", "localeval.report.html", "write_html_report"),
    ("  summary.md", "localeval.report.markdown", "write_markdown_report"),
]


def make_dataset(path: Path, rows: int, seed: int = 0) -> Path:
    """Write ``rows`` retrieval queries as JSONL: 10 retrieved ids, 1-3 graded relevant ids."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(rows):
            retrieved = [f"doc-{rng.randrange(50_000)}" for _ in range(10)]
            k = rng.choice((1, 2, 3))
            # most queries find some of their relevant documents, some find none
            pool = retrieved if rng.random() < 0.8 else [f"doc-{rng.randrange(50_000)}"
                                                         for _ in range(k)]
            relevant = {d: rng.choice((1, 2, 3)) for d in rng.sample(pool, k)}
            f.write(json.dumps({"id": f"q{i:06d}",
                                "question": f"query {i} about topic {rng.randrange(1000)}",
                                "retrieved_ids": retrieved, "relevant_ids": relevant}) + "\n")
    return path


def _sizes(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}


def run_cli(data: Path, metrics: str, out: Path) -> dict[str, Any]:
    """``localeval run`` as a subprocess: wall seconds, exit code, output sizes."""
    cmd = [sys.executable, "-m", "localeval.cli", "run", str(data), "-m", metrics, "-o", str(out),
           "--no-cache", "--quiet"]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"localeval run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "sizes": _sizes(out), "command": " ".join(cmd[1:])}


@contextlib.contextmanager
def _timed(targets: list[tuple[str, str, str]],
           spent: dict[str, list[float]]) -> Iterator[None]:
    """Wrap each target function with a timer adding [wall, cpu] to ``spent[label]``."""
    undo: list[Callable[[], None]] = []

    def wrap(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*a: Any, **kw: Any) -> Any:
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                acc = spent.setdefault(label, [0.0, 0.0])
                acc[0] += time.perf_counter() - t0
                acc[1] += time.process_time() - c0
        return timed

    try:
        for label, mod_name, attr in targets:
            mod = importlib.import_module(mod_name)
            fn = getattr(mod, attr, None)
            if fn is None:
                print(f"  (no {mod_name}.{attr}: phase '{label.strip()}' not timed)")
                continue
            w = wrap(label, fn)
            holders = [mod]
            face = importlib.import_module(mod_name.rsplit(".", 1)[0])
            if attr in getattr(face, "__all__", ()):
                getattr(face, attr)  # let the lazy face cache the name, then replace it
                holders.append(face)
            for h in holders:
                orig = h.__dict__.get(attr, fn)
                setattr(h, attr, w)
                undo.append(functools.partial(setattr, h, attr, orig))
        yield
    finally:
        for u in reversed(undo):
            u()


def run_phases(data: Path, metrics: str, out: Path) -> dict[str, Any]:
    """The same run through ``localeval.evaluate`` with its phases timed."""
    import localeval

    spent: dict[str, list[float]] = {}
    with _timed(PHASES, spent):
        t0, c0 = time.perf_counter(), time.process_time()
        localeval.evaluate(str(data), metrics=metrics.split(","), out_dir=out, cache=False,
                           progress=False)
        total = [time.perf_counter() - t0, time.process_time() - c0]
    top = ("load + validate", "summary (all)", "reports (all)")
    rest = [total[j] - sum(spent.get(k, [0.0, 0.0])[j] for k in top) for j in (0, 1)]
    phases = {**{k: spent.get(k, [0.0, 0.0]) for k, _, _ in PHASES},
              "scoring + results.jsonl": rest}
    return {"evaluate_s": total, "phases": phases, "sizes": _sizes(out)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--metrics", default="mrr,ndcg@10")
    ap.add_argument("--seed", type=int, default=0, help="dataset generator seed")
    ap.add_argument("--repeat", type=int, default=1, help="end-to-end runs; the best is kept")
    ap.add_argument("--no-phases", action="store_true", help="only the end-to-end run")
    ap.add_argument("--keep", help="write the dataset and outputs here instead of a temp folder")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench_report_") as tmp:
        root = Path(args.keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        data = make_dataset(root / "data.jsonl", args.rows, args.seed)
        print(f"{args.rows:,} rows, {data.stat().st_size / 1e6:.1f} MB, metrics {args.metrics}; "
              f"{platform.python_implementation()} {platform.python_version()}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        runs = [run_cli(data, args.metrics, root / f"out-cli-{i}") for i in range(args.repeat)]
        cli = min(runs, key=lambda r: r["wall_s"])
        print(f"\nend to end: {cli['wall_s']:.1f} s wall, {cli['cpu_s']:.1f} s CPU  "
              f"(python {cli['command']})")
        for name, size in cli["sizes"].items():
            print(f"  {name:<15} {size / 1e6:9.2f} MB")
        result: dict[str, Any] = {"rows": args.rows, "metrics": args.metrics, "cli": cli,
                                  "all_cli_walls": [r["wall_s"] for r in runs]}
        if not args.no_phases:
            ph = run_phases(data, args.metrics, root / "out-phases")
            result["phases"] = ph
            wall, cpu = ph["evaluate_s"]
            print(f"\nper phase (in process, evaluate() {wall:.1f} s wall, {cpu:.1f} s CPU):")
            print(f"  {'':<26} {'wall':>7}   {'CPU':>7}")
            for name, (w, c) in ph["phases"].items():
                print(f"  {name:<26} {w:7.2f} s {c:7.2f} s")
        print(f"\nload average after: {os.getloadavg()[0]:.1f}")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
