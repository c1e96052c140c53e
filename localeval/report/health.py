"""Judge health: did the judge do the task? Measured on every run, said in plain words.

A judge's output parses by construction (the grammar), so parsing proves
nothing. What can be checked from the run itself:

- **copying**: replies that reproduce the prompt's few-shot example (counted by
  ``metrics.Judging.ask``, which retries them without the example);
- **unscored share**: judge scores that could not be given, by reason;
- **extracted nothing**: non-empty texts (answers, references) from which the
  judge extracted no statement, claim or entity: a failed call, never a score;
- **near-constant metrics**: one value for at least 90% of the samples while the
  samples differ (a judge that scores everything 0.5 is not measuring);
- **fixed choices**: a choice the judge makes that should follow the data but
  does not: the same number of selected sentences whatever the contexts hold,
  the noncommittal flag on nearly every answer. Such output passes every other
  check (a copied ``[1]`` is a valid selection), so it is checked on its own;
- **duplicates**: repeated items the judge produced (statements merged before
  verdicts, the same question generated several times, entities not in the text);
- **judge check**: the judge's result on the known-answer probes (``judge_check``).

Scores decided without the judge (an empty answer, reference or contexts,
``metrics.decide_empty``) say nothing about the judge: they are counted
(``decided_without_judge``) and left out of every other figure.

Each finding that makes the scores doubtful becomes one warning sentence; the
terminal, ``summary.md`` and ``report.html`` show them as a banner.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from localeval.metrics import DECIDED, EXTRACTED_NOTHING
from localeval.types import Sample, Score

__all__ = ["judge_health", "health_line", "CONSTANT_SHARE", "COPY_WARN", "UNSCORED_WARN"]

#: A metric is near-constant when this share of its scores is one value.
CONSTANT_SHARE = 0.9
#: ... judged only with at least this many scored samples.
CONSTANT_MIN_N = 5
#: Warn when this share of judge calls copied the prompt's example.
COPY_WARN = 0.05
#: Warn when this share of judge-metric scores is unscored.
UNSCORED_WARN = 0.2

# Detail keys (metrics' working) that count items a judge repeated or invented.
_DUPLICATE_KEYS = ("duplicates_merged", "repeated_selections")
_DROPPED_KEYS = ("dropped",)
# Detail keys holding a choice the judge makes per sample: key -> how to read it.
# "selected" (a list of chosen item numbers) is read as its length, the judge's
# choice of how many; "generated" (answer_relevancy's questions) as whether any
# of them carries the noncommittal flag.
_CHOICE_KEYS: dict[str, str] = {"selected": "count", "generated": "noncommittal"}


def _read_choice(kind: str, value: Any) -> Any:
    if kind == "count":
        return len(value) if isinstance(value, (list, tuple)) else None
    if isinstance(value, (list, tuple)):
        return any(isinstance(g, Mapping) and g.get(kind) for g in value)
    return None


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _constant(values: Sequence[float]) -> tuple[float, float] | None:
    """(value, share) of the most common value when it reaches CONSTANT_SHARE."""
    if len(values) < CONSTANT_MIN_N:
        return None
    value, count = Counter(round(v, 6) for v in values).most_common(1)[0]
    share = count / len(values)
    return (value, share) if share >= CONSTANT_SHARE else None


def _count(details: Mapping[str, Any], keys: Sequence[str]) -> int:
    total = 0
    for k in keys:
        v = details.get(k)
        total += len(v) if isinstance(v, (list, tuple)) else int(v or 0)
    return total


def _fixed_choice(metric: str, scores: Sequence[Score]) -> dict[str, Any] | None:
    """A judge choice (see ``_CHOICE_KEYS``) that is one value on >= CONSTANT_SHARE of samples.

    For a count, only when the number of candidates differs between samples
    (picking 1 of 1 sentence every time is not suspicious).
    """
    for key, kind in _CHOICE_KEYS.items():
        values = [_read_choice(kind, sc.details[key]) for sc in scores if key in sc.details]
        values = [v for v in values if v is not None]
        if len(values) < CONSTANT_MIN_N:
            continue
        value, n = Counter(values).most_common(1)[0]
        if n / len(values) < CONSTANT_SHARE:
            continue
        if kind != "count" and not value:
            continue  # a flag that is almost never set is the normal case
        if kind == "count":
            pools = {sc.details.get("context_sentences") for sc in scores if key in sc.details}
            if len(pools) < 2:
                continue
        return {"metric": metric, "choice": key, "value": value,
                "share": round(n / len(values), 4), "n": len(values)}
    return None


def judge_health(judge_metrics: Sequence[str], samples: Sequence[Sample],
                 scores: Sequence[Mapping[str, Score]], usage: Mapping[str, Any],
                 judge_check: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``summary.json``'s ``judge_health`` for the judge metrics ``judge_metrics``.

    ``samples`` and ``scores`` are parallel (one mapping per finished sample);
    ``usage`` is the run's judge usage (``Usage.to_dict()``); ``judge_check`` the
    judge check result (``JudgeCheckResult.to_dict()``), if one ran: its verdict
    can add a warning; the record itself is ``summary["judge_check"]``, not here.
    """
    calls = int(usage.get("calls") or 0)
    copied = int(usage.get("copied_calls") or 0)
    copy_failed = int(usage.get("copy_failures") or 0)
    out: dict[str, Any] = {
        "judge_calls": calls,
        "copied_calls": copied,
        "copy_rate": round(copied / calls, 4) if calls else 0.0,
        "copy_unscored": copy_failed,
    }
    unscored: Counter[str] = Counter()
    per_metric_unscored: dict[str, int] = {}
    total = 0
    constant: list[dict[str, Any]] = []
    fixed_choices: list[dict[str, Any]] = []
    duplicates = dropped = decided = 0
    extracted: dict[tuple[int, str], int] = {}  # (sample, source) -> scores it left unscored
    for key in judge_metrics:
        col = [(i, s, sc[key]) for i, (s, sc) in enumerate(zip(samples, scores)) if key in sc]
        decided += sum(1 for _, _, sc in col if DECIDED in sc.details)
        for i, _, sc in col:
            source = sc.details.get(EXTRACTED_NOTHING)
            if source:
                extracted[(i, source)] = extracted.get((i, source), 0) + 1
        judged = [(s, sc) for _, s, sc in col if DECIDED not in sc.details]
        total += len(judged)
        misses = [sc.reason or "unscored" for _, sc in judged if sc.value is None]
        unscored.update(misses)
        if misses:
            per_metric_unscored[key] = len(misses)
        scored = [(s, sc.value) for s, sc in judged if sc.value is not None]
        inputs = {(s.question, s.answer, tuple(s.contexts or ()), s.reference) for s, _ in scored}
        hit = _constant([v for _, v in scored]) if len(inputs) > 1 else None
        if hit is not None:
            constant.append({"metric": key, "value": hit[0], "share": round(hit[1], 4),
                             "n": len(scored)})
        fixed = _fixed_choice(key, [sc for _, sc in judged if sc.value is not None])
        if fixed is not None and len(inputs) > 1:
            fixed_choices.append(fixed)
        for _, sc in judged:
            duplicates += _count(sc.details, _DUPLICATE_KEYS)
            dropped += _count(sc.details, _DROPPED_KEYS)
    out["scores"] = total
    out["unscored"] = sum(unscored.values())
    out["unscored_rate"] = round(out["unscored"] / total, 4) if total else 0.0
    out["unscored_by_reason"] = dict(unscored.most_common())
    out["unscored_by_metric"] = per_metric_unscored
    out["constant_metrics"] = constant
    out["fixed_choices"] = fixed_choices
    out["duplicate_items"] = duplicates
    out["invented_items_dropped"] = dropped
    out["decided_without_judge"] = decided
    out["extracted_nothing"] = {"texts": len(extracted), "scores": sum(extracted.values()),
                                "by_source": dict(Counter(src for _, src in extracted))}
    out["warnings"] = _warnings(out, judge_check)
    out["ok"] = not out["warnings"]
    return out


def _warnings(h: Mapping[str, Any], st: Mapping[str, Any] | None) -> list[str]:
    """The findings that make the scores doubtful, one plain sentence each."""
    w = []
    if h["judge_calls"] and h["copy_rate"] >= COPY_WARN:
        tail = ("its scores are not evidence" if h["copy_rate"] >= 0.5 else
                "those calls were asked again without the example")
        w.append(f"this judge copied the prompt examples in {_pct(h['copy_rate'])} of calls "
                 f"({h['copied_calls']} of {h['judge_calls']}); {tail}")
    for c in h["constant_metrics"]:
        w.append(f"{c['metric']} is {c['value']:g} on {_pct(c['share'])} of {c['n']} samples "
                 "although the samples differ: the judge is not telling them apart")
    for c in h.get("fixed_choices", ()):
        if c["choice"] == "selected":
            w.append(f"{c['metric']}: the judge selected {c['value']} item(s) on {_pct(c['share'])} "
                     f"of {c['n']} samples whatever the inputs held: its selections do not "
                     "follow the data")
        else:
            w.append(f"{c['metric']}: the judge called the answer noncommittal on "
                     f"{_pct(c['share'])} of {c['n']} samples although the answers differ: "
                     "the flag does not follow the data")
    nothing = h.get("extracted_nothing") or {}
    if nothing.get("texts"):
        where = ", ".join(f"{n} {src}" for src, n in nothing["by_source"].items())
        w.append(f"the judge extracted nothing from {nothing['texts']} non-empty text(s) "
                 f"({where}); {nothing['scores']} score(s) are unscored for it: it may not "
                 "read their language or length")
    if h["scores"] and h["unscored_rate"] >= UNSCORED_WARN:
        top = next(iter(h["unscored_by_reason"]), "")
        w.append(f"{_pct(h['unscored_rate'])} of judge scores are unscored "
                 f"(most often: {top})")
    if st and st.get("verdict") == "error":
        w.append(f"the judge check could not run ({st.get('reason', '')}): "
                 "nothing shows that this judge can do the task")
    elif st and st.get("verdict") not in (None, "fit", "unchecked", "skipped"):
        rates = ", ".join(f"{k} {v['passed']}/{v['pairs']}" for k, v in st["metrics"].items())
        w.append(f"judge check: {st['verdict']}: it ordered known good/bad pairs right only "
                 f"{rates} times; its scores are not evidence")
    return w


def health_line(summary: Mapping[str, Any]) -> str:
    """One line on the judge's health when nothing is wrong ('' without a judge or with warnings)."""
    h = summary.get("judge_health")
    if not h or h.get("warnings"):
        return ""
    st = (summary.get("judge_check") or {}).get("line") or "judge check: not run"
    decided = h.get("decided_without_judge") or 0
    aside = f" ({decided} more decided without the judge: empty inputs)" if decided else ""
    return (f"Judge health: no copied examples, {h.get('unscored', 0)} of {h.get('scores', 0)} "
            f"judge scores unscored{aside}, no constant metric or fixed choice; {st}.")
