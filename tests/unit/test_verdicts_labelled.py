"""The diff's figures that kept their meaning are unchanged on the labelled sets.

Paired 0/1 scores now take the exact McNemar test and verdicts say what they
could have shown; the means, the mean differences, the number of pairs, the
sample counts and, for graded metrics, the randomization and bootstrap
intervals and p-values mean what they meant before, so they must be the same
numbers. Two versions built from one labelled set (the sets are read from
beside the checkout, never copied; only figures are stored):

- WikiEval: the grounded answer against the ungrounded one of each of its 50
  faithfulness pairs (50 pairs: the randomization test);
- JHARS: gpt-4o's answer against Llama-3.1-Swallow-8B's to each of its 150
  questions (150 pairs: the bootstrap),

scored with ROUGE-L, BLEU (graded) and exact match (0/1). The figures before
(``tests/data/verdicts/labelled_diff_before.json``) were written by the code
before paired 0/1 scores got the exact test (commit 8d2ca5e) with::

    PYTHONPATH=OLD_CHECKOUT .venv/bin/python tests/unit/test_verdicts_labelled.py OUT.json WORKDIR
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

LABELLED = Path(__file__).resolve().parents[3] / "shared" / "data" / "labelled"
BEFORE = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "labelled_diff_before.json"
METRICS = "rougeL,bleu,exact_match"
BINARY = ("exact_match",)  # its p and interval changed meaning (the exact test)
#: set -> (which rows, the variant of version A, of version B)
VERSIONS = {
    "wikieval.jsonl": ("faithfulness", "answer", "ungrounded_answer"),
    "jhars_ja.jsonl": ("faithfulness", "gpt-4o", "Llama-3.1-Swallow-8B-Instruct-v0.1"),
}


def _version(name: str, which: str) -> list[dict[str, Any]]:
    """One version's rows of a labelled set, each id its pair's (so the diff pairs them)."""
    metric = VERSIONS[name][0]
    out = []
    for line in (LABELLED / name).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        variant = r.get("variant") or r["id"][len(r["pair_id"]) + 1:]
        if r["label_metric"] != metric or variant != which:
            continue
        out.append({"id": r["pair_id"], "question": r["question"], "contexts": r["contexts"],
                    "answer": r["answer"],
                    "reference": r.get("reference") or " ".join(r["contexts"])})
    return out


def figures(work: Path) -> dict[str, Any]:
    """Per set and metric: both means, and per estimate its value, n and (graded metrics)
    interval and p; the sample counts."""
    from localeval.cli.app import main

    figs: dict[str, Any] = {}
    for name, (_, a, b) in VERSIONS.items():
        d = work / name.split(".")[0]
        d.mkdir(parents=True, exist_ok=True)
        for tag, which in (("a", a), ("b", b)):
            rows = _version(name, which)
            data = d / f"{tag}.jsonl"
            data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                            encoding="utf-8")
            assert main(["run", str(data), "-m", METRICS, "-o", str(d / f"run_{tag}"),
                         "--no-cache", "--quiet"]) == 0
        assert main(["diff", str(d / "run_a"), str(d / "run_b"), "-o", str(d / "diff"),
                     "--quiet"]) == 0
        diff = json.loads((d / "diff" / "diff.json").read_text(encoding="utf-8"))
        per: dict[str, Any] = {}
        for m in diff["metrics"]:
            keep = ("value", "n") if m["metric"] in BINARY else ("value", "n", "low", "high", "p")
            per[m["metric"]] = {
                "mean_base": m["mean_base"], "mean_new": m["mean_new"],
                "counts": {k: m["counts"][k] for k in ("improved", "worse", "unchanged")},
                "estimates": [{k: e.get(k) for k in keep} for e in m["estimates"]]}
        figs[name] = per
    return figs


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-12)


@pytest.mark.slow
def test_labelled_diff_figures_are_unchanged(tmp_path: Path) -> None:
    """Every stored figure of the diff before equals today's to 1e-12, on both sets."""
    if not LABELLED.is_dir():
        pytest.skip(f"the labelled sets are not beside this checkout ({LABELLED})")
    old = json.loads(BEFORE.read_text(encoding="utf-8"))
    now = figures(tmp_path)
    assert set(now) == set(old)
    for name, metrics in old.items():
        assert set(now[name]) == set(metrics), name
        for metric, o in metrics.items():
            n = now[name][metric]
            for k in ("mean_base", "mean_new"):
                assert _close(o[k], n[k]), (name, metric, k, o[k], n[k])
            assert o["counts"] == n["counts"], (name, metric)
            assert len(o["estimates"]) == len(n["estimates"]), (name, metric)
            for oe, ne in zip(o["estimates"], n["estimates"]):
                for k, v in oe.items():
                    assert _close(v, ne[k]), (name, metric, k, v, ne[k])
    # the stored figures are not empty: both sets, every metric, graded p-values present
    assert all(set(m) == set(METRICS.split(",")) for m in old.values())
    assert all(m["rougeL"]["estimates"][0]["p"] is not None for m in old.values())


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(figures(Path(sys.argv[2])), indent=1) + "\n",
                                 encoding="utf-8")
