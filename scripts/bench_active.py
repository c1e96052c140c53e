"""Active vs uniform draw: labels needed for the same interval width, calibrated soft judge.

A simulated judge gives each row a calibrated P(yes) = p (p ~ Beta(a, a): a = 0.4
is a judge often unsure, a = 0.2 one mostly sure, as LLM verdicts tend to be);
the label is Bernoulli(p). For each label budget n, 1,000 data sets of N rows
are drawn uniformly and actively (localeval.estimate's draw, weighted back by
the active estimator), and the mean interval width is recorded; the script
prints the labels the active draw needs to match the uniform draw's width, and
the ceiling: the saving of the exactly optimal draw (pi ~ sqrt(p (1 - p)), no
floor), from the variances in closed form over a million rows.

    .venv/bin/python scripts/bench_active.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localeval.estimate.draw import inclusion_probabilities  # noqa: E402
from localeval.estimate.ppi import active_terms, z_value  # noqa: E402

S, N = 1000, 1000


def width(n: int, active: bool, rng: np.random.Generator, a: float) -> float:
    p = rng.beta(a, a, (S, N))
    y = (rng.random((S, N)) < p).astype(float)
    prob = (np.stack([inclusion_probabilities(list(4 * r * (1 - r)), n) for r in p]) if active
            else np.full((S, N), n / N))
    _, se, _ = active_terms(p, y, rng.random((S, N)) < prob, prob)
    return float(2 * z_value() * se.mean())


def ceiling(a: float, n: int) -> float:
    """Labels saved by the exactly optimal draw (lambda = 1): the variance of the mean term
    is Var(Y) + E[v / pi] - E[v], v = p (1 - p), for pi = n/N (uniform) or pi ~ sqrt(v)."""
    v = (lambda p: p * (1 - p))(np.random.default_rng(1).beta(a, a, 1_000_000))
    uniform = v.mean() * (N / n - 1)
    # active with k labels: N / k * E[sqrt v]^2 - E[v]; equal variance at k below
    k = N * np.sqrt(v).mean() ** 2 / (uniform + v.mean())
    return 1 - k / n


def main() -> None:
    rng = np.random.default_rng(0)
    for a in (0.4, 0.2):
        for n in (50, 100, 200):
            target = width(n, False, rng, a)
            k = next(k for k in range(n // 2, n + 1, 2) if width(k, True, rng, a) <= target)
            print(f"Beta({a}, {a}) uniform n={n}: width {target:.4f}; active reaches it with "
                  f"n={k} ({1 - k / n:.0%} fewer labels; optimal ceiling "
                  f"{ceiling(a, n):.0%})", flush=True)


if __name__ == "__main__":
    main()
