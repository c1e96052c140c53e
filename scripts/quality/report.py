"""quality.md: the figures as one Markdown table, with coverage and the qualifying notes."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["fmt", "to_markdown", "git_commit", "RAGAS_COLUMN"]

RAGAS_COLUMN = "ragas prompts, same judge"
_MAIN_STATS = ("pairwise accuracy", "ROC AUC", "Spearman ρ (graded)")


def fmt(v: float | None, ci: Sequence[float] | None) -> str:
    """A figure with its CI, or a dash when there is none."""
    if v is None:
        return "—"
    return f"{v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _limit_text(limits: Mapping[str, int]) -> str:
    default = limits.get("", 0)
    text = f"{default} per set and labelled metric" if default else "none"
    extra = [f"{k} {v or 'all'}" for k, v in limits.items() if k]
    return text + (f" ({', '.join(extra)})" if extra else "")


def _ragas_cell(r: Mapping[str, Any]) -> str:
    g = r.get("ragas")
    if not g:
        return "not run"
    if "note" in g:
        return g["note"]
    return (f"{fmt(g['value'], g['ci95'])}; n {g['n']}; unscored "
            f"{g['rows_unscored']}/{g['rows']} ({g['ragas_metric']})")


def _call_detail(run: Mapping[str, Any]) -> str:
    """How ragas's calls ended: cut at max_tokens, unanswered (timed out), tokens written."""
    if not run.get("calls"):
        return ""
    fin = run.get("finish_reasons") or {}
    return (f" ({fin.get('length', 0)} cut at max_tokens, {run.get('calls_unanswered', 0)} "
            f"unanswered, {run.get('completion_tokens', 0)} tokens written)")


def _ragas_lines(ragas: Mapping[str, Any]) -> list[str]:
    """What the ragas column is, and why its rows were unscored."""
    if ragas.get("error"):
        return ["", f"ragas baseline: not run to the end: {ragas['error']}"]
    metrics = ", ".join(f"{k} → {v}" for k, v in ragas.get("metrics", {}).items())
    srv = ragas.get("server") or {}
    lines = ["", f"{RAGAS_COLUMN}: ragas {ragas.get('version')}'s own metrics and prompts "
             f"({metrics}) through its OpenAI-compatible LLM wrapper, on "
             f"{srv.get('kind', 'the judge server')} at {srv.get('url')}; embedder "
             f"{ragas.get('embedder') or 'none'}; calls time out after "
             f"{ragas.get('call_timeout_s')} s, the baseline after "
             f"{ragas.get('budget_s')} s. NaN and failed rows are unscored, not dropped."]
    reasons: Counter[str] = Counter()
    for r in ragas.get("results", []):
        if r["statistic"] in _MAIN_STATS:
            reasons.update(r["unscored_reasons"])
    lines.append("ragas unscored rows by reason (all tasks): "
                 + ("; ".join(f"{k}: {v}" for k, v in reasons.most_common()) or "none"))
    for run in ragas.get("runs", []):
        lines.append(f"- ragas {run['set']}/{run['label_metric']} {run['ragas_metric']}: "
                     f"{run['rows']} rows, {run['unscored']} unscored, "
                     f"{run.get('calls', 0)} judge calls{_call_detail(run)}; "
                     f"{run['seconds']:.0f} s")
    return lines


def to_markdown(report: Mapping[str, Any]) -> str:
    """The figures as a Markdown table, with coverage and the notes that qualify them."""
    ragas = report.get("ragas")
    extra_head, extra_rule = (f" {RAGAS_COLUMN} |", "---|") if ragas else ("", "")
    lines = [f"## Judge quality: {report['judge_name']}", "",
             f"judge `{report['judge']}`; verdicts {', '.join(report['verdicts'])}; "
             f"limit {_limit_text(report['limit'])}; seed {report['seed']}; "
             f"{report['n_boot']} bootstrap resamples; localeval {report['localeval_version']} "
             f"at {report['git_commit']}; {report['date']}", "",
             "| set | labelled | localeval metric | verdicts | statistic | value [95% CI] | n "
             f"| unscored rows | distinct scores |{extra_head} published (gpt-3.5) |",
             f"|---|---|---|---|---|---:|---:|---:|---:|{extra_rule}---:|"]
    for r in report["results"]:
        cell = f" {_ragas_cell(r)} |" if ragas else ""
        lines.append(
            f"| {r['set']} | {r['label_metric']} | {r['metric']} | {r['verdicts']} "
            f"| {r['statistic']} | {fmt(r['value'], r['ci95'])} | {r['n']} {r['unit']} "
            f"| {r['rows_unscored']}/{r['rows']} | {r['distinct_values']} |{cell}"
            f" {'' if r['anchor'] is None else format(r['anchor'], '.2f')} |")
    reasons: Counter[str] = Counter()
    for r in report["results"]:
        if r["statistic"] in _MAIN_STATS:
            reasons.update(r["unscored_reasons"])
    lines += ["", "Unscored rows by reason (all tasks): "
              + ("; ".join(f"{k}: {v}" for k, v in reasons.most_common()) or "none"), ""]
    for run in report["runs"]:
        u = run.get("usage") or {}
        h = run.get("judge_health") or {}
        extra = "".join(f", {h[k]} {what}" for k, what in (
            ("duplicate_items", "duplicate items merged"),
            ("invented_items_dropped", "invented items dropped")) if h.get(k))
        lines.append(f"- {run['set']}/{run['label_metric']} ({run['verdicts']}): "
                     f"{run['rows']} rows, {u.get('calls', 0)} judge calls, "
                     f"{u.get('copied_calls', 0)} copied the prompt's example{extra}; "
                     f"{run['seconds']:.0f} s")
    if ragas:
        lines += _ragas_lines(ragas)
    notes = [r["reason"] for r in report["results"] if r.get("reason")]
    if notes:
        lines += ["", "Notes: " + "; ".join(sorted(set(notes)))]
    return "\n".join(lines) + "\n"


def git_commit(root: Path) -> str:
    """The checkout's short commit, marked when tracked files have changed since."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, text=True, capture_output=True).stdout.strip()
        return head + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
