"""Human-readable views of a run: a terminal table and a Markdown summary.

The Markdown form is what goes into a pull request comment; the terminal
table is what ``localeval run`` prints. Both end with the signature line,
so a number is never shown without what produced it. ``write_markdown_report``
saves the Markdown as ``summary.md``; the HTML report is built in ``localeval.report.html``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from localeval.report.health import health_line
from localeval.report.numbers import fmt

__all__ = ["summary_table", "summary_markdown", "write_markdown_report"]


def _rows(summary: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for key, e in summary["metrics"].items():
        ci = e.get("ci95")
        ci_s = f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]" if ci else "-"
        name = key + (" (lower is better)" if e.get("lower_is_better") else "")
        reasons = e.get("unscored_reasons") or {}
        top = next(iter(reasons), "")
        if len(top) > 40 and ":" in top:
            top = top.split(":", 1)[0]  # the full reason is in summary.json and the report
        unscored = str(e["unscored"]) + (f" ({top})" if top else "")
        rows.append((name, fmt(e["mean"]), ci_s, str(e["n"]), unscored))
    return rows


def escape_markdown(text: str) -> str:
    """Text safe inside Markdown prose: no live HTML, code spans or emphasis from data."""
    return "".join("\\" + c if c in "\\`*_[]<>|#" else c for c in text)


def summary_table(summary: Mapping[str, Any]) -> Any:
    """A rich Table of means, 95% CIs, counts and the main unscored reason.

    When the judge's health is doubtful, a warning panel comes first (a rich
    ``Group``), so nobody reads the numbers without it.
    """
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table

    t = Table(title=f"localeval summary ({summary.get('n_samples', '?')} samples)",
              caption=summary.get("signature_line", ""))
    t.add_column("metric")
    t.add_column("mean", justify="right")
    t.add_column("95% CI", justify="right")
    t.add_column("n", justify="right")
    t.add_column("unscored", overflow="fold", max_width=60)
    for r in _rows(summary):
        t.add_row(*r)
    warnings = (summary.get("judge_health") or {}).get("warnings") or []
    from rich.text import Text

    if not warnings:
        line = health_line(summary)
        return Group(t, Text(line, style="green")) if line else t

    body = Text("\n".join(f"- {w}" for w in warnings))
    return Group(Panel(body, title="judge health: these scores are doubtful",
                       border_style="red", expand=False), t)


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """A GitHub-flavoured Markdown table plus the signature and judge usage."""
    lines = ["| metric | mean | 95% CI | n | unscored |", "|---|---:|---:|---:|---|"]
    for r in _rows(summary):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    u = summary.get("usage") or {}
    lines.append("")
    if u.get("calls"):
        lines.append(f"Judge: {u['calls']} calls, {u.get('cache_hits', 0)} from cache, "
                     f"{u.get('prompt_tokens', 0)} prompt tokens ({u.get('reused_tokens', 0)} "
                     f"reused), {u.get('generated_tokens', 0)} generated, "
                     f"{float(u.get('seconds', 0.0)):.1f} s.")
    lines.append(f"`{summary.get('signature_line', '')}`")
    return "\n".join(lines) + "\n"


def write_markdown_report(out_dir: str | os.PathLike[str], summary: Mapping[str, Any]) -> Path:
    """Write ``out_dir/summary.md``: a heading, run notes, then ``summary_markdown``.

    The file is meant to be pasted into a pull request or printed with a
    Markdown viewer; the notes (interrupted run, judge or embedder warnings)
    come first because they change how the numbers read.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"## localeval: {summary.get('n_samples', '?')} samples", ""]
    stop = summary.get("interrupted")
    if stop:
        lines += [f"> **Interrupted run:** {stop.get('finished')} of {stop.get('total')} samples "
                  "finished; the numbers cover those only.", ""]
    health = summary.get("judge_health") or {}
    if health.get("warnings"):
        lines += ["> **Judge health: these scores are doubtful.**"]
        lines += [f"> - {escape_markdown(w)}" for w in health["warnings"]] + [""]
    elif health_line(summary):
        lines += [health_line(summary), ""]
    for note in summary.get("notes") or []:
        lines += [f"> {note}", ""]
    path = out / "summary.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text("\n".join(lines) + summary_markdown(summary), encoding="utf-8")
    os.replace(tmp, path)
    return path
