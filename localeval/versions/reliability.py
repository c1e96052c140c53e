"""Where the small-sample interval is not reliable, as simulation measured it.

The randomization interval covers the mean at least 95% of the time when the
per-sample differences are symmetric about it, and the bootstrap takes over
from ``estimate.SMALL_SAMPLE`` pairs. Neither can promise that for strongly
skewed differences with few pairs (no method can: a rare large change is
simply not in a small sample). tests/unit/versions_sim.py measures both with
known truth (10000 trials a cell, docs/comparing-versions.md has the table);
the sizes where some distribution fell below 93% coverage, or made the
one-sided ``--fail-if-worse`` gate (5%, margin 0, one gate) fail clearly more
than 5% of the time with no true difference, are listed here, and every
interval from that many pairs says so in its caveat (a failing gate's line
quotes it). Below 6 pairs there is no interval and no caveat, but the gate
still tests: with 5 pairs, all worse is p = 1/32, and right-skewed changes are
all losses 10% of the time (the table's "no interval / 10.2").
tests/unit/test_versions_small_samples.py re-runs the simulation and fails
if a size falls short that this table does not name.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Shortfall", "SHORTFALLS", "unreliable_at"]


@dataclass(frozen=True)
class Shortfall:
    """Pairs ``first``..``last``: for ``what``, coverage as low as ``coverage``% and
    (no true difference) the one-sided gate at 5% failing up to ``false_failures``% of
    the time."""

    first: int
    last: int
    what: str
    coverage: float
    false_failures: float
    #: the simulated distributions (tests/unit/versions_sim.py) this covers
    kinds: tuple[str, ...] = ()


SHORTFALLS = (
    Shortfall(6, 99, "strongly skewed changes, many small ones one way and a few large ones "
              "the other", 90.0, 13.7,
              ("right-skewed (exponential)", "left-skewed (exponential)")),
    # the bootstrap from 100 pairs: coverage holds (93.6% at worst), the gate does not
    # (measured at 100, 200 and 400 pairs, 2000 trials; not simulated beyond)
    Shortfall(100, 499, "strongly skewed changes", 93.6, 6.6,
              ("right-skewed (exponential)",)),
)


def unreliable_at(n: int) -> str:
    """What the interval from ``n`` pairs is not reliable for, with the measured figures;
    "" where simulation found no shortfall."""
    found = [s for s in SHORTFALLS if s.first <= n <= s.last]
    return "; ".join(f"{s.what} (simulated coverage down to {s.coverage:g}%; with no true "
                     f"difference the one-sided gate at 5% failed up to "
                     f"{s.false_failures:g}% of the time)"
                     for s in found)
