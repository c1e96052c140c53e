"""Agreement between two judges (or two tools) scoring the same samples.

``compare(a, b)`` pairs the samples of two result sets (see
:func:`localeval.results_io.align`) and reports, per metric: Pearson,
Spearman and Kendall correlation (scipy.stats), mean absolute difference,
bias (mean of B - A), Cohen's kappa on pass/fail verdicts at a threshold and
quadratic-weighted kappa on rating scales (sklearn.metrics), the confusion
matrix, and a bootstrap 95% CI for every statistic.

Two bootstrap methods, on purpose:

* statistics that are defined on every resample (mean absolute difference,
  bias) use ``scipy.stats.bootstrap`` with paired resampling and BCa
  intervals, which correct for bias and skew;
* statistics that can be undefined on a resample (a correlation or a kappa
  when a resample happens to be constant, common with 0/0.5/1 judge scores)
  use a seeded numpy percentile bootstrap over the same paired indices. scipy's
  bootstrap cannot skip undefined resamples (BCa turns one NaN into a NaN
  interval), so these resamples are dropped and counted instead.

Point estimates always come from scipy/sklearn; the resample loops use
vectorised equivalents (tested equal to the library functions).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence
from xml.sax.saxutils import escape

import numpy as np

from localeval.errors import DataError, UsageError
from localeval.results_io import Alignment, ResultSet, align, load_result_set

__all__ = [
    "comparison_html",
    "Stat",
    "MetricAgreement",
    "Comparison",
    "compare",
    "paired_stats",
    "scatter_svg",
    "rating_levels",
    "metric_seed",
    "add_compare_arguments",
    "compare_main",
    "write_comparison",
    "terminal_console",
    "STAT_LABELS",
    "CI_BCA",
    "CI_PERCENTILE",
]

CI_BCA = "BCa bootstrap (scipy.stats.bootstrap)"
CI_PERCENTILE = "percentile bootstrap (numpy, seeded; undefined resamples dropped)"

#: Statistics in display order, with their short labels.
STAT_LABELS: dict[str, str] = {
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall": "Kendall τ",
    "mad": "MAD",
    "bias": "bias (B−A)",
    "agreement": "agree",
    "kappa": "Cohen κ",
    "weighted_kappa": "weighted κ (quadratic)",
}
_MIN_N = 3  # fewer paired samples: no correlation, no CI
_KENDALL_DENSE = 3000  # up to this n, Kendall resamples use an n x n matrix (36 MB)
_GRIDS = (1, 2, 3, 4, 5, 6, 8, 10)


@dataclass
class Stat:
    """One statistic: value, 95% CI, and why either is missing."""

    value: float | None
    ci95: tuple[float, float] | None = None
    reason: str | None = None
    method: str | None = None
    dropped: int = 0  # resamples where the statistic was undefined

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"value": self.value,
                             "ci95": list(self.ci95) if self.ci95 else None}
        if self.reason:
            d["reason"] = self.reason
        if self.method:
            d["ci_method"] = self.method
        if self.dropped:
            d["resamples_dropped"] = self.dropped
        return d

    def text(self, digits: int = 3, sep: str = " ") -> str:
        if self.value is None:
            return "—"
        s = f"{self.value:.{digits}f}"
        if self.ci95:
            s += f"{sep}[{self.ci95[0]:.{digits}f}, {self.ci95[1]:.{digits}f}]"
        return s


# -- vectorised statistics over a (n_boot, n) resample matrix ------------------------------
def _const_rows(X: np.ndarray) -> np.ndarray:
    return np.ptp(X, axis=-1) == 0


def _pearson_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    xc = X - X.mean(axis=-1, keepdims=True)
    yc = Y - Y.mean(axis=-1, keepdims=True)
    den = np.sqrt((xc * xc).sum(-1) * (yc * yc).sum(-1))
    bad = _const_rows(X) | _const_rows(Y)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(-1) / np.where(bad, 1.0, den)
    r = np.clip(r, -1.0, 1.0)
    r[bad] = np.nan
    return r


def _spearman_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return _pearson_rows(rankdata(X, axis=-1), rankdata(Y, axis=-1))


def _kendall_rows(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Kendall tau-b of (x[idx[r]], y[idx[r]]) for every resample row r.

    A resample is a count vector w over the n original samples, and tau-b's
    parts are quadratic forms in w: (concordant - discordant) pairs =
    w'Sw / 2 with S_ij = sign(x_i - x_j) sign(y_i - y_j), and pairs tied in x
    = sum over distinct x values of c(c-1)/2 (c: draws of that value). So all
    resamples cost one matrix product (BLAS) instead of 2000 scipy calls. Above _KENDALL_DENSE
    samples the n x n matrix gets large and scipy is called per resample.
    """
    n = len(x)
    rows = idx.shape[0]
    if n > _KENDALL_DENSE:
        from scipy.stats import kendalltau

        out = np.full(rows, np.nan)
        for r in range(rows):
            xs, ys = x[idx[r]], y[idx[r]]
            if np.ptp(xs) > 0 and np.ptp(ys) > 0:
                out[r] = kendalltau(xs, ys).statistic
        return out
    off = np.arange(rows)[:, None]

    def counts(codes: np.ndarray, k: int) -> np.ndarray:
        return np.bincount((off * k + codes).ravel(), minlength=rows * k).reshape(rows, k)

    # float32 is exact here: every product and sum is an integer below n^2 < 2^24
    W = counts(idx, n).astype(np.float32)
    S = (np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])).astype(np.float32)
    num = np.einsum("ri,ri->r", W @ S, W, dtype=np.float64) / 2

    def tied_pairs(v: np.ndarray) -> np.ndarray:
        # pairs of draws with equal values: sum over distinct values of c(c-1)/2
        _, inv = np.unique(v, return_inverse=True)
        c = counts(inv[idx], int(inv.max()) + 1).astype(np.float64)
        return (c * (c - 1)).sum(1) / 2

    total = n * (n - 1) / 2  # every resample has n draws
    den = np.sqrt(np.maximum(total - tied_pairs(x), 0) * np.maximum(total - tied_pairs(y), 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _kappa_rows(A: np.ndarray, B: np.ndarray, k: int, weights: str | None) -> np.ndarray:
    """Cohen's kappa per row of integer codes 0..k-1, as sklearn computes it.

    kappa = 1 - sum(w * O) / sum(w * E), O the observed confusion matrix, E
    the product of its margins; undefined (NaN) when sum(w * E) == 0.
    """
    rows, n = A.shape
    flat = (np.arange(rows)[:, None] * k * k + A * k + B).ravel()
    O = np.bincount(flat, minlength=rows * k * k).reshape(rows, k, k).astype(float)
    E = O.sum(2)[:, :, None] * O.sum(1)[:, None, :] / n
    i, j = np.indices((k, k))
    w = (i - j) ** 2 if weights == "quadratic" else (i != j).astype(float)
    num = (w * O).sum((1, 2))
    den = (w * E).sum((1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 1.0 - num / np.where(den > 0, den, 1.0), np.nan)


def rating_levels(*columns: Sequence[float]) -> int | None:
    """The coarsest grid {0, 1/m, ..., 1} holding every value, for m in 1..10; else None.

    0/1/2 ratings scaled to 0/0.5/1 give m=2; RAGAS's nv_* metrics (the mean
    of two such ratings) give m=4; a 0-10 score gives m=10.
    """
    vals = np.concatenate([np.asarray(c, dtype=float) for c in columns]) if columns else []
    if len(vals) == 0 or vals.min() < 0 or vals.max() > 1:
        return None
    for m in _GRIDS:
        scaled = vals * m
        if np.all(np.abs(scaled - np.round(scaled)) < 1e-6):
            return m
    return None


def _constant_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    """Why a correlation is undefined, or None when neither side is constant."""
    cx, cy = len(x) > 0 and np.ptp(x) == 0, len(y) > 0 and np.ptp(y) == 0
    if cx and cy:
        return f"A and B are both constant (A always {x[0]:g}, B always {y[0]:g})"
    if cx or cy:
        side, v = ("A", x) if cx else ("B", y)
        return f"{side} is constant (every value {v[0]:g})"
    return None


class _Resamples:
    """Paired bootstrap indices (rows of sample positions), made in fixed-size chunks.

    Every statistic replays the same seeded chunks, so all of them see the
    same resamples, and memory stays bounded (a few MB) however large n is.
    """

    def __init__(self, n: int, n_boot: int, seed: int) -> None:
        self.n, self.n_boot, self.seed = n, n_boot, seed
        self.rows = max(1, min(n_boot, 1_000_000 // max(n, 1)))

    def apply(self, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        parts, done = [], 0
        while done < self.n_boot:
            r = min(self.rows, self.n_boot - done)
            parts.append(np.asarray(fn(rng.integers(0, self.n, size=(r, self.n))), dtype=float))
            done += r
        return np.concatenate(parts)


def metric_seed(seed: int, metric: str) -> int:
    """The bootstrap seed of one metric: stable whatever other metrics are compared."""
    return (seed * 1_000_003 + zlib.crc32(metric.encode("utf-8"))) % 2**32


def _percentile(boot: np.ndarray,
                n_boot: int) -> tuple[tuple[float, float] | None, int, str | None]:
    """Percentile 95% CI over the defined resamples: (ci or None, dropped, reason)."""
    ok = boot[np.isfinite(boot)]
    dropped = int(boot.size - ok.size)
    if ok.size < max(2, n_boot // 2):
        return None, dropped, f"undefined in {dropped} of {boot.size} resamples; no CI"
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return (float(lo), float(hi)), dropped, None


def _bca(data: tuple[np.ndarray, ...], stat: Callable[..., Any], n_boot: int, seed: int,
         paired: bool) -> tuple[tuple[float, float], str]:
    """scipy BCa interval; percentile from the same resamples when BCa is degenerate."""
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled below
        res = bootstrap(data, stat, n_resamples=n_boot, paired=paired, vectorized=True,
                        method="BCa", random_state=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if math.isfinite(lo) and math.isfinite(hi):
        return (lo, hi), CI_BCA
    dist = res.bootstrap_distribution
    lo, hi = np.percentile(dist[np.isfinite(dist)], [2.5, 97.5])
    return (float(lo), float(hi)), "percentile bootstrap (scipy.stats.bootstrap; BCa degenerate)"


def _mad_stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(np.abs(y - x), axis=axis)


def _bias_stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def paired_stats(x: Sequence[float], y: Sequence[float], *, threshold: float | None = 0.5,
                 n_boot: int = 2000, seed: int = 0,
                 which: Sequence[str] = tuple(STAT_LABELS)
                 ) -> tuple[dict[str, Stat], dict[str, Any]]:
    """Agreement statistics of paired scores ``x`` (A) and ``y`` (B), with bootstrap CIs.

    Returns (stats, extra): ``stats`` maps a name in :data:`STAT_LABELS` to a
    :class:`Stat`; ``extra`` holds the confusion matrix at the threshold and
    the rating grid used for weighted kappa. ``n_boot=0`` skips the CIs.
    """
    from scipy.stats import kendalltau, pearsonr, spearmanr
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    out: dict[str, Stat] = {}
    extra: dict[str, Any] = {"confusion": None, "levels": None}
    if n == 0:
        return {k: Stat(None, reason="no paired samples") for k in which}, extra
    boot = _Resamples(n, n_boot, seed) if n_boot and n >= _MIN_N else None

    def resampled(point: float, fn: Callable[[np.ndarray], np.ndarray]) -> Stat:
        if boot is None:
            return Stat(point, reason=None if n_boot == 0 else f"n={n}: too few for a CI")
        ci, dropped, why = _percentile(boot.apply(fn), n_boot)
        return Stat(point, ci, why, CI_PERCENTILE, dropped)

    # correlations
    const = _constant_reason(x, y)
    for name, fn_point, fn_rows in (
            ("pearson", lambda: pearsonr(x, y).statistic, lambda i: _pearson_rows(x[i], y[i])),
            ("spearman", lambda: spearmanr(x, y).statistic,
             lambda i: _spearman_rows(x[i], y[i])),
            ("kendall", lambda: kendalltau(x, y).statistic,
             lambda i: _kendall_rows(x, y, i))):
        if name not in which:
            continue
        if n < _MIN_N:
            out[name] = Stat(None, reason=f"needs at least {_MIN_N} paired samples (n={n})")
        elif const:
            out[name] = Stat(None, reason=f"{const}: correlation undefined")
        else:
            out[name] = resampled(float(fn_point()), fn_rows)

    # differences: always defined -> scipy BCa
    for name, fn in (("mad", _mad_stat), ("bias", _bias_stat)):
        if name not in which:
            continue
        point = float(fn(x, y))
        if boot is None:
            out[name] = Stat(point, reason=None if n_boot == 0 else f"n={n}: too few for a CI")
        elif np.ptp(np.abs(y - x) if name == "mad" else y - x) == 0:
            out[name] = Stat(point, (point, point), None, "exact (every pair differs equally)")
        else:
            ci, method = _bca((x, y), fn, n_boot, seed, paired=True)
            out[name] = Stat(point, ci, None, method)

    # verdicts at the threshold
    if threshold is not None:
        pa = (x >= threshold).astype(int)
        pb = (y >= threshold).astype(int)
        extra["confusion"] = confusion_matrix(pa, pb, labels=[0, 1]).tolist()
        if "agreement" in which:
            out["agreement"] = resampled(float(np.mean(pa == pb)),
                                         lambda i: np.mean(pa[i] == pb[i], axis=1))
        if "kappa" in which:
            if np.ptp(pa) == 0 and np.ptp(pb) == 0 and pa[0] == pb[0]:
                out["kappa"] = Stat(None, reason="both sides give the same verdict on every "
                                                 "sample: kappa undefined (agreement 100%)")
            else:
                point = float(cohen_kappa_score(pa, pb, labels=[0, 1]))
                out["kappa"] = resampled(point, lambda i: _kappa_rows(pa[i], pb[i], 2, None))
    if "weighted_kappa" in which:
        m = rating_levels(x, y)
        extra["levels"] = None if m is None else m + 1
        if m is None:
            out["weighted_kappa"] = Stat(None, reason="values are not on a common rating grid "
                                                      "{0, 1/m, ..., 1} (m <= 10)")
        else:
            ca = np.rint(x * m).astype(int)
            cb = np.rint(y * m).astype(int)
            labels = list(range(m + 1))
            if np.ptp(ca) == 0 and np.ptp(cb) == 0 and ca[0] == cb[0]:
                out["weighted_kappa"] = Stat(None, reason="both sides give the same rating on "
                                                          "every sample: weighted kappa undefined")
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    point = float(cohen_kappa_score(ca, cb, labels=labels, weights="quadratic"))
                if math.isnan(point):
                    out["weighted_kappa"] = Stat(None, reason="weighted kappa undefined")
                else:
                    out["weighted_kappa"] = resampled(
                        point, lambda i: _kappa_rows(ca[i], cb[i], m + 1, "quadratic"))
    return {k: out[k] for k in which if k in out}, extra


# -- results ------------------------------------------------------------------------------
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
        }
        if values:
            d["pairs"] = [{"id": i, "a": a, "b": b}
                          for i, a, b in zip(self.ids, self.a_values, self.b_values)]
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
            "ci_methods": {"mad": CI_BCA, "bias": CI_BCA, "others": CI_PERCENTILE},
            "metrics": {m.label: m.to_dict(values) for m in self.metrics},
            "metrics_only_in_a": self.only_in_a, "metrics_only_in_b": self.only_in_b,
        }

    def _notes(self) -> list[str]:
        al = self.alignment
        notes = [f"A = {self.a_name} ({self.a_source}{_judge_of(self.a_signature)}); "
                 f"B = {self.b_name} ({self.b_source}{_judge_of(self.b_signature)})",
                 f"paired by {al.rule}: {len(al.pairs)} matched, {len(al.only_a)} only in A, "
                 f"{len(al.only_b)} only in B" + (f" ({al.note})" if al.note else ""),
                 f"verdicts: pass when score >= {self.threshold:g}; 95% CIs from "
                 f"{self.n_boot} paired bootstrap resamples (seed {self.seed}): MAD and bias "
                 "BCa (scipy), the rest percentile (numpy)"]
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
        return notes

    def render_table(self) -> Any:
        """A rich Table with one column per metric and one row per statistic.

        Metrics are columns (there are usually a few) so that the table fits a
        terminal; each cell shows the value over its [95% CI].
        """
        from rich.table import Table

        t = Table(title=f"Agreement: {self.a_name} (A) vs {self.b_name} (B)",
                  caption="\n".join(self._notes()), caption_justify="left")
        t.add_column("statistic", no_wrap=True)
        for m in self.metrics:
            t.add_column(m.label, justify="right")
        t.add_row("n (pairs)", *[str(m.n) for m in self.metrics])
        t.add_row("mean A", *[_f(m.mean_a) for m in self.metrics])
        t.add_row("mean B", *[_f(m.mean_b) for m in self.metrics], end_section=True)
        for k, lab in STAT_LABELS.items():
            lab = lab + (f" @{self.threshold:g}" if k in ("kappa", "agreement") else "")
            t.add_row(lab, *[m.stats[k].text(3, "\n") if k in m.stats else "—"
                             for m in self.metrics])
        t.add_row("confusion\n(A fail/pass ×\nB fail/pass)",
                  *[_confusion_text(m.confusion) for m in self.metrics])
        return t

    def to_markdown(self) -> str:
        """GitHub Markdown: the agreement table, confusion matrices and notes."""
        head = ["metric", "n", "mean A", "mean B"] + [
            STAT_LABELS[k] + (f" @{self.threshold:g}" if k == "kappa" else "")
            for k in STAT_LABELS]
        lines = [f"## Agreement: {self.a_name} (A) vs {self.b_name} (B)", "",
                 "| " + " | ".join(head) + " |",
                 "|---|" + "---:|" * (len(head) - 1)]
        for m in self.metrics:
            cells = [m.label, str(m.n), _f(m.mean_a), _f(m.mean_b)] + [
                m.stats[k].text(3) if k in m.stats else "—" for k in STAT_LABELS]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines += ["", f"Confusion matrices at threshold {self.threshold:g} "
                      "(rows A, columns B; fail / pass):", ""]
        for m in self.metrics:
            if m.confusion:
                (ff, fp), (pf, pp) = m.confusion
                lines.append(f"- **{m.label}**: A fail → B fail {ff}, B pass {fp}; "
                             f"A pass → B fail {pf}, B pass {pp}")
        lines += ["", "Notes:", ""] + [f"- {n}" for n in self._notes()]
        return "\n".join(lines) + "\n"

    def scatter_svgs(self) -> dict[str, str]:
        """metric label -> inline SVG scatter of A against B (for the HTML report)."""
        return {m.label: scatter_svg(m.a_values, m.b_values, m.label, a_label=self.a_name,
                                     b_label=self.b_name) for m in self.metrics}


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
                  metrics: Sequence[str] | Mapping[str, str] | None
                  ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    ma, mb = a.metrics, b.metrics
    if metrics is None:
        pairs = [(m, m) for m in ma if m in mb]
        if not pairs:
            raise DataError(f"no metric in common: A ({a.source}) has {', '.join(ma)}; "
                            f"B ({b.source}) has {', '.join(mb)}. Pair them explicitly "
                            "(metrics={'a_name': 'b_name'} or --pair A B)")
        return pairs, [m for m in ma if m not in mb], [m for m in mb if m not in ma]
    items = list(metrics.items()) if isinstance(metrics, Mapping) else [(m, m) for m in metrics]
    for x, y in items:
        if x not in ma:
            raise UsageError(f"metric {x!r} is not in A ({a.source}); it has: {', '.join(ma)}")
        if y not in mb:
            raise UsageError(f"metric {y!r} is not in B ({b.source}); it has: {', '.join(mb)}")
    return items, [], []


def compare(a: ResultSet, b: ResultSet, *, metrics: Sequence[str] | Mapping[str, str] | None = None,
            threshold: float = 0.5, n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Agreement of result set ``b`` with ``a``, per metric, with bootstrap 95% CIs.

    ``metrics``: names present in both (default: every shared metric), or a
    mapping {metric in A: metric in B} to pair differently named metrics.
    ``threshold``: a score >= threshold is a "pass" verdict for kappa and the
    confusion matrix. Pairs where either side is unscored are left out and
    counted. Undefined statistics (constant inputs) are None with a reason.
    """
    if not 0 <= n_boot <= 100_000:
        raise UsageError("n_boot must be between 0 and 100000")
    al = align(a, b)
    pairs, only_a, only_b = _metric_pairs(a, b, metrics)
    rows: list[MetricAgreement] = []
    for ma, mb in pairs:
        xs, ys, ids = [], [], []
        un_a = un_b = 0
        for ia, ib in al.pairs:
            va, vb = a[ia].get(ma), b[ib].get(mb)
            un_a += va is None
            un_b += vb is None
            if va is not None and vb is not None:
                xs.append(va)
                ys.append(vb)
                ids.append(ia)
        stats, extra = paired_stats(xs, ys, threshold=threshold, n_boot=n_boot,
                                    seed=metric_seed(seed, ma))
        rows.append(MetricAgreement(
            ma, mb, len(xs), un_a, un_b,
            float(np.mean(xs)) if xs else None, float(np.mean(ys)) if ys else None,
            stats, extra["confusion"], extra["levels"], xs, ys, ids))
    return Comparison(a.name, b.name, a.source, b.source, al, threshold, n_boot, seed, rows,
                      only_a, only_b, dict(a.signature), dict(b.signature))


# -- SVG scatter --------------------------------------------------------------------------
def scatter_svg(a_vals: Sequence[float], b_vals: Sequence[float], title: str, *,
                a_label: str = "A", b_label: str = "B", size: int = 260) -> str:
    """A small self-contained SVG scatter plot of B (y) against A (x), with the y = x line.

    Written by hand rather than with matplotlib: it is ~60 lines, adds no
    dependency, and gives a few kB of inline markup for the HTML report.
    Judge scores are often discrete (0 / 0.5 / 1), so identical pairs are
    drawn once with an area that grows with their count (shown on hover).
    """
    a = np.asarray(a_vals, dtype=float)
    b = np.asarray(b_vals, dtype=float)
    pad, top = 36, 24
    w = h = size
    pw, ph = w - pad - 10, h - pad - top
    lo = float(min(a.min(initial=0.0), b.min(initial=0.0), 0.0))
    hi = float(max(a.max(initial=1.0), b.max(initial=1.0), 1.0))
    span = hi - lo or 1.0

    def sx(v: float) -> float:
        return pad + (v - lo) / span * pw

    def sy(v: float) -> float:
        return top + ph - (v - lo) / span * ph

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'viewBox="0 0 {w} {h}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}" '
             'font-family="sans-serif" font-size="10">',
             f'<text x="{w / 2:.1f}" y="14" text-anchor="middle" font-size="12">'
             f'{escape(title)} (n={len(a)})</text>',
             f'<rect x="{pad}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    for t in np.linspace(lo, hi, 5):
        parts.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + ph}" '
                     'stroke="#eee"/>')
        parts.append(f'<line x1="{pad}" y1="{sy(t):.1f}" x2="{pad + pw}" y2="{sy(t):.1f}" '
                     'stroke="#eee"/>')
        parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 12}" text-anchor="middle">'
                     f'{t:g}</text>')
        parts.append(f'<text x="{pad - 4}" y="{sy(t) + 3:.1f}" text-anchor="end">{t:g}</text>')
    parts.append(f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" '
                 'stroke="#bbb" stroke-dasharray="4 3"/>')
    counts: dict[tuple[float, float], int] = {}
    for x, y in zip(a.tolist(), b.tolist()):
        key = (round(x, 9), round(y, 9))
        counts[key] = counts.get(key, 0) + 1
    for (x, y), c in sorted(counts.items()):
        r = min(2.5 + 1.6 * math.sqrt(c - 1), 14.0)
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{r:.1f}" fill="#1f77b4" '
                     f'fill-opacity="0.5"><title>A={x:g}, B={y:g}: {c} sample'
                     f'{"s" if c > 1 else ""}</title></circle>')
    parts.append(f'<text x="{pad + pw / 2:.1f}" y="{h - 4}" text-anchor="middle">'
                 f'{escape(a_label)} (A)</text>')
    parts.append(f'<text transform="translate(10 {top + ph / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{escape(b_label)} (B)</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# -- command line -------------------------------------------------------------------------
def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``localeval compare A B`` (the CLI wires this to :func:`compare_main`)."""
    p.add_argument("a", help="result set A: a localeval run directory or results.jsonl, a RAGAS "
                             "to_pandas() export (.csv/.json/.jsonl) or a deepeval JSON")
    p.add_argument("b", help="result set B (same formats)")
    p.add_argument("-m", "--metrics", help="comma-separated metrics to compare "
                                           "(default: every metric both sets have)")
    p.add_argument("--pair", nargs=2, action="append", metavar=("A_METRIC", "B_METRIC"),
                   help="compare differently named metrics (repeatable)")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="pass/fail cut for kappa and the confusion matrix (default %(default)s)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples "
                                                             "(default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("-o", "--out", help="write comparison.json, comparison.md and one SVG "
                                       "scatter per metric into this directory")


def _split_metrics(s: str | None) -> list[str] | None:
    """Comma list; a piece starting with a digit continues the previous one
    (``answer_correctness:weights=0.5,0.5``)."""
    if not s:
        return None
    out: list[str] = []
    for piece in (p.strip() for p in s.split(",")):
        if not piece:
            continue
        if out and (piece[0].isdigit() or piece[0] == "."):
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out


def compare_main(args: argparse.Namespace) -> int:
    """``localeval compare``: print the table (or JSON), optionally write files; returns 0."""
    a = load_result_set(args.a)
    b = load_result_set(args.b)
    if a.name == b.name:
        a.name, b.name = f"A:{a.name}", f"B:{b.name}"
    names = _split_metrics(args.metrics)
    metrics: Any = names
    if args.pair:
        metrics = {m: m for m in (names or [])}
        metrics.update({x: y for x, y in args.pair})
    cmp = compare(a, b, metrics=metrics, threshold=args.threshold, n_boot=args.n_boot,
                  seed=args.seed)
    if args.out:
        write_comparison(cmp, args.out)
    if args.json:
        print(json.dumps(cmp.to_dict(), ensure_ascii=False, indent=2))
    else:
        terminal_console().print(cmp.render_table())
        if args.out:
            print(f"wrote {Path(args.out) / 'comparison.md'}", file=sys.stderr)
    return 0


def terminal_console() -> Any:
    """A rich Console; 160 columns when output is not a terminal (pipes, logs), not 80."""
    from rich.console import Console

    c = Console()
    return c if c.is_terminal else Console(width=160)


def write_comparison(cmp: Comparison, out_dir: str | Path) -> Path:
    """comparison.json (with per-pair values), comparison.md, scatter/<metric>.svg."""
    import re

    out = Path(out_dir)
    (out / "scatter").mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(
        json.dumps(cmp.to_dict(values=True), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8")
    (out / "comparison.md").write_text(cmp.to_markdown(), encoding="utf-8")
    for label, svg in cmp.scatter_svgs().items():
        fname = re.sub(r"[^0-9A-Za-z@._-]+", "_", label).strip("_") + ".svg"
        (out / "scatter" / fname).write_text(svg, encoding="utf-8")
    (out / "comparison.html").write_text(comparison_html(cmp), encoding="utf-8")
    return out


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>localeval compare: {{ a }} vs {{ b }}</title>
<style>
body{font:14px/1.5 system-ui,"Noto Sans JP",sans-serif;margin:2rem auto;max-width:1100px;
padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;
text-align:right}th:first-child,td:first-child{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:1rem}.note{color:#57606a}
</style></head><body>
<h1>Agreement: {{ a }} vs {{ b }}</h1>
{% for n in notes %}<p class="note">{{ n }}</p>{% endfor %}
<table><tr><th>statistic</th>{% for m in metrics %}<th>{{ m.label }}</th>{% endfor %}</tr>
<tr><td>n</td>{% for m in metrics %}<td>{{ m.n }}</td>{% endfor %}</tr>
{% for k in stat_names %}<tr><td>{{ k }}</td>{% for m in metrics %}
<td>{{ m.stats[k].text() if k in m.stats else "" }}</td>{% endfor %}</tr>{% endfor %}
</table>
<div class="plots">{% for svg in svgs %}<figure>{{ svg }}</figure>{% endfor %}</div>
</body></html>"""


def comparison_html(cmp: Comparison) -> str:
    """A self-contained page: the statistics table and one scatter plot (A vs B) per metric.

    Text is escaped by jinja2; the SVGs come from :func:`scatter_svg`, which
    escapes its own labels, so they are inserted as markup.
    """
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(autoescape=True)
    names: list[str] = []
    for m in cmp.metrics:
        names += [k for k in m.stats if k not in names]
    return env.from_string(_HTML).render(
        a=cmp.a_name, b=cmp.b_name, notes=cmp._notes(), metrics=cmp.metrics,
        stat_names=names, svgs=[Markup(v) for v in cmp.scatter_svgs().values()])
