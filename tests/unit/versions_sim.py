"""Simulation with known truth of the diff's interval and ``--fail-if-worse`` gate.

Each trial draws n paired differences from a distribution whose mean is known,
and asks whether the diff's 95% interval holds that mean (coverage) and, when
the mean is 0, whether the gate ``--fail-if-worse METRIC`` (margin 0, one gate,
higher is better) fails (a false failure). The gate is the one-sided test of
``localeval.versions.gate_tests`` at 5% (no correction: one gate), read from
the same counts as the interval. Vectorised over trials so that thousands run
in seconds:

- up to 20 pairs (exact randomization): the interval holds ``t`` exactly when
  the sign-flip test at ``t`` rejects on neither side (the two are one count,
  ``localeval.stats.randomization``), so each trial counts the subsets whose sum
  of ``d - t`` is <= 0 and >= 0, meet-in-the-middle (two halves of 2^(n/2) sums);
  the gate's one-sided p (``sign_flip``'s ``p_greater`` of the losses) is the
  lower count at 0 over 2^n, so it tests below 6 pairs too, where no interval is;
- 21 to 99 pairs: the same counts over the diff's own random sign vectors
  (``default_rng(seed)``, drawn as ``sign_flip`` draws them), over B + 1;
- from 100 pairs: the diff's own bootstrap (``stats.bootstrap_means``, the same
  indices for every trial, as the diff draws them for one seed); the gate fails
  when fewer than 5% of the resampled means are at or above 0.

Paired 0/1 scores take the exact McNemar test instead, simulated in
``tests/unit/verdicts_sim.py``; the -1/0/+1 changes here are a judge's verdicts
as the randomization test sees them (on equal magnitudes it is the sign test).

tests/unit/test_versions_small_samples.py checks the counts against
``paired_difference`` and ``sign_flip`` themselves, then the rates. Run this
file to print the table in docs/comparing-versions.md:

    HF_HUB_OFFLINE=1 .venv/bin/python tests/unit/versions_sim.py --trials 10000
"""

from __future__ import annotations

import math
import sys
from typing import Callable

import numpy as np

#: name -> (draw(rng, trials, n, shifted) -> differences, truth(shifted))
GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
SHIFTED_NEW = np.array([0.05, 0.10, 0.20, 0.30, 0.35])  # new's score weights when shifted


def _normal(rng: np.random.Generator, t: int, n: int, shifted: bool) -> np.ndarray:
    return rng.normal(0.5 if shifted else 0.0, 1.0, (t, n))


def _right_skewed(rng: np.random.Generator, t: int, n: int, shifted: bool) -> np.ndarray:
    return rng.exponential(1.0, (t, n)) - 1.0 + (0.5 if shifted else 0.0)


def _left_skewed(rng: np.random.Generator, t: int, n: int, shifted: bool) -> np.ndarray:
    return 1.0 - rng.exponential(1.0, (t, n)) + (0.5 if shifted else 0.0)


def _verdicts(rng: np.random.Generator, t: int, n: int, shifted: bool) -> np.ndarray:
    """A pass/fail judge metric's change: -1, 0 or +1 per sample."""
    up, down = (0.375, 0.125) if shifted else (0.25, 0.25)
    u = rng.random((t, n))
    return np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))


def _quarters(rng: np.random.Generator, t: int, n: int, shifted: bool) -> np.ndarray:
    """The change of a graded judge score in {0, 0.25, ..., 1}."""
    g = np.array(GRID)
    base = rng.choice(g, (t, n))
    new = rng.choice(g, (t, n), p=SHIFTED_NEW if shifted else None)
    return new - base


Draw = Callable[[np.random.Generator, int, int, bool], np.ndarray]
DISTRIBUTIONS: dict[str, tuple[Draw, float]] = {
    # name: (draw, true mean difference when shifted; 0 otherwise)
    "normal": (_normal, 0.5),
    "right-skewed (exponential)": (_right_skewed, 0.5),
    "left-skewed (exponential)": (_left_skewed, 0.5),
    "judge verdicts -1/0/+1": (_verdicts, 0.25),
    "graded scores 0-1 by 0.25": (_quarters, float(SHIFTED_NEW @ np.array(GRID)) - 0.5),
}
SIZES = (2, 3, 5, 6, 8, 10, 15, 20, 30, 50, 200)
#: the gate's one-sided level (``localeval.versions.verdicts.ALPHA``)
ALPHA = 0.05


def _subset_sums(x: np.ndarray) -> np.ndarray:
    """(trials, 2^h) sums of every subset of each row's h values."""
    out = np.zeros((x.shape[0], 1))
    for j in range(x.shape[1]):
        out = np.concatenate([out, out + x[:, j:j + 1]], axis=1)
    return out


def _count_at_most(x: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Per row, how many of its 2^n subsets (the empty one too) sum to <= tol."""
    t, n = x.shape
    a = _subset_sums(x[:, :n // 2])
    b = np.sort(_subset_sums(x[:, n // 2:]), axis=1)
    span = 2 * float(np.abs(x).sum(axis=1).max()) + 4  # rows apart on one sorted line
    off = (np.arange(t) * span)[:, None]
    q = tol[:, None] - a + off
    idx = np.searchsorted((b + off).ravel(), q.ravel(), side="right").reshape(q.shape)
    return (idx - (np.arange(t) * b.shape[1])[:, None]).sum(axis=1)


def _k(arrangements: int) -> int:
    return math.ceil(0.025 * arrangements - 1e-12) - 1


def tail_counts(d: np.ndarray, t: float, *, n_resamples: int = 9999, seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Per trial: arrangements with sum(d - t) flipped <= and >= the observed, and k.

    The diff's interval holds ``t`` exactly when both counts exceed k.
    """
    trials, n = d.shape
    x = d - t
    tie = 1e-9 * np.abs(d).max(axis=1)
    if n <= 20:
        return _count_at_most(x, tie), _count_at_most(-x, tie), _k(2 ** n)
    rng = np.random.default_rng(seed)
    rows = max(1, min(n_resamples, (1 << 20) // n))
    flips = np.concatenate([rng.integers(0, 2, size=(min(rows, n_resamples - done), n),
                                         dtype=np.int8)
                            for done in range(0, n_resamples, rows)]).astype(float)
    le = np.empty(trials, dtype=np.int64)
    ge = np.empty(trials, dtype=np.int64)
    for s in range(0, trials, 100):
        sums = x[s:s + 100] @ flips.T
        tol = tie[s:s + 100, None]
        le[s:s + 100] = 1 + (sums <= tol).sum(axis=1)
        ge[s:s + 100] = 1 + (sums >= -tol).sum(axis=1)
    return le, ge, _k(n_resamples + 1)


def arrangements(n: int, n_resamples: int = 9999) -> int:
    """What ``tail_counts`` counts over: 2^n up to 20 pairs, else B + 1."""
    return 2 ** n if n <= 20 else n_resamples + 1


def gate_p(d: np.ndarray, *, n_resamples: int = 9999, seed: int = 0) -> np.ndarray:
    """Per trial (below 100 pairs), the gate's one-sided p that new is worse (margin 0):
    the share of arrangements whose sum is at most the observed one."""
    _, ge0, _ = tail_counts(d, 0.0, n_resamples=n_resamples, seed=seed)
    return ge0 / arrangements(d.shape[1], n_resamples)


def rates(d: np.ndarray, truth: float, *, n_resamples: int = 9999, seed: int = 0
          ) -> tuple[float | None, float, float]:
    """(coverage of ``truth`` or None when no interval is shown, gate failure rate,
    standard error of a 5% rate) over the trials (rows) of ``d``."""
    trials, n = d.shape
    se = math.sqrt(ALPHA * (1 - ALPHA) / trials)
    if n >= 100:
        from localeval.stats import bootstrap_means, percentile_interval

        boot = bootstrap_means(d, n_resamples=n_resamples, seed=seed)
        ci = np.array([percentile_interval(row)[0] for row in boot])
        covered = (ci[:, 0] <= truth) & (truth <= ci[:, 1])
        # gate_tests: the share of resampled mean losses (-mean change) at or below 0
        fails = np.mean(boot >= 0, axis=1) < ALPHA
        return float(covered.mean()), float(fails.mean()), se
    fails = gate_p(d, n_resamples=n_resamples, seed=seed) < ALPHA
    le, ge, k = tail_counts(d, truth, n_resamples=n_resamples, seed=seed)
    if k < 1:  # no interval below 6 pairs; the one-sided gate still tests
        return None, float(fails.mean()), se
    covered = (le > k) & (ge > k)
    return float(covered.mean()), float(fails.mean()), se


def simulate(trials: int, sizes: tuple[int, ...] = SIZES, seed: int = 20240611,
             n_resamples: int = 9999) -> list[dict]:
    """One row per distribution, size and truth: coverage and (truth 0) gate failures."""
    rng = np.random.default_rng(seed)
    out = []
    for name, (draw, shift) in DISTRIBUTIONS.items():
        for n in sizes:
            for shifted in (False, True):
                truth = shift if shifted else 0.0
                d = draw(rng, trials, n, shifted)
                # from 100 pairs the bootstrap: 2000 resamples keep it fast
                cov, fail, _ = rates(d, truth, n_resamples=2000 if n >= 100 else n_resamples)
                out.append({"distribution": name, "n": n, "truth": truth, "coverage": cov,
                            "gate_failures": fail if not shifted else None})
    return out


def table(rows: list[dict]) -> str:
    """Markdown: coverage at truth 0 / shifted, and the gate's false failures at truth 0
    (below 6 pairs, no interval: the gate's alone)."""
    names = list(dict.fromkeys(r["distribution"] for r in rows))
    sizes = sorted({r["n"] for r in rows})
    head = "| differences | " + " | ".join(f"n={n}" for n in sizes) + " |"
    lines = [head, "|---|" + "---:|" * len(sizes)]
    for name in names:
        cells = []
        for n in sizes:
            z, s = (next(r for r in rows if r["distribution"] == name and r["n"] == n
                         and (r["truth"] == 0) == zero) for zero in (True, False))
            if z["coverage"] is None:
                cells.append(f"no interval / {100 * z['gate_failures']:.1f}")
            else:
                cells.append(f"{100 * z['coverage']:.1f} / {100 * s['coverage']:.1f} / "
                             f"{100 * z['gate_failures']:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    a = ap.parse_args()
    print(table(simulate(a.trials, tuple(int(x) for x in a.sizes.split(",")))))
    sys.exit(0)
