"""Are the figures every view of a run shows the same from two checkouts of localeval?

A refactor of how finished runs are read (the run record) must not move a number.
This runs the bundled example twice (``v1``, and ``v2`` with soft verdicts) with the
demo judge from each checkout, over one judge cache (the second checkout answers from
it), then ``runs --json``, ``diff``, ``history`` and ``report``, and compares every
figure: summary.json (less usage, which counts cache hits), summary.md, the numbers of
report.html and of the history page, every number of diff.json, and the values of
``runs --json`` (less the keys a newer checkout adds).

    python scripts/views_before_after.py OLD_CHECKOUT NEW_CHECKOUT [WORK_FOLDER]

OLD_CHECKOUT is e.g. ``git worktree add /tmp/old <commit>``; each checkout's package
is put first on PYTHONPATH and run with this environment's interpreter.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

METRICS = ("faithfulness,answer_relevancy,nv_answer_accuracy,rougeL,bleu,hit_rate,mrr,"
           "answer_similarity")


def run_views(root: Path, out: Path, cache: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    cli = [sys.executable, "-m", "localeval.cli"]
    common = ["--judge", "demo", "-m", METRICS, "--sample", "3", "--judge-check-pairs", "1",
              "--cache", str(cache)]
    steps = [["run", "example", *common, "-o", "runs/v1", "--name", "v1"],
             ["run", "example", *common, "--verdicts", "soft", "-o", "runs/v2", "--name", "v2"],
             ["diff", "runs/v1", "runs/v2", "-o", "diff"],
             ["history", "runs", "-o", "history.html"],
             ["report", "runs/v1"]]
    for step in steps:
        subprocess.run([*cli, *step], cwd=out, env=env, check=True, capture_output=True)
    runs = subprocess.run([*cli, "runs", "runs", "--json"], cwd=out, env=env, check=True,
                          capture_output=True, text=True).stdout
    (out / "runs.json").write_text(runs)


def numbers(x: object, path: str = "") -> dict[str, float]:
    if isinstance(x, dict):
        return {k: v for key, val in x.items() for k, v in numbers(val, f"{path}.{key}").items()}
    if isinstance(x, list):
        return {k: v for i, val in enumerate(x) for k, v in numbers(val, f"{path}[{i}]").items()}
    return {path: x} if isinstance(x, (int, float)) and not isinstance(x, bool) else {}


def figures(text: str) -> list[str]:
    return sorted(re.findall(r"\b\d\.\d{3,4}\b", text))


def compare(a: Path, b: Path) -> list[str]:
    bad = []
    for v in ("v1", "v2"):
        sa, sb = (json.loads((d / "runs" / v / "summary.json").read_text()) for d in (a, b))
        for k in set(sa) | set(sb):
            if k not in ("run", "usage", "judge_check") and sa.get(k) != sb.get(k):
                bad.append(f"{v}: summary.json '{k}' differs")
        if numbers(sa.get("judge_check", {}).get("metrics")) != numbers(
                sb.get("judge_check", {}).get("metrics")):
            bad.append(f"{v}: the judge check's figures differ")
    if (a / "runs/v1/summary.md").read_text() != (b / "runs/v1/summary.md").read_text():
        bad.append("summary.md differs")
    for page in ("runs/v1/report.html", "history.html"):
        if figures((a / page).read_text()) != figures((b / page).read_text()):
            bad.append(f"{page}: figures differ")
    if numbers(json.loads((a / "diff/diff.json").read_text())) != numbers(
            json.loads((b / "diff/diff.json").read_text())):
        bad.append("diff.json: numbers differ")
    ra, rb = (json.loads((d / "runs.json").read_text())["runs"] for d in (a, b))
    for x, y in zip(ra, rb):
        for k, v in x.items():
            if k in ("folder", "started"):
                continue
            if k == "metrics":
                for m, entry in v.items():
                    if any(entry[f] != y[k][m].get(f) for f in entry):
                        bad.append(f"runs --json: {x['name']} {m} differs")
            elif v != y.get(k):
                bad.append(f"runs --json: {x['name']} '{k}' differs")
    return bad


def main() -> int:
    old, new = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    work = Path(sys.argv[3] if len(sys.argv) > 3 else "views-before-after").resolve()
    cache = work / "judge-cache.sqlite"
    for name, root in (("old", old), ("new", new)):
        run_views(root, work / name, cache)
    bad = compare(work / "old", work / "new")
    print("\n".join(bad) or "every figure of run, runs, diff, history and report is equal")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
