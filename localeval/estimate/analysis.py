"""``estimate(run, labels)``: per metric, the judge-only, labels-only and corrected means.

Rows of the run and of the labels pair with ``resultsets.align`` (id, then
content), and every check runs before anything is computed or written:
labels for rows not in the run, a metric the run lacks, fewer than
``MIN_LABELS`` labels, labels that are all equal, a sheet whose rows or
inclusion probabilities differ from the draw it names, and labels that name no
draw unless the caller says they are a uniform random draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from localeval.errors import DataError, UsageError
from localeval.estimate.active import active_mean
from localeval.estimate.cautions import (
    CLASS_LABELS,
    RELIABLE_LABELS,
    TRUSTED_LABELS,
    few_label_notes,
    judge_correlation,
)
from localeval.estimate.draw import Draw, draw_rows
from localeval.estimate.labels import LabelSet, read_labels
from localeval.estimate.ppi import (
    Estimate,
    corrected_mean,
    judge_only,
    labels_only,
    labels_worth,
)
from localeval.estimate.sheet import draw_pool
from localeval.estimate.uncertainty import run_uncertainty
from localeval.results import MetricEstimates
from localeval.resultsets import (
    ResultSet,
    SideFitness,
    align,
    estimate_note,
    load_result_set,
    metric_models,
    side_fitness,
)

__all__ = ["MetricEstimate", "EstimateResult", "CheckedLabels", "estimate", "check_labels",
           "check_spread", "few_label_notes", "judge_correlation", "MIN_LABELS",
           "RELIABLE_LABELS", "TRUSTED_LABELS", "CLASS_LABELS", "PROB_TOL"]

#: Fewer labelled rows than this and no interval is given.
MIN_LABELS = 10
#: How far a sheet's inclusion probability may differ from the redrawn one (CSV round trip).
PROB_TOL = 1e-9
#: Labels lie in [0, 1] (graded ones rescaled), so does their mean: intervals are cut to it.
LABEL_BOUNDS = (0.0, 1.0)


@dataclass
class MetricEstimate:
    """One metric's numbers; ``bias`` is the judge's mean minus the labels' on labelled rows."""

    metric: str
    n_rows: int
    n_labelled: int
    judge: Estimate
    labels: Estimate
    corrected: Estimate
    bias: Estimate
    worth: float
    unscored: int = 0
    #: Pearson's correlation of the judge with the labels on the labelled rows (None:
    #: either is constant); a judge whose correlation is not positive does not track the
    #: labels and is worth no labels (``worth`` 0), whatever its interval
    correlation: float | None = None
    tracks: bool = True
    #: the arrays behind the numbers (judge on kept rows, labels, their positions,
    #: the judge's uncertainty per kept row and what it rests on): what planning and the
    #: calibration table work from
    arrays: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> MetricEstimates:
        return {"metric": self.metric, "rows": self.n_rows, "labelled": self.n_labelled,
                "judge_only": self.judge.to_dict(), "labels_only": self.labels.to_dict(),
                "corrected": self.corrected.to_dict(), "judge_bias": self.bias.to_dict(),
                "judge_worth_labels": self.worth, "judge_tracks_labels": self.tracks,
                "judge_label_correlation": self.correlation,
                "unscored_rows_left_out": self.unscored}


@dataclass
class EstimateResult:
    """What ``localeval estimate`` reports: per-metric estimates, the draw and the pairing."""

    run: str
    labels: str
    draw: str
    alignment: dict[str, Any]
    metrics: list[MetricEstimate] = field(default_factory=list)
    level: float = 0.95
    notes: list[str] = field(default_factory=list)
    #: how the corrected intervals were computed, in words
    method: str = ""
    #: the run's judge fitness (its judge check, from the run's summary.json)
    fitness: SideFitness = field(default_factory=lambda: SideFitness("run"))
    #: the estimated metrics a judge scored (the metric registry says which)
    judged: list[str] = field(default_factory=list)

    @property
    def judge_failed(self) -> bool:
        """A judged metric is estimated and the run's judge failed (or could not run) its
        judge check: its judge-only means are not evidence."""
        return bool(self.judged) and (self.fitness.failed or self.fitness.could_not_run)


def _redraw(lab: LabelSet, run: ResultSet, ids: list[str], metrics: Sequence[str],
            legacy: bool = False) -> Draw:
    """The sheet's draw made again from ``ids`` of the run (``legacy``: an active draw's
    uncertainty read as versions before soft ratings read it)."""
    assert lab.draw is not None
    name = lab.draw
    if name.mode == "active":
        u, bases = run_uncertainty(run, ids, metrics, legacy=legacy)
        basis = " and ".join(bases)
        return draw_rows(ids, name.n, name.seed, mode="active", uncertainty=u, basis=basis,
                         floor_share=name.floor)
    return draw_rows(ids, name.n, name.seed)


def _check_draw(lab: LabelSet, run: ResultSet, pairs: dict[str, str],
                metrics: Sequence[str]) -> Draw:
    """Redraw the sheet's draw from the run and refuse labels that do not match it.

    A sheet draws from the rows the judge scored on at least one of its metrics
    (``sheet.draw_pool``); sheets of earlier versions drew from every row, and
    found no uncertainty in soft ratings or an aspect critic's ``p_yes`` (their
    active draws of such runs were uniform). Each is tried, today's first: a
    sheet matching any is that draw.
    """
    sheet_metrics = lab.sheet_metrics or list(metrics)
    pools = [draw_pool(run, sheet_metrics)[0], list(run.scores)]
    if pools[0] == pools[1]:
        pools.pop()
    ways = [(ids, False) for ids in pools]
    if lab.draw is not None and lab.draw.mode == "active":
        ways += [(ids, True) for ids in pools
                 if run_uncertainty(run, ids, sheet_metrics, legacy=True)[0]
                 != run_uncertainty(run, ids, sheet_metrics)[0]]
    back = {rid: lid for lid, rid in pairs.items()}
    first: DataError | None = None
    for ids, legacy in ways:
        try:
            d = _redraw(lab, run, ids, sheet_metrics, legacy)
        except UsageError as e:  # the pool is too small for the sheet's n: not this draw
            first = first or DataError(f"the labels file does not match its draw: {e}",
                                       file=lab.source, column="id")
            continue
        problem = _mismatch(d, lab, pairs, back)
        if problem is None:
            return d
        first = first or problem
    assert first is not None
    raise first


def _mismatch(d: Draw, lab: LabelSet, pairs: dict[str, str], back: dict[str, str]
              ) -> DataError | None:
    """Why the labels are not draw ``d`` of the run (None: they are)."""
    for rid in d.drawn_ids:
        if rid not in back:
            return DataError(f"the labels file does not match draw {d.name} of this run: its "
                             f"row {rid!r} is missing (every drawn row must stay in the sheet; "
                             "leaving rows out breaks the random draw)",
                             file=lab.source, column="id")
    drawn, at = set(d.drawn_ids), d.position()
    for lid, n_row in lab.rows.items():
        rid = pairs[lid]
        if rid not in drawn:
            return DataError(f"id {lid!r} is not in draw {d.name} of this run: the labels file "
                             "does not match the draw it names", file=lab.source, row=n_row,
                             column="id", unit="row")
        want = float(d.prob[at[rid]])
        if abs(lab.prob.get(lid, -1.0) - want) > PROB_TOL:
            return DataError(f"inclusion probability {lab.prob.get(lid)!r} differs from the "
                             f"draw's {want!r}: the labels file does not match draw {d.name} "
                             "of this run", file=lab.source, row=n_row,
                             column="inclusion_probability", unit="row")
    return None


@dataclass
class CheckedLabels:
    """Labels that passed every check against a run: how their ids pair with the run's, and
    the draw they came from (None: a uniform random draw as stated, or labels on every row)."""

    run: ResultSet
    labels: LabelSet
    pairs: dict[str, str]        # label id -> run id
    metrics: list[str]
    draw: Draw | None
    alignment: dict[str, Any]
    #: every row of the run labelled, no draw named (nothing to correct: the labels' mean)
    census: bool = False

    def values(self, metric: str) -> dict[str, float]:
        """Run id -> label of ``metric``; refuses a drawn row left unlabelled."""
        lab = self.labels
        if self.draw is not None:
            missing = [lid for lid in lab.rows if lid not in lab.values[metric]]
            if missing:
                raise DataError(f"no label for drawn row {missing[0]!r}: label every drawn row "
                                "(a skipped row breaks the random draw)", file=lab.source,
                                row=lab.rows[missing[0]], column=lab.columns.get(metric, metric),
                                unit="row")
        return {self.pairs[lid]: y for lid, y in lab.values[metric].items()}


def check_labels(run: str | Path | ResultSet, labels: str | Path | LabelSet, *,
                 metrics: Sequence[str] | None = None, random_draw: bool = False,
                 scale: tuple[float, float] | None = None) -> CheckedLabels:
    """Read ``labels`` and check them against ``run`` (see the module docstring).

    ``random_draw``: the caller vouches that labels naming no draw are a uniform
    random draw of the run's rows (without it they are refused: a hand-picked
    subset gives a biased estimate whatever the interval says).
    """
    rs = run if isinstance(run, ResultSet) else load_result_set(run)
    lab = labels if isinstance(labels, LabelSet) else read_labels(
        labels, metric=metrics[0] if metrics and len(metrics) == 1 else None, scale=scale,
        run_metrics=rs.metrics)
    assert lab.result_set is not None
    al = align(rs, lab.result_set)
    if al.only_b:
        lid = al.only_b[0]
        raise DataError(f"id {lid!r} is not a row of the run {rs.source} ({len(al.only_b)} "
                        "labelled ids are not)", file=lab.source, row=lab.rows.get(lid),
                        column="id", unit="row")
    pairs = {lid: rid for rid, lid in al.pairs}
    chosen = list(metrics) if metrics else [m for m in lab.values if lab.values[m]]
    if not chosen:
        raise DataError("no labels in the file (every label cell is empty)", file=lab.source)
    for m in chosen:
        if m not in rs.metrics:
            raise DataError(f"the run has no metric {m!r} (it has: {', '.join(rs.metrics)})",
                            file=rs.source)
        if m not in lab.values:
            raise DataError(f"no label column for metric {m!r}", file=lab.source)
        _check_judge_scored(rs, lab, m, {pairs[lid] for lid in lab.values[m] if lid in pairs})
    draw: Draw | None = None
    # every row of the run labelled: a census, not a subset (nothing was chosen by hand)
    census = lab.draw is None and bool(rs.scores) and all(
        len({pairs[lid] for lid in lab.values[m] if lid in pairs}) == len(rs.scores)
        for m in chosen)
    if lab.draw is not None:
        draw = _check_draw(lab, rs, pairs, chosen)
        # ``label-sheet -n N``: every row it could draw is drawn, so every one is labelled
        census = bool(draw.chosen.all())
    elif not random_draw and not census:
        raise UsageError(f"{lab.source} names no draw from 'localeval label-sheet': labels for "
                         "a hand-picked subset give a biased estimate. Label a sheet from "
                         "'localeval label-sheet', or pass --random-draw if these rows are a "
                         "uniform random draw of the run's rows")
    return CheckedLabels(rs, lab, pairs, chosen, draw, al.to_dict(),
                         census=census and not random_draw)


def _check_judge_scored(rs: ResultSet, lab: LabelSet, m: str, rows: set[str]) -> None:
    """Refuse a metric the judge scored on none of its labelled rows, saying so."""
    if not rows or any(rs.scores[r].get(m) is not None for r in rows):
        return  # no labels (the spread check says so), or something to correct
    scored = sum(1 for s in rs.scores.values() if s.get(m) is not None)
    where = ("it scored none of the run's rows" if not scored else
             f"it scored {scored} of the run's {len(rs.scores)} rows, none of them labelled")
    raise DataError(f"the judge scored none of the {len(rows)} labelled rows for {m!r} "
                    f"({where}; results.jsonl says why each row is unscored): there is "
                    "nothing to correct", file=lab.source, column=lab.columns.get(m, m))


def check_spread(y: np.ndarray, what: str, source: str, column: str) -> None:
    """Refuse fewer than ``MIN_LABELS`` labels, or labels that are all equal (width-0 interval)."""
    if len(y) < MIN_LABELS:
        raise DataError(f"only {len(y)} labelled rows for {what} (at least {MIN_LABELS} are "
                        "needed for an interval)", file=source, column=column)
    if np.all(y == y[0]):
        raise DataError(f"all {len(y)} labels for {what} are {y[0]:g}: with no spread the "
                        "interval would have width 0; label more rows", file=source,
                        column=column)


def estimate(run: str | Path | ResultSet, labels: str | Path | LabelSet, *,
             metrics: Sequence[str] | None = None, random_draw: bool = False,
             scale: tuple[float, float] | None = None, level: float = 0.95,
             reference: bool = False) -> EstimateResult:
    """Corrected estimates of ``run``'s metrics from ``labels`` (checked by
    :func:`check_labels`). ``reference``: the plain PPI++ intervals of ppi-python
    (labels-only and corrected) instead of the default ones with pseudo-rows."""
    c = check_labels(run, labels, metrics=metrics, random_draw=random_draw, scale=scale)
    if c.draw is not None:
        name = c.draw.name + (" (every row: a census)" if c.census else "")
    else:
        name = "census (every row)" if c.census else "uniform (as stated)"
    out = EstimateResult(c.run.source, c.labels.source, name, c.alignment, level=level,
                         fitness=side_fitness("run", c.run.fitness),
                         judged=[m for m in c.metrics if metric_models(m)[0]])
    if out.judge_failed:
        out.notes.append(estimate_note(out.fitness))
    if c.census and c.draw is None:
        out.notes.append("every row of the run is labelled (a census, not a draw): the "
                         "corrected mean is the labels' mean")
    elif c.census and c.draw is not None:
        out.notes.append(f"every row the judge scored ({len(c.draw.ids)} of "
                         f"{len(c.run.scores)}) is labelled (label-sheet -n "
                         f"{len(c.draw.ids)}: a census, not a draw): the corrected mean is "
                         "the labels' mean; its interval treats these rows as a sample of "
                         "the data they came from")
    for m in c.metrics:
        out.metrics.append(_one_metric(c, m, level, reference))
    out.notes += few_label_notes(out.metrics, census=c.census)
    out.method = "; ".join(dict.fromkeys(m.corrected.method or "" for m in out.metrics))
    return out


def _one_metric(c: CheckedLabels, m: str, level: float, reference: bool) -> MetricEstimate:
    rs, lab, draw = c.run, c.labels, c.draw
    ids = list(rs.scores)
    judged = {sid: v for sid, v in rs.column(m).items() if v is not None}
    keep = [sid for sid in ids if sid in judged]
    pos = {sid: i for i, sid in enumerate(keep)}
    f = np.array([judged[sid] for sid in keep], dtype=float)
    got = [(pos[rid], y) for rid, y in c.values(m).items() if rid in pos]
    idx = np.array([g[0] for g in got], dtype=int)
    y = np.array([g[1] for g in got], dtype=float)
    check_spread(y, m, lab.source, lab.columns.get(m, m))
    if draw is not None and draw.mode == "active" and not c.census:
        at = draw.position()
        # a kept row outside the draw's pool was never drawable and holds no label; only
        # drawn rows' probabilities weigh anything, so any value does for it
        prob = np.array([draw.prob[at[sid]] if sid in at else 1.0 for sid in keep])
        lab_est = active_mean(f, y, idx, prob, level=level, lam=0.0, bounds=LABEL_BOUNDS)
        corr = active_mean(f, y, idx, prob, level=level, bounds=LABEL_BOUNDS)
    else:
        lab_est = labels_only(y, level, reference=reference, bounds=LABEL_BOUNDS)
        # every row labelled: nothing left for the judge to add
        corr = (corrected_mean(f, y, idx, level=level, reference=reference,
                               bounds=LABEL_BOUNDS)
                if len(y) < len(f) - 1 else lab_est)
    r = judge_correlation(f[idx], y)
    tracks = r is not None and r > 0
    uncertainty, bases = run_uncertainty(rs, keep, [m])
    return MetricEstimate(m, len(keep), len(y), judge_only(f, level), lab_est, corr,
                          labels_only(f[idx] - y, level),
                          labels_worth(lab_est, corr) if tracks else 0.0,
                          unscored=len(ids) - len(keep), correlation=r, tracks=tracks,
                          arrays={"judge": f, "labels": y, "labelled": idx,
                                  "uncertainty": uncertainty, "uncertainty_bases": bases})
