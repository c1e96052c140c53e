"""Figures of ``estimate`` and ``validate`` on the labelled sets beside the checkout, with
ROUGE-L as the judge and the sets' own labels, for tests/unit/test_predecessor_outputs.py.

The sets are not copied into the repository: they are read from ``LABELLED``
(``../shared/data/labelled`` beside the checkout) and only the figures are kept.
``tests/data/predecessor/labelled_figures.json`` was written by the previous
release's code with::

    PYTHONPATH=OLD_CHECKOUT .venv/bin/python tests/unit/labelled_figures.py OUT.json WORKDIR
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

LABELLED = Path(__file__).resolve().parents[3] / "shared" / "data" / "labelled"
SETS = ("wikieval.jsonl", "ares_databricks_human.jsonl", "jhars_ja.jsonl")


def _rows(name: str) -> list[dict[str, Any]]:
    out = []
    for line in (LABELLED / name).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["label_metric"] != "faithfulness" or r.get("answer") is None:
            continue
        out.append({"id": r["id"], "question": r["question"], "contexts": r["contexts"],
                    "answer": r["answer"], "reference": r.get("reference") or " ".join(
                        r["contexts"]), "y": r.get("label_binary", r["label"])})
    return out


def figures(work: Path) -> dict[str, Any]:
    """Per set: a run scored with rougeL and bleu, an estimate from 40 labels drawn at
    random (seed 7), and a validation against every label."""
    from localeval.cli.app import main

    figs = {}
    for name in SETS:
        rs = _rows(name)
        d = work / name.split(".")[0]
        d.mkdir(parents=True, exist_ok=True)
        data = d / "data.jsonl"
        data.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "y"},
                                           ensure_ascii=False) + "\n" for r in rs),
                        encoding="utf-8")
        run = d / "run"
        assert main(["run", str(data), "-m", "rougeL,bleu", "-o", str(run), "--no-cache",
                     "--quiet"]) == 0
        pick = random.Random(7).sample(range(len(rs)), 40)
        lab = d / "labels.csv"
        lab.write_text("id,label_rougeL\n" + "".join(f"{rs[i]['id']},{rs[i]['y']}\n"
                                                     for i in pick), encoding="utf-8")
        hum = d / "human.csv"
        hum.write_text("id,human_rougeL\n" + "".join(f"{r['id']},{r['y']}\n" for r in rs),
                       encoding="utf-8")
        assert main(["estimate", str(run), str(lab), "--random-draw", "-o", str(d / "est")]) == 0
        main(["validate", str(run), str(hum), "-o", str(d / "val")])
        est = json.loads((d / "est" / "estimate.json").read_text(encoding="utf-8"))
        val = json.loads((d / "val" / "validation.json").read_text(encoding="utf-8"))
        figs[name] = {"estimate": {k: est["metrics"][0][k] for k in (
            "judge_only", "labels_only", "corrected", "judge_bias", "judge_worth_labels")},
            "validate": val["human_agreement"]["rougeL"]["stats"]}
    return figs


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(figures(Path(sys.argv[2])), indent=1),
                                 encoding="utf-8")
