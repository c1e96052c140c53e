"""How often ``localeval diff --fail-if-worse`` fails, by size and true loss: the table in
docs/comparing-versions.md ("What a gate can detect").

Seeded simulation through the command's own path (``diff_runs`` and the gates; the
data as ``tests/unit/verdicts_sim.py`` draws them): 0/1 scores with 30% of the pairs
changing, graded scores whose per-pair change has a spread of 0.2. Each cell is the
percentage of trials in which the one-sided gate (margin 0, 5%) failed; in brackets,
where some trials could not have failed at all, the percentage of those.

    python scripts/verdict_power_table.py [--trials 400]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))

from verdicts_sim import gate_rates  # noqa: E402  (the tests' simulation, one definition)

SIZES = (2, 3, 5, 10, 20, 50, 200)
LOSSES = (0.0, 0.05, 0.1, 0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=400)
    args = ap.parse_args()
    print("| scores | true loss | " + " | ".join(f"n={n}" for n in SIZES) + " |")
    print("|---|---:|" + "---:|" * len(SIZES))
    for kind, label in (("binary", "0/1, 30% of pairs change"),
                        ("graded", "graded, spread 0.2")):
        for loss in LOSSES:
            cells = []
            for n in SIZES:
                r = gate_rates(n, kind, loss, args.trials, seed=1000 * n + int(loss * 100))
                cell = f"{100 * r['fail_if_worse']:.1f}"
                if r["could_not_fail"]:
                    cell += f" ({100 * r['could_not_fail']:.0f})"
                cells.append(cell)
            print(f"| {label} | {loss:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
