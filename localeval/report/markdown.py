"""Human-readable views of a run: a terminal table and a Markdown summary.

The Markdown form is what goes into a pull request comment; the terminal
table is what ``localeval run`` prints. Both end with the signature line,
so a number is never shown without what produced it. ``write_markdown_report``
saves the Markdown as ``summary.md``; the HTML report is built in ``localeval.report.html``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping

from localeval.errors import printable
from localeval.output import make_folder
from localeval.report.corrected import corrected_note, corrected_rows
from localeval.report.health import health_line
from localeval.report.judged import CI_MARK, ci_note, judge_unfit, judged_keys
from localeval.report.numbers import fmt, unscored_note
from localeval.report.summary import run_label
from localeval.results import atomic_file

__all__ = ["summary_table", "summary_markdown", "write_markdown_report", "escape_markdown",
           "code_span"]


def _rows(summary: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    rows = []
    judged = judged_keys(summary)
    unfit = judge_unfit(summary)
    for key, e in summary["metrics"].items():
        ci = e.get("ci95")
        ci_s = f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]" if ci else "-"
        if ci and key in judged:
            ci_s += CI_MARK  # the judge's own average: the note under the table says so
        name = key + (" (lower is better)" if e.get("lower_is_better") else "")
        if unfit and key in judged:
            name += f" ({unfit})"
        reasons = e.get("unscored_reasons") or {}
        top = next(iter(reasons), "")
        if len(top) > 40 and ":" in top:
            top = top.split(":", 1)[0]  # the full reason is in summary.json and the report
        unscored = str(e["unscored"]) + (f" ({top})" if top else "")
        note = unscored_note(e)
        rows.append((name, fmt(e["mean"]) + (f" ({note})" if note else ""), ci_s, str(e["n"]),
                     unscored))
        rows += corrected_rows(summary, key)  # with --labels: the corrected mean below it
    return rows


# Backslash-escaped in prose (CommonMark escapes any ASCII punctuation): HTML tags and
# entities, code spans, emphasis, strikethrough, links and images, table cells, headings.
_MD_SPECIAL = frozenset("\\`*_~[]<>|#&")
# ``_`` between two letters or digits can neither open nor close emphasis (CommonMark's
# flanking rules), so metric names like noise_sensitivity stay readable as written.
_SAFE_UNDERSCORE = re.compile(r"(?<=[^\W_])_(?=[^\W_])")


def escape_markdown(text: Any) -> str:
    """Text safe inside Markdown prose or a table cell: no live HTML, entities, code
    spans, emphasis or links from data, and one line (a newline in a judge name or a
    reason would end the table row or start a heading)."""
    one_line = " ".join(str(text).split())
    keep = {m.start() for m in _SAFE_UNDERSCORE.finditer(one_line)}
    return "".join("\\" + c if c in _MD_SPECIAL and i not in keep else c
                   for i, c in enumerate(one_line))


def prose_markdown(text: Any) -> str:
    """A note or warning as Markdown prose: its `backticked` commands stay code spans
    (escaped they would show as \\`...\\`), everything else is ``escape_markdown``-ed."""
    parts = re.split(r"(`[^`]+`)", " ".join(str(text).split()))
    return "".join(code_span(p[1:-1]) if i % 2 else _keep_edges(p, escape_markdown(p))
                   for i, p in enumerate(parts))


def _keep_edges(raw: str, escaped: str) -> str:
    """``escaped`` with the spaces ``raw`` had at its ends (escape_markdown strips them)."""
    lead = " " if raw[:1] == " " else ""
    return lead + escaped + (" " if raw[-1:] == " " and escaped else "")


def code_span(text: Any, *, in_table: bool = False) -> str:
    """``text`` as one inline code span, whatever backticks it holds.

    CommonMark closes a code span at the next run of exactly as many backticks
    as opened it, so the fence is one longer than the longest run inside, and a
    space pads text that starts or ends with a backtick (or a space, which the
    renderer would strip). Inside a span nothing is live (no HTML, no emphasis).
    ``in_table``: a ``|`` is escaped, as GFM tables require even inside spans
    (outside a table the backslash would show).
    """
    t = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", t)), default=0)
    fence = "`" * (longest + 1)
    if t[:1] in ("`", " ") or t[-1:] in ("`", " "):
        t = f" {t} "
    if in_table:
        t = t.replace("|", "\\|")
    return f"{fence}{t}{fence}"


def summary_table(summary: Mapping[str, Any]) -> Any:
    """A rich Table of means, 95% CIs, counts and the main unscored reason, then the
    signature line (print with ``crop=False`` so it stays one line at any width).

    When the judge's health is doubtful, a warning panel comes first (a rich
    ``Group``), so nobody reads the numbers without it.
    """
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    # Text(), never plain str: rich parses "[...]" in strings as markup, and a judge
    # name or reason holding "[/x]" would raise MarkupError; printable: no control
    # character of a metric key, judge name or reason reaches the terminal raw
    title = f"localeval summary ({summary.get('n_samples', '?')} samples)"
    t = Table(title=title)
    # The signature goes below the table on one line, never wrapped (a wrapped line
    # breaks copy and grep: "verdicts:ha⏎rd"); print the group with crop=False.
    sig = Text(printable(summary.get("signature_line", "")), no_wrap=True, overflow="ignore")
    # A metric key is what users copy into -m and --fail-under: never cut ("tool_call_accur…"
    # in an 80-column CI log). The column is at least as wide as the longest key; what
    # follows a key ("(lower is better)") wraps under it; a terminal too narrow for that
    # gets the rows as a list (_Narrow).
    widest = max((len(printable(k)) for k in summary["metrics"]), default=6)
    t.add_column("metric", no_wrap=True)
    t.add_column("mean", justify="right")
    t.add_column("95% CI", justify="right")
    t.add_column("n", justify="right")
    t.add_column("unscored", overflow="fold", max_width=60)
    rows = [tuple(printable(c) for c in r) for r in _rows(summary)]
    for r in rows:
        t.add_row(Text(_key_first(r[0], widest)), *(Text(c) for c in r[1:]))
    captions = [c for c in (ci_note(summary), corrected_note(summary)) if c]
    if captions:
        t.caption = Text("\n".join(printable(c) for c in captions))
    view = _Narrow(t, widest, title, rows, t.caption)
    warnings = (summary.get("judge_health") or {}).get("warnings") or []
    if not warnings:
        line = health_line(summary)
        return Group(view, sig, Text(printable(line), style="green")) if line else Group(view, sig)

    body = Text("\n".join(f"- {printable(w)}" for w in warnings))
    return Group(Panel(body, title="judge health: these scores are doubtful",
                       border_style="red", expand=False), view, sig)


def _key_first(name: str, widest: int) -> str:
    """A metric's name cell: ``key (lower is better)`` on one line when it fits the key
    column, else the key and, under it, what follows it (the column does not wrap)."""
    key, sep, rest = name.partition(" (")
    return name if len(name) <= widest or not sep else f"{key}\n({rest}"


class _Narrow:
    """The summary table, or, in a terminal narrower than the longest metric key and the
    narrowest other columns, the same rows as a list: each key whole on its own line,
    the numbers under it (as ``localeval metrics`` falls back to a list)."""

    #: The other columns at their narrowest (mean, CI, n, unscored), borders and padding.
    OTHERS = 2 + 12 + 9 + 5 + 10 + 6

    def __init__(self, table: Any, widest: int, title: str, rows: list[tuple[str, ...]],
                 caption: Any) -> None:
        self.table, self.widest, self.title, self.rows, self.caption = (
            table, widest, title, rows, caption)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.padding import Padding
        from rich.text import Text

        if options.max_width >= self.widest + self.OTHERS:
            yield self.table
            return
        yield Text(self.title, style="italic")
        for name, mean, ci, n, unscored in self.rows:
            key, _, rest = name.partition(" (")
            yield Text(key, style="bold", no_wrap=True, overflow="ignore")
            more = f"({rest}\n" if rest else ""
            yield Padding(Text(f"{more}mean {mean} · 95% CI {ci} · n {n} · unscored "
                               f"{unscored}"), (0, 0, 0, 2))
        if self.caption is not None:
            yield self.caption


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """A GitHub-flavoured Markdown table plus the signature and judge usage."""
    lines = ["| metric | mean | 95% CI | n | unscored |", "|---|---:|---:|---:|---|"]
    for name, mean, ci, n, unscored in _rows(summary):
        # the metric key (from -m) and the unscored reason (judge or server text) are data
        cells = (escape_markdown(name), mean, ci.replace(CI_MARK, "\\" + CI_MARK), n,
                 escape_markdown(unscored))
        lines.append("| " + " | ".join(cells) + " |")
    u = summary.get("usage") or {}
    lines.append("")
    if ci_note(summary):
        lines += [escape_markdown(ci_note(summary)), ""]
    if corrected_note(summary):
        lines += [escape_markdown(corrected_note(summary)), ""]
    if u.get("calls"):
        lines.append(f"Judge: {u['calls']} calls, {u.get('cache_hits', 0)} from cache, "
                     f"{u.get('prompt_tokens', 0)} prompt tokens ({u.get('reused_tokens', 0)} "
                     f"reused), {u.get('generated_tokens', 0)} generated, "
                     f"{float(u.get('seconds', 0.0)):.1f} s.")
    lines.append(code_span(summary.get("signature_line", "")))
    return "\n".join(lines) + "\n"


def write_markdown_report(out_dir: str | os.PathLike[str], summary: Mapping[str, Any]) -> Path:
    """Write ``out_dir/summary.md``: a heading, run notes, then ``summary_markdown``.

    The file is meant to be pasted into a pull request or printed with a
    Markdown viewer; the notes (interrupted run, judge or embedder warnings)
    come first because they change how the numbers read.
    """
    out = Path(out_dir)
    if not out.is_dir():  # an existing folder: a fault is the file's, named by the write
        make_folder(out)  # OutputError (exit 2) naming the folder
    lines = [f"## localeval: {summary.get('n_samples', '?')} samples", ""]
    label = run_label(summary.get("run"))
    if label:  # the run's --name and --tag
        lines += [f"Run: {escape_markdown(label)}", ""]
    stop = summary.get("interrupted")
    if stop:
        lines += [f"> **Interrupted run:** {stop.get('finished')} of {stop.get('total')} samples "
                  "finished; the numbers cover those only.", ""]
    health = summary.get("judge_health") or {}
    if health.get("warnings"):
        lines += ["> **Judge health: these scores are doubtful.**"]
        lines += [f"> - {prose_markdown(w)}" for w in health["warnings"]] + [""]
    elif health_line(summary):
        lines += [prose_markdown(health_line(summary)), ""]
    for note in summary.get("notes") or []:
        lines += [f"> {prose_markdown(note)}", ""]
    path = out / "summary.md"
    # a blank line before the table: after a "> note" line the table would
    # otherwise continue the quote (Markdown's lazy continuation)
    text = "\n".join(lines) + "\n" + summary_markdown(summary)
    with atomic_file(path) as f:
        f.write(text)
    return path
