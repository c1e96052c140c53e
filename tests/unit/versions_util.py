"""Shared builders for the version-diff tests: the bundled example, a degraded copy, runs."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

from localeval.cli.app import example_path, main

#: Example ids whose answers the degraded copy replaces: eight of the 40, so that the
#: paired randomization test (what the diff uses below 100 pairs) can show the loss
#: (with 5 changed pairs its smallest two-sided p is 2/2^5 = 0.0625).
DEGRADED = ("en-02", "en-05", "en-08", "en-11", "en-14", "en-17", "en-20", "ja-03")
BAD_ANSWER = "I do not know; please ask someone else."


def example_rows() -> list[dict]:
    return [json.loads(ln) for ln in Path(example_path()).read_text(encoding="utf-8").splitlines()
            if ln.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def degraded_copy(path: Path, *, keep_ids: bool = False) -> Path:
    """The example with DEGRADED answers replaced; ids dropped unless ``keep_ids``."""
    rows = []
    for r in example_rows():
        if r["id"] in DEGRADED:
            r["answer"] = BAD_ANSWER
        if not keep_ids:
            r.pop("id")
        rows.append(r)
    return write_jsonl(path, rows)


def run(data: Path | str, out: Path, metrics: str = "bleu,rougeL") -> Path:
    assert main(["run", str(data), "-m", metrics, "-o", str(out), "--quiet"]) == 0
    return out


def ragas_export(run_dir: Path, data: Path, out: Path, seed: int = 7) -> Path:
    """A RAGAS ``to_pandas().to_csv()`` export of a run: shuffled, re-indexed, no ids."""
    rows = [json.loads(ln) for ln in (data).read_text(encoding="utf-8").splitlines() if ln]
    res = [json.loads(ln) for ln in (run_dir / "results.jsonl").read_text().splitlines() if ln]
    table = []
    for r, s in zip(rows, res):
        table.append({"user_input": r["question"], "retrieved_contexts": str(r["contexts"]),
                      "response": r["answer"], "reference": r.get("reference", ""),
                      **{k: "" if v is None else repr(v) for k, v in s["scores"].items()}})
    random.Random(seed).shuffle(table)
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        cols = list(table[0])
        w.writerow(["", *cols])  # the index column pandas writes
        for i, t in enumerate(table):
            w.writerow([i, *(t[c] for c in cols)])
    return out
