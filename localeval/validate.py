"""Validate a judge against ground truth: labelled samples or human scores.

Two forms, chosen by the columns of the labels file:

(a) **separation** (a ``label`` column, positive/negative, or a boolean
    ``contains_answer`` / ``has_positive``): samples whose retrieved contexts
    contain the answer should score high, the others low. Per label group:
    the mean score and the OK / Partial / NG distribution (score == 1,
    strictly between, == 0; the three-way reading of a 0/1/2 rating used in
    the MIRACL-ja context-relevance study), plus the ROC AUC of the score as
    a detector of positives, with a stratified bootstrap CI.
(b) **human agreement** (``human_<metric>`` columns): per metric, Pearson,
    Spearman and Kendall correlation between judge and human scores with
    bootstrap CIs, mean absolute difference and bias; with a ``pair`` (or
    ``group``) column also the pairwise accuracy the RAGAS paper reports
    (how often the judge orders two answers to the same question as the
    humans do).

Samples are paired with the labels by :func:`localeval.results_io.align`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from localeval.compare import (
    CI_PERCENTILE,
    STAT_LABELS,
    Stat,
    _bca,
    _percentile,
    metric_seed,
    paired_stats,
)
from localeval.errors import DataError, UsageError
from localeval.results_io import (
    Alignment,
    ResultSet,
    align,
    canonical_metric_name,
    load_result_set,
    read_table,
)

__all__ = [
    "Labels",
    "GroupStats",
    "Separation",
    "HumanAgreement",
    "Validation",
    "load_labels",
    "validate",
    "verdict_label",
    "add_validate_arguments",
    "validate_main",
]

_LABEL_COLS = ("label", "contains_answer", "has_positive", "has_answer", "is_positive",
               "relevant")
_GROUP_COLS = ("pair", "pair_id", "group")
_ID_COLS = ("id", "sample_id", "qid")
_Q_COLS = ("question", "user_input", "query")
_TRUE = {"positive", "pos", "true", "t", "yes", "y", "1", "relevant", "contains", "has_answer"}
_FALSE = {"negative", "neg", "false", "f", "no", "n", "0", "irrelevant", "not_relevant"}
_HUMAN_STATS = ("pearson", "spearman", "kendall", "mad", "bias")


# -- labels ----------------------------------------------------------------------------
@dataclass
class Labels:
    """Ground truth per sample id: a binary label and/or human scores per metric."""

    source: str
    binary: dict[str, bool] = field(default_factory=dict)
    human: dict[str, dict[str, float | None]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    questions: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    ids_from: str = "id"
    label_column: str | None = None

    @property
    def human_metrics(self) -> list[str]:
        return list(dict.fromkeys(m for h in self.human.values() for m in h))

    def as_result_set(self) -> ResultSet:
        """The labels in ResultSet shape, so that :func:`align` can pair them."""
        return ResultSet({i: dict(self.human.get(i, {})) for i in self.order},
                         source=self.source, format="labels", questions=dict(self.questions),
                         ids_from=self.ids_from)


def _parse_label(v: Any, src: str, n: int, col: str, unit: str) -> bool | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
        if v in (0, 1):
            return bool(v)
    elif isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
    elif isinstance(v, float):
        return None
    raise DataError(f"label must be positive/negative (or true/false, 1/0), got {v!r}",
                    file=src, row=n, column=col, unit=unit)


def load_labels(path: str | Path) -> Labels:
    """Read a labels file (CSV, TSV, JSON or JSONL) with an id and label / human_<metric> columns.

    Without an id column, rows are numbered "1", "2", ... (row order), as in
    result sets. A localeval dataset with a ``label`` field (as written by
    scripts/build_validation_set.py) is a valid labels file.
    """
    rows, src, unit = read_table(path)
    cols = list(dict.fromkeys(c for _, r in rows for c in r))
    id_col = next((c for c in _ID_COLS if c in cols), None)
    q_col = next((c for c in _Q_COLS if c in cols), None)
    label_col = next((c for c in _LABEL_COLS if c in cols), None)
    group_col = next((c for c in _GROUP_COLS if c in cols), None)
    human_cols = {c: canonical_metric_name(c[len("human_"):]) for c in cols
                  if c.startswith("human_") and len(c) > len("human_")}
    if label_col is None and not human_cols:
        raise DataError("a labels file needs a 'label' column (positive/negative), a boolean "
                        "'contains_answer' column, or human_<metric> columns "
                        f"(found: {', '.join(cols)})", file=src)
    lab = Labels(src, ids_from="id" if id_col else "row", label_column=label_col)
    seen: dict[str, int] = {}
    for i, (n, r) in enumerate(rows, 1):
        if id_col:
            v = r.get(id_col)
            if v is None or v == "" or isinstance(v, (bool, list, dict)):
                raise DataError("missing id", file=src, row=n, column=id_col, unit=unit)
            sid = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        else:
            sid = str(i)
        if sid in seen:
            raise DataError(f"duplicate id {sid!r} (first at {unit} {seen[sid]})", file=src,
                            row=n, column=id_col, unit=unit)
        seen[sid] = n
        lab.order.append(sid)
        if label_col:
            b = _parse_label(r.get(label_col), src, n, label_col, unit)
            if b is not None:
                lab.binary[sid] = b
        if human_cols:
            h: dict[str, float | None] = {}
            for c, m in human_cols.items():
                v = r.get(c)
                if v is None or (isinstance(v, str) and not v.strip()):
                    h[m] = None
                    continue
                try:
                    if isinstance(v, bool):
                        raise ValueError
                    f = float(v)
                except (TypeError, ValueError):
                    raise DataError(f"human score must be a number, got {v!r}", file=src,
                                    row=n, column=c, unit=unit) from None
                h[m] = None if math.isnan(f) else f
            lab.human[sid] = h
        if group_col and r.get(group_col) not in (None, ""):
            lab.groups[sid] = str(r[group_col])
        if q_col and isinstance(r.get(q_col), str):
            lab.questions[sid] = r[q_col]
    return lab


# -- form (a): separation -------------------------------------------------------------------
def verdict_label(score: float, eps: float = 1e-9) -> str:
    """OK (== 1), NG (== 0) or Partial (in between), with a float tolerance."""
    if score >= 1.0 - eps:
        return "OK"
    if score <= 0.0 + eps:
        return "NG"
    return "Partial"


@dataclass
class GroupStats:
    """Scores of one label group (positive or negative)."""

    n: int
    unscored: int
    mean: Stat
    counts: dict[str, int]

    @property
    def rates(self) -> dict[str, float | None]:
        return {k: (c / self.n if self.n else None) for k, c in self.counts.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "unscored": self.unscored, "mean": self.mean.to_dict(),
                "counts": dict(self.counts), "rates": self.rates}


@dataclass
class Separation:
    """How well one metric separates positive from negative samples."""

    metric: str
    positive: GroupStats
    negative: GroupStats
    auc: Stat

    def to_dict(self) -> dict[str, Any]:
        return {"positive": self.positive.to_dict(), "negative": self.negative.to_dict(),
                "roc_auc": self.auc.to_dict()}


def _group(values: list[float], unscored: int, n_boot: int, seed: int) -> GroupStats:
    counts = {"OK": 0, "Partial": 0, "NG": 0}
    for v in values:
        counts[verdict_label(v)] += 1
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        mean = Stat(None, reason="no scored samples in this group")
    elif len(x) < 3 or n_boot == 0:
        mean = Stat(float(x.mean()), reason=None if n_boot == 0 else "too few for a CI")
    elif np.ptp(x) == 0:
        mean = Stat(float(x[0]), (float(x[0]), float(x[0])), None, "exact (constant)")
    else:
        ci, method = _bca((x,), lambda s, axis=-1: np.mean(s, axis=axis), n_boot, seed,
                          paired=False)
        mean = Stat(float(x.mean()), ci, None, method)
    return GroupStats(len(x), unscored, mean, counts)


def _auc_stat(pos: np.ndarray, neg: np.ndarray, axis: int = -1) -> np.ndarray:
    # AUC = Mann-Whitney U / (n_pos * n_neg); scipy's U handles ties by mid-ranks,
    # exactly as roc_auc_score does, and is vectorised along the resample axis.
    from scipy.stats import mannwhitneyu

    return mannwhitneyu(pos, neg, axis=axis).statistic / (pos.shape[axis] * neg.shape[axis])


def _separation(metric: str, pos: list[float], neg: list[float], un_pos: int, un_neg: int,
                n_boot: int, seed: int) -> Separation:
    from sklearn.metrics import roc_auc_score

    gp = _group(pos, un_pos, n_boot, seed)
    gn = _group(neg, un_neg, n_boot, seed + 1)
    if not pos or not neg:
        auc = Stat(None, reason="needs scored samples in both groups "
                                f"(positive {len(pos)}, negative {len(neg)})")
    else:
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        point = float(roc_auc_score(y, np.r_[pos, neg]))
        p, q = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
        if n_boot == 0 or min(len(p), len(q)) < 2:
            auc = Stat(point, reason=None if n_boot == 0 else "too few for a CI")
        elif np.ptp(np.r_[p, q]) == 0:
            auc = Stat(point, (point, point), None, "exact (every score equal)")
        else:
            # Stratified: positives and negatives resampled separately (paired=False),
            # so every resample keeps both classes and the AUC stays defined.
            ci, method = _bca((p, q), _auc_stat, n_boot, seed, paired=False)
            auc = Stat(point, ci, None, method + ", stratified by label")
    return Separation(metric, gp, gn, auc)


# -- form (b): human agreement ---------------------------------------------------------------
@dataclass
class HumanAgreement:
    """Agreement of one metric with human scores (the RAGAS paper's validation)."""

    metric: str
    n: int
    unscored: int
    mean_judge: float | None
    mean_human: float | None
    stats: dict[str, Stat]
    pairwise: Stat | None = None
    n_pairs: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = {"n": self.n, "unscored": self.unscored, "mean_judge": self.mean_judge,
             "mean_human": self.mean_human,
             "stats": {k: v.to_dict() for k, v in self.stats.items()}}
        if self.pairwise is not None:
            d["pairwise_accuracy"] = self.pairwise.to_dict()
            d["pairwise_comparisons"] = self.n_pairs
        return d


def _pairwise(judge: list[float], human: list[float], groups: list[str], n_boot: int,
              seed: int) -> tuple[Stat, int]:
    """Share of within-group pairs the judge orders as the humans do (judge ties count 1/2).

    The RAGAS paper's Table 1 ("agreement with human annotators in pairwise
    comparisons") is this accuracy, not a correlation. CI: percentile
    bootstrap over groups, since pairs within a group are not independent.
    """
    by: dict[str, list[tuple[float, float]]] = {}
    for j, h, g in zip(judge, human, groups):
        by.setdefault(g, []).append((j, h))
    credit, count = [], []
    for items in by.values():
        c = t = 0.0
        for i in range(len(items)):
            for k in range(i + 1, len(items)):
                dh = items[i][1] - items[k][1]
                if dh == 0:
                    continue
                dj = items[i][0] - items[k][0]
                t += 1
                c += 0.5 if dj == 0 else float((dj > 0) == (dh > 0))
        if t:
            credit.append(c)
            count.append(t)
    total = int(sum(count))
    if not total:
        return Stat(None, reason="no pair within a group has different human scores"), 0
    cr, ct = np.asarray(credit), np.asarray(count)
    point = float(cr.sum() / ct.sum())
    if n_boot == 0 or len(cr) < 2:
        return Stat(point, reason=None if n_boot == 0 else "one group: no CI"), total
    idx = np.random.default_rng(seed).integers(0, len(cr), size=(n_boot, len(cr)))
    ci, dropped, why = _percentile(cr[idx].sum(1) / ct[idx].sum(1), n_boot)
    return Stat(point, ci, why, CI_PERCENTILE + ", resampling groups", dropped), total


# -- the report -------------------------------------------------------------------------------
@dataclass
class Validation:
    """Result of :func:`validate`: separation rows, human-agreement rows, pairing info."""

    result_name: str
    result_source: str
    labels_source: str
    alignment: Alignment
    n_boot: int
    seed: int
    separation: list[Separation] = field(default_factory=list)
    human: list[HumanAgreement] = field(default_factory=list)
    unlabelled: int = 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "result": {"name": self.result_name, "source": self.result_source},
            "labels": self.labels_source, "alignment": self.alignment.to_dict(),
            "n_boot": self.n_boot, "seed": self.seed,
        }
        if self.separation:
            d["separation"] = {s.metric: s.to_dict() for s in self.separation}
            d["unlabelled"] = self.unlabelled
        if self.human:
            d["human_agreement"] = {h.metric: h.to_dict() for h in self.human}
        return d

    def _notes(self) -> list[str]:
        al = self.alignment
        notes = [f"judge: {self.result_name} ({self.result_source}); labels: "
                 f"{self.labels_source}",
                 f"paired by {al.rule}: {len(al.pairs)} matched, {len(al.only_a)} results "
                 f"without a label row, {len(al.only_b)} label rows without a result"
                 + (f" ({al.note})" if al.note else "")]
        if self.separation:
            notes.append("OK: score == 1, NG: score == 0, Partial: in between; AUC: chance "
                         "that a positive outscores a negative (ties count 1/2)")
            if self.unlabelled:
                notes.append(f"{self.unlabelled} paired sample(s) have no label (left out)")
        notes.append(f"95% CIs from {self.n_boot} bootstrap resamples (seed {self.seed})")
        for s in self.separation:
            for what, st in (("AUC", s.auc), ("positive mean", s.positive.mean),
                             ("negative mean", s.negative.mean)):
                if st.reason:
                    notes.append(f"{s.metric}: {what}: {st.reason}")
        for h in self.human:
            for k, st in h.stats.items():
                if st.reason:
                    notes.append(f"{h.metric}: {STAT_LABELS[k]}: {st.reason}")
            if h.pairwise is not None and h.pairwise.reason:
                notes.append(f"{h.metric}: pairwise accuracy: {h.pairwise.reason}")
        return notes

    def _sep_rows(self, sep: str) -> list[list[str]]:
        rows = []
        for s in self.separation:
            for gname, g in (("positive", s.positive), ("negative", s.negative)):
                r = g.rates
                rows.append([s.metric if gname == "positive" else "", gname, str(g.n),
                             g.mean.text(3, sep), _r(r["OK"]), _r(r["Partial"]), _r(r["NG"]),
                             str(g.unscored),
                             s.auc.text(3, sep) if gname == "positive" else ""])
        return rows

    def _human_rows(self, sep: str) -> list[list[str]]:
        return [[h.metric, str(h.n), _r(h.mean_judge), _r(h.mean_human)]
                + [h.stats[k].text(3, sep) for k in _HUMAN_STATS]
                + [h.pairwise.text(3, sep) if h.pairwise is not None else "—"]
                for h in self.human]

    def render_table(self) -> Any:
        """A rich renderable: the separation table, the human-agreement table, or both."""
        from rich.console import Group
        from rich.table import Table

        tables = []
        if self.separation:
            t = Table(title=f"Separation of labelled samples: {self.result_name}")
            t.add_column("metric", no_wrap=True)
            t.add_column("group")
            for c in ("n", "mean\n[95% CI]", "OK", "Partial", "NG", "unscored",
                      "ROC AUC\n[95% CI]"):
                t.add_column(c, justify="right")
            for r in self._sep_rows("\n"):
                t.add_row(*r)
            tables.append(t)
        if self.human:
            t = Table(title=f"Agreement with human scores: {self.result_name}")
            for c in ["metric", "n", "mean judge", "mean human"] + \
                    [STAT_LABELS[k] for k in _HUMAN_STATS] + ["pairwise acc."]:
                t.add_column(c, justify="left" if c == "metric" else "right",
                             no_wrap=c == "metric")
            for r in self._human_rows("\n"):
                t.add_row(*r)
            tables.append(t)
        tables[-1].caption = "\n".join(self._notes())
        tables[-1].caption_justify = "left"
        return tables[0] if len(tables) == 1 else Group(*tables)

    def to_markdown(self) -> str:
        lines: list[str] = [f"## Judge validation: {self.result_name}", ""]
        if self.separation:
            head = ["metric", "group", "n", "mean [95% CI]", "OK", "Partial", "NG", "unscored",
                    "ROC AUC [95% CI]"]
            lines += ["### Separation of labelled samples", "", "| " + " | ".join(head) + " |",
                      "|---|---|" + "---:|" * (len(head) - 2)]
            lines += ["| " + " | ".join(r) + " |" for r in self._sep_rows(" ")]
            lines.append("")
        if self.human:
            head = ["metric", "n", "mean judge", "mean human"] + \
                [STAT_LABELS[k] for k in _HUMAN_STATS] + ["pairwise acc."]
            lines += ["### Agreement with human scores", "", "| " + " | ".join(head) + " |",
                      "|---|" + "---:|" * (len(head) - 1)]
            lines += ["| " + " | ".join(r) + " |" for r in self._human_rows(" ")]
            lines.append("")
        lines += ["Notes:", ""] + [f"- {n}" for n in self._notes()]
        return "\n".join(lines) + "\n"


def _r(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def validate(result: ResultSet | str | Path, labels: Labels | str | Path, *,
             metrics: Sequence[str] | None = None, n_boot: int = 2000,
             seed: int = 0) -> Validation:
    """Check a judge's scores against labels: separation (form a) and/or human agreement (b).

    ``metrics``: which metrics of ``result`` to report (default: all; for
    human agreement, those with a ``human_<metric>`` column).
    """
    rs = result if isinstance(result, ResultSet) else load_result_set(result)
    lab = labels if isinstance(labels, Labels) else load_labels(labels)
    al = align(rs, lab.as_result_set())
    chosen = list(metrics) if metrics else rs.metrics
    for m in chosen:
        if m not in rs.metrics:
            raise UsageError(f"metric {m!r} is not in {rs.source}; it has: "
                             + ", ".join(rs.metrics))
    out = Validation(rs.name, rs.source, lab.source, al, n_boot, seed)
    if lab.binary:
        out.unlabelled = sum(1 for _, lid in al.pairs if lid not in lab.binary)
        for m in chosen:
            pos, neg, un_pos, un_neg = [], [], 0, 0
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
            out.separation.append(_separation(m, pos, neg, un_pos, un_neg, n_boot,
                                              metric_seed(seed, m)))
    hm = [m for m in lab.human_metrics if m in chosen]
    if lab.human and not hm:
        raise DataError(f"no human_<metric> column matches a metric of {rs.source} "
                        f"(labels: {', '.join('human_' + m for m in lab.human_metrics)}; "
                        f"results: {', '.join(rs.metrics)})", file=lab.source)
    for m in hm:
        js, hs, gs, un = [], [], [], 0
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
        stats, _ = paired_stats(js, hs, threshold=None, n_boot=n_boot,
                                seed=metric_seed(seed, m), which=_HUMAN_STATS)
        pw, npairs = (None, 0)
        if lab.groups:
            pw, npairs = _pairwise(js, hs, gs, n_boot, metric_seed(seed, m) + 1)
        out.human.append(HumanAgreement(m, len(js), un,
                                        float(np.mean(js)) if js else None,
                                        float(np.mean(hs)) if hs else None, stats, pw, npairs))
    return out


# -- command line ---------------------------------------------------------------------------
def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``localeval validate RESULTS LABELS`` (wired to :func:`validate_main`)."""
    p.add_argument("results", help="a localeval run directory / results.jsonl, or a RAGAS / "
                                   "deepeval export")
    p.add_argument("labels", help="CSV/JSON/JSONL with id and label (positive/negative) or "
                                  "human_<metric> columns")
    p.add_argument("-m", "--metrics", help="comma-separated metrics (default: all)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples "
                                                             "(default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-o", "--out", help="write validation.json and validation.md here")


def validate_main(args: argparse.Namespace) -> int:
    """``localeval validate``: print the report (or JSON), optionally write files; returns 0."""
    from localeval.compare import _split_metrics

    v = validate(args.results, args.labels, metrics=_split_metrics(args.metrics),
                 n_boot=args.n_boot, seed=args.seed)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "validation.json").write_text(json.dumps(v.to_dict(), ensure_ascii=False,
                                                        indent=2) + "\n", encoding="utf-8")
        (out / "validation.md").write_text(v.to_markdown(), encoding="utf-8")
    if args.json:
        print(json.dumps(v.to_dict(), ensure_ascii=False, indent=2))
    else:
        from localeval.compare import terminal_console

        terminal_console().print(v.render_table())
        if args.out:
            print(f"wrote {Path(args.out) / 'validation.md'}", file=sys.stderr)
    return 0
