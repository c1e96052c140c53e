"""Seeded simulation of the pairwise verdicts and the --fail-if-preferred-base gate.

Every simulated comparison goes through the package's own arithmetic
(``localeval.pairwise.summarise`` on judged pairs built here, then
``PairwiseResult.verdict`` and ``preferred_base_failure``), at the default margin
(0.5 +/- 0.05). For each scenario and number of pairs it counts how often the
comparison said "NEW is preferred", "no practical difference", and how often the
gate failed (BASE preferred beyond the margin, or nothing could be judged); and, for
contrast, how often the rule before the margin (identical answers counted as ties
at 0.5, a percentile bootstrap over every pair, "NEW is preferred" whenever the
interval lies above 0.5) said "NEW is preferred".

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/pairwise_equivalence_sim.py --trials 400 --jobs 2

prints the Markdown table docs/comparing-versions.md holds ("Which answer is better:
pairwise", "Measured"); tests/unit/test_pairwise_equivalence_sim.py runs the same
scenarios with fewer trials and fails when a rate leaves its bound.

Scenarios (a pair's preference for NEW is what the judge's two orders say together):

- soft: the order-averaged probability v = sigmoid(z), z ~ Normal(mu, 1.5), mu set so
  that E[v] is the truth; each order is pulled towards one position by up to 80% of
  the room (the averaging cancels it, as it does a real judge's);
- hard: verdict letters only: 15% of pairs inconsistent (the same letter in both
  orders), 15% ties, the rest wins and losses so that (wins + ties/2) over the
  consistent pairs has the true mean;
- near-random: v = 0.5 + a tiny noise (sd 2e-5), or a lean of 1e-5 to 8e-5 towards
  NEW (the judge of the issue), with most pairs identical answers, not judged.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

SIZES = (2, 3, 5, 6, 8, 10, 15, 30, 50, 100, 200, 500, 1000)
SOFT_SD = 1.5


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    kind: str  # "soft", "hard", "near", "lean"
    truth: float  # the true preference for NEW over judged pairs
    identical: float = 0.0  # the share of pairs whose answers are identical (not judged)

    @property
    def no_preference(self) -> bool:
        return self.truth == 0.5


SCENARIOS = (
    Scenario("soft-null", "soft, no preference", "soft", 0.5),
    Scenario("hard-null", "hard, no preference (15% inconsistent)", "hard", 0.5),
    Scenario("near-null", "near-random soft, no preference, 60% identical", "near", 0.5, 0.6),
    Scenario("lean", "near-random soft leaning 1e-5 to 8e-5, 5 of 8 identical", "lean",
             0.5 + 4.5e-5, 5 / 8),
    Scenario("soft-0.52", "soft, true 0.52 (inside the margin)", "soft", 0.52),
    Scenario("soft-0.55", "soft, true 0.55 (on the margin)", "soft", 0.55),
    Scenario("soft-0.60", "soft, true 0.60", "soft", 0.60),
    Scenario("hard-0.60", "hard, true 0.60", "hard", 0.60),
)


def _soft_location(truth: float) -> float:
    """mu with E[sigmoid(Normal(mu, SOFT_SD))] = truth (Gauss-Hermite, then bisection)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()

    def mean(mu: float) -> float:
        return float((w / (1.0 + np.exp(-(mu + SOFT_SD * x)))).sum())

    lo, hi = -5.0, 5.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean(mid) < truth else (lo, mid)
    return (lo + hi) / 2


def _soft_pair(i: int, v: float, pull: float) -> Any:
    from localeval.pairwise.judgement import PairJudgement  # once imported, a dict lookup

    one, two = v - pull, v + pull  # P(NEW better): order 1 (NEW is B), order 2 (NEW is A)
    p1 = {"A": 1.0 - one, "B": one, "tie": 0.0}
    p2 = {"A": two, "B": 1.0 - two, "tie": 0.0}
    return PairJudgement(f"q{i}", f"q{i}", max(p1, key=p1.__getitem__),
                         max(p2, key=p2.__getitem__), p1, p2, 100, 100)


def pairs_of(s: Scenario, n: int, rng: np.random.Generator) -> list:
    """``n`` simulated pairs of scenario ``s`` (PairJudgement, identical ones included)."""
    from localeval.pairwise import PairJudgement

    same = rng.random(n) < s.identical
    out = []
    if s.kind == "soft":
        mu = _soft_location(s.truth)
        v = 1.0 / (1.0 + np.exp(-rng.normal(mu, SOFT_SD, n)))
        pull = rng.random(n) * 0.8 * np.minimum(v, 1.0 - v)
        out = [_soft_pair(i, float(v[i]), float(pull[i])) for i in range(n)]
    elif s.kind in ("near", "lean"):
        v = (0.5 + rng.normal(0.0, 2e-5, n) if s.kind == "near"
             else 0.5 + rng.uniform(1e-5, 8e-5, n))
        out = [_soft_pair(i, float(v[i]), 0.0) for i in range(n)]
    else:  # hard: win, loss, tie, inconsistent
        win = 0.85 * s.truth - 0.075  # (win + 0.15 / 2) / 0.85 = truth
        kinds = rng.choice(4, size=n, p=[win, 0.70 - win, 0.15, 0.15])
        letters = {0: ("B", "A"), 1: ("A", "B"), 2: ("tie", "tie"), 3: ("A", "A")}
        out = [PairJudgement(f"q{i}", f"q{i}", *letters[int(k)], base_chars=100,
                             new_chars=100) for i, k in enumerate(kinds)]
    return [PairJudgement(p.base_id, p.new_id, "tie", "tie", identical=True) if same[i] else p
            for i, p in enumerate(out)]


def old_rule_new_preferred(pairs: list, n_resamples: int, seed: int) -> bool:
    """The rule before the margin: identical answers as ties at 0.5 in a percentile
    bootstrap over every pair, "NEW is preferred" when the interval lies above 0.5."""
    from localeval.stats import bootstrap_ci

    soft = [p.soft() for p in pairs]
    values = soft if all(v is not None for v in soft) else [
        v for v in (p.hard() for p in pairs) if v is not None]
    if len(values) < 2:
        return False
    ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
    return ci is not None and ci[0] > 0.5


def cell(s: Scenario, n: int, trials: int, *, n_resamples: int = 999, seed: int = 0,
         old: bool = False) -> dict[str, float]:
    """The rates (0-1) of ``trials`` seeded comparisons of ``n`` pairs of scenario ``s``."""
    from localeval.pairwise import preferred_base_failure, summarise

    rng = np.random.default_rng([seed, n, SCENARIOS.index(s) if s in SCENARIOS else 99])
    counts = {"new": 0, "base": 0, "equivalent": 0, "gate": 0, "no interval": 0, "old": 0}
    for t in range(trials):
        pairs = pairs_of(s, n, rng)
        r = summarise(pairs, n_resamples=n_resamples, seed=t)
        counts["new"] += r.verdict == "NEW preferred"
        counts["base"] += r.verdict == "BASE preferred"
        counts["equivalent"] += r.verdict == "no practical difference"
        counts["no interval"] += r.rate.ci is None
        counts["gate"] += preferred_base_failure(r) is not None
        if old:
            counts["old"] += old_rule_new_preferred(pairs, n_resamples, t)
    return {k: v / trials for k, v in counts.items()}


def _cell_job(job: tuple[str, int, int, int]) -> dict[str, float]:
    key, n, trials, n_resamples = job
    s = next(x for x in SCENARIOS if x.key == key)
    return cell(s, n, trials, n_resamples=n_resamples,
                old=s.kind in ("near", "lean") or s.no_preference)


def table(trials: int, sizes: tuple[int, ...] = SIZES, n_resamples: int = 999,
          jobs: int = 1) -> str:
    """The Markdown tables of every scenario and size (``jobs`` processes)."""
    work = [(s.key, n, trials, n_resamples) for s in SCENARIOS for n in sizes]
    if jobs > 1:
        from multiprocessing import Pool

        with Pool(jobs) as pool:
            done = pool.map(_cell_job, work, chunksize=1)
    else:
        done = [_cell_job(w) for w in work]
    by = {(w[0], w[1]): r for w, r in zip(work, done)}
    head = "| scenario | " + " | ".join(f"n={n}" for n in sizes) + " |"
    rule = "|---|" + "---:|" * len(sizes)
    main, before = [head, rule], [head, rule]
    for s in SCENARIOS:
        rates = [by[(s.key, n)] for n in sizes]
        main.append(f"| {s.label} | " + " | ".join(
            ("no interval" + (f" / gate {100 * r['gate']:.1f}" if r["gate"] else ""))
            if r["no interval"] == 1.0 else
            f"{100 * r['new']:.1f} / {100 * r['equivalent']:.1f} / {100 * r['gate']:.1f}"
            for r in rates) + " |")
        if s.kind in ("near", "lean") or s.no_preference:
            before.append(f"| {s.label} | " + " | ".join(f"{100 * r['old']:.1f}"
                                                        for r in rates) + " |")
    return ("Each cell: % NEW is preferred / % no practical difference / % gate failures "
            "(margin 0.05); no interval: fewer than 6 judged pairs in every trial, with the "
            "gate's failures when nothing could be judged\n\n" + "\n".join(main)
            + "\n\nThe rule before the margin, % NEW is preferred:\n\n" + "\n".join(before))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--jobs", type=int, default=1, help="processes (cells run side by side)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    sizes = tuple(int(x) for x in args.sizes.split(","))
    print(table(args.trials, sizes, args.resamples, args.jobs))
    print(f"\n{args.trials} trials a cell, {args.resamples} resamples, "
          f"{math.ceil(time.perf_counter() - start)} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
