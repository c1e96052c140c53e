"""Agreement between two judges (or two tools) scoring the same samples: :func:`compare`.

``compare(a, b)`` pairs the samples of two result sets (:func:`align`) and,
per metric, computes the agreement statistics of :func:`paired_stats` with
bootstrap 95% CIs. The result, :class:`Comparison`, renders itself as JSON,
Markdown and a terminal table; ``pages`` writes it to files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from localeval.agreement.scatter import scatter_svg
from localeval.agreement.small_samples import SMALL_N
from localeval.agreement.statistics import (
    CI_PERCENTILE,
    STAT_LABELS,
    Stat,
    caveat_note,
    ci_methods_note,
    metric_seed,
    paired_stats,
)
from localeval.errors import DataError, UsageError
from localeval.resultsets import (
    Alignment,
    ResultSet,
    SideFitness,
    agreement_caveat,
    align,
    metric_models,
    side_fitness,
    side_notes,
)

__all__ = ["MetricAgreement", "Comparison", "compare", "NOT_EVIDENCE"]

#: The mark beside a judged metric whose judge (on either side) failed its judge check.
NOT_EVIDENCE = "⚠ not evidence (judge check)"


@dataclass
class MetricAgreement:
    """Agreement on one metric between A and B."""

    metric: str
    metric_b: str
    n: int
    unscored_a: int
    unscored_b: int
    mean_a: float | None
    mean_b: float | None
    stats: dict[str, Stat]
    confusion: list[list[int]] | None = None
    levels: int | None = None
    a_values: list[float] = field(default_factory=list, repr=False)
    b_values: list[float] = field(default_factory=list, repr=False)
    ids: list[str] = field(default_factory=list, repr=False)
    #: B's id of each pair (``ids`` holds A's)
    b_ids: list[str] = field(default_factory=list, repr=False)
    #: the metric is scored by a judge (on either side; the metric registry says which)
    uses_judge: bool = False
    #: beside a judged metric whose judge (on either side) failed its judge check
    judge_caveat: str = ""

    @property
    def label(self) -> str:
        return self.metric if self.metric == self.metric_b else f"{self.metric} ~ {self.metric_b}"

    def to_dict(self, values: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "metric": self.metric, "metric_b": self.metric_b, "n": self.n,
            "unscored_a": self.unscored_a, "unscored_b": self.unscored_b,
            "mean_a": self.mean_a, "mean_b": self.mean_b,
            "stats": {k: v.to_dict() for k, v in self.stats.items()},
            "confusion": self.confusion, "rating_levels": self.levels,
            "uses_judge": self.uses_judge, "judge_caveat": self.judge_caveat or None,
        }
        if values:
            d["pairs"] = [{"id": i, **({"id_b": j} if j != i else {}), "a": a, "b": b}
                          for i, j, a, b in zip(self.ids, self.b_ids or self.ids,
                                                self.a_values, self.b_values)]
        return d


@dataclass
class Comparison:
    """The result of :func:`compare`: per-metric agreement plus how samples were paired."""

    a_name: str
    b_name: str
    a_source: str
    b_source: str
    alignment: Alignment
    threshold: float
    n_boot: int
    seed: int
    metrics: list[MetricAgreement]
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)
    a_signature: dict[str, Any] = field(default_factory=dict)
    b_signature: dict[str, Any] = field(default_factory=dict)
    #: the two sets compared (questions, working, reasons: for the page's disagreements)
    a_set: ResultSet | None = field(default=None, repr=False, compare=False)
    b_set: ResultSet | None = field(default=None, repr=False, compare=False)
    #: each side's judge fitness (its judge check and health, from its summary.json)
    fitness: tuple[SideFitness, SideFitness] = (SideFitness("A"), SideFitness("B"))

    def __getitem__(self, metric: str) -> MetricAgreement:
        for m in self.metrics:
            if m.metric == metric:
                return m
        raise KeyError(metric)

    def to_dict(self, values: bool = False) -> dict[str, Any]:
        return {
            "a": {"name": self.a_name, "source": self.a_source, "signature": self.a_signature},
            "b": {"name": self.b_name, "source": self.b_source, "signature": self.b_signature},
            "alignment": self.alignment.to_dict(),
            "threshold": self.threshold, "n_boot": self.n_boot, "seed": self.seed,
            "ci_method": f"{CI_PERCENTILE} from {SMALL_N} paired samples; below, each "
                         "statistic's own method (its 'method')",
            "metrics": {m.label: m.to_dict(values) for m in self.metrics},
            "metrics_only_in_a": self.only_in_a, "metrics_only_in_b": self.only_in_b,
            "judge_fitness": {"A": self.fitness[0].to_dict(), "B": self.fitness[1].to_dict(),
                              "judged_metrics": self.judged, "notes": self.fitness_notes()},
        }

    @property
    def judged(self) -> list[str]:
        """The compared metrics a judge scored."""
        return [m.label for m in self.metrics if m.uses_judge]

    def fitness_notes(self) -> list[str]:
        """Each side's judge check in words, and each judged metric's caveat (when a judge
        failed its check): nothing when no judged metric is compared."""
        if not self.judged:
            return []
        return side_notes(self.fitness) + [f"{m.label}: ⚠ {m.judge_caveat}"
                                           for m in self.metrics if m.judge_caveat]

    def notes(self) -> list[str]:
        """Sources, pairing, CI methods and why any value is missing: what the numbers rest on."""
        al = self.alignment
        notes = [f"A = {self.a_name} ({self.a_source}{_judge_of(self.a_signature)}); "
                 f"B = {self.b_name} ({self.b_source}{_judge_of(self.b_signature)})",
                 f"paired by {_rule_text(al)}: {len(al.pairs)} matched, "
                 f"{len(al.only_a)} only in A, "
                 f"{len(al.only_b)} only in B" + (f" ({al.note})" if al.note else ""),
                 f"verdicts: pass when score >= {self.threshold:g}; 95% CIs from "
                 f"{self.n_boot} paired bootstrap resamples (seed {self.seed}), percentile",
                 ci_methods_note()]
        notes[1:1] = self.fitness_notes()
        if self.only_in_a:
            notes.append("metrics only in A: " + ", ".join(self.only_in_a))
        if self.only_in_b:
            notes.append("metrics only in B: " + ", ".join(self.only_in_b))
        for m in self.metrics:
            if m.unscored_a or m.unscored_b:
                notes.append(f"{m.label}: {m.unscored_a} pair(s) unscored by A, "
                             f"{m.unscored_b} by B (left out)")
            for k, s in m.stats.items():
                if s.reason:
                    notes.append(f"{m.label}: {STAT_LABELS[k]}: {s.reason}")
                if note := caveat_note(f"{m.label}: {STAT_LABELS[k]}", s):
                    notes.append(note)
        return notes

    def render_table(self) -> Any:
        """A rich Table with one column per metric and one row per statistic.

        Metrics are columns (there are usually a few) so that the table fits a
        terminal; each cell shows the value over its [95% CI].
        """
        from rich.table import Table
        from rich.text import Text

        # Text(), never a plain str, for names from the files: rich would parse "[/x]" in
        # a metric column or file name as markup (and raise MarkupError)
        t = Table(title=Text(f"Agreement: {self.a_name} (A) vs {self.b_name} (B)"),
                  caption=Text("\n".join(self.notes())), caption_justify="left")
        t.add_column("statistic", no_wrap=True)
        for m in self.metrics:
            t.add_column(Text(m.label), justify="right")
        t.add_row("n (pairs)", *[str(m.n) for m in self.metrics])
        t.add_row("mean A", *[_f(m.mean_a) for m in self.metrics])
        t.add_row("mean B", *[_f(m.mean_b) for m in self.metrics], end_section=True)
        for k, lab in STAT_LABELS.items():
            lab = lab + (f" @{self.threshold:g}" if k in ("kappa", "agreement") else "")
            t.add_row(lab, *[m.stats[k].text(3, "\n") if k in m.stats else "—"
                             for m in self.metrics])
        t.add_row("confusion\n(A fail/pass ×\nB fail/pass)",
                  *[_confusion_text(m.confusion) for m in self.metrics])
        if any(m.judge_caveat for m in self.metrics):
            t.add_row("judge check", *[NOT_EVIDENCE if m.judge_caveat else ""
                                       for m in self.metrics])
        return t

    def to_markdown(self) -> str:
        """GitHub Markdown: the agreement table, confusion matrices and notes.

        Names and notes come from the compared files (file names, metric
        columns, judge names): they are escaped, so a column called
        ``<img src=x>`` or ``**x**`` is shown as written, never rendered.
        """
        from localeval.report import escape_markdown as esc

        head = ["metric", "n", "mean A", "mean B"] + [
            STAT_LABELS[k] + (f" @{self.threshold:g}" if k == "kappa" else "")
            for k in STAT_LABELS]
        lines = [f"## Agreement: {esc(self.a_name)} (A) vs {esc(self.b_name)} (B)", "",
                 "| " + " | ".join(head) + " |",
                 "|---|" + "---:|" * (len(head) - 1)]
        for m in self.metrics:
            label = esc(m.label) + (" " + NOT_EVIDENCE if m.judge_caveat else "")
            cells = [label, str(m.n), _f(m.mean_a), _f(m.mean_b)] + [
                m.stats[k].text(3) if k in m.stats else "—" for k in STAT_LABELS]
            lines.append("| " + " | ".join(cells) + " |")  # the label is escaped, | included
        if self.judged:
            lines += ["", "Judge fitness:", ""] + [f"- {esc(n)}" for n in self.fitness_notes()]
        lines += ["", f"Confusion matrices at threshold {self.threshold:g} "
                      "(rows A, columns B; fail / pass):", ""]
        for m in self.metrics:
            if m.confusion:
                (ff, fp), (pf, pp) = m.confusion
                lines.append(f"- **{esc(m.label)}**: A fail → B fail {ff}, B pass {fp}; "
                             f"A pass → B fail {pf}, B pass {pp}")
        said = set(self.fitness_notes())  # under the table already
        lines += ["", "Notes:", ""] + [f"- {esc(n)}" for n in self.notes() if n not in said]
        return "\n".join(lines) + "\n"

    def scatter_svgs(self) -> dict[str, str]:
        """metric label -> inline SVG scatter of A against B (for the HTML report)."""
        return {m.label: scatter_svg(m.a_values, m.b_values, m.label, a_label=self.a_name,
                                     b_label=self.b_name, ids=m.ids) for m in self.metrics}


def _rule_text(al: Alignment) -> str:
    """``id (checked: question, contexts)``: the rule and what it rests on."""
    what = ", ".join(k.replace("_hash", "") for k in al.checked)
    return al.rule + (f" (checked: {what})" if al.rule == "id" and what else
                      f" ({what})" if al.rule == "content" and what else "")


def _judge_of(sig: Mapping[str, Any]) -> str:
    judge = sig.get("judge")
    return f", judge {judge}" if judge else ""


def _confusion_text(c: list[list[int]] | None) -> str:
    if not c:
        return "—"
    (ff, fp), (pf, pp) = c
    return f"{ff} {fp}\n{pf} {pp}"


def _f(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _metric_pairs(a: ResultSet, b: ResultSet,
                  metrics: Sequence[str] | Mapping[str, str] | None,
                  extra: Sequence[tuple[str, str]] = ()
                  ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(A metric, B metric) pairs to compare, and the metrics left only in A and only in B.

    ``extra`` pairs are added to ``metrics`` (to the shared metrics when it is None)."""
    ma, mb = a.metrics, b.metrics
    extra = [(p[0], p[1]) for p in extra]
    if metrics is None:
        items = [(m, m) for m in ma if m in mb]
        if not items and not extra:
            raise DataError(f"no metric in common: A ({a.source}) has {', '.join(ma)}; "
                            f"B ({b.source}) has {', '.join(mb)}. Pair them explicitly "
                            "(pairs=[('a_name', 'b_name')] or --pair A B)")
    else:
        items = list(metrics.items()) if isinstance(metrics, Mapping) else [(m, m)
                                                                             for m in metrics]
    items += [p for p in extra if p not in items]
    for x, y in items:
        if x not in ma:
            raise UsageError(f"metric {x!r} is not in A ({a.source}); it has: {', '.join(ma)}")
        if y not in mb:
            raise UsageError(f"metric {y!r} is not in B ({b.source}); it has: {', '.join(mb)}")
    if metrics is not None:
        return items, [], []
    used_a, used_b = {x for x, _ in items}, {y for _, y in items}
    return items, [m for m in ma if m not in used_a], [m for m in mb if m not in used_b]


def compare(a: ResultSet, b: ResultSet, *, metrics: Sequence[str] | Mapping[str, str] | None = None,
            threshold: float = 0.5, n_boot: int = 2000, seed: int = 0,
            align_by: str = "auto", pairs: Sequence[tuple[str, str]] = ()) -> Comparison:
    """Agreement of result set ``b`` with ``a``, per metric, with bootstrap 95% CIs.

    ``metrics``: names present in both (default: every shared metric), or a
    mapping {metric in A: metric in B} to pair differently named metrics.
    ``pairs``: (metric in A, metric in B) pairs added to those (``--pair``).
    ``threshold``: a score >= threshold is a "pass" verdict for kappa and the
    confusion matrix. Pairs where either side is unscored are left out and
    counted. Undefined statistics (constant inputs) are None with a reason.
    ``align_by``: how samples are paired (:func:`align`: ``auto`` = id, then
    content; ``position`` pairs row by row unchecked).
    """
    if not 0 <= n_boot <= 100_000:
        raise UsageError("n_boot must be between 0 and 100000")
    if not math.isfinite(threshold):
        raise UsageError(f"threshold must be a finite number, not {threshold!r}")
    al = align(a, b, how=align_by)
    chosen, only_a, only_b = _metric_pairs(a, b, metrics, pairs)
    rows: list[MetricAgreement] = []
    fitness = (side_fitness("A", a.fitness), side_fitness("B", b.fitness))
    caveat = agreement_caveat(*fitness)
    for ma, mb in chosen:
        xs, ys, ids, b_ids = [], [], [], []
        un_a = un_b = 0
        for ia, ib in al.pairs:
            va, vb = a[ia].get(ma), b[ib].get(mb)
            un_a += va is None
            un_b += vb is None
            if va is not None and vb is not None:
                xs.append(va)
                ys.append(vb)
                ids.append(ia)
                b_ids.append(ib)
        stats, extra = paired_stats(xs, ys, threshold=threshold, n_boot=n_boot,
                                    seed=metric_seed(seed, ma))
        rows.append(MetricAgreement(
            ma, mb, len(xs), un_a, un_b,
            float(np.mean(xs)) if xs else None, float(np.mean(ys)) if ys else None,
            stats, extra["confusion"], extra["levels"], xs, ys, ids, b_ids))
        judged = metric_models(ma)[0] or metric_models(mb)[0]
        rows[-1].uses_judge, rows[-1].judge_caveat = judged, caveat if judged else ""
    return Comparison(a.name, b.name, a.source, b.source, al, threshold, n_boot, seed, rows,
                      only_a, only_b, dict(a.signature), dict(b.signature), a, b, fitness)
