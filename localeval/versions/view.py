"""What diff.html shows, as plain data: :func:`diff_view`.

As for the run report and the comparison page, the page is built in two
steps: this module turns a :class:`VersionDiff` into strings, numbers and
lists (the judge's working as ``report.to_node`` trees, the answers' change
as difflib segments) and ``pages`` renders them; nothing here builds or
escapes HTML. Every metric row carries a list of estimates: the judge-only
difference, then the one corrected by labels when the diff has labels.

The page stays bounded however large the runs, as the run report does
(``report``'s 500 samples in full): each scatter plots at most ``MAX_PLOTTED``
samples (a seeded draw, the same on every render), each list of ids names at
most ``MAX_IDS``, and the page says so where it cut; counts, the histogram of
changes and every interval cover every sample, and diff.json lists them all.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from localeval.lang import diff_pieces
from localeval.report import conversation_text, is_conversation, sample_question
from localeval.types import Sample
from localeval.versions.changes import sample_name, unscored_why
from localeval.versions.diff import MetricDiff, SampleChange, VersionDiff
from localeval.versions.pairwise_view import pairwise_view
from localeval.versions.tables import difference_text, notes, verdict_text

__all__ = ["diff_view", "answer_change", "MAX_CHANGED", "MAX_PLOTTED", "MAX_IDS"]

#: Samples that changed most, listed (expandable) per metric.
MAX_CHANGED = 15
#: Samples drawn in a metric's scatter (the run report shows 500 samples in full).
MAX_PLOTTED = 500
#: Ids named per list (newly failing, became unscored, in one run only).
MAX_IDS = 200


def _f(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


def _anchor(*parts: str) -> str:
    return "-".join(re.sub(r"[^0-9A-Za-z_]+", "-", p).strip("-") or "x" for p in parts)


def answer_change(old: str, new: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Word-level change of an answer: (base segments, new segments), each
    ``{"text", "op"}`` with op "same", "del" (only in base) or "ins" (only in new)."""
    a, b = diff_pieces(old), diff_pieces(new)
    left: list[dict[str, str]] = []
    right: list[dict[str, str]] = []
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        # a lone space between two changes reads as part of the change, not a kept word
        inner = 0 < k < len(ops) - 1 and "".join(a[i1:i2]).isspace()
        if op == "equal" and not inner:
            left.append({"text": "".join(a[i1:i2]), "op": "same"})
            right.append({"text": "".join(b[j1:j2]), "op": "same"})
            continue
        if i2 > i1:
            left.append({"text": "".join(a[i1:i2]), "op": "del"})
        if j2 > j1:
            right.append({"text": "".join(b[j1:j2]), "op": "ins"})
    return _merge(left), _merge(right)


def _merge(segs: list[dict[str, str]]) -> list[dict[str, str]]:
    """Adjacent segments of the same kind joined (fewer, longer highlights)."""
    out: list[dict[str, str]] = []
    for s in segs:
        if out and out[-1]["op"] == s["op"]:
            out[-1] = {"text": out[-1]["text"] + s["text"], "op": s["op"]}
        else:
            out.append(s)
    return out


def _said(s: Sample | None) -> str | None:
    """What a version said: its answer, or a conversation's turns and tool calls as text
    (``report.conversation_text``), so the page shows what changed in the conversation."""
    if s is None:
        return None
    return s.answer if s.answer is not None else conversation_text(s)


def _side(s: Sample | None, other: Sample | None, work: Any, score: float | None,
          reason: str | None) -> dict[str, Any]:
    from localeval.report import to_node

    theirs = set(other.contexts or []) if other else set()
    return {"score": _f(score), "reason": reason or "",
            "label": "Conversation" if is_conversation(s) else "Answer",
            "contexts": [{"text": c, "changed": bool(other) and c not in theirs}
                         for c in ((s.contexts or []) if s else [])],
            "work": to_node(work) if work else None}


def _changed(d: VersionDiff, m: MetricDiff, c: SampleChange, k: int) -> dict[str, Any]:
    sb, sn = d.base.texts.get(c.base_id), d.new.texts.get(c.new_id)
    wb = d.base.results.details.get(c.base_id, {}).get(m.metric)
    wn = d.new.results.details.get(c.new_id, {}).get(m.metric)
    left = right = None
    ab, an = _said(sb), _said(sn)
    if ab is not None and an is not None:
        left, right = answer_change(ab, an)
    elif sb is not None or sn is not None:
        left = [{"text": ab, "op": "same"}] if ab else None
        right = [{"text": an, "op": "same"}] if an else None
    q = (d.new.results.questions.get(c.new_id) or d.base.results.questions.get(c.base_id)
         or sample_question(sn) or "")
    kind = ("became unscored" if c.status == "became_unscored" else "became scored"
            if c.status == "became_scored" else "better" if (c.gain or 0) > 0 else "worse")
    return {"id": sample_name(c),
            "anchor": _anchor("s", m.metric, str(k), c.base_id), "question": q, "kind": kind,
            "tone": "good" if kind in ("better", "became scored") else "bad",
            "delta": "—" if c.delta is None else f"{c.delta:+.3f}",
            "base": _side(sb, sn, wb, c.base, c.base_reason),
            "new": _side(sn, sb, wn, c.new, c.new_reason),
            "answer_base": left, "answer_new": right}


def _delta_hist(m: MetricDiff) -> Any:
    from localeval.report import score_histogram

    e = m.judge
    return score_histogram([s.delta for s in m.scored], mean=e.diff,
                     ci=e.ci)


def _capped(items: list[Any], limit: int = MAX_IDS) -> dict[str, Any]:
    """The first ``limit`` items, how many there are, and how many are not shown."""
    return {"shown": items[:limit], "total": len(items), "more": max(0, len(items) - limit)}


def _plotted(sc: list[SampleChange]) -> list[SampleChange]:
    """At most MAX_PLOTTED of the scored samples, a seeded draw kept in file order."""
    if len(sc) <= MAX_PLOTTED:
        return sc
    import numpy as np

    keep = np.sort(np.random.default_rng(0).choice(len(sc), MAX_PLOTTED, replace=False))
    return [sc[int(i)] for i in keep]


def _metric(d: VersionDiff, m: MetricDiff) -> dict[str, Any]:
    from markupsafe import Markup

    from localeval.agreement import scatter_svg

    sc = m.scored
    c = m.counts()
    plot = None
    shown = _plotted(sc)
    if sc:
        # scatter_svg escapes its own labels, so its markup goes in as it is
        plot = Markup(scatter_svg([s.base for s in shown], [s.new for s in shown],
                                  f"{m.metric}: new against base",
                                  a_label=d.base.results.name, b_label=d.new.results.name,
                                  ids=[s.new_id for s in shown]))
    ests = [{"kind": e.kind, "judge": e.kind == "judge", "n": e.n, "text": difference_text(e),
             "verdict": verdict_text(m, e).replace(" ⚠ not evidence", ""),
             "tone": {"better": "good", "worse": "bad"}.get(m.verdict(e), "plain"),
             "sentence": m.sentence(e, d.tested),
             "p": "—" if e.p is None else f"{e.p:.3f}",
             "p_holm": "—" if e.p_holm is None else f"{e.p_holm:.3f}",
             "reason": e.reason, "caveat": e.caveat,
             "judge_caveat": m.judge_caveat if e.kind == "judge" else ""}
            for e in m.estimates]
    return {"key": m.metric, "anchor": _anchor("m", m.metric), "lower_is_better":
            m.lower_is_better, "mean_base": _f(m.mean_base), "mean_new": _f(m.mean_new),
            "estimates": ests, "counts": c, "threshold": f"{m.threshold:g}",
            "newly_failing": _capped(m.newly_failing()),
            "newly_passing": _capped(m.newly_passing()),
            "became_unscored": _capped([{"id": s.new_id, "reason": s.new_reason or "no value"}
                                        for s in m.became_unscored()]),
            "unscored": {"count": c["unscored"], "pairs": c["pairs"], "text": m.unscored_text(),
                         "ids": _capped([{"id": sample_name(s), "reason": unscored_why(s)}
                                         for s in m.samples if s.status != "scored"])},
            "uses_judge": m.uses_judge, "judge_caveat": m.judge_caveat,
            "compared": m.judge.ci is not None, "plot": plot,
            "plotted": len(shown), "scored": len(sc),
            "hist": _delta_hist(m) if sc else None,
            "changed": [_changed(d, m, s, k)
                        for k, s in enumerate(m.changed_most(MAX_CHANGED), 1)],
            "changed_total": len(m.changed_most())}


def diff_view(d: VersionDiff) -> dict[str, Any]:
    """Everything diff.html.j2 needs."""
    from localeval.versions.signatures import signature_text

    b, n = d.base.results, d.new.results
    metrics = [_metric(d, m) for m in d.metrics]
    return {
        "base": b.name, "new": n.name, "base_source": b.source, "new_source": n.source,
        "base_sig": signature_text(b.signature), "new_sig": signature_text(n.signature),
        "same_setup": d.same_setup, "setup_notes": d.signature_notes,
        "same_setup_text": d.same_setup_text()[:1].upper() + d.same_setup_text()[1:] + ".",
        "judge_caveat": next((m.judge_caveat for m in d.metrics if m.judge_caveat), ""),
        "judged": d.judged, "fitness_notes": d.fitness_notes(),
        "setup_unknown": not (b.signature and n.signature),
        "pairing": d.pairing_text(), "pairs": len(d.pairing.pairs),
        "only_base": _capped(list(d.pairing.only_a)), "only_new": _capped(list(d.pairing.only_b)),
        "capped": any(len(m.scored) > MAX_PLOTTED for m in d.metrics) or any(
            x["more"] for mv in metrics for x in (mv["newly_failing"], mv["newly_passing"],
                                                  mv["became_unscored"], mv["unscored"]["ids"]))
        or max(len(d.pairing.only_a), len(d.pairing.only_b)) > MAX_IDS,
        "max_plotted": MAX_PLOTTED, "max_ids": MAX_IDS,
        "metrics": metrics, "not_compared": [{"key": k, "reason": r} for k, r in d.not_compared]
        + [{"key": m["key"], "reason": m["estimates"][0]["reason"]} for m in metrics
           if not m["compared"]],
        "text_notes": list(dict.fromkeys(x for x in (d.base.text_note, d.new.text_note) if x)),
        "notes": notes(d), "tested": d.tested,
        "pairwise": pairwise_view(d),  # --pairwise: the judge's side-by-side preference
    }
