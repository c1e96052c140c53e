"""Bradley-Terry strengths of several versions from their pairwise judgements, with
bootstrap intervals over questions, and a ranking that says which neighbours cannot be
told apart.

The model: P(i preferred to j) = 1 / (1 + exp(-(s_i - s_j))); strengths are log-odds
and sum to 0. The data is a table ``W[q, i, j]``: how much of question q's comparison
of version i with version j went to i (``W[q, i, j] + W[q, j, i]`` is 1 for a compared
pair, 0 for one that counts for nothing). ``rank`` fills it from judged pairs:

- soft verdicts: the pair's order-averaged P(i better) + P(tie)/2
  (``PairJudgement.soft``), a fractional win; a pair whose two orders disagree counts
  for what the probabilities say, the position's pull cancelled by the averaging;
- hard verdicts: a consistent decisive pair is a whole win, a tie half a win each way;
  an inconsistent or unjudged pair counts for nothing (left out and counted, never a
  win: the rule of the pairwise rate in ``summary``).

The negative log-likelihood ``sum W_ij log(1 + exp(s_j - s_i))`` is the Bradley-Terry
likelihood for fractional wins too (a logistic regression with fractional responses).

A version that wins (or loses) every comparison has no finite maximum-likelihood
strength. The fit therefore always adds a tiny ridge, ``RIDGE / 2 * sum(s**2)``: it
moves a finite estimate by about RIDGE * s / (Fisher information), far below 1e-6 on
any real data; it keeps the strengths summing to 0 (the likelihood ignores a common
shift, so at the optimum the ridge's gradient sums to 0); and it holds a separated
version at a large finite strength, which the ranking still places, with a note.

Intervals: percentile bootstrap over *questions* (``stats.Resamples``: the draws of
``scipy.stats.bootstrap``, seeded); every comparison of a drawn question moves with it,
and ``stats.percentile_interval`` reads each strength's and each difference's interval.

The ranking reads each difference against the preference margin (``equivalence``), in
strength units: a difference d is the log-odds of the higher version preferred, so a
preference margin m is ``strength_margin(m)`` = log((0.5 + m) / (0.5 - m)) (0.20 at the
default 0.05). One version is *ahead* of another only when the interval of their
difference lies above that margin; when it lies within +/- the margin there is no
practical difference; otherwise the order of the two is not shown. Neighbours not
ahead of each other share a rank: the ranking shows no order between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from localeval.errors import UsageError
from localeval.pairwise.equivalence import (
    DEFAULT_MARGIN,
    EQUIVALENT,
    NEW,
    NO_ESTIMATE,
    check_margin,
    strength_margin,
    zone,
)
from localeval.stats import Interval, Resamples, check_draws, percentile_interval

__all__ = ["RIDGE", "METHOD", "Gap", "Ranking", "fit_strengths", "win_table", "bradley_terry",
           "AHEAD", "ORDER_NOT_SHOWN"]

RIDGE = 1e-6
METHOD = "percentile bootstrap over questions"
#: ``Gap.verdict``'s answers besides ``equivalence.EQUIVALENT`` and ``NO_ESTIMATE``
AHEAD, ORDER_NOT_SHOWN = "ahead", "order not shown"


def win_table(questions: int, k: int,
              outcomes: Iterable[tuple[int, int, int, float]]) -> np.ndarray:
    """The (questions, k, k) table from ``(question, i, j, share of i)`` outcomes; a share
    of 1 is a win of i over j, 0.5 a tie, 0 a win of j."""
    table = np.zeros((questions, k, k))
    for q, i, j, x in outcomes:
        if i == j or not 0.0 <= x <= 1.0:
            raise UsageError(f"a comparison needs two versions and a share in [0, 1], not "
                             f"({i}, {j}, {x})")
        table[q, i, j] += x
        table[q, j, i] += 1.0 - x
    return table


def _loss(s: np.ndarray, wins: np.ndarray, ridge: float) -> np.ndarray:
    d = s[..., :, None] - s[..., None, :]
    return ((wins * np.logaddexp(0.0, -d)).sum(axis=(-2, -1))
            + 0.5 * ridge * (s * s).sum(axis=-1))


def fit_strengths(wins: np.ndarray, *, ridge: float = RIDGE, tol: float = 1e-12,
                  max_iter: int = 500) -> np.ndarray:
    """Strengths maximising the (ridged) Bradley-Terry likelihood of ``wins`` (..., k, k).

    Damped Newton with the exact Hessian (the comparisons' weighted graph Laplacian
    plus ``ridge``), halving a step until the loss falls (Armijo), on every leading
    index at once. Hand-written because ``scipy.optimize`` solves one problem per call
    and a ranking's bootstrap solves thousands; the tests hold it to
    ``scipy.optimize.minimize`` on the same likelihood.
    """
    w = np.asarray(wins, dtype=float)
    lead, k = w.shape[:-2], w.shape[-1]
    w = w.reshape((-1, k, k))
    n = w + np.swapaxes(w, -1, -2)
    s = np.zeros((w.shape[0], k))
    eye = np.eye(k)
    active = np.ones(w.shape[0], dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        sa, wa, na = s[idx], w[idx], n[idx]
        p = 1.0 / (1.0 + np.exp(-(sa[:, :, None] - sa[:, None, :])))
        grad = (na * p - wa).sum(axis=-1) + ridge * sa
        # the steps stay in the sum-zero plane, where the optimum lies: rounding in the
        # gradient along (1, ..., 1), whose curvature is only the ridge, would otherwise
        # be magnified a millionfold (adding 1/k to every entry gives that direction a
        # curvature of 1 and changes no step within the plane)
        grad -= grad.mean(axis=-1, keepdims=True)
        c = na * p * (1.0 - p)
        hess = -c + eye * (c.sum(axis=-1)[:, :, None] + ridge) + 1.0 / k
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        step -= step.mean(axis=-1, keepdims=True)
        before = _loss(sa, wa, ridge)
        slope = (grad * step).sum(axis=-1)
        t = np.ones(idx.size)
        for _ in range(60):
            trial = sa - t[:, None] * step
            bad = _loss(trial, wa, ridge) > before - 1e-4 * t * slope
            if not bad.any():
                break
            t = np.where(bad, t / 2, t)
        moved = t[:, None] * step
        s[idx] = sa - moved
        active[idx] = np.abs(moved).max(axis=-1) > tol * np.maximum(1.0, np.abs(sa).max(axis=-1))
    return s.reshape(lead + (k,))


@dataclass(frozen=True)
class Gap:
    """The strength difference of two versions, the one ranked higher first."""

    upper: str
    lower: str
    difference: Interval
    #: the margin in strength units (``equivalence.strength_margin``); 0: none
    margin: float = 0.0

    @property
    def verdict(self) -> str:
        """"ahead" (the interval lies above the margin), "no practical difference" (within
        +/- the margin), "order not shown" (neither, or no interval) or "no estimate"."""
        z = zone(self.difference, self.margin, centre=0.0)
        return {NEW: AHEAD, EQUIVALENT: EQUIVALENT, NO_ESTIMATE: NO_ESTIMATE}.get(
            z, ORDER_NOT_SHOWN)

    @property
    def apart(self) -> bool:
        """The upper version is ahead: the interval of the difference lies above the margin."""
        return self.verdict == AHEAD

    def sentence(self) -> str:
        d, m = self.difference, self.margin
        if d.value is None:
            return f"{self.upper} and {self.lower}: no difference can be given ({d.reason})"
        ci = (f" [{d.low:+.2f}, {d.high:+.2f}]" if d.low is not None and d.high is not None
              else f" ({d.reason})")
        beyond = f"the margin ±{m:.2f}" if m else "0"
        if self.apart:
            return (f"{self.upper} is ahead of {self.lower}: strength difference "
                    f"{d.value:+.2f}{ci}, above {beyond}")
        told = f"{self.upper} and {self.lower} cannot be told apart (order not shown)"
        if self.verdict == EQUIVALENT:
            return (f"{told}: no practical difference: strength difference {d.value:+.2f}{ci} "
                    f"lies within ±{m:.2f}")
        if d.ci is None:
            return f"{told}: strength difference {d.value:+.2f}{ci}"
        why = f"does not clear the margin ±{m:.2f}" if m else "includes 0"
        return f"{told}: strength difference {d.value:+.2f}{ci} {why}"

    def to_dict(self) -> dict[str, Any]:
        return {"upper": self.upper, "lower": self.lower, "apart": self.apart,
                "verdict": self.verdict, "margin": self.margin,
                "difference": self.difference.to_dict(), "sentence": self.sentence()}


@dataclass
class Ranking:
    """Versions by Bradley-Terry strength, with intervals (``bradley_terry``' answer)."""

    names: list[str]
    strengths: dict[str, Interval]
    #: the names, strongest first (versions without a comparison last)
    order: list[str]
    #: each version and the next one in ``order``
    gaps: list[Gap]
    #: every two versions, the higher ranked first
    differences: list[Gap]
    #: wins[i][j]: how much of i's comparisons with j went to i; comparisons[i][j]: how many
    wins: list[list[float]]
    comparisons: list[list[float]]
    questions: int
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = 0
    #: the preference margin (``equivalence``); the gaps hold it in strength units
    margin: float = DEFAULT_MARGIN

    def groups(self) -> list[list[str]]:
        """Runs of neighbours in ``order`` none of which is ahead of the next one: the
        ranking shows no order within a group."""
        out: list[list[str]] = [[self.order[0]]] if self.order else []
        for gap in self.gaps:
            if gap.apart:
                out.append([gap.lower])
            else:
                out[-1].append(gap.lower)
        return out

    def ranks(self) -> dict[str, int]:
        """Each name's rank; a group shares the rank of its first member (1, 2, 2, 4)."""
        out, at = {}, 1
        for g in self.groups():
            out.update({name: at for name in g})
            at += len(g)
        return out

    def sentence(self) -> str:
        """The ranking in one line: ``>`` where one version is ahead of the next, and the
        members of a group listed with "(order not shown)"."""
        groups = self.groups()
        text = " > ".join(g[0] if len(g) == 1 else f"{', '.join(g)} (order not shown)"
                          for g in groups)
        if any(len(g) > 1 for g in groups):
            text += (f"; order not shown: the neighbours' strength difference does not lie "
                     f"above the margin ±{strength_margin(self.margin):.2f} (a preference of "
                     f"0.5 ± {self.margin:.2g})")
        return f"ranking by Bradley-Terry strength over {self.questions} questions: {text}"

    def to_dict(self) -> dict[str, Any]:
        ranks = self.ranks()
        return {
            "model": "Bradley-Terry: P(i preferred to j) = 1 / (1 + exp(-(s_i - s_j))), "
                     "strengths summing to 0",
            "ridge": RIDGE, "questions": self.questions, "sentence": self.sentence(),
            "margin": {"preference": self.margin, "strength": strength_margin(self.margin)},
            "order": self.order, "groups": self.groups(),
            "versions": [{"name": n, "rank": ranks[n], "strength": self.strengths[n].to_dict()}
                         for n in self.order],
            "gaps": [g.to_dict() for g in self.gaps],
            "differences": [g.to_dict() for g in self.differences],
            # rows and columns in the order of ``names`` (the order the versions were given)
            "names": self.names, "wins": self.wins, "comparisons": self.comparisons,
            "bootstrap": {"resamples": self.n_resamples, "seed": self.seed, "unit": "question"},
            "notes": self.notes}


def _interval(value: float | None, boot: np.ndarray | None, n: int, level: float,
              reason: str | None) -> Interval:
    if value is None:
        return Interval(None, None, None, n, METHOD, level, reason=reason)
    if boot is None:
        return Interval(value, None, None, n, METHOD, level, reason=reason)
    ci, _, why = percentile_interval(boot, level=level)
    if ci is None:
        return Interval(value, None, None, n, METHOD, level, reason=why)
    return Interval(value, ci[0], ci[1], n, METHOD, level)


def _graph_notes(names: list[str], index: list[int], total: np.ndarray) -> list[str]:
    """Notes on the comparison graph of the compared versions (``names``, strongest first):
    groups never compared with each other, and groups that won every comparison with
    the rest (no finite maximum-likelihood strength: the ridge holds them)."""
    from scipy.sparse.csgraph import connected_components

    beat = total[np.ix_(index, index)] > 0
    parts, _ = connected_components(beat | beat.T, directed=False)
    if parts > 1:
        return [f"the comparisons fall into {parts} groups of versions never compared with "
                "each other: strengths compare only within a group"]
    strong, label = connected_components(beat, directed=True, connection="strong")
    if strong == 1:
        return []
    groups: list[list[str]] = []
    for x, name in enumerate(names):  # strongest first, so the groups come in order
        if x and label[x] == label[x - 1]:
            groups[-1].append(name)
        else:
            groups.append([name])
    shown = " > ".join("{" + ", ".join(g) + "}" if len(g) > 1 else g[0] for g in groups)
    return [f"{shown}: each won every comparison with those after it, so no finite "
            "maximum-likelihood strength exists; a tiny ridge holds the strengths at "
            "large finite values: read the order and the wins, not the sizes"]


def bradley_terry(names: Sequence[str], table: np.ndarray, *, n_resamples: int = 9999,
                  seed: int = 0, level: float = 0.95,
                  margin: float = DEFAULT_MARGIN) -> Ranking:
    """Fit strengths to ``table`` (questions, k, k) (see ``win_table``), bootstrap the
    questions, and rank the versions; ``margin``: the preference margin, read in
    strength units (``equivalence.strength_margin``)."""
    check_draws(n_resamples, seed)
    margin = check_margin(margin)
    w = np.asarray(table, dtype=float)
    q, k = w.shape[0], len(names)
    if w.shape != (q, k, k):
        raise UsageError(f"a win table of {k} versions is (questions, {k}, {k}), not {w.shape}")
    total = w.sum(axis=0)
    played = total + total.T
    point = fit_strengths(total)
    boot: np.ndarray | None = None
    reason = None
    if q < 2:
        reason = "one question: no interval"
    else:
        rs = Resamples(q, n_resamples, seed)

        def strengths(idx: np.ndarray) -> np.ndarray:
            rows = idx.shape[0]
            flat = (idx + q * np.arange(rows)[:, None]).ravel()
            counts = np.bincount(flat, minlength=rows * q).reshape(rows, q)
            return fit_strengths(np.einsum("rq,qij->rij", counts, w))

        boot = rs.apply(strengths)
    compared = played.sum(axis=1) > 0
    notes: list[str] = []
    lost = [names[i] for i in range(k) if not compared[i]]
    if lost:
        notes.append(f"{', '.join(lost)}: no comparison counts (every pair of "
                     f"{'it' if len(lost) == 1 else 'them'} unjudged or inconsistent): "
                     "no strength, ranked last")
    est = {names[i]: _interval(float(point[i]) if compared[i] else None,
                               None if boot is None else boot[:, i], q, level,
                               reason if compared[i] else "no comparison counts")
           for i in range(k)}
    order = sorted(range(k), key=lambda i: (not compared[i], -point[i], i))
    notes += _graph_notes([names[i] for i in order if compared[i]],
                          [i for i in order if compared[i]], total)

    def gap(i: int, j: int) -> Gap:
        if not (compared[i] and compared[j]):
            diff = Interval(None, None, None, q, METHOD, level, reason="no comparison counts")
        else:
            diff = _interval(float(point[i] - point[j]),
                             None if boot is None else boot[:, i] - boot[:, j], q, level, reason)
        return Gap(names[i], names[j], diff, strength_margin(margin))

    return Ranking(list(names), est, [names[i] for i in order],
                   [gap(a, b) for a, b in zip(order, order[1:])],
                   [gap(a, b) for x, a in enumerate(order) for b in order[x + 1:]],
                   total.tolist(), played.tolist(), q, notes, seed, n_resamples, margin)
