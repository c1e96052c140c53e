"""What ``localeval estimate`` and ``label-sheet`` show and write.

The terminal table, estimate.json and estimate.md name each number for what
it is: the judge-only mean estimates *the judge*, not the truth; the
labels-only and corrected means estimate the labelled quantity. Files are
rendered in memory first and written through ``results.atomic_file``, so a
failure is one message naming the file (exit 2) and leaves nothing half
written and no temporary file. Names from the user's files (file names,
metric names) are escaped for Markdown (``report.code_span``,
``report.escape_markdown``) and for the terminal's markup.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from localeval.errors import UsageError
from localeval.estimate.analysis import MIN_LABELS, TRUSTED_LABELS, EstimateResult
from localeval.estimate.draw import Draw, draw_rows
from localeval.estimate.ppi import Estimate
from localeval.estimate.sheet import (
    check_sheet_target,
    draw_pool,
    judge_rows,
    sheet_rows,
    write_sheet,
)
from localeval.estimate.uncertainty import run_uncertainty
from localeval.report import code_span, escape_markdown, sample_question
from localeval.results import (
    RESULTS_FILE,
    SUMMARY_FILE,
    content_fields,
)
from localeval.resultsets import ResultSet, align, load_result_set

__all__ = ["render_estimate", "estimate_markdown", "estimate_dict", "write_estimate",
           "make_sheet", "JUDGE_WARNING", "NO_WORTH"]

JUDGE_WARNING = ("the judge-only mean estimates the judge, not the truth: it carries the "
                 "judge's bias, and its interval only covers the judge's own average")
#: Beside a judge-only mean when the run's judge failed its judge check (a note says more).
NOT_EVIDENCE = "⚠ not evidence (judge check)"


def _fmt(e: Estimate, interval: bool = True) -> str:
    return f"{e.mean:.3f} [{e.low:.3f}, {e.high:.3f}]" if interval else f"{e.mean:.3f}"


#: What the outputs say of a judge whose correlation with the labels is not positive.
NO_WORTH = "none (the judge does not track the labels)"


def _correlation(m: Any) -> str:
    return ("undefined: every labelled row has the same judge score"
            if m.correlation is None else f"{m.correlation:+.2f}")


def _sentence(m: Any) -> str:
    if not m.tracks:
        return (f"the {m.n_rows} judge scores were worth no labels: the judge does not track "
                f"the labels (correlation {_correlation(m)} on the {m.n_labelled} labelled "
                "rows)")
    return (f"the {m.n_rows} judge scores were worth about {m.worth:.0f} extra labels "
            f"({m.n_labelled} labels did the work of {m.n_labelled + m.worth:.0f})")


def _worth_cell(m: Any) -> str:
    return f"~{m.worth:.0f} labels" if m.tracks else NO_WORTH


def _judge_only(r: EstimateResult, m: Any) -> str:
    """The judge-only mean, marked when the run's judge failed its judge check."""
    return _fmt(m.judge, False) + (f" {NOT_EVIDENCE}" if r.judge_failed
                                   and m.metric in r.judged else "")


def estimate_dict(r: EstimateResult) -> dict[str, Any]:
    return {"run": r.run, "labels": r.labels, "draw": r.draw, "level": r.level,
            "interval": r.method,
            "alignment": r.alignment, "judge_only_warning": JUDGE_WARNING,
            "judge_check": {**r.fitness.to_dict(), "judged_metrics": r.judged,
                            "judge_only_not_evidence": r.judge_failed},
            "metrics": [m.to_dict() for m in r.metrics], "notes": r.notes}


def estimate_markdown(r: EstimateResult) -> str:
    pct = f"{r.level:.0%}"
    esc = escape_markdown
    lines = ["# Corrected estimates\n", f"Run: {code_span(r.run)}  ",
             f"Labels: {code_span(r.labels)} (draw: {esc(r.draw)})  ",
             f"Corrected interval: {esc(r.method)}\n",
             f"| metric | judge only* | labels only ({pct}) | "
             f"corrected ({pct}) | labelled / rows | judge bias on labelled rows |",
             "|---|---|---|---|---|---|"]
    for m in r.metrics:
        lines.append(f"| {esc(m.metric)} | {_judge_only(r, m)} | {_fmt(m.labels)} | "
                     f"{_fmt(m.corrected)} | {m.n_labelled} / {m.n_rows} | {m.bias.mean:+.3f} "
                     f"[{m.bias.low:+.3f}, {m.bias.high:+.3f}] |")
    lines += ["", f"\\* {JUDGE_WARNING}.", ""]
    lines += [f"- {esc(m.metric)}: {_sentence(m)}; lambda = "
              f"{m.corrected.lam if m.corrected.lam is not None else 0:.2f}" for m in r.metrics]
    lines += [f"- note: {esc(n)}" for n in r.notes]
    return "\n".join(lines) + "\n"


def render_estimate(r: EstimateResult) -> Any:
    """The terminal table (rich), with the judge-only warning as its caption."""
    from rich.markup import escape
    from rich.table import Table

    caption = "\n".join(["* " + JUDGE_WARNING] + [f"note: {escape(n)}" for n in r.notes])
    t = Table(title=f"Corrected estimates ({escape(r.method)})", caption=caption)
    for c in ("metric", "judge only*", "labels only", "corrected", "labelled/rows",
              "judge bias", "judge worth"):
        t.add_column(c)
    for m in r.metrics:
        t.add_row(escape(m.metric), _judge_only(r, m), _fmt(m.labels), _fmt(m.corrected),
                  f"{m.n_labelled}/{m.n_rows}", f"{m.bias.mean:+.3f}", _worth_cell(m))
    return t


def write_estimate(r: EstimateResult, out_dir: str | Path, *, policy: Any = None,
                   settings: Mapping[str, Any] | None = None) -> list[Path]:
    """estimate.json (with ``settings``, the options that made it) and estimate.md in
    ``out_dir``; returns the paths written.

    Through the output policy (``output.OutputPolicy``: the command's own, else one
    whose inputs are the run and the labels file): an ``out_dir`` that is, lies in or
    holds a file the estimate read, a folder that cannot be one or a file that cannot
    be written (a full disk) is one UsageError naming it (exit 2)."""
    from localeval.output import OutputPolicy

    policy = policy if policy is not None else OutputPolicy([r.run, r.labels])
    md = estimate_markdown(r)
    out = policy.folder(out_dir)
    return [policy.write_json(out / "estimate.json", estimate_dict(r), settings),
            policy.write_text(out / "estimate.md", md)]


def _samples(rs: ResultSet, dataset: Any) -> dict[str, Any]:
    """The run's rows' Samples (question, contexts...) by run id, paired by the alignment."""
    if dataset is None:
        return {}
    from localeval.dataset import load_dataset

    ds = load_dataset(dataset)
    by_id = {s.id: s for s in ds}
    data = ResultSet({s.id: {} for s in ds}, source=str(dataset), format="dataset",
                     questions={s.id: q for s in ds if (q := sample_question(s))},
                     hashes={s.id: content_fields(None, s.contexts, s.answer) for s in ds})
    al = align(rs, data)
    return {a: by_id[b] for a, b in al.pairs}


def _sheet_inputs(run: str | Path, dataset: Any) -> list[Path]:
    """Every file ``label-sheet`` reads: the run's results and summary, the dataset."""
    p = Path(run)
    out = [p / RESULTS_FILE, p / SUMMARY_FILE] if p.is_dir() else [p, p.with_name(
        SUMMARY_FILE)]
    if isinstance(dataset, (str, os.PathLike)):
        out.append(Path(dataset))  # a folder: nothing may be written inside it
    return out


def _check_n(n: int, ids: list[str], left_out: int, metrics: Iterable[str]) -> None:
    """-n is at least 1 (a sheet of no rows labels nothing) and at most the rows the judge
    scored (a draw cannot hold more rows than there are; -n N labels them all: a census)."""
    N = len(ids)
    rows = (f"{N} rows the judge scored ({left_out} rows it scored on none of "
            f"{', '.join(metrics)} are left out: a label there has no judge score to "
            "correct)" if left_out else f"{N} rows")
    if N < 1:
        raise UsageError(f"the run has {rows}: there is nothing to draw")
    if not 1 <= n <= N:
        why = ("a sheet of no rows has nothing to label" if n < 1 else
               "a draw cannot hold more rows than there are")
        raise UsageError(f"-n must be between 1 and {N}, not {n}: {why}. The run has {rows}; "
                         f"-n {N} labels every one of them (a census: the estimate is then "
                         "the labels' mean)")


def _size_notes(d: Draw) -> list[str]:
    """What a sheet of this size gives: a census, or fewer labels than an estimate needs."""
    N, n = len(d.ids), d.n
    if n == N:
        return [f"-n {N} draws every row the judge scored: a census, not a sample; "
                "'localeval estimate' gives the labels' mean"]
    if n < MIN_LABELS:
        return [f"-n {n}: 'localeval estimate' needs at least {MIN_LABELS} labels for an "
                f"interval, and {TRUSTED_LABELS} or more before you trust it "
                "(docs/calibrated-estimates.md)"]
    if n < TRUSTED_LABELS:
        return [f"-n {n}: fewer than {TRUSTED_LABELS} labels; 'localeval estimate' will say "
                "not to trust the interval yet (docs/calibrated-estimates.md)"]
    return []


def make_sheet(run: str | Path, out: str | Path, n: int, *, seed: int = 0, active: bool = False,
               metrics: list[str] | None = None, dataset: Any = None,
               notes: list[str] | None = None, show_judge: bool = False
               ) -> tuple[Draw, list[Path]]:
    """Draw ``n`` rows of ``run`` and write the labelling sheet, its sidecar and, for a
    blind sheet (the default; ``show_judge`` puts the judge's scores in it), the companion
    of the judge's scores (``sheet.judge_path``).

    Rows the judge scored on none of ``metrics`` are left out of the draw (a
    label there has no judge score to correct); ``notes`` gets a line saying
    how many, and what a sheet of this size gives (a census; fewer labels than
    an estimate needs). ``out`` is checked first (``sheet.check_sheet_target``):
    never an input, a folder, or a sheet that already holds labels.
    """
    from localeval.errors import DataError

    check_sheet_target(out, _sheet_inputs(run, dataset))
    rs = load_result_set(run)
    chosen = metrics or rs.metrics
    for m in chosen:
        if m not in rs.metrics:
            raise DataError(f"the run has no metric {m!r} (it has: {', '.join(rs.metrics)})",
                            file=rs.source)
    ids, left_out = draw_pool(rs, chosen)
    _check_n(n, ids, left_out, chosen)
    if left_out and notes is not None:
        notes.append(f"left out {left_out} of {len(rs.scores)} rows the judge scored on none "
                     f"of {', '.join(chosen)} (unscored: a label there has no judge score to "
                     "correct; the run's results.jsonl says why)")
    if active:
        u, bases = run_uncertainty(rs, ids, chosen)
        basis = " and ".join(bases)
        d = draw_rows(ids, n, seed, mode="active", uncertainty=u, basis=basis)
    else:
        d = draw_rows(ids, n, seed)
    from types import SimpleNamespace

    samples = _samples(rs, dataset) or {sid: SimpleNamespace(question=q)
                                         for sid, q in rs.questions.items()}
    if notes is not None:
        notes += _size_notes(d)
    header, rows = sheet_rows(d, chosen, samples, rs.scores, rs.details,
                              show_judge=show_judge)
    judge = None if show_judge else judge_rows(d, chosen, rs.scores, rs.details)
    return d, list(write_sheet(out, header, rows, d, rs.source, judge))
