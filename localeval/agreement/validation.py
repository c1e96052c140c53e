"""Validate a judge against ground truth, labelled samples or human scores: :func:`validate`.

Two forms, chosen by the columns of the labels file (``labels``):

(a) **separation** (a ``label`` column, positive/negative, or a boolean
    ``contains_answer`` / ``has_positive``): samples whose retrieved contexts
    contain the answer should score high, the others low (``separation``).
(b) **human agreement** (``human_<metric>`` columns): per metric, Pearson,
    Spearman and Kendall correlation between judge and human scores with
    bootstrap CIs, mean absolute difference and bias; with a ``pair`` (or
    ``group``) column also the pairwise accuracy the RAGAS paper reports
    (``human_agreement``).

Samples are paired with the labels by :func:`align`. The result,
:class:`Validation`, renders itself as JSON, Markdown and a terminal table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from localeval.agreement.human_agreement import HumanAgreement, pairwise_accuracy
from localeval.agreement.labels import Labels, load_labels
from localeval.agreement.separation import Separation, measure_separation
from localeval.agreement.statistics import (
    STAT_LABELS,
    caveat_note,
    ci_methods_note,
    metric_seed,
    paired_stats,
)
from localeval.agreement.verdicts import Verdicts, count_verdicts
from localeval.errors import DataError, UsageError
from localeval.resultsets import (
    Alignment,
    ResultSet,
    SideFitness,
    align,
    load_result_set,
    metric_models,
    side_fitness,
    side_notes,
    validation_caveat,
)

__all__ = ["Validation", "validate", "STAT_NAMES", "SEP_HEAD", "HUMAN_HEAD"]

_HUMAN_STATS = ("pearson", "spearman", "kendall", "mad", "bias")
#: Statistic names as validate shows them: the two sides are the judge and the labels.
STAT_NAMES = {**STAT_LABELS, "bias": "bias (judge − labels)"}
SEP_HEAD = ["metric", "group", "n", "mean [95% CI]", "OK", "Partial", "NG", "unscored",
            "ROC AUC [95% CI]"]
HUMAN_HEAD = (["metric", "n", "mean judge", "mean labels"]
              + [STAT_NAMES[k] for k in _HUMAN_STATS] + ["pairwise acc."])


@dataclass
class Validation:
    """Result of :func:`validate`: verdicts in words, separation rows, human-agreement rows."""

    result_name: str
    result_source: str
    labels_source: str
    alignment: Alignment
    n_boot: int
    seed: int
    separation: list[Separation] = field(default_factory=list)
    human: list[HumanAgreement] = field(default_factory=list)
    unlabelled: int = 0
    threshold: float = 0.5
    #: per metric: the judge's pass/fail verdicts against the labels (what is said first)
    verdicts: list[Verdicts] = field(default_factory=list)
    #: the run's judge fitness (its judge check and health, from its summary.json)
    fitness: SideFitness = field(default_factory=lambda: SideFitness("the run"))
    #: the validated metrics a judge scored (the metric registry says which)
    judged: list[str] = field(default_factory=list)

    def judge_caveat(self, metric: str) -> str:
        """Beside a judged metric when the run's judge failed its judge check, else ""."""
        return validation_caveat(self.fitness) if metric in self.judged else ""

    def fitness_notes(self) -> list[str]:
        """The run's judge check in words (when a judged metric is validated)."""
        return side_notes([self.fitness]) if self.judged else []

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "result": {"name": self.result_name, "source": self.result_source},
            "labels": self.labels_source, "alignment": self.alignment.to_dict(),
            "n_boot": self.n_boot, "seed": self.seed, "threshold": self.threshold,
            "summary": self.sentences(),
            "verdicts": {v.metric: {**v.to_dict(),
                                    "judge_caveat": self.judge_caveat(v.metric) or None}
                         for v in self.verdicts},
            "judge_fitness": {**self.fitness.to_dict(), "judged_metrics": self.judged,
                              "caveat": validation_caveat(self.fitness) if self.judged
                              else None},
        }
        if self.separation:
            d["separation"] = {s.metric: s.to_dict() for s in self.separation}
            d["unlabelled"] = self.unlabelled
        if self.human:
            d["human_agreement"] = {h.metric: h.to_dict() for h in self.human}
        return d

    def sentences(self) -> list[str]:
        """One plain sentence per metric: how often the judge's verdict is the labels'
        (with the caveat of a judge that failed its judge check, on a judged metric)."""
        return [v.sentence() + (f" ⚠ {c}." if (c := self.judge_caveat(v.metric)) else "")
                for v in self.verdicts]

    def notes(self) -> list[str]:
        al = self.alignment
        notes = [f"judge: {self.result_name} ({self.result_source}); labels: "
                 f"{self.labels_source}",
                 f"verdicts: the judge passes a sample when its score >= {self.threshold:g}; "
                 "a positive label (or a human score >= the same threshold) is a pass",
                 f"paired by {al.rule}: {len(al.pairs)} matched, {len(al.only_a)} results "
                 f"without a label row, {len(al.only_b)} label rows without a result"
                 + (f" ({al.note})" if al.note else "")]
        notes += self.fitness_notes()
        if self.separation:
            notes.append("OK: score == 1, NG: score == 0, Partial: in between; AUC: chance "
                         "that a positive outscores a negative (ties count 1/2)")
            if self.unlabelled:
                notes.append(f"{self.unlabelled} paired sample(s) have no label (left out)")
        notes.append(f"95% CIs from {self.n_boot} bootstrap resamples (seed {self.seed})")
        notes.append(ci_methods_note())
        for s in self.separation:
            for what, st in (("AUC", s.auc), ("positive mean", s.positive.mean),
                             ("negative mean", s.negative.mean)):
                if st.reason:
                    notes.append(f"{s.metric}: {what}: {st.reason}")
                if note := caveat_note(f"{s.metric}: {what}", st):
                    notes.append(note)
        for h in self.human:
            for k, st in h.stats.items():
                if st.reason:
                    notes.append(f"{h.metric}: {STAT_NAMES[k]}: {st.reason}")
                if note := caveat_note(f"{h.metric}: {STAT_NAMES[k]}", st):
                    notes.append(note)
            if h.pairwise is not None and h.pairwise.reason:
                notes.append(f"{h.metric}: pairwise accuracy: {h.pairwise.reason}")
            if h.pairwise is not None and (note := caveat_note(f"{h.metric}: pairwise "
                                                               "accuracy", h.pairwise)):
                notes.append(note)
        return notes

    def sep_rows(self, sep: str) -> list[list[str]]:
        rows = []
        for s in self.separation:
            for gname, g in (("positive", s.positive), ("negative", s.negative)):
                r = g.rates
                rows.append([s.metric if gname == "positive" else "", gname, str(g.n),
                             g.mean.text(3, sep), _r(r["OK"]), _r(r["Partial"]), _r(r["NG"]),
                             str(g.unscored),
                             s.auc.text(3, sep) if gname == "positive" else ""])
        return rows

    def human_rows(self, sep: str) -> list[list[str]]:
        return [[h.metric, str(h.n), _r(h.mean_judge), _r(h.mean_human)]
                + [h.stats[k].text(3, sep) for k in _HUMAN_STATS]
                + [h.pairwise.text(3, sep) if h.pairwise is not None else "—"]
                for h in self.human]

    def render_table(self) -> Any:
        """A rich renderable: the sentences, the confusion matrices, then the statistics."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        parts: list[Any] = [Text(line) for line in self.sentences()]  # Text: no markup
        for v in self.verdicts:
            mx = v.matrix()
            t = Table(title=Text(f"{v.metric}: verdicts at {self.threshold:g}"),
                      title_justify="left")
            t.add_column("")
            for c in mx["columns"]:
                t.add_column(c, justify="right")
            for r in mx["rows"]:
                t.add_row(r["name"], *(str(c) for c in r["cells"]))
            parts.append(t)
        if self.separation:
            t = Table(title=Text(f"Separation of labelled samples: {self.result_name}"))
            for c in SEP_HEAD:
                t.add_column(c.replace(" [", "\n["), justify="left" if c in ("metric", "group")
                             else "right", no_wrap=c == "metric")
            for r in self.sep_rows("\n"):
                t.add_row(*(Text(c) for c in r))  # Text: no markup from file names
            parts.append(t)
        if self.human:
            t = Table(title=Text(f"Agreement with human scores: {self.result_name}"))
            for c in HUMAN_HEAD:
                t.add_column(c, justify="left" if c == "metric" else "right",
                             no_wrap=c == "metric")
            for r in self.human_rows("\n"):
                t.add_row(*(Text(c) for c in r))  # Text: no markup from file names
            parts.append(t)
        parts.append(Text("\n".join(self.notes())))
        return Group(*parts)

    def to_markdown(self) -> str:
        from localeval.report import escape_markdown as esc

        lines: list[str] = [f"## Judge validation: {esc(self.result_name)}", ""]
        lines += [esc(s) + "  " for s in self.sentences()] + [""]
        for v in self.verdicts:
            mx = v.matrix()
            lines += [f"### {esc(v.metric)}: verdicts at {self.threshold:g}", "",
                      "| | " + " | ".join(mx["columns"]) + " |", "|---|---:|---:|"]
            lines += ["| " + r["name"] + " | " + " | ".join(str(c) for c in r["cells"]) + " |"
                      for r in mx["rows"]]
            lines.append("")
        if self.separation:
            lines += ["### Separation of labelled samples", "", "| " + " | ".join(SEP_HEAD)
                      + " |", "|---|---|" + "---:|" * (len(SEP_HEAD) - 2)]
            lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in self.sep_rows(" ")]
            lines.append("")
        if self.human:
            lines += ["### Agreement with human scores", "", "| " + " | ".join(HUMAN_HEAD)
                      + " |", "|---|" + "---:|" * (len(HUMAN_HEAD) - 1)]
            lines += ["| " + " | ".join(esc(c) for c in r) + " |"
                      for r in self.human_rows(" ")]
            lines.append("")
        lines += ["Notes:", ""] + [f"- {esc(n)}" for n in self.notes()]
        return "\n".join(lines) + "\n"


def _r(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def validate(result: ResultSet | str | Path, labels: Labels | str | Path, *,
             metrics: Sequence[str] | None = None, n_boot: int = 2000,
             seed: int = 0, align_by: str = "auto", threshold: float = 0.5) -> Validation:
    """Check a judge's scores against labels: separation (form a) and/or human agreement (b).

    ``metrics``: which metrics of ``result`` to report (default: all; for
    human agreement, those with a ``human_<metric>`` column). ``align_by``:
    how results and labels are paired (see :func:`align`). ``threshold``: a
    score >= threshold is a pass, for the verdict counts said first.
    """
    if not math.isfinite(threshold):
        raise UsageError(f"threshold must be a finite number, not {threshold!r}")
    rs = result if isinstance(result, ResultSet) else load_result_set(result)
    lab = labels if isinstance(labels, Labels) else load_labels(labels, run_metrics=rs.metrics)
    al = align(rs, lab.as_result_set(), how=align_by)
    chosen = list(metrics) if metrics else rs.metrics
    for m in chosen:
        if m not in rs.metrics:
            raise UsageError(f"metric {m!r} is not in {rs.source}; it has: "
                             + ", ".join(rs.metrics))
    out = Validation(rs.name, rs.source, lab.source, al, n_boot, seed, threshold=threshold,
                     fitness=side_fitness(rs.name, rs.fitness))
    if lab.binary:
        out.unlabelled = sum(1 for _, lid in al.pairs if lid not in lab.binary)
        for m in chosen:
            labelled = [(rs[rid].get(m), lab.binary[lid]) for rid, lid in al.pairs
                        if lid in lab.binary]
            out.verdicts.append(count_verdicts(m, [j for j, _ in labelled],
                                               [b for _, b in labelled], threshold))
            pos: list[float] = []
            neg: list[float] = []
            un_pos = un_neg = 0
            for rid, lid in al.pairs:
                if lid not in lab.binary:
                    continue
                v = rs[rid].get(m)
                positive = lab.binary[lid]
                if v is None:
                    un_pos += positive
                    un_neg += not positive
                else:
                    (pos if positive else neg).append(v)
            out.separation.append(measure_separation(m, pos, neg, un_pos, un_neg, n_boot,
                                                      metric_seed(seed, m)))
    hm = [m for m in lab.human_metrics if m in chosen]
    if lab.human and not hm:
        raise DataError(f"no human_<metric> column matches a metric of {rs.source} "
                        f"(labels: {', '.join('human_' + m for m in lab.human_metrics)}; "
                        f"results: {', '.join(rs.metrics)})", file=lab.source)
    for m in hm:
        js, hs, gs, un = [], [], [], 0
        both = [(rs[rid].get(m), h) for rid, lid in al.pairs
                if (h := lab.human.get(lid, {}).get(m)) is not None]
        if not lab.binary:
            out.verdicts.append(count_verdicts(m, [j for j, _ in both],
                                               [h >= threshold for _, h in both], threshold,
                                               ("pass", "fail")))
        for rid, lid in al.pairs:
            h = lab.human.get(lid, {}).get(m)
            if h is None:
                continue
            j = rs[rid].get(m)
            if j is None:
                un += 1
                continue
            js.append(j)
            hs.append(h)
            gs.append(lab.groups.get(lid, ""))
        # labels first: bias is then the mean of judge - labels, as named (STAT_NAMES)
        stats, _ = paired_stats(hs, js, threshold=None, n_boot=n_boot,
                                seed=metric_seed(seed, m), which=_HUMAN_STATS,
                                sides=("labels", "judge"))
        pw, npairs = (None, 0)
        if lab.groups:
            pw, npairs = pairwise_accuracy(js, hs, gs, n_boot, metric_seed(seed, m) + 1)
        out.human.append(HumanAgreement(m, len(js), un,
                                        float(np.mean(js)) if js else None,
                                        float(np.mean(hs)) if hs else None, stats, pw, npairs))
    shown = dict.fromkeys([v.metric for v in out.verdicts] + [s.metric for s in out.separation]
                          + [h.metric for h in out.human])
    out.judged = [m for m in shown if metric_models(m)[0]]
    return out


