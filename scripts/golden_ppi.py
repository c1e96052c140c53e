"""Write tests/data/ppi_golden.json: ppi-python's numbers on fixed inputs, for the golden test.

ppi-python (the PPI authors' reference implementation) pulls numba and gdown,
too heavy for the test install, so its numbers are computed once here and
committed with the exact inputs; ``tests/unit/test_estimate_golden.py``
compares localeval's estimator with them to 1e-6. Re-run after changing the
cases (needs ``pip install ppi-python``):

    .venv/bin/python scripts/golden_ppi.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "ppi_golden.json"

#: (name, n labelled, N unlabelled, judge kind, label kind): judge from noise to near-perfect.
CASES = [
    ("binary-good-judge", 40, 300, "good", "binary"),
    ("binary-random-judge", 30, 200, "random", "binary"),
    ("graded-labels", 50, 400, "good", "graded"),
    ("binary-labels-hard-judge", 25, 250, "hard", "binary"),
    ("difference-of-versions", 60, 500, "good", "difference"),
    ("anticorrelated-judge", 35, 150, "anti", "binary"),
]


def _case(rng: np.random.Generator, n: int, nu: int, judge: str, kind: str
          ) -> tuple[list[float], list[float], list[float]]:
    total = n + nu
    if kind == "graded":
        y = rng.integers(1, 6, total) / 4.0 - 0.25  # 1-5 rescaled to 0-1
    elif kind == "difference":
        y = rng.binomial(1, 0.6, total) - rng.binomial(1, 0.5, total).astype(float)
    else:
        y = rng.binomial(1, 0.55, total).astype(float)
    noise = rng.normal(0, 0.25, total)
    f = {"good": y * 0.7 + 0.15 + noise, "random": rng.uniform(0, 1, total),
         "hard": (y + noise > 0.5).astype(float), "anti": 1 - y + noise}[judge]
    f = np.round(f, 6)
    return [float(v) for v in y[:n]], [float(v) for v in f[:n]], [float(v) for v in f[n:]]


def main() -> None:
    import ppi_py

    rng = np.random.default_rng(20240311)
    cases = []
    for name, n, nu, judge, kind in CASES:
        y, fl, fu = _case(rng, n, nu, judge, kind)
        Y, Fl, Fu = np.array(y), np.array(fl), np.array(fu)
        point = float(np.ravel(ppi_py.ppi_mean_pointestimate(Y, Fl, Fu))[0])
        lo, hi = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(Y, Fl, Fu, alpha=0.05))
        clo, chi = (float(np.ravel(v)[0]) for v in ppi_py.classical_mean_ci(Y, alpha=0.05))
        cases.append({"name": name, "labels": y, "judge_labelled": fl, "judge_unlabelled": fu,
                      "ppi_point": point, "ppi_low": lo, "ppi_high": hi,
                      "classical_low": clo, "classical_high": chi})
    from importlib.metadata import version

    OUT.write_text(json.dumps({"reference": f"ppi-python {version('ppi-python')}",
                               "alpha": 0.05, "cases": cases}) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
