"""A version diff as text: the terminal table (rich) and diff.md (GitHub Markdown).

Both show, per metric and per estimate (judge-only, then corrected by labels),
the two means, the difference with its 95% interval, the Holm-adjusted p,
the sample counts, and the plain sentence; then the pairing and set-up notes.
Names, ids and metric keys come from user files: rich gets ``Text`` (never
markup) with every control character written as an escape (``errors.printable``:
an id holding ``\x1b[2J`` shows as that text, it does not clear the terminal),
and Markdown gets the same, then the report's ``escape_markdown``. An interval
from few pairs carries its caveat on its own line in both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localeval.errors import printable
from localeval.versions.diff import MetricDiff, VersionDiff
from localeval.versions.estimate import CI_METHOD, SMALL_SAMPLE, Difference

if TYPE_CHECKING:
    from rich.console import JustifyMethod

__all__ = ["terminal_table", "to_markdown", "difference_text", "notes", "row_label",
           "sentences", "method_note"]


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


def method_note(d: VersionDiff) -> str:
    """How the judge-only intervals and p-values were computed, for the rules this diff used."""
    judge = [m.judge for m in d.metrics if m.judge.ci is not None]
    parts = []
    if any(e.method == CI_METHOD for e in judge):
        parts.append(f"from {SMALL_SAMPLE} pairs: 95% percentile paired bootstrap "
                     f"({d.n_resamples} resamples, seed {d.seed}), p = bootstrap test")
    small = [e for e in judge if e.method != CI_METHOD]
    if small:
        draws = (f"; above 20 pairs {d.n_resamples} random sign vectors, seed {d.seed}"
                 if any(e.n > 20 for e in small) else "")
        parts.append(f"below {SMALL_SAMPLE} pairs: 95% paired randomization (sign-flip) "
                     f"interval and test, exact over every sign vector up to 20 pairs{draws}")
    tested = f"Holm-adjusted over {d.tested} metric{'s' if d.tested != 1 else ''}"
    return ("difference = new − base over samples scored in both; "
            + ("; ".join(parts) or "no interval") + f"; {tested}")


def sentences(d: VersionDiff) -> list[tuple[str, str]]:
    """(sentence, caveat) per metric and estimate; the caveat is "" for most."""
    return [(m.sentence(e, d.tested), e.caveat) for m in d.metrics for e in m.estimates]


def notes(d: VersionDiff) -> list[str]:
    """Pairing, unpaired samples, set-up differences, skipped metrics, method."""
    b, n = d.base.results, d.new.results
    out = [f"base = {b.name} ({b.source}); new = {n.name} ({n.source})", d.pairing_text()]
    for side, ids in (("base", d.pairing.only_a), ("new", d.pairing.only_b)):
        if ids:
            out.append(f"only in {side} ({len(ids)}): {', '.join(ids[:20])}"
                       + (" …" if len(ids) > 20 else ""))
    out += (["the same judge, prompts, embedder and verdict mode scored both runs"]
            if d.same_setup else d.signature_notes)
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
        ("metric", "left"), ("n", "right"), ("base", "right"), ("new", "right"),
        ("new − base [95% CI]", "right"), ("p / Holm", "right"),
        ("better / worse / same", "right"), ("newly fail / pass", "right"), ("verdict", "left"))
    for col, just in columns:
        t.add_column(col, justify=just)
    for m in d.metrics:
        for e in m.estimates:
            t.add_row(txt(row_label(m, e)), str(e.n), *_judge_cells(m, e)[:2],
                      difference_text(e), _p(e), *_judge_cells(m, e)[2:], m.verdict(e))
    lines: list[Text] = []
    for sentence, caveat in sentences(d):
        lines.append(txt(sentence))
        if caveat:
            lines.append(txt(f"  ⚠ {caveat}", style="yellow"))
    lines += [Text("")] + [txt(f"· {x}", style="dim") for x in notes(d)]
    return Group(t, *lines)


def to_markdown(d: VersionDiff) -> str:
    """diff.md: the table, the sentences, the samples that got worse, the notes."""
    from localeval.report import escape_markdown

    def esc(x: Any) -> str:
        return escape_markdown(printable(x))

    b, n = d.base.results.name, d.new.results.name
    lines = [f"## Diff: {esc(n)} (new) vs {esc(b)} (base)", "",
             "| metric | n | base | new | new − base [95% CI] | p / Holm | better / worse / same "
             "| newly fail / pass | verdict |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for m in d.metrics:
        for e in m.estimates:
            base, new, moves, cross = _judge_cells(m, e)
            lines.append(f"| {esc(row_label(m, e))} | {e.n} | {base} | {new} | "
                         f"{difference_text(e)} | {_p(e)} | {moves} | {cross} | "
                         f"{m.verdict(e)} |")
    lines.append("")
    for sentence, caveat in sentences(d):
        lines.append(f"- {esc(sentence)}")
        if caveat:
            lines.append(f"  - ⚠ {esc(caveat)}")
    lines.append("")
    for m in d.metrics:
        worst = m.worst(10)
        if worst:
            lines.append(f"### {esc(m.metric)}: worse in new ({len(m.worst())})")
            lines += [f"- {esc(s.new_id)}: {_f(s.base)} → {_f(s.new)}"
                      + (f" (unscored: {esc(s.new_reason or 'no value')})"
                         if s.status == "became_unscored" else "") for s in worst]
            lines.append("")
    lines += ["### Notes", ""] + [f"- {esc(x)}" for x in notes(d)]
    return "\n".join(lines) + "\n"
