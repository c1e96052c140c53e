"""``rank.html``: ``localeval rank``'s page, beside rank.json.

What a reader needs to trust a ranking on one page: the pairwise judge check (a
warning banner when it did not say fit: then nothing below is evidence), the ranking
with each version's Bradley-Terry strength, its 95% interval and its wins, the
neighbours whose order is not shown (their difference does not lie above the margin),
each version's own judge caveat (the judge that
scored its run, ``RankResult.marker``), the judge's position and length bias over
every pair of versions, and the notes. The per-question verdicts stay in rank.json.

Built with the page toolkit of every page (``report.page_env``, ``report.render_page``,
``report.write_page``) and styled like diff.html's pairwise section
(``versions/templates/_pairwise.html.j2``: the same banner, verdict line and summary
table, from report.css, comparison.css and diff.css), under the same
Content-Security-Policy. Version names, criteria and notes come from users: autoescape
escapes them and ``errors.printable`` makes their control characters visible.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from localeval.errors import printable
from localeval.pairwise.equivalence import BASE, NEW, strength_margin, zone
from localeval.pairwise.rank import RankResult
from localeval.pairwise.summary import HIGH_POSITION_BIAS, PairwiseResult
from localeval.stats import Interval

__all__ = ["rank_view", "rank_html", "write_rank_page", "RANK_PAGE"]

#: The page's file name, beside rank.json.
RANK_PAGE = "rank.html"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _strength(s: Interval) -> str:
    if s.value is None:
        return f"— ({s.reason or 'no estimate'})"
    if s.low is None or s.high is None:
        return f"{s.value:+.2f} ({s.reason or 'no interval'})"
    return f"{s.value:+.2f} [{s.low:+.2f}, {s.high:+.2f}]"


def _preference(i: Interval, margin: float) -> tuple[str, str]:
    """The preference for the second version with its interval, and its tone: good or
    bad only beyond 0.5 +/- ``margin`` (``equivalence.zone``)."""
    if i.value is None:
        return f"— ({i.reason or 'no estimate'})", "plain"
    if i.low is None or i.high is None:
        return f"{i.value:.2f} ({i.reason or 'no interval'})", "plain"
    tone = {NEW: "good", BASE: "bad"}.get(zone(i, margin), "plain")
    return f"{i.value:.2f} [{i.low:.2f}, {i.high:.2f}]", tone


def _pair(base: str, new: str, p: PairwiseResult) -> dict[str, Any]:
    rate, tone = _preference(p.rate, p.margin)
    lw, lwi = p.longer_wins, p.longer_wins_inconsistent
    return {"base": printable(base), "new": printable(new), "counts": dict(p.counts),
            "rate": rate, "tone": tone, "verdict": p.verdict, "position": _pct(p.position_bias),
            "biased": p.position_bias is not None and p.position_bias > HIGH_POSITION_BIAS,
            "longer": f"{_pct(lw[0])} of {lw[1]}",
            "longer_inconsistent": f"{_pct(lwi[0])} of {lwi[1]}",
            "notes": [printable(n) for n in p.bias_notes()]}


def rank_view(r: RankResult) -> dict[str, Any]:
    """What rank.html shows, as plain strings and lists (the template escapes them)."""
    rk = r.ranking
    ranks = rk.ranks()
    check = r.judge_check
    rows = []
    for name in rk.order:
        i = rk.names.index(name)
        s = rk.strengths[name]
        tone = "plain" if s.value is None else "good" if s.low is not None and s.low > 0 else (
            "bad" if s.high is not None and s.high < 0 else "plain")
        rows.append({"rank": ranks[name], "name": printable(name), "strength": _strength(s),
                     "tone": tone, "wins": f"{sum(rk.wins[i]):.1f}",
                     "played": f"{sum(rk.comparisons[i]):.0f}",
                     "caveat": printable(r.marker(name) or "")})
    caveats = [{"name": printable(n), "line": printable(f.line or f.marker or "")}
               for n, f in r.version_fitness.items() if f.marker]
    return {
        "title": " · ".join(printable(n) for n in rk.order[:6])
                 + (f" and {len(rk.order) - 6} more" if len(rk.order) > 6 else ""),
        "n_versions": len(r.names), "questions": rk.questions, "mode": r.mode,
        "check": None if check is None else {
            "line": printable(check.summary_line()), "fit": bool(check.fit)},
        "sentence": printable(r.sentence()), "rows": rows,
        "margin": f"{rk.margin:.2g}", "strength_margin": f"{strength_margin(rk.margin):.2f}",
        "gaps": [{"text": printable(g.sentence()), "apart": g.apart} for g in rk.gaps],
        "differences": [{"text": printable(g.sentence()), "apart": g.apart}
                        for g in rk.differences],
        "caveats": caveats,
        "criterion": printable(r.criterion or ""),
        "criterion_source": printable(r.criterion_source or ""),
        "position": _pct(r.position_bias),
        "biased": r.position_bias is not None and r.position_bias > HIGH_POSITION_BIAS,
        "pairs": [_pair(r.names[i], r.names[j], p) for (i, j), p in r.pairs.items()],
        "notes": [printable(n) for n in r.notes + rk.notes],
        "resamples": rk.n_resamples, "seed": rk.seed,
    }


def rank_html(r: RankResult) -> str:
    """The self-contained page as one string."""
    from localeval.report import page_env, render_page

    env = page_env("localeval.pairwise", "localeval.versions", "localeval.agreement")
    return render_page(env, "rank.html.j2", css=("comparison.css", "diff.css"), v=rank_view(r))


def write_rank_page(r: RankResult, out_dir: str | os.PathLike[str]) -> Path:
    """Write ``out_dir/rank.html`` atomically and return its path; an OutputError (exit 2)
    naming the page when it cannot be written."""
    from localeval.report import write_page

    return write_page(Path(out_dir) / RANK_PAGE, rank_html(r))
