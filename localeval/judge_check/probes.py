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
from typing import Any, Callable, Sequence

from localeval.types import Message, MultiTurnSample, Sample, ToolCall

__all__ = ["Probe", "KIND_METRICS", "load_probes", "probes_version", "probes_for", "in_turn"]

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
    # a conversation whose agent reaches the user's goal, or clearly fails it
    "goal": ("agent_goal_accuracy", "agent_goal_accuracy_without_reference",
             "conversation_completeness"),
    # an assistant that answers its reference topics and refuses others, or the reverse
    "topics": ("topic_adherence",),
    # an assistant whose every reply takes up the user's last message, or one that talks past it
    "turns": ("turn_relevancy",),
    # an assistant that uses what the user told it, or asks for it again
    "memory": ("knowledge_retention",),
}

_FIELDS = ("question", "contexts", "answer", "reference")
#: A conversation pair's fields (its variants override ``messages``).
_TURN_FIELDS = ("messages", "reference", "reference_topics")


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
        good, bad = (_sample(f"{row['id']}/{v}", row, row[v]) for v in ("good", "bad"))
        out.append(Probe(row["id"], row["kind"], row["lang"], good, bad))
    return tuple(out)


def _sample(sid: str, row: dict[str, Any], variant: dict[str, Any]) -> Sample:
    """A variant of a pair: a ``Sample``, or a ``MultiTurnSample`` when the pair is a
    conversation (``messages`` of role, content and calls ``{"name", "args"}``)."""
    if "messages" not in row and "messages" not in variant:
        return Sample(id=sid, **{**{k: row[k] for k in _FIELDS if k in row}, **variant})
    fields = {**{k: row[k] for k in _TURN_FIELDS if k in row}, **variant}
    messages = [Message(m["role"], m.get("content", ""),
                        [ToolCall(c["name"], dict(c.get("args", {}))) for c in m["tool_calls"]]
                        if m.get("tool_calls") else None)
                for m in fields.pop("messages")]
    return MultiTurnSample(id=sid, messages=messages, **fields)


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
    return in_turn(chosen, lambda p: ("en", "ja", "zh").index(p.lang), limit)


def in_turn(probes: Sequence[Probe], group: Callable[[Probe], Any],
            limit: int | None) -> list[Probe]:
    """At most ``limit`` of ``probes``, one from each group in turn (groups sorted by
    ``group``'s key, file order within a group), so a short list still covers each."""
    by: dict[Any, list[Probe]] = {}
    for p in probes:
        by.setdefault(group(p), []).append(p)
    queues = [by[k] for k in sorted(by)]
    picked: list[Probe] = []
    while any(queues) and (limit is None or len(picked) < limit):
        for queue in queues:
            if queue and (limit is None or len(picked) < limit):
                picked.append(queue.pop(0))
    return picked
