"""Active vs uniform draw: labels needed for the same interval width, calibrated soft judge.

A simulated judge gives each row a calibrated P(yes) = p (p ~ Beta(0.4, 0.4));
the label is Bernoulli(p). For each label budget n, 2,000 data sets of N rows
are drawn uniformly and actively (localeval.estimate's draw, weighted back by
the active estimator), and the mean interval width is recorded; the script
prints the labels the active draw needs to match the uniform draw's width.

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


def width(n: int, active: bool, rng: np.random.Generator) -> float:
    p = rng.beta(0.4, 0.4, (S, N))
    y = (rng.random((S, N)) < p).astype(float)
    prob = (np.stack([inclusion_probabilities(list(4 * r * (1 - r)), n) for r in p]) if active
            else np.full((S, N), n / N))
    _, se, _ = active_terms(p, y, rng.random((S, N)) < prob, prob)
    return float(2 * z_value() * se.mean())


def main() -> None:
    rng = np.random.default_rng(0)
    for n in (50, 100, 200):
        target = width(n, False, rng)
        k = next(k for k in range(10, n + 1, 2) if width(k, True, rng) <= target)
        print(f"uniform n={n}: width {target:.4f}; active reaches it with n={k} "
              f"({1 - k / n:.0%} fewer labels)")


if __name__ == "__main__":
    main()
