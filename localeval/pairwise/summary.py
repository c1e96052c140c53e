"""What a set of judged pairs says: counts, the preference for NEW with its interval,
and the judge's position and length bias.

The hard rate is (wins + ties/2) over the *consistent* pairs; inconsistent
pairs are counted, never split into wins. The soft rate is the mean over
every judged pair of the order-averaged P(new better) + P(tie)/2 (see
``judgement``). Both intervals are ``stats``' percentile bootstrap over pairs
(``stats.bootstrap_ci``: the draws of ``scipy.stats.bootstrap``, seeded): a
pair, both of its orders together, is the unit resampled.

Pairs of identical answers (``judgement.identical_pair``) are ties in both
rates but are left out of the bias figures, which describe the pairs the
judge was asked. The pairwise judge check (``judge_check.run_pairwise_check``),
when it ran, is carried with the result and said first: an unfit judge's
preference is not evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from localeval.pairwise.judgement import (
    INCONSISTENT,
    LOSS,
    TIE,
    UNJUDGED,
    WIN,
    PairJudgement,
)
from localeval.stats import Interval, bootstrap_ci

__all__ = ["PairwiseResult", "summarise", "rate_interval", "HIGH_POSITION_BIAS",
           "HIGH_LENGTH_BIAS", "METHOD"]

#: Above this share of pairs following the position, the judge's one-order verdicts are
#: said not to be evidence.
HIGH_POSITION_BIAS = 0.2
#: Above this share of decisive pairs won by the longer answer (10 pairs or more), say so.
HIGH_LENGTH_BIAS = 0.75
METHOD = "percentile bootstrap over pairs"


def rate_interval(values: Sequence[float], *, n_resamples: int, seed: int,
                  what: str) -> Interval:
    """The mean of per-pair values with ``stats``' percentile bootstrap interval.

    No value: no estimate, with the reason (never NaN); one value, or a constant
    column: the value, and no interval from one pair, a zero-width one otherwise.
    """
    n = len(values)
    if n == 0:
        return Interval(None, None, None, 0, METHOD, reason=f"no {what}")
    mean = sum(values) / n
    if n < 2:
        return Interval(mean, None, None, n, METHOD, reason=f"one {what[:-1]}: no interval")
    ci = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
    if ci is None:
        return Interval(mean, None, None, n, METHOD, reason="no interval")
    return Interval(mean, ci[0], ci[1], n, METHOD)


def _share(flags: Sequence[bool | None]) -> tuple[float | None, int]:
    known = [f for f in flags if f is not None]
    return (sum(known) / len(known) if known else None), len(known)


@dataclass
class PairwiseResult:
    """The pairwise comparison of NEW with BASE (``compare_pairwise``' answer)."""

    pairs: list[PairJudgement]
    counts: dict[str, int]
    hard: Interval
    soft: Interval
    #: "soft" when every judged pair has probabilities in both orders, else "hard"
    mode: str
    position_bias: float | None
    #: share of decisive verdicts won by the longer answer: consistent pairs, then the
    #: single orders of inconsistent pairs; with how many were counted
    longer_wins: tuple[float | None, int]
    longer_wins_inconsistent: tuple[float | None, int]
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = 0
    criterion: str | None = None
    #: the pairwise judge check (``judge_check.PairwiseCheck``), None when it did not run
    judge_check: Any = None
    #: where the criterion came from ("file.toml [name]"), when not given as text
    criterion_source: str | None = None

    @property
    def judge_unfit(self) -> bool:
        """The pairwise judge check ran and did not say fit."""
        return self.judge_check is not None and not self.judge_check.fit

    @property
    def rate(self) -> Interval:
        """The reported preference for NEW: the soft rate in soft mode, else the hard one."""
        return self.soft if self.mode == "soft" else self.hard

    def preferred_base(self) -> list[PairJudgement]:
        """Pairs where the judge preferred BASE: losses, and in soft mode P(new) < 0.5;
        most preferred first."""
        out = [p for p in self.pairs if p.outcome == LOSS
               or (self.mode == "soft" and (p.soft() or 0.5) < 0.5)]
        return sorted(out, key=lambda p: (p.soft() if p.soft() is not None else 0.0,
                                          p.base_id))

    def sentence(self) -> str:
        """One plain sentence on the preference."""
        r = self.rate
        if r.value is None:
            return f"no preference can be given: {r.reason}"
        what = ("the judge's order-averaged probability that NEW is better" if self.mode == "soft"
                else "wins plus half the ties over the pairs whose two orders agreed")
        ci = (f" [{r.low:.2f}, {r.high:.2f}]" if r.low is not None and r.high is not None
              else f" ({r.reason})")
        if r.low is not None and r.low > 0.5:
            verdict = "NEW is preferred"
        elif r.high is not None and r.high < 0.5:
            verdict = "BASE is preferred"
        else:
            verdict = "no preference shown (the interval includes 0.5)"
        caveat = (f" (not evidence: the pairwise judge check says {self.judge_check.verdict})"
                  if self.judge_unfit else "")
        return f"{verdict}: {r.value:.2f}{ci} over {r.n} pairs, {what}{caveat}"

    def bias_notes(self) -> list[str]:
        """Sentences on the judge's position and length bias, when high."""
        out = []
        if self.position_bias is not None and self.position_bias > HIGH_POSITION_BIAS:
            out.append(f"the judge's verdict followed the position in "
                       f"{self.position_bias:.0%} of pairs (the same letter in both orders): "
                       "a one-order comparison with this judge is not evidence; only the "
                       "order-averaged figures are")
        share, n = self.longer_wins
        if share is not None and n >= 10 and max(share, 1 - share) > HIGH_LENGTH_BIAS:
            which = "longer" if share > 0.5 else "shorter"
            out.append(f"the {which} answer won {max(share, 1 - share):.0%} of {n} decisive "
                       "pairs: the judge may prefer length, or one version's answers are "
                       "longer and better; read some of the pairs")
        return out

    def to_dict(self) -> dict[str, Any]:
        lw, lwi = self.longer_wins, self.longer_wins_inconsistent
        return {
            "judge_check": None if self.judge_check is None else self.judge_check.to_dict(),
            "mode": self.mode, "criterion": self.criterion,
            **({"criterion_source": self.criterion_source} if self.criterion_source else {}),
            "counts": self.counts,
            "preference_new": self.rate.to_dict(), "hard": self.hard.to_dict(),
            "soft": self.soft.to_dict(), "sentence": self.sentence(),
            "bootstrap": {"resamples": self.n_resamples, "seed": self.seed, "unit": "pair"},
            "judge_bias": {"position_bias": self.position_bias,
                           "longer_wins_consistent": {"share": lw[0], "n": lw[1]},
                           "longer_wins_inconsistent": {"share": lwi[0], "n": lwi[1]},
                           "notes": self.bias_notes()},
            "preferred_base": [p.base_id for p in self.preferred_base()],
            "notes": self.notes,
            "pairs": [p.to_dict() for p in self.pairs]}


def summarise(pairs: Sequence[PairJudgement], *, n_resamples: int = 9999, seed: int = 0,
              criterion: str | None = None, notes: Sequence[str] = (),
              judge_check: Any = None, criterion_source: str | None = None) -> PairwiseResult:
    """The figures of ``pairs``: the arithmetic ``compare_pairwise`` and the tests share."""
    pairs = list(pairs)
    counts = {k: 0 for k in (WIN, LOSS, TIE, INCONSISTENT, UNJUDGED)}
    for p in pairs:
        counts[p.outcome] += 1
    counts["position_following"] = sum(p.follows_position for p in pairs)
    counts["identical"] = sum(p.identical for p in pairs)
    judged = [p for p in pairs if p.outcome != UNJUDGED]
    asked = [p for p in judged if not p.identical]  # the pairs the judge saw
    hard_values = [v for v in (p.hard() for p in judged) if v is not None]
    softs = [p.soft() for p in judged]
    soft_values = [v for v in softs if v is not None]
    lacking = sum(p.soft() is None for p in asked)
    mode = "soft" if asked and not lacking else "hard"
    extra = list(notes)
    if lacking and lacking < len(asked):
        extra.append(f"{lacking} judged pairs have no verdict probabilities: the hard rate "
                     "is reported")
    if counts["identical"]:
        extra.append(f"{counts['identical']} pairs have the same answer in both versions "
                     "(white space aside) and the same contexts: ties decided without asking "
                     f"the judge; the bias figures count the {len(asked)} pairs asked")
    hard = rate_interval(hard_values, n_resamples=n_resamples, seed=seed,
                         what="consistent pairs")
    soft = rate_interval(soft_values, n_resamples=n_resamples, seed=seed,
                         what="pairs with verdict probabilities")
    position = counts["position_following"] / len(asked) if asked else None
    consistent = [p.winner_longer() for p in asked if p.outcome in (WIN, LOSS)]
    mixed = [p.winner_longer(o) for p in asked if p.outcome == INCONSISTENT for o in (1, 2)]
    if counts[UNJUDGED]:
        extra.append(f"{counts[UNJUDGED]} pairs unjudged (a judge call failed in one order "
                     "or both)")
    if asked and not any(p.outcome in (WIN, LOSS, TIE) for p in asked):
        extra.append("every judged pair was inconsistent (the two orders disagreed): the "
                     "judge gives no usable verdict on these answers")
    return PairwiseResult(pairs, counts, hard, soft, mode, position, _share(consistent),
                          _share(mixed), extra, seed, n_resamples, criterion, judge_check,
                          criterion_source)
