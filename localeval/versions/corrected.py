"""The label-corrected difference of two versions: :func:`add_corrected`.

With labels for both versions on the same rows (a labelling sheet of each,
or any table of labels), the difference new − base of the *labels* is
estimated with PPI++ (``estimate.corrected_difference``): the judge's paired
differences on every row scored in both runs, corrected by the labelled
differences on the rows labelled in both. It is appended to each metric's
list of estimates as ``kind="corrected"``, so the tables, diff.json, the
page and the sentences show it beside the judge-only difference.

Labels for one version only cannot correct a difference (the other
version's judge bias stays unknown), and an active draw's inclusion
probabilities belong to the one run it was drawn from, so both are refused
with one message (exit 2), before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import DataError, UsageError
from localeval.estimate import REFERENCE_METHOD, interval_method
from localeval.versions.diff import MetricDiff, VersionDiff
from localeval.versions.estimate import Difference, holm

__all__ = ["add_corrected", "CORRECTED_METHOD"]

CORRECTED_METHOD = ("PPI++ paired difference: the judge's differences on every row scored in "
                    "both runs, corrected by the labelled differences")


def _check_side(rs: Any, labels: str | Path, side: str, random_draw: bool,
                scale: tuple[float, float] | None) -> Any:
    from localeval.estimate import check_labels

    c = check_labels(rs, labels, random_draw=random_draw, scale=scale)
    if c.draw is not None and c.draw.mode == "active":
        raise DataError(f"the {side} labels come from the active draw {c.draw.name}: its "
                        "inclusion probabilities belong to that one run, so they cannot weight "
                        "a difference of two runs; label a uniform draw of each version "
                        "('localeval label-sheet' without --active, the same -n and --seed)",
                        file=c.labels.source, column="draw")
    return c


def _one(md: MetricDiff, cb: Any, cn: Any, reference: bool = False) -> Difference:
    from scipy import stats

    from localeval.estimate import check_spread, corrected_difference, judge_correlation, labels_worth

    yb, yn = cb.values(md.metric), cn.values(md.metric)
    rows = md.scored
    fb = np.array([s.base for s in rows], dtype=float)
    fn = np.array([s.new for s in rows], dtype=float)
    idx = np.array([i for i, s in enumerate(rows) if s.base_id in yb and s.new_id in yn],
                   dtype=int)
    lb = np.array([yb[rows[i].base_id] for i in idx], dtype=float)
    ln = np.array([yn[rows[i].new_id] for i in idx], dtype=float)
    column = cn.labels.columns.get(md.metric, md.metric)
    where = f"{cb.labels.source} and {cn.labels.source}"
    check_spread(ln - lb, f"{md.metric} (new − base, rows labelled in both versions and "
                 "scored in both runs)", where, column)
    est = corrected_difference(fn, fb, ln, lb, idx, reference=reference)
    lab, corr = est["labels_only"], est["corrected"]
    if len(idx) >= len(rows) - 1:  # every row labelled: nothing left for the judge to add
        corr = lab
    # the test matching the interval (Student t or normal), so "excludes 0" and "p < 0.05"
    # agree
    if corr.se > 0:
        dist = stats.norm if corr.df is None else stats.t(corr.df)
        p = float(2 * dist.sf(abs(corr.mean) / corr.se))
    else:
        p = 1.0 if corr.mean == 0 else 0.0
    # the judge's differences are worth labels only where they track the labels' differences
    r = judge_correlation((fn - fb)[idx], ln - lb)
    tracks = r is not None and r > 0
    return Difference("corrected", corr.mean, (corr.low, corr.high), len(idx), p=p,
                      method=f"{CORRECTED_METHOD} ({corr.method})",
                      extra={"rows": len(rows), "labelled_base": len(yb),
                             "labelled_new": len(yn), "lambda": corr.lam,
                             "labels_only": lab.to_dict(),
                             "judge_worth_labels": labels_worth(lab, corr) if tracks else 0.0,
                             "judge_tracks_labels": tracks, "judge_label_correlation": r})


def add_corrected(d: VersionDiff, labels_base: str | Path | None, labels_new: str | Path | None,
                  *, random_draw: bool = False, scale: tuple[float, float] | None = None,
                  reference: bool = False) -> None:
    """Append the corrected difference to every metric that both labels files label.

    ``reference``: the plain PPI++ interval (ppi-python's) instead of the default
    one widened by independent pseudo-rows.

    Every check (both files, each against its run, every metric) runs before
    any estimate is added, so a refusal leaves ``d`` as it was.
    """
    if labels_base is None and labels_new is None:
        return
    if labels_base is None or labels_new is None:
        raise UsageError("a corrected difference needs labels for both versions on the same "
                         "rows (the judge's bias on the unlabelled version would stay unknown): "
                         "pass both --labels-base and --labels-new")
    cb = _check_side(d.base.results, labels_base, "base", random_draw, scale)
    cn = _check_side(d.new.results, labels_new, "new", random_draw, scale)
    targets = [md for md in d.metrics if md.metric in cb.metrics and md.metric in cn.metrics]
    if not targets:
        raise DataError(f"no compared metric has labels in both files (base labels: "
                        f"{', '.join(cb.metrics)}; new labels: {', '.join(cn.metrics)}; "
                        f"compared: {', '.join(m.metric for m in d.metrics)})",
                        file=cn.labels.source)
    ests = [(md, _one(md, cb, cn, reference)) for md in targets]
    for (md, e), p in zip(ests, holm([e.p for _, e in ests])):
        e.p_holm, e.family = p, len(ests)
        md.estimates.append(e)
    d.labels = {"base": cb.labels.source, "new": cn.labels.source,
                "draw_base": cb.draw.name if cb.draw else "uniform (as stated)",
                "draw_new": cn.draw.name if cn.draw else "uniform (as stated)",
                "metrics": [md.metric for md in targets],
                "interval": REFERENCE_METHOD if reference else interval_method()}
