"""A version diff as text: the terminal table (rich) and diff.md (GitHub Markdown).

Both show, per metric and per estimate (judge-only, then corrected by labels),
the two means, the difference with its 95% interval, the Holm-adjusted p,
the sample counts, the pairs unscored on either side, and the plain sentence
with its caveats (few pairs; unscored pairs; for a judged metric, a judge that
failed its judge check on either side); then the pairing and set-up notes.
diff.md also names the samples that moved per metric by id, as diff.html
does, and explains its notation.
Names, ids and metric keys come from user files: rich gets ``Text`` (never
markup) with every control character written as an escape (``errors.printable``:
an id holding ``\x1b[2J`` shows as that text, it does not clear the terminal),
and Markdown gets the same, then the report's ``escape_markdown``. An interval
from few pairs carries its caveat on its own line in both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localeval.errors import printable
from localeval.versions.changes import sample_name, unscored_why
from localeval.versions.diff import MetricDiff, VersionDiff
from localeval.versions.estimate import CI_METHOD, SMALL_SAMPLE, Difference

if TYPE_CHECKING:
    from rich.console import JustifyMethod

__all__ = ["terminal_table", "to_markdown", "difference_text", "notes", "row_label",
           "sentences", "method_note", "verdict_text", "caveats", "NOTATION"]

#: What diff.md's notation means, said once under its table.
NOTATION = (
    "How to read this: `n` counts the pairs scored in both versions. `new − base [95% CI]` "
    "is the mean of new's score minus base's over those pairs, then its 95% interval "
    "[low, high]: a negative value means new scored lower (an improvement where lower is "
    "better, such as noise_sensitivity). `p / Holm`: the p-value of no change, then "
    "Holm-adjusted over the metrics tested. `better / worse / same`: pairs whose score "
    "improved, got worse, or did not change; `unscored +a −b`: a pairs became unscored in "
    "new, b became scored. `newly fail / pass @T`: samples that passed threshold T in base "
    "and fail it in new, and the reverse. `unscored`: pairs unscored in base or new, of all "
    "pairs, left out of the difference. In the sentences, \"better/worse by X [a, b]\" is "
    "the size of the change and its interval, in the direction named; \"not shown\" is an "
    "interval that includes 0 (which is not evidence that nothing changed), beside the "
    "smallest difference the comparison could have shown (`could show ≥ X`) and the questions "
    "that would show the observed one with 80% power. In the sample lists, "
    "`0.750 → 0.250 (-0.500)` is base's score → new's score (new − base), `—` no score; a "
    "sample is named by its id, or `base id / new id` when the runs were paired by question. "
    "⚠ marks a caveat.")


def _f(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def difference_text(e: Difference) -> str:
    """``+0.060 [+0.020, +0.100]``, or "—" without an estimate."""
    if e.diff is None:
        return "—"
    ci = f" [{e.ci[0]:+.3f}, {e.ci[1]:+.3f}]" if e.ci else ""
    return f"{e.diff:+.3f}{ci}"


def _p(e: Difference) -> str:
    if e.p is None:
        return "—"
    return f"{e.p:.3f} / {e.p_holm:.3f}" if e.p_holm is not None else f"{e.p:.3f}"


def _moves(m: MetricDiff) -> str:
    c = m.counts()
    s = f"{c['improved']} / {c['worse']} / {c['unchanged']}"
    if c["became_unscored"] or c["became_scored"]:
        s += f"; unscored +{c['became_unscored']} −{c['became_scored']}"
    return s


def _crossings(m: MetricDiff) -> str:
    return f"{len(m.newly_failing())} / {len(m.newly_passing())} @{m.threshold:g}"


def row_label(m: MetricDiff, e: Difference) -> str:
    """The metric, and what kind of estimate a row holds when it is not the judge's own."""
    return m.metric if e.kind == "judge" else f"{m.metric} ({e.kind} by labels)"


def _judge_cells(m: MetricDiff, e: Difference) -> tuple[str, str, str, str]:
    """Base and new means, sample moves and threshold crossings: the judge's numbers, so
    shown on the judge-only row and left empty ("—") on a corrected row."""
    if e.kind != "judge":
        return "—", "—", "—", "—"
    return _f(m.mean_base), _f(m.mean_new), _moves(m), _crossings(m)


def _unscored_cell(m: MetricDiff, e: Difference) -> str:
    """Pairs unscored in base or new, of all paired samples (judge-only row)."""
    if e.kind != "judge":
        return "—"
    c = m.counts()
    return f"{c['unscored']} of {c['pairs']}"


def verdict_text(m: MetricDiff, e: Difference) -> str:
    """The verdict, "not shown" with what the comparison could have shown beside it, and
    marked "not evidence" beside a judged verdict whose judge failed."""
    from localeval.versions.verdicts import NOT_SHOWN, power_badge

    v = m.verdict(e)
    if v == NOT_SHOWN:
        badge = power_badge(e, worse_sign=1 if m.lower_is_better else -1)
        v += f" ({badge})" if badge else ""
    return f"{v} ⚠ not evidence" if e.kind == "judge" and m.judge_caveat else v


def caveats(m: MetricDiff, e: Difference) -> list[str]:
    """What qualifies one estimate: few pairs, pairs left unscored, an unfit judge."""
    out = [e.caveat] if e.caveat else []
    if e.kind == "judge":
        if m.counts()["unscored"]:
            out.append(f"{m.unscored_text()}: not in the difference")
        if m.judge_caveat:
            out.append(m.judge_caveat)
    return out


def method_note(d: VersionDiff) -> str:
    """How the judge-only intervals and p-values were computed, for the rules this diff used."""
    judge = [m.judge for m in d.metrics if m.judge.ci is not None]
    parts = []
    if any(e.method == CI_METHOD for e in judge):
        parts.append(f"from {SMALL_SAMPLE} pairs: 95% percentile paired bootstrap "
                     f"({d.n_resamples} resamples, seed {d.seed}), p = bootstrap test")
    small = [e for e in judge if e.method != CI_METHOD and not e.binary]
    if small:
        draws = (f"; above 20 pairs {d.n_resamples} random sign vectors, seed {d.seed}"
                 if any(e.n > 20 for e in small) else "")
        parts.append(f"below {SMALL_SAMPLE} pairs: 95% paired randomization (sign-flip) "
                     f"interval and test, exact over every sign vector up to 20 pairs{draws}")
    if any(e.binary for e in judge):
        parts.append("paired 0/1 scores: exact McNemar test, Newcombe's interval (method 10) "
                     "reaching 0 where the test does not reject")
    tested = f"Holm-adjusted over {d.tested} metric{'s' if d.tested != 1 else ''}"
    return ("difference = new − base over samples scored in both; "
            + ("; ".join(parts) or "no interval") + f"; {tested}")


def sentences(d: VersionDiff) -> list[tuple[str, list[str]]]:
    """(sentence, caveats) per metric and estimate; no caveat for most."""
    return [(m.sentence(e, d.tested), caveats(m, e)) for m in d.metrics for e in m.estimates]


def notes(d: VersionDiff) -> list[str]:
    """Pairing, unpaired samples, set-up differences, skipped metrics, method."""
    b, n = d.base.results, d.new.results
    out = [f"base = {b.name} ({b.source}); new = {n.name} ({n.source})", d.pairing_text()]
    out += [f"{side}: {x}" for side, rs in (("base", b), ("new", n)) for x in rs.notes]
    for side, ids in (("base", d.pairing.only_a), ("new", d.pairing.only_b)):
        if ids:
            out.append(f"only in {side} ({len(ids)}): {', '.join(ids[:20])}"
                       + (" …" if len(ids) > 20 else ""))
    out += [d.same_setup_text()] if d.same_setup else d.signature_notes
    out += d.fitness_notes()
    out += [f"not compared: {m} ({why})" for m, why in d.not_compared]
    out += d.direction_notes
    out.append(method_note(d))
    if d.labels:
        out.append(f"corrected = PPI++ difference of the labels (base: {d.labels['base']}, "
                   f"{d.labels['draw_base']}; new: {d.labels['new']}, {d.labels['draw_new']}) "
                   f"on the rows labelled in both; interval: {d.labels.get('interval', 'normal')}, "
                   "Holm over the corrected metrics; see docs/calibrated-estimates.md")
    return out


def terminal_table(d: VersionDiff) -> Any:
    """A rich renderable: one row per metric and estimate, the sentences, then the notes."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    def txt(x: Any, style: str = "") -> Text:
        return Text(printable(x), style=style)

    t = Table(title=txt(f"Diff: {d.new.results.name} (new) vs {d.base.results.name} (base)"))
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("metric", "left"), ("n", "right"), ("unscored", "right"), ("base", "right"),
        ("new", "right"),
        ("new − base [95% CI]", "right"), ("p / Holm", "right"),
        ("better / worse / same", "right"), ("newly fail / pass", "right"), ("verdict", "left"))
    for col, just in columns:
        t.add_column(col, justify=just)
    for m in d.metrics:
        for e in m.estimates:
            t.add_row(txt(row_label(m, e)), str(e.n), _unscored_cell(m, e),
                      *_judge_cells(m, e)[:2], difference_text(e), _p(e),
                      *_judge_cells(m, e)[2:], verdict_text(m, e))
    lines: list[Text] = []
    for sentence, cavs in sentences(d):
        lines.append(txt(sentence))
        lines += [txt(f"  ⚠ {c}", style="yellow") for c in cavs]
    lines += [Text("")] + [txt(f"· {x}", style="dim") for x in notes(d)]
    return Group(t, *lines)


def to_markdown(d: VersionDiff) -> str:
    """diff.md: the table, the sentences, the samples that got worse, the notes."""
    from localeval.report import escape_markdown

    def esc(x: Any) -> str:
        return escape_markdown(printable(x))

    b, n = d.base.results.name, d.new.results.name
    lines = [f"## Diff: {esc(n)} (new) vs {esc(b)} (base)", "",
             "| metric | n | unscored | base | new | new − base [95% CI] | p / Holm "
             "| better / worse / same | newly fail / pass | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for m in d.metrics:
        for e in m.estimates:
            base, new, moves, cross = _judge_cells(m, e)
            lines.append(f"| {esc(row_label(m, e))} | {e.n} | {_unscored_cell(m, e)} | {base} "
                         f"| {new} | {difference_text(e)} | {_p(e)} | {moves} | {cross} | "
                         f"{verdict_text(m, e)} |")
    lines += ["", NOTATION, ""]
    for sentence, cavs in sentences(d):
        lines.append(f"- {esc(sentence)}")
        lines += [f"  - ⚠ {esc(c)}" for c in cavs]
    lines.append("")
    for m in d.metrics:
        lines += _samples_md(m, esc)
    lines += ["### Notes", ""] + [f"- {esc(x)}" for x in notes(d)]
    return "\n".join(lines) + "\n"


#: Ids named per list in diff.md (diff.json lists every one).
MD_IDS = 50


def _code(x: Any) -> str:
    from localeval.report import code_span

    return code_span(printable(x))


def _listed(items: list[str]) -> str:
    """Rendered items, at most MD_IDS, then how many more."""
    more = f" … and {len(items) - MD_IDS} more (all in diff.json)" if len(items) > MD_IDS else ""
    return (", ".join(items[:MD_IDS]) or "—") + more


def _samples_md(m: MetricDiff, esc: Any) -> list[str]:
    """One metric's samples by id: those that moved most, newly failing or passing, unscored."""
    moved = m.changed_most()
    unscored = [s for s in m.samples if s.status != "scored"]
    fail, ok = m.newly_failing(), m.newly_passing()
    if not (moved or unscored or fail or ok):
        return []
    out = [f"### {esc(m.metric)}: samples", ""]
    if fail or ok:
        out.append(f"- newly failing at {m.threshold:g} ({len(fail)}): "
                   f"{_listed([_code(x) for x in fail])}; newly passing ({len(ok)}): "
                   f"{_listed([_code(x) for x in ok])}")
    if unscored:
        out.append(f"- unscored in base or new ({len(unscored)} of {len(m.samples)}): "
                   + _listed([f"{_code(sample_name(s))} ({esc(unscored_why(s))})" for s in unscored]))
    if moved:
        out.append(f"- changed most ({min(len(moved), 10)} of {len(moved)}):")
        for s in moved[:10]:
            delta = "" if s.delta is None else f" ({s.delta:+.3f})"
            out.append(f"  - {_code(sample_name(s))}: {_f(s.base)} → {_f(s.new)}{delta}"
                       + (f", unscored ({esc(unscored_why(s))})" if s.status != "scored" else ""))
    return out + [""]
