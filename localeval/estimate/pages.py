"""What ``localeval estimate`` and ``label-sheet`` show and write.

The terminal table, estimate.json and estimate.md name each number for what
it is: the judge-only mean estimates *the judge*, not the truth; the
labels-only and corrected means estimate the labelled quantity. Files are
rendered in memory first and written through temporary files, so a failure
leaves nothing half written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from localeval.agreement import ResultSet, align, load_result_set
from localeval.estimate.analysis import EstimateResult
from localeval.estimate.draw import Draw, draw_rows
from localeval.estimate.ppi import Estimate
from localeval.estimate.sheet import sheet_rows, write_sheet
from localeval.estimate.uncertainty import run_uncertainty
from localeval.results import content_fields, dumps_strict

__all__ = ["render_estimate", "estimate_markdown", "estimate_dict", "write_estimate",
           "make_sheet", "JUDGE_WARNING"]

JUDGE_WARNING = ("the judge-only mean estimates the judge, not the truth: it carries the "
                 "judge's bias, and its interval only covers the judge's own average")


def _fmt(e: Estimate, interval: bool = True) -> str:
    return f"{e.mean:.3f} [{e.low:.3f}, {e.high:.3f}]" if interval else f"{e.mean:.3f}"


def _sentence(m: Any) -> str:
    return (f"the {m.n_rows} judge scores were worth about {m.worth:.0f} extra labels "
            f"({m.n_labelled} labels did the work of {m.n_labelled + m.worth:.0f})")


def estimate_dict(r: EstimateResult) -> dict[str, Any]:
    return {"run": r.run, "labels": r.labels, "draw": r.draw, "level": r.level,
            "interval": r.method,
            "alignment": r.alignment, "judge_only_warning": JUDGE_WARNING,
            "metrics": [m.to_dict() for m in r.metrics], "notes": r.notes}


def estimate_markdown(r: EstimateResult) -> str:
    pct = f"{r.level:.0%}"
    lines = ["# Corrected estimates\n", f"Run: `{r.run}`  ", f"Labels: `{r.labels}` "
             f"(draw: {r.draw})  ", f"Corrected interval: {r.method}\n",
             f"| metric | judge only* | labels only ({pct}) | "
             f"corrected ({pct}) | labelled / rows | judge bias on labelled rows |",
             "|---|---|---|---|---|---|"]
    for m in r.metrics:
        lines.append(f"| {m.metric} | {_fmt(m.judge, False)} | {_fmt(m.labels)} | "
                     f"{_fmt(m.corrected)} | {m.n_labelled} / {m.n_rows} | {m.bias.mean:+.3f} "
                     f"[{m.bias.low:+.3f}, {m.bias.high:+.3f}] |")
    lines += ["", f"\\* {JUDGE_WARNING}.", ""]
    lines += [f"- {m.metric}: {_sentence(m)}; lambda = {m.corrected.lam if m.corrected.lam is not None else 0:.2f}"
              for m in r.metrics]
    lines += [f"- note: {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


def render_estimate(r: EstimateResult) -> Any:
    """The terminal table (rich), with the judge-only warning as its caption."""
    from rich.table import Table

    t = Table(title=f"Corrected estimates ({r.method})", caption="* " + JUDGE_WARNING)
    for c in ("metric", "judge only*", "labels only", "corrected", "labelled/rows",
              "judge bias", "judge worth"):
        t.add_column(c)
    for m in r.metrics:
        t.add_row(m.metric, _fmt(m.judge, False), _fmt(m.labels), _fmt(m.corrected),
                  f"{m.n_labelled}/{m.n_rows}", f"{m.bias.mean:+.3f}",
                  f"~{m.worth:.0f} labels")
    return t


def write_estimate(r: EstimateResult, out_dir: str | Path) -> list[Path]:
    """estimate.json and estimate.md in ``out_dir``; returns the paths written."""
    out = Path(out_dir)
    texts = {out / "estimate.json": dumps_strict(estimate_dict(r), indent=2) + "\n",
             out / "estimate.md": estimate_markdown(r)}
    out.mkdir(parents=True, exist_ok=True)
    for p, text in texts.items():
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    return list(texts)


def _samples(rs: ResultSet, dataset: Any) -> dict[str, Any]:
    """The run's rows' Samples (question, contexts...) by run id, paired by the alignment."""
    if dataset is None:
        return {}
    from localeval.dataset import load_dataset

    ds = load_dataset(dataset)
    by_id = {s.id: s for s in ds}
    data = ResultSet({s.id: {} for s in ds}, source=str(dataset), format="dataset",
                     questions={s.id: s.question for s in ds if s.question},
                     hashes={s.id: content_fields(None, s.contexts, s.answer) for s in ds})
    al = align(rs, data)
    return {a: by_id[b] for a, b in al.pairs}


def make_sheet(run: str | Path, out: str | Path, n: int, *, seed: int = 0, active: bool = False,
               metrics: list[str] | None = None, dataset: Any = None) -> tuple[Draw, list[Path]]:
    """Draw ``n`` rows of ``run`` and write the labelling sheet and its sidecar."""
    from localeval.errors import DataError

    rs = load_result_set(run)
    chosen = metrics or rs.metrics
    for m in chosen:
        if m not in rs.metrics:
            raise DataError(f"the run has no metric {m!r} (it has: {', '.join(rs.metrics)})",
                            file=rs.source)
    ids = list(rs.scores)
    if active:
        u, basis = run_uncertainty(rs, ids, chosen)
        d = draw_rows(ids, n, seed, mode="active", uncertainty=u, basis=basis)
    else:
        d = draw_rows(ids, n, seed)
    from types import SimpleNamespace

    samples = _samples(rs, dataset) or {sid: SimpleNamespace(question=q)
                                         for sid, q in rs.questions.items()}
    header, rows = sheet_rows(d, chosen, samples, rs.scores, rs.details)
    return d, list(write_sheet(out, header, rows, d, rs.source))
