"""Active vs uniform draw: labels needed for the same interval width, calibrated soft judge.

A simulated judge gives each row a calibrated P(yes) = p (p ~ Beta(a, a): a = 0.4
is a judge often unsure, a = 0.2 one mostly sure, as LLM verdicts tend to be);
the label is Bernoulli(p). For each label budget n, 1,000 data sets of N rows
are drawn uniformly and actively (localeval.estimate's draw, weighted back by
the active estimator, whose interval both get: pseudo-rows, Student t with Kish's
effective count), and the mean interval width is recorded; the script
prints the labels the active draw needs to match the uniform draw's width, and
the ceiling: the saving of the exactly optimal draw (pi ~ sqrt(p (1 - p)), no
floor), from the variances in closed form over a million rows.

    .venv/bin/python scripts/bench_active.py [--floor 0.1]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localeval.estimate.draw import FLOOR_SHARE, inclusion_probabilities  # noqa: E402
from scipy import stats  # noqa: E402

from localeval.estimate.active import active_terms  # noqa: E402

S, N = 1000, 1000


def width(n: int, active: bool, rng: np.random.Generator, a: float, floor: float,
          cover: list[float] | None = None) -> float:
    """The mean 95% interval width; ``cover`` gets the share of intervals holding 0.5."""
    p = rng.beta(a, a, (S, N))
    y = (rng.random((S, N)) < p).astype(float)
    prob = (np.stack([inclusion_probabilities(list(4 * r * (1 - r)), n, floor_share=floor)
                      for r in p]) if active else np.full((S, N), n / N))
    point, se, _, df = active_terms(p, y, rng.random((S, N)) < prob, prob)
    hw = stats.t.ppf(0.975, df) * se
    if cover is not None:
        cover.append(float(np.mean(np.abs(point - 0.5) <= hw)))  # Beta(a, a) has mean 0.5
    return float(2 * hw.mean())


def ceiling(a: float, n: int) -> float:
    """Labels saved by the exactly optimal draw (lambda = 1): the variance of the mean term
    is Var(Y) + E[v / pi] - E[v], v = p (1 - p), for pi = n/N (uniform) or pi ~ sqrt(v)."""
    v = (lambda p: p * (1 - p))(np.random.default_rng(1).beta(a, a, 1_000_000))
    uniform = v.mean() * (N / n - 1)
    # active with k labels: N / k * E[sqrt v]^2 - E[v]; equal variance at k below
    k = N * np.sqrt(v).mean() ** 2 / (uniform + v.mean())
    return 1 - k / n


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--floor", type=float, default=FLOOR_SHARE,
                    help="the active draw's floor, a share of n/N (label-sheet --floor)")
    floor = ap.parse_args().floor
    rng = np.random.default_rng(0)
    for a in (0.4, 0.2):
        for n in (50, 100, 200):
            target = width(n, False, rng, a, floor)
            cover: list[float] = []
            k = next((k for k in range(n // 2, n + 1, 2)
                      if width(k, True, rng, a, floor, cover) <= target), None)
            said = (f"n={k} ({1 - k / n:.0%} fewer labels" if k is not None
                    else f"no n <= {n} (no fewer labels")
            print(f"floor {floor:g}, Beta({a}, {a}) uniform n={n}: width {target:.4f}; active "
                  f"reaches it with {said}; covers {cover[-1]:.1%}; optimal ceiling "
                  f"{ceiling(a, n):.0%})", flush=True)


if __name__ == "__main__":
    main()
