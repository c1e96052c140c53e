"""The bundled known-answer probes: contrast pairs whose right ordering is not in doubt.

Each line of ``probes.jsonl`` (written for localeval, en/ja/zh) is one pair:
shared fields (question, contexts, answer, reference) plus a ``good`` and a
``bad`` variant that override some of them. A judge that does its task scores
the good variant strictly better than the bad one on every metric of the
pair's kind (lower, where lower is better); a judge that copies its
examples, answers at random or gives every sample the same score cannot (a
tie counts as a miss).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from localeval.types import Sample

__all__ = ["Probe", "KIND_METRICS", "load_probes", "probes_version", "probes_for"]

#: Which metrics a pair of each kind tests.
KIND_METRICS: dict[str, tuple[str, ...]] = {
    # the answer is supported by the context, or contradicts / invents facts
    "grounding": ("faithfulness", "nv_response_groundedness"),
    # the answer states only the reference's fact, or repeats retrieved facts that
    # do not answer the question: one from the relevant context, one from the
    # irrelevant one, so both modes of noise_sensitivity see a difference
    "noise": ("noise_sensitivity",),
    # the retrieved context answers the question, or is unrelated
    "context": ("context_precision", "context_utilization", "context_recall",
                "context_entity_recall", "context_relevancy", "nv_context_relevance"),
    # the answer matches the reference, or states wrong facts
    "correctness": ("answer_correctness", "nv_answer_accuracy", "factual_correctness"),
    # the answer addresses the question, or is off-topic or evasive
    "relevance": ("answer_relevancy",),
}

_FIELDS = ("question", "contexts", "answer", "reference")


@dataclass(frozen=True)
class Probe:
    """One contrast pair: ``good`` must beat ``bad`` on every metric of ``kind``."""

    id: str
    kind: str
    lang: str
    good: Sample
    bad: Sample


def _text() -> str:
    return resources.files("localeval.judge_check").joinpath("probes.jsonl").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def load_probes() -> tuple[Probe, ...]:
    """Every bundled probe pair, in file order."""
    out = []
    for line in _text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["kind"] not in KIND_METRICS:
            raise ValueError(f"probe {row['id']}: unknown kind {row['kind']!r}")
        base = {k: row[k] for k in _FIELDS if k in row}
        good = Sample(id=f"{row['id']}/good", **{**base, **row["good"]})
        bad = Sample(id=f"{row['id']}/bad", **{**base, **row["bad"]})
        out.append(Probe(row["id"], row["kind"], row["lang"], good, bad))
    return tuple(out)


def probes_version() -> str:
    """Content hash of the probe set: part of the judge check's cache key."""
    return hashlib.sha256(_text().encode("utf-8")).hexdigest()[:12]


def probes_for(metric_name: str, limit: int | None = None) -> list[Probe]:
    """The pairs that test ``metric_name`` (empty for a metric no probe covers).

    ``limit`` takes that many pairs, the languages in turn (en, ja, zh, en, ...),
    so a quick check still covers every language.
    """
    kinds = {k for k, names in KIND_METRICS.items() if metric_name in names}
    chosen = [p for p in load_probes() if p.kind in kinds]
    if limit is None or limit >= len(chosen):
        return chosen
    by_lang: dict[str, list[Probe]] = {}
    for p in chosen:
        by_lang.setdefault(p.lang, []).append(p)
    order = [by_lang[lang] for lang in ("en", "ja", "zh") if lang in by_lang]
    picked: list[Probe] = []
    while len(picked) < limit:
        for queue in order:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    return picked
