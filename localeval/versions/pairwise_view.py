"""The pairwise section of diff.html and diff.md, from ``VersionDiff.pairwise``.

``localeval diff --pairwise`` stores the pairwise result as a dict (the
``pairwise.PairwiseResult.to_dict`` shape, diff.json's ``"pairwise"``); this
module turns that dict into plain strings and lists for the page (``view``
adds them under ``v.pairwise``, ``templates/_pairwise.html.j2`` renders them
with autoescape) and into diff.md's short section. Nothing here builds HTML.
The answers come from the versions' texts (the data sets the diff read), by
the ids the dict names. The pairs where the judge preferred BASE come first,
then the inconsistent and unjudged ones, then the rest; the page lists at most
``MAX_PAIRS`` and says so, diff.json holds every one.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from localeval.errors import printable

__all__ = ["pairwise_view", "pairwise_markdown", "MAX_PAIRS"]

#: Pairs listed (expandable) on the page; diff.json holds every pair.
MAX_PAIRS = 200
#: Ids named per list in diff.md.
MD_IDS = 50
_SIDE = {1: {"A": "BASE", "B": "NEW"}, 2: {"A": "NEW", "B": "BASE"}}
_OUTCOME = {"win": "NEW better", "loss": "BASE better", "tie": "tie",
            "inconsistent": "inconsistent", "unjudged": "unjudged"}
_TONE = {"win": "good", "loss": "bad", "inconsistent": "mid", "unjudged": "none"}


def _pct(x: Any) -> str:
    return "—" if x is None else f"{x:.0%}"


def _num(x: Any) -> str:
    return "—" if x is None else f"{x:.2f}"


def _interval(r: Mapping[str, Any]) -> str:
    if r.get("value") is None:
        return f"— ({r.get('reason') or 'no estimate'})"
    if r.get("low") is None or r.get("high") is None:
        return f"{r['value']:.2f} ({r.get('reason') or 'no interval'})"
    return f"{r['value']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"


def _tone(r: Mapping[str, Any], margin: float) -> str:
    """good / bad only where the interval leaves 0.5 +/- ``margin`` (a diff.json written
    before the margin has none: 0)."""
    low, high = r.get("low"), r.get("high")
    return "good" if low is not None and low > 0.5 + margin else (
        "bad" if high is not None and high < 0.5 - margin else "plain")


def _gate_line(pw: Mapping[str, Any]) -> str:
    """The --fail-if-preferred-base line diff.json holds, when it said something."""
    gate = pw.get("gate") or {}
    return f"gate {gate.get('status')}: {gate['line']}" if gate.get("line") else ""


def _order(o: int, one: Mapping[str, Any]) -> dict[str, str]:
    verdict = one.get("verdict")
    probs = one.get("probs") or {}
    return {"label": "BASE shown as A" if o == 1 else "NEW shown as A",
            "verdict": "call failed" if verdict is None else "tie" if verdict == "tie"
            else f"{verdict} ({_SIDE[o].get(verdict, '?')} better)",
            "probs": " · ".join(f"{k} {float(probs[k]):.2f}" for k in ("A", "B", "tie")
                                if k in probs),
            "reason": str(one.get("reason") or "")}


def _rank(pw: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], tuple[int, int]]:
    """Sort key: BASE preferred first (in the result's order), then inconsistent, unjudged,
    NEW better, ties the judge gave, and identical answers last; file order within each."""
    first = {bid: i for i, bid in enumerate(pw.get("preferred_base") or [])}
    later = {"inconsistent": 1, "unjudged": 2, "win": 3, "tie": 4}
    return lambda p: ((0, first[p["base_id"]]) if p.get("base_id") in first
                      else (5 if p.get("identical") else later.get(p.get("outcome", ""), 4), 0))


def _pair(d: Any, p: Mapping[str, Any], k: int) -> dict[str, Any]:
    sb, sn = d.base.texts.get(p.get("base_id")), d.new.texts.get(p.get("new_id"))
    q = next((s.question for s in (sb, sn) if s is not None and s.question), "") or ""
    bid, nid = str(p.get("base_id", "")), str(p.get("new_id", ""))
    outcome = str(p.get("outcome", "unjudged"))
    return {"id": bid if bid == nid else f"{bid} / {nid}",
            "anchor": "pw-" + str(k) + "-" + (re.sub(r"[^0-9A-Za-z_]+", "-", bid).strip("-")
                                              or "x"),
            "question": q, "outcome": _OUTCOME.get(outcome, outcome),
            "tone": _TONE.get(outcome, "plain"),
            "preference": _num(p.get("new_preference")),
            "identical": bool(p.get("identical")),
            "follows_position": bool(p.get("follows_position")),
            "base_answer": sb.answer if sb is not None and sb.answer is not None else None,
            "new_answer": sn.answer if sn is not None and sn.answer is not None else None,
            "orders": [] if p.get("identical") else [_order(1, p.get("base_as_a") or {}),
                                                     _order(2, p.get("new_as_a") or {})],
            "error": str(p.get("error") or "")}


def pairwise_view(d: Any) -> dict[str, Any] | None:
    """What the page's pairwise section shows; None when the diff has no pairwise result."""
    pw = d.pairwise
    if not pw:
        return None
    bias = pw.get("judge_bias") or {}
    lw = bias.get("longer_wins_consistent") or {}
    lwi = bias.get("longer_wins_inconsistent") or {}
    check = d.pairwise_check
    pairs = sorted(pw.get("pairs") or [], key=_rank(pw))
    rate = pw.get("preference_new") or {}
    gate = _gate_line(pw)
    return {
        "check": None if check is None else {
            "line": check.summary_line(), "fit": check.fit, "verdict": check.verdict},
        "mode": pw.get("mode", ""), "criterion": pw.get("criterion") or "",
        "criterion_source": pw.get("criterion_source") or "",
        "counts": dict(pw.get("counts") or {}), "rate": _interval(rate),
        "tone": _tone(rate, float(pw.get("margin") or 0.0)),
        "verdict": pw.get("verdict", ""), "margin": pw.get("margin"),
        "sentence": pw.get("sentence", ""),
        "position": _pct(bias.get("position_bias")),
        "longer": f"{_pct(lw.get('share'))} of {lw.get('n', 0)}",
        "longer_inconsistent": f"{_pct(lwi.get('share'))} of {lwi.get('n', 0)}",
        "bias_notes": list(bias.get("notes") or []),
        "notes": ([gate] if gate else []) + list(pw.get("notes") or []),
        "preferred_base": len(pw.get("preferred_base") or []),
        "pairs": [_pair(d, p, k) for k, p in enumerate(pairs[:MAX_PAIRS], 1)],
        "pairs_total": len(pairs), "pairs_more": max(0, len(pairs) - MAX_PAIRS),
    }


def pairwise_markdown(pw: Mapping[str, Any] | None, check: Any = None) -> str:
    """diff.md's short pairwise section ("" without a pairwise result); ``check``: its judge
    check (``VersionDiff.pairwise_check``), None when it did not run."""
    if not pw:
        return ""
    from localeval.report import code_span, escape_markdown

    def esc(x: Any) -> str:
        return escape_markdown(printable(x))

    c = pw.get("counts") or {}
    bias = pw.get("judge_bias") or {}
    lw = bias.get("longer_wins_consistent") or {}
    lines = ["## Pairwise: which answer is better", ""]
    if check is not None:
        lines += [f"- {'' if check.fit else '⚠ '}{esc(check.summary_line())}"]
    lines += [f"- {pw.get('mode')} verdicts, both orders: {c.get('win', 0)} NEW better / "
              f"{c.get('loss', 0)} BASE better / {c.get('tie', 0)} tie / "
              f"{c.get('inconsistent', 0)} inconsistent / {c.get('unjudged', 0)} unjudged"
              + (f" / {c['identical']} identical (not judged)" if c.get("identical") else ""),
              f"- preference for NEW: {_interval(pw.get('preference_new') or {})}",
              f"- {esc(pw.get('sentence', ''))}",
              f"- judge bias: the verdict followed the position in "
              f"{_pct(bias.get('position_bias'))} of pairs; the longer answer won "
              f"{_pct(lw.get('share'))} of {lw.get('n', 0)} consistent decisive pairs"]
    if pw.get("criterion"):
        src = f" (from {esc(pw['criterion_source'])})" if pw.get("criterion_source") else ""
        lines.append(f"- criterion{src}: {esc(pw['criterion'])}")
    lines += [f"  - ⚠ {esc(n)}" for n in bias.get("notes") or []]
    gate = _gate_line(pw)
    if gate:
        lines.append(f"- {esc(gate)}")
    base = [code_span(printable(x)) for x in pw.get("preferred_base") or []]
    if base:
        more = f" … and {len(base) - MD_IDS} more (all in diff.json)" if len(base) > MD_IDS else ""
        lines.append(f"- BASE preferred ({len(base)}): {', '.join(base[:MD_IDS])}{more}")
    lines += [f"- {esc(n)}" for n in pw.get("notes") or []]
    return "\n".join(lines) + "\n"
