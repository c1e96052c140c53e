"""The loop a generated test set feeds, as a user runs it: two pipelines, then the commands.

``oracle`` and ``bad`` are pipeline functions for ``localeval answer --pipeline
scripts/generate_loop.py:oracle`` (this file imports only the standard library, so
``answer`` loads it as it would a user's file); ``run_loop`` answers a test set with
both, then runs ``localeval run``, ``diff`` and ``retrieval`` (each pipeline's
retrieved ids written as a TREC run) through the command line, for
``bench_generate.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["oracle", "bad", "run_loop", "write_trec_run", "print_loop", "CHUNKS_ENV"]

#: The bad pipeline reads its unrelated chunks from this file (set by ``run_loop``).
CHUNKS_ENV = "LOCALEVAL_BENCH_CHUNKS"
#: What ``localeval retrieval`` scores the two TREC runs on.
RETRIEVAL_METRICS = "hit_rate@5,mrr,recall@5,ndcg@10"


def oracle(question: str, row: dict[str, Any]) -> dict[str, Any]:
    """The perfect pipeline: the reference as the answer, its chunks as retrieved.

    It scores the ceiling of every metric, so a figure under 1 on a metric that
    compares with the reference is the judge's or the plumbing's, not the pipeline's.
    """
    return {"answer": row["reference"], "contexts": list(row["reference_contexts"]),
            "retrieved_ids": list(row["reference_context_ids"])}


def bad(question: str, row: dict[str, Any]) -> dict[str, Any]:
    """A confidently wrong pipeline: a chunk of another document and its first sentence.

    The floor the oracle is compared with: a metric that does not score it clearly
    below the oracle cannot tell a broken pipeline from a working one.
    """
    sources = set(row.get("source_doc_ids") or ())
    pick = next((c for c in reversed(_chunks(os.environ.get(CHUNKS_ENV)))
                 if c.get("doc_id") not in sources),
                {"id": "unrelated#0", "text": "The cafeteria opens at noon on Sundays."})
    first = pick["text"].split(". ")[0].rstrip(".") + "."
    return {"answer": first, "contexts": [pick["text"]], "retrieved_ids": [pick["id"]]}


@lru_cache(maxsize=2)
def _chunks(path: str | None) -> tuple[dict[str, Any], ...]:
    """The chunks file, read once per process (``bad`` is called once per row)."""
    return tuple(_rows(Path(path))) if path else ()


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """One ``localeval`` command as a user types it; its seconds and stdout (stops on failure)."""
    exe = Path(sys.executable).with_name("localeval")
    t = time.perf_counter()
    done = subprocess.run([str(exe), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if done.returncode != 0:
        raise SystemExit(f"localeval {' '.join(args)} failed ({done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    return time.perf_counter() - t, done.stdout


def write_trec_run(filled: Path, out: Path, tag: str) -> Path:
    """A filled test set's ``retrieved_ids`` as a TREC run (``qid Q0 docid rank score tag``)."""
    with out.open("w", encoding="utf-8") as f:
        for r in _rows(filled):
            for i, doc in enumerate(r.get("retrieved_ids") or []):
                f.write(f"{r['id']} Q0 {doc} {i + 1} {1 / (i + 1):.6f} {tag}\n")
    return out


def run_loop(testset: Path, work: Path, *, judge: str, metrics: str, cache: Path,
             judge_check: bool = True) -> dict[str, Any]:
    """answer (oracle, bad) -> run -> diff -> retrieval, each through the command line.

    ``localeval run`` is given ``--columns relevant_ids=reference_context_ids``: a
    generated row names its chunks there, and run's retrieval metrics read
    ``relevant_ids`` (naming the column keeps the loop working whether or not the
    data reader takes ``reference_context_ids`` as ``relevant_ids`` by itself).
    """
    env = {CHUNKS_ENV: str(testset / "chunks.jsonl")}
    me = Path(__file__).resolve()
    times: dict[str, float] = {}
    out: dict[str, Any] = {"metrics": {}, "retrieval": {}}
    for name in ("oracle", "bad"):
        filled = work / f"{name}.jsonl"
        times[f"answer {name}"], _ = _cli("answer", str(testset / "testset.jsonl"), "--pipeline",
                                          f"{me}:{name}", "-o", str(filled), "--no-cache",
                                          "--quiet", env=env)
        run_args = ["run", str(filled), "-m", metrics, "--judge", judge,
                    "--columns", "relevant_ids=reference_context_ids", "-o",
                    str(work / f"run_{name}"), "--cache", str(cache), "--quiet"]
        if not judge_check:
            run_args.append("--no-judge-check")
        times[f"run {name}"], _ = _cli(*run_args)
        summary = json.loads((work / f"run_{name}" / "summary.json").read_text(encoding="utf-8"))
        out["metrics"][name] = {m: {"mean": v.get("mean"), "n": v.get("n"),
                                    "unscored": v.get("unscored")}
                                for m, v in summary["metrics"].items()}
        trec = write_trec_run(filled, work / f"{name}.trec", name)
        times[f"retrieval {name}"], text = _cli("retrieval", str(trec),
                                                str(testset / "qrels.txt"), "-m", RETRIEVAL_METRICS,
                                                "--json")
        out["retrieval"][name] = {m: v["mean"] for m, v in json.loads(text)["metrics"].items()}
    times["diff"], _ = _cli("diff", str(work / "run_oracle"), str(work / "run_bad"), "-o",
                            str(work / "diff"), "--json")
    diff = json.loads((work / "diff" / "diff.json").read_text(encoding="utf-8"))
    out["diff"] = {m["metric"]: _estimate(m) for m in diff.get("metrics", [])}
    out["seconds"] = times
    return out


def _estimate(m: dict[str, Any]) -> dict[str, Any]:
    """A diff metric's paired difference (new - base), its interval and verdict."""
    e = (m.get("estimates") or [{}])[0]
    return {"delta": e.get("value"), "low": e.get("low"), "high": e.get("high"),
            "verdict": e.get("verdict"), "n": e.get("n")}


def print_loop(loop: dict[str, Any]) -> None:
    """The two pipelines side by side: run's means, diff's verdicts, retrieval's means."""
    names = sorted({m for v in loop["metrics"].values() for m in v})
    print(f"\n  {'metric (localeval run)':24s} {'oracle':>8s} {'bad':>8s}   diff (bad - oracle)")
    for m in names:
        cells = []
        for side in ("oracle", "bad"):
            v = loop["metrics"][side].get(m, {})
            mean = v.get("mean")
            cells.append(f"{mean:8.3f}" if mean is not None else f"{'-':>8s}")
            if v.get("unscored"):
                cells[-1] += f" ({v['unscored']} unscored)"
        d = loop["diff"].get(m) or {}
        delta = "" if d.get("delta") is None else f"{d['delta']:+.3f} " + (
            f"[{d['low']:+.3f}, {d['high']:+.3f}] " if d.get("low") is not None else
            "(no interval) ") + str(d.get("verdict"))
        print(f"  {m:24s} {cells[0]} {cells[1]}   {delta}")
    print(f"\n  {'metric (localeval retrieval)':28s} {'oracle':>8s} {'bad':>8s}")
    for m, v in loop["retrieval"]["oracle"].items():
        print(f"  {m:28s} {v:8.3f} {loop['retrieval']['bad'][m]:8.3f}")
    print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in loop["seconds"].items()))
