"""Real-data check of the corrected estimate on the 200 ARES context-relevance rows.

Scores the rows (human 0/1 labels in ``../shared/data/labelled``; the data is
read from there, never copied) with a judge, then draws 200 random label
subsets of n = 30 and counts how often the corrected 95% interval covers the
mean of all 200 human labels (and how wide it is beside labels alone):

    .venv/bin/python scripts/estimate_ares.py --judge oracle --out /tmp/ares-oracle
    .venv/bin/python scripts/estimate_ares.py --judge demo --out /tmp/ares-demo

``--judge oracle`` is localeval.testing's rule-based OracleJudge; ``demo`` the
SmolLM2-135M demo judge (seconds a row: the run folder is reused when present).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "labelled"))
    ap.add_argument("--judge", default="oracle")
    ap.add_argument("--metric", default="nv_context_relevance")
    ap.add_argument("--out", required=True, help="run folder (reused when it holds results)")
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--subsets", type=int, default=200)
    a = ap.parse_args()
    import localeval
    from localeval.resultsets import load_result_set
    from localeval.estimate import corrected_mean, labels_only

    rows = [json.loads(x) for x in open(Path(a.data) / "ares_databricks_human.jsonl",
                                        encoding="utf-8")]
    rows = [r for r in rows if r["label_metric"] == "context_relevance"]
    if not (Path(a.out) / "summary.json").is_file():
        judge = a.judge
        if judge == "oracle":
            from localeval.testing import OracleJudge
            judge = OracleJudge()
        data = [{k: r[k] for k in ("id", "question", "contexts", "answer")} for r in rows]
        localeval.evaluate(data, [a.metric], judge=judge, embedder=False, lang="en",
                           out_dir=a.out, progress=False, judge_check=False)
    rs = load_result_set(a.out)
    f = np.array([rs[r["id"]][a.metric] for r in rows], dtype=float)
    y = np.array([r["label"] for r in rows], dtype=float)
    truth = y.mean()
    rng = np.random.default_rng(0)
    cov = {"labels only": 0, "corrected": 0}
    width = {"labels only": [], "corrected": []}
    for _ in range(a.subsets):
        idx = rng.choice(len(y), a.n, replace=False)
        for name, e in (("labels only", labels_only(y[idx])),
                        ("corrected", corrected_mean(f, y[idx], idx))):
            cov[name] += e.low <= truth <= e.high
            width[name].append(e.high - e.low)
    print(f"judge {a.judge}, {a.metric}: judge mean {f.mean():.3f}, human mean {truth:.3f}, "
          f"corr(judge, human) {np.corrcoef(f, y)[0, 1]:.2f}")
    for name in cov:
        print(f"  {name}: covers {cov[name] / a.subsets:.1%} of {a.subsets} subsets of "
              f"n={a.n}, mean width {np.mean(width[name]):.3f}")


if __name__ == "__main__":
    main()
