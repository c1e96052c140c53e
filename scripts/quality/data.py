"""The labelled sets: what each file is, reading it, the seeded draw and ``--limit``.

Kept apart from the scoring so that localeval and the ragas baseline score
exactly the same drawn rows (the draw depends only on the seed and the set).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["METRICS", "ALL_METRICS", "ANCHORS", "ANCHOR_SOURCE", "SetSpec", "SETS",
           "read_set", "binary_label", "choose", "parse_limit", "limit_for"]

#: localeval metrics that stand for each labelled metric of the data.
METRICS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness",),
    "answer_relevancy": ("answer_relevancy",),
    "context_relevance": ("context_relevancy", "nv_context_relevance"),
}

ALL_METRICS = tuple(m for ms in METRICS.values() for m in ms)

#: Published pairwise agreement on WikiEval of the RAGAS paper's gpt-3.5 judge (Table 1).
ANCHORS: dict[tuple[str, str], float] = {
    ("wikieval", "faithfulness"): 0.95,
    ("wikieval", "answer_relevancy"): 0.78,
    ("wikieval", "context_relevance"): 0.70,
}
ANCHOR_SOURCE = "RAGAS paper (arXiv 2309.15217), Table 1, gpt-3.5 judge, all 50 pairs"


@dataclass(frozen=True)
class SetSpec:
    """One labelled file: how its labels are read and which statistics they support."""

    name: str
    file: str
    design: str  # "pairwise" (contrast pairs), "binary" (0/1 labels), "graded" (label in [0, 1])
    lang: str
    title: str


SETS: dict[str, SetSpec] = {s.name: s for s in (
    SetSpec("wikieval", "wikieval.jsonl", "pairwise", "en", "WikiEval (RAGAS paper)"),
    SetSpec("ares", "ares_databricks_human.jsonl", "binary", "en", "ARES Databricks (human 0/1)"),
    SetSpec("msmarco", "msmarco_trulens_ctxrel.jsonl", "pairwise", "en",
            "MS MARCO hard negatives"),
    SetSpec("jhars", "jhars_ja.jsonl", "graded", "ja", "JHARS (Japanese, graded)"),
)}


def read_set(data_dir: str | Path, spec: SetSpec) -> dict[str, list[dict[str, Any]]]:
    """The rows of one labelled file, grouped by ``label_metric`` (file order kept)."""
    path = Path(data_dir) / spec.file
    if not path.is_file():
        raise SystemExit(f"error: {path} not found (--data names the folder holding "
                         f"{', '.join(s.file for s in SETS.values())})")
    out: dict[str, list[dict[str, Any]]] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                out.setdefault(row["label_metric"], []).append(row)
    return out


def binary_label(row: Mapping[str, Any]) -> int:
    """The row's 0/1 label (``label_binary`` where the label is graded)."""
    return int(row.get("label_binary", row["label"]))


def choose(rows: Sequence[Mapping[str, Any]], design: str, limit: int | None, seed: int,
           key: str) -> list[dict[str, Any]]:
    """A seeded subset: ``limit`` whole pairs, or ``limit`` rows stratified by label.

    Pairwise: only complete pairs (one good, one bad row) are eligible; the
    pairs are shuffled and the first ``limit`` kept. Otherwise: half the rows
    (rounded up) from the rarer class where it has that many, the rest from
    the other, so AUC and balanced accuracy are defined on small subsets (both
    are insensitive to class balance; a correlation is not, which the doc
    says). ``key`` (set/metric) varies the draw between tasks. None: all rows.
    """
    import numpy as np

    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
    if design == "pairwise":
        pairs: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            pairs.setdefault(str(r["pair_id"]), []).append(dict(r))
        ok = sorted(p for p, rs in pairs.items()
                    if len(rs) == 2 and sorted(binary_label(r) for r in rs) == [0, 1])
        picked = [ok[i] for i in rng.permutation(len(ok))][:limit] if limit else ok
        return [r for p in sorted(picked) for r in pairs[p]]
    if not limit or limit >= len(rows):
        return [dict(r) for r in rows]
    by = {c: [dict(r) for r in rows if binary_label(r) == c] for c in (0, 1)}
    for c in by:
        by[c] = [by[c][i] for i in rng.permutation(len(by[c]))]
    rare, common = sorted(by, key=lambda c: len(by[c]))
    n_rare = min(len(by[rare]), (limit + 1) // 2)
    picked = by[rare][:n_rare] + by[common][:limit - n_rare]
    order = {r["id"]: i for i, r in enumerate(rows)}
    return sorted(picked, key=lambda r: order[r["id"]])


def parse_limit(text: str | int) -> dict[str, int]:
    """``--limit``: "N", or "N,KEY=M,...", KEY a set or a labelled metric; {"": N, KEY: M}.

    Faithfulness costs a small judge minutes a row (two long generations)
    while a context rating takes seconds, so one cap rarely fits all.
    """
    out: dict[str, int] = {}
    for part in str(text).split(","):
        key, _, n = part.strip().rpartition("=")
        if key and key not in SETS and key not in METRICS:
            raise SystemExit(f"error: --limit key {key!r} is not a set ({', '.join(SETS)}) "
                             f"or a labelled metric ({', '.join(METRICS)})")
        try:
            out[key] = int(n)
        except ValueError:
            raise SystemExit(f"error: --limit wants N or N,KEY=M,... (got {text!r})") from None
        if out[key] < 0:
            raise SystemExit("error: --limit values must be >= 0")
    out.setdefault("", 0)
    return out


def limit_for(limits: Mapping[str, int], set_name: str, label_metric: str) -> int | None:
    """The cap of one task: its labelled metric's, else its set's, else the default (0: all)."""
    n = limits.get(label_metric, limits.get(set_name, limits.get("", 0)))
    return n or None
