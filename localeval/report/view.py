"""The report's view model: summary and records turned into the plain data the template shows.

Per metric: mean, CI, tone, histogram and the worst samples, unscored ones
first with their reasons (a sample with no score is the first thing to look
at, and must never leave "no sample below a perfect score"); per sample: its
inputs, its scores and the judge's working as nodes (``details.to_node``).
Every string stays plain data here; the template escapes all of it.

The page stays bounded however large the run: at most ``MAX_SAMPLES`` samples
get their full detail (the worst-scoring per metric, then those with an
unscored metric, then the first in file order) and the page says so;
results.jsonl holds every sample. Distributions, means and CIs always cover
every sample. Long texts are cut (``clip``), so the page is bounded in text too.
"""

from __future__ import annotations

import heapq
from typing import Any, Mapping, Sequence

from localeval.report.clip import MAX_CONTEXTS, Clipper
from localeval.report.conversation_view import CONVERSATION_FIELDS, conversation_view, sample_question
from localeval.report.corrected import corrected_view
from localeval.report.details import to_node
from localeval.report.explained import explained_note
from localeval.report.health import health_line
from localeval.report.histogram import histogram, is_bounded, tone
from localeval.report.judged import CI_MARK, ci_note, judge_unfit, judged_keys
from localeval.report.numbers import excerpt, fmt, plain_number, unscored_note
from localeval.report.summary import run_label
from localeval.report.unsupported import answer_pieces

__all__ = ["build_view", "pick_samples", "WORST_K", "MAX_SAMPLES", "NO_REASONS"]

#: How many samples the "worst samples" list shows per metric.
WORST_K = 5
#: At most this many samples are shown in full on the page (a retrieval sample
#: renders to ~1.5 kB, one with the judge's working to 5-20 kB); more only when
#: the worst-samples lists alone need more.
MAX_SAMPLES = 500
#: Beside a sample's verdicts when the run asked for none of the judge's reasons.
NO_REASONS = "the judge gave no reasons (--reasons none)"


def _excerpt(s: Any, n: int = 140) -> str:
    return excerpt(s, n)


def _as_dict(sample: Any) -> Mapping[str, Any]:
    """A sample as a mapping: dicts as given, ``types.Sample`` through ``to_dict`` (only
    for the samples the page shows: converting 100k samples costs seconds)."""
    if sample is None:
        return {}
    return sample if isinstance(sample, Mapping) else sample.to_dict()


def _sample_id(sample: Any) -> Any:
    return sample.get("id") if isinstance(sample, Mapping) else getattr(sample, "id", None)


def _pair_samples(records: Sequence[Mapping[str, Any]], samples: Sequence[Any]) -> list[Any]:
    """The sample for each record: by id, else by position (records may be fewer).

    Samples are mappings or ``types.Sample`` objects; None where there is none.
    """
    by_id: dict[Any, Any] = {}
    for s in samples:
        by_id.setdefault(_sample_id(s), s)
    out = []
    for i, r in enumerate(records):
        s = by_id.get(r.get("id"))
        if s is None and i < len(samples):
            s = samples[i]
        out.append(s)
    return out


def pick_samples(records: Sequence[Mapping[str, Any]], ranked: Sequence[Sequence[int]],
                 limit: int = MAX_SAMPLES, linked: Sequence[int] = ()) -> list[int]:
    """Indices of the records the page shows in full, in file order.

    ``ranked`` holds each metric's record indices, worst first. Shown are: the
    ``linked`` records (the unscored ones the worst-samples lists name) and each
    metric's first ``WORST_K`` (the worst-samples lists link to them, even past
    ``limit``); more of the worst, metric by metric in turn, up to half of
    ``limit``; records with an unscored metric up to three quarters; then the
    first records in file order, so the page also shows what typical samples
    look like.
    """
    if len(records) <= limit:
        return list(range(len(records)))
    chosen = {i for r in ranked for i in r[:WORST_K]}
    queues = [iter(r[WORST_K:]) for r in ranked]
    while queues and len(chosen) < limit // 2:
        for q in list(queues):
            i = next(q, None)
            if i is None:
                queues.remove(q)
            elif len(chosen) < limit // 2:
                chosen.add(i)
    chosen |= set(linked)  # unscored, so among the next step's anyway: listed ones first
    for i, r in enumerate(records):
        if len(chosen) >= limit * 3 // 4:
            break
        if r.get("errors") or any(v is None for v in (r.get("scores") or {}).values()):
            chosen.add(i)
    i = 0
    while len(chosen) < limit:
        chosen.add(i)
        i += 1
    return sorted(chosen)


def _context_rows(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    ctxs = sample.get("contexts") or []
    ids = sample.get("retrieved_ids") or []
    rel = sample.get("relevant_ids") or {}
    if isinstance(rel, list):
        rel = {k: 1 for k in rel}
    rows = []
    for i, c in enumerate(ctxs):
        cid = ids[i] if len(ids) == len(ctxs) else None
        grade = rel.get(cid) if cid is not None else None
        rows.append({"text": c, "id": cid, "grade": None if grade is None else plain_number(grade)})
    return rows


def _id_rows(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    rel = sample.get("relevant_ids") or {}
    if isinstance(rel, list):
        rel = {k: 1 for k in rel}
    return [{"id": i, "grade": None if rel.get(i) is None else plain_number(rel[i])}
            for i in (sample.get("retrieved_ids") or [])]


def build_view(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
               samples: Sequence[Any], *, max_samples: int = MAX_SAMPLES,
               explained: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Everything the template shows, as plain data (the template escapes all of it).

    ``samples`` are mappings (``Sample.to_dict()``) or ``types.Sample`` objects;
    at most ``max_samples`` of them are shown in full (see ``pick_samples``).
    ``explained``: sample id -> metric key -> what ``localeval explain`` asked
    (``report.read_explained``), shown under the metric's working.
    """
    clip = Clipper()
    mets: dict[str, Any] = dict(summary.get("metrics") or {})
    # metrics that appear only in records (an interrupted summary) still get a column
    for r in records:
        for k in r.get("scores") or {}:
            mets.setdefault(k, {"mean": None, "ci95": None, "n": 0, "unscored": 0})
    keys = list(mets)
    paired = _pair_samples(records, samples)
    columns: dict[str, list[tuple[int, float]]] = {k: [] for k in keys}
    gaps: dict[str, list[tuple[int, str]]] = {k: [] for k in keys}  # unscored: (index, reason)
    for i, r in enumerate(records):
        errors = r.get("errors") or {}
        for k, v in (r.get("scores") or {}).items():
            if k not in columns:
                continue
            if v is not None:
                columns[k].append((i, float(v)))
            else:
                gaps[k].append((i, str(errors.get(k) or "unscored")))

    judged = judged_keys(summary)
    unfit = judge_unfit(summary)
    metrics_view: list[dict[str, Any]] = []
    ranked_idx: list[list[int]] = []  # per metric, record indices worst first
    linked: list[int] = []  # unscored records the worst-samples lists name
    for k in keys:
        e = mets[k]
        lib = bool(e.get("lower_is_better"))
        vals = [v for _, v in columns[k]]
        bounded = is_bounded(vals) or (not vals and e.get("mean") is not None
                                     and 0 <= e["mean"] <= 1)
        # an unfit judge's 1.0 is not good news: its metrics get no good/bad colours
        neutral = bool(unfit) and k in judged
        ci = e.get("ci95")
        # perfect scores are never "worst": a metric where all but two samples
        # score 1.0 lists those two, not three perfect ones besides
        perfect = (0.0 if lib else 1.0) if bounded else None
        # the worst half-page: the first WORST_K are listed, the rest shown in full
        ranked = heapq.nsmallest(max(WORST_K, max_samples // 2),
                                 (t for t in columns[k] if t[1] != perfect),
                                 key=lambda t: ((-t[1] if lib else t[1]), t[0]))
        worst = ranked[:WORST_K]
        ranked_idx.append([i for i, _ in ranked])
        reasons = e.get("unscored_reasons") or {}
        gap_list = gaps[k][:WORST_K]
        linked.extend(i for i, _ in gap_list)
        metrics_view.append({
            "key": k,
            "anchor": f"m-{len(metrics_view)}",
            "lower_is_better": lib,
            "mean": fmt(e.get("mean")),
            "mean_short": fmt(e.get("mean"), 3),
            "mean_tone": _tone(e.get("mean"), bounded, lib, neutral),
            "ci": f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]" if ci else "–",
            "ci_mark": CI_MARK if ci and k in judged else "",
            "unfit": unfit if neutral else None,
            "n": e.get("n", len(vals)),
            "unscored": e.get("unscored", 0),
            "unscored_note": unscored_note(e),
            "reasons": [{"text": clip.text(str(t), "summary.json"), "count": c}
                        for t, c in reasons.items()],
            "extra": _extras(e),
            "hist": _neutral_bars(histogram(vals, mean=e.get("mean"), ci=ci,
                                            lower_is_better=lib), neutral),
            "worst": [{
                "index": i, "anchor": f"s-{i}", "id": str(records[i].get("id", i)),
                "value": fmt(v, 3),
                "tone": _tone(v, bounded, lib, neutral),
                "question": _excerpt(sample_question(paired[i])),
            } for i, v in worst],
            "gaps": [{"index": i, "anchor": f"s-{i}", "id": str(records[i].get("id", i)),
                      "reason": reason, "question": _excerpt(sample_question(paired[i]))}
                     for i, reason in gap_list],
            "gaps_more": len(gaps[k]) - len(gap_list),
            "bounded": bounded,
            "neutral": neutral,
        })
    mview = {m["key"]: m for m in metrics_view}

    shown = pick_samples(records, ranked_idx, max_samples, linked)
    no_reasons = (summary.get("signature") or {}).get("reasons") == "none"
    sample_views = []
    for i in shown:
        r, s = records[i], _as_dict(paired[i])
        scores = r.get("scores") or {}
        errors = r.get("errors") or {}
        details = r.get("details") or {}
        rows = []
        for k in keys:
            if k not in scores and k not in errors and k not in details:
                continue
            v = scores.get(k)
            m = mview[k]
            rows.append({
                "key": k,
                "value": fmt(v, 3) if v is not None else "–",
                "tone": _tone(v, m["bounded"], m["lower_is_better"], m["neutral"]),
                "error": clip.text(errors.get(k), "results.jsonl") if v is None else None,
                "working": clip.node(to_node(details[k], k), "results.jsonl")
                if k in details and details[k] else None,
                "reasons_note": NO_REASONS if no_reasons and _has_verdicts(details.get(k))
                else None,
                **_explained(explained, r.get("id"), k, clip),
            })
        extra = {k: v for k, v in s.items() if k not in (
            "id", "question", "answer", "contexts", "reference", "retrieved_ids",
            "relevant_ids", "metadata", *CONVERSATION_FIELDS)}
        contexts = _context_rows(s)
        for c in contexts[:MAX_CONTEXTS]:
            c["text"] = clip.text(c["text"], "the dataset")
        sample_views.append({
            "index": i, "anchor": f"s-{i}", "id": str(r.get("id", s.get("id", i))),
            "question": clip.text(s.get("question"), "the dataset"),
            "answer": (answer_text := clip.text(s.get("answer"), "the dataset")),
            # a span checker's unsupported spans, marked in the answer (report/unsupported.py)
            "answer_pieces": answer_pieces(answer_text, details, summary.get("signature")),
            "reference": clip.text(s.get("reference"), "the dataset"),
            "contexts": contexts[:MAX_CONTEXTS], "n_contexts": len(contexts),
            "retrieved": _id_rows(s) if not (s.get("contexts") and len(
                s.get("retrieved_ids") or []) == len(s.get("contexts") or [])) else [],
            "metadata": clip.node(to_node(s["metadata"]), "the dataset")
            if s.get("metadata") else None,
            "extra": clip.node(to_node(extra), "the dataset") if extra else None,
            "excerpt": _excerpt(sample_question(s), 110),
            "conversation": conversation_view(s, clip, details),  # None unless a conversation
            "rows": rows,
            "unscored": any(row["error"] is not None or row["value"] == "–" for row in rows),
            "known": bool(s),
        })

    sig = summary.get("signature") or {}
    usage = summary.get("usage") or {}
    return {
        "title": "localeval report",
        "n_samples": summary.get("n_samples", len(records)),
        "n_records": len(records),
        "metrics": metrics_view,
        "samples": sample_views,
        "n_shown": len(sample_views),
        "signature_line": summary.get("signature_line") or "",
        "run_label": run_label(summary.get("run")),
        "signature": [(k, "–" if val is None else str(val)) for k, val in sig.items()
                      if k != "prompts"],
        "prompts": sorted((str(k), str(val)) for k, val in (sig.get("prompts") or {}).items()),
        "usage": _usage_rows(usage),
        "notes": [str(n) for n in summary.get("notes") or []],
        "health": [str(w) for w in (summary.get("judge_health") or {}).get("warnings") or []],
        "health_line": health_line(summary),
        "interrupted": summary.get("interrupted"),
        "missing_samples": sum(1 for s in paired if not s),
        "corrected": corrected_view(summary),
        "ci_note": ci_note(summary),
        "subset": subset_words(sig.get("subset")),
    }


def _explained(explained: Mapping[str, Mapping[str, Any]] | None, sid: Any, key: str,
               clip: Any) -> dict[str, Any]:
    """A metric row's reasons from ``localeval explain``, when it asked for them."""
    entry = (explained or {}).get(str(sid), {}).get(key)
    if not entry or not entry.get("details"):
        return {"explained": None, "explained_note": None}
    return {"explained": clip.node(to_node(entry["details"], key), "explain.jsonl"),
            "explained_note": explained_note(dict(entry))}


def _has_verdicts(value: Any) -> bool:
    """Whether a metric's details hold a judge's verdicts (a ``verdict`` key at any depth,
    or answer_correctness's TP list)."""
    if isinstance(value, Mapping):
        return "verdict" in value or "TP" in value or any(_has_verdicts(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_verdicts(v) for v in value)
    return False


def _tone(v: float | None, bounded: bool, lower_is_better: bool, neutral: bool) -> str:
    """A score's colour; "plain" (neither good nor bad) for a judge that failed its check."""
    if neutral and v is not None:
        return "plain"
    return tone(v, bounded=bounded, lower_is_better=lower_is_better)


def _neutral_bars(h: Any, neutral: bool) -> Any:
    if neutral:
        for b in h.bars:
            b["tone"] = "plain"
    return h


def subset_words(sub: Mapping[str, Any] | None) -> str:
    """The run's ``--limit``/``--sample`` in words ("" for a run of every sample)."""
    if not sub:
        return ""
    kept, total = sub.get("kept"), sub.get("of")
    if "limit" in sub:
        how = f"the first {kept if kept is not None else sub['limit']}"
        opt = f"--limit {sub['limit']}"
    else:
        how = f"{kept if kept is not None else sub.get('sample')} drawn at random (seed {sub.get('seed')})"
        opt = f"--sample {sub.get('sample')}"
    return (f"Subset: these numbers cover {how} of the dataset's {total} samples ({opt}), "
            "not the whole dataset.")


def _extras(e: Mapping[str, Any]) -> list[str]:
    """Repeat statistics, when the run used --repeats."""
    out = []
    if e.get("run_means"):
        out.append("run means " + ", ".join(fmt(x, 3) for x in e["run_means"]))
    if e.get("run_spread") is not None:
        out.append(f"spread across runs {fmt(e['run_spread'], 4)}")
    if e.get("mean_sample_std") is not None:
        out.append(f"mean per-sample std {fmt(e['mean_sample_std'], 4)}")
    return out


def _usage_rows(u: Mapping[str, Any]) -> list[tuple[str, str]]:
    if not u or not u.get("calls"):
        return []
    evaluated = u.get("evaluated_tokens",
                      u.get("prompt_tokens", 0) - u.get("reused_tokens", 0))
    rows = [("judge calls", str(u.get("calls", 0))),
            ("from cache", str(u.get("cache_hits", 0))),
            ("prompt tokens", f"{u.get('prompt_tokens', 0):,}"),
            ("reused (KV prefix)", f"{u.get('reused_tokens', 0):,}"),
            ("evaluated", f"{evaluated:,}"),
            ("generated tokens", f"{u.get('generated_tokens', 0):,}"),
            ("judge time", f"{float(u.get('seconds', 0.0)):.1f} s")]
    if u.get("decode_steps"):  # in-process judge: generation decodes and drafting
        rows[-1:-1] = [("generation decodes", f"{u['decode_steps']:,}"),
                       ("guesses kept", f"{u.get('accepted_tokens', 0):,} of "
                                        f"{u.get('drafted_tokens', 0):,}")]
    return rows

