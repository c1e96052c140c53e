"""The known-answer check of a pairwise judge: a right answer against a hallucinated one.

The probes are the bundled pairs in which a good answer faces a bad one on
the same question, contexts and reference (``grounding``: supported by the
context, or inventing facts; ``correctness``: matching the reference, or
stating wrong facts), in en, ja and zh. Each is asked in both orders, the
good answer as A and then as B; a probe passes when the judge prefers the
good answer in *both* orders. A tie, a verdict that follows the position, or
a failed call is a miss. The verdicts are those of ``check``
(``rate_verdict``: fit at 80% of pairs, doubtful at 60%): a judge answering
at random passes a probe with probability 1/9, and one that always says "A"
passes none.

Asking is the caller's: ``run_pairwise_check`` takes ``ask(first, second)``,
which returns the verdict letter ("A", "B", "tie") with ``first`` shown as A,
or None when the call failed. The pairwise step and its schema live with
``localeval.pairwise`` (a higher layer), which passes its own ``ask``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from localeval.judge_check.check import rate_verdict
from localeval.judge_check.probes import Probe, in_turn, load_probes, probes_version
from localeval.types import Sample

__all__ = ["PairwiseCheck", "pairwise_probes", "run_pairwise_check", "PAIRWISE_KINDS"]

#: Probe kinds whose good and bad variants differ in the answer alone.
PAIRWISE_KINDS = ("grounding", "correctness")

#: ``ask(first, second)``: the verdict letter with ``first`` shown as A, None on failure.
Ask = Callable[[Sample, Sample], "str | None"]


def pairwise_probes(limit: int | None = None) -> list[Probe]:
    """The probes whose two variants differ only in the answer, kinds and languages in
    turn (grounding en, ja, zh, correctness en, ja, zh, grounding en, ...) so that
    ``limit`` still covers both kinds and every language."""
    chosen = [p for p in load_probes() if p.kind in PAIRWISE_KINDS
              and p.good.contexts == p.bad.contexts and p.good.answer != p.bad.answer]
    return in_turn(chosen, lambda p: (PAIRWISE_KINDS.index(p.kind),
                                      ("en", "ja", "zh").index(p.lang)), limit)


@dataclass
class PairwiseCheck:
    """The pairwise judge check: probes passed, and how the others were missed."""

    pairs: int = 0
    passed: int = 0
    #: misses whose two orders gave the same letter (the verdict followed the position)
    position: int = 0
    ties: int = 0
    failed: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)
    probes: str = ""

    @property
    def pass_rate(self) -> float:
        return self.passed / self.pairs if self.pairs else 0.0

    @property
    def verdict(self) -> str:
        """fit / doubtful / unfit, as the pointwise check says it; unchecked without probes."""
        return rate_verdict(self.pass_rate) if self.pairs else "unchecked"

    @property
    def fit(self) -> bool:
        return self.verdict == "fit"

    def summary_line(self) -> str:
        """One line, printed before the pairwise figures."""
        if not self.pairs:
            return "pairwise judge check: nothing checked"
        counts = (f"{self.passed}/{self.pairs} known-answer pairs preferred right in both "
                  "orders")
        if self.fit:
            return f"pairwise judge check: fit ({counts})"
        why = []
        if self.position:
            why.append(f"{self.position} followed the position")
        if self.ties:
            why.append(f"{self.ties} with a tie")
        if self.failed:
            why.append(f"{self.failed} with a failed call")
        return (f"pairwise judge check: {self.verdict.upper()}: this judge does not reliably "
                f"prefer a right answer to a hallucinated one ({counts}"
                + (f"; of the misses {', '.join(why)}" if why else "")
                + "); its pairwise preferences are not evidence")

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "pairs": self.pairs, "passed": self.passed,
                "pass_rate": round(self.pass_rate, 4), "position": self.position,
                "ties": self.ties, "failed": self.failed, "probes": self.probes,
                "misses": list(self.misses), "line": self.summary_line()}


def run_pairwise_check(ask: Ask, *, pairs: int | None = None,
                       on_probe: Callable[[int, int], None] | None = None) -> PairwiseCheck:
    """Ask every pairwise probe (at most ``pairs``) in both orders; the check's result.

    ``on_probe(done, total)`` is told after each probe (two calls).
    """
    probes = pairwise_probes(pairs)
    out = PairwiseCheck(probes=probes_version())
    for i, probe in enumerate(probes, 1):
        good_first = ask(probe.good, probe.bad)  # good answer as A
        bad_first = ask(probe.bad, probe.good)  # good answer as B
        out.pairs += 1
        if good_first == "A" and bad_first == "B":
            out.passed += 1
        else:
            out.failed += good_first is None or bad_first is None
            out.ties += "tie" in (good_first, bad_first)
            out.position += good_first == bad_first and good_first in ("A", "B")
            out.misses.append({"probe": probe.id, "good_as_a": good_first,
                               "good_as_b": bad_first})
        if on_probe is not None:
            on_probe(i, len(probes))
    return out
