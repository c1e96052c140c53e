"""What a set of judged pairs says: counts, the preference for NEW with its interval and
the margin's verdict, and the judge's position and length bias.

The hard rate is (wins + ties/2) over the *consistent* pairs; inconsistent
pairs are counted, never split into wins. The soft rate is the mean over
every judged pair of the order-averaged P(new better) + P(tie)/2 (see
``judgement``). Both are over the pairs the judge was asked: pairs of identical
answers (``judgement.identical_pair``) are counted apart ("5 identical answers not
judged"), in neither rate nor the bias figures. Counting them as ties at 0.5 made
the interval of a judge leaning by 1e-5 on three changed answers, among five
unchanged ones, [0.500002, 0.500037]: above 0.5, and called a preference.

Both intervals come from ``equivalence.preference_interval`` (the randomization
test below 100 pairs, ``stats``' percentile bootstrap over pairs above, a pair's
two orders together the unit), and the verdict reads the reported one against the
margin (``equivalence.zone``: NEW preferred only when the interval leaves
0.5 +/- margin on NEW's side, no practical difference when it lies inside).
The pairwise judge check (``judge_check.run_pairwise_check``), when it ran, is
carried with the result and said first: an unfit judge's preference is not evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from localeval.pairwise.equivalence import (
    BASE,
    BOOTSTRAP_METHOD,
    DEFAULT_MARGIN,
    EQUIVALENT,
    NEW,
    margin_text,
    preference_interval,
    zone,
)
from localeval.pairwise.judgement import (
    INCONSISTENT,
    LOSS,
    TIE,
    UNJUDGED,
    WIN,
    PairJudgement,
)
from localeval.stats import Interval

__all__ = ["PairwiseResult", "summarise", "HIGH_POSITION_BIAS", "HIGH_LENGTH_BIAS", "METHOD",
           "identical_text"]

#: Above this share of pairs following the position, the judge's one-order verdicts are
#: said not to be evidence.
HIGH_POSITION_BIAS = 0.2
#: Above this share of decisive pairs won by the longer answer (10 pairs or more), say so.
HIGH_LENGTH_BIAS = 0.75
#: The method of 100 judged pairs and more (fewer: ``equivalence``' randomization interval).
METHOD = BOOTSTRAP_METHOD

_SAID = {NEW: ("NEW is preferred", "the interval lies above {zone}"),
         BASE: ("BASE is preferred", "the interval lies below {zone}"),
         EQUIVALENT: ("no practical difference", "the interval lies within {zone}")}


def identical_text(n: int) -> str:
    """"5 identical answers not judged" ("" for none)."""
    return f"{n} identical answer{'s' if n != 1 else ''} not judged" if n else ""


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
    #: the indifference margin: a preference within 0.5 +/- margin is none (``equivalence``)
    margin: float = DEFAULT_MARGIN

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

    @property
    def verdict(self) -> str:
        """What the interval shows against 0.5 +/- margin (``equivalence.zone``): "NEW
        preferred", "BASE preferred", "no practical difference", "not shown" or "no
        estimate"."""
        return zone(self.rate, self.margin)

    @property
    def identical(self) -> int:
        """Pairs of identical answers: counted apart, not judged, in no rate."""
        return int(self.counts.get("identical", 0))

    def sentence(self) -> str:
        """One plain sentence on the preference, its margin and the identical answers."""
        r = self.rate
        same = identical_text(self.identical)
        caveat = (f" (not evidence: the pairwise judge check says {self.judge_check.verdict})"
                  if self.judge_unfit else "")
        if r.value is None:
            if self.pairs and self.identical == len(self.pairs):
                return (f"nothing to judge: every answer is the same in both versions "
                        f"({same})")
            return f"no preference can be given: {r.reason}" + (f"; {same}" if same else "")
        what = ("the judge's order-averaged probability that NEW is better" if self.mode == "soft"
                else "wins plus half the ties over the pairs whose two orders agreed")
        zone_ = margin_text(self.margin)
        if r.low is None or r.high is None:
            said, why = "preference not shown", str(r.reason or "no interval")
            ci = ""
        else:
            said, why = _SAID.get(self.verdict, (
                "preference not shown", "the interval neither lies within {zone} nor leaves it"))
            ci, why = f" [{r.low:.2f}, {r.high:.2f}]", why.format(zone=zone_)
        over = f"{r.n} judged pair{'s' if r.n != 1 else ''}"
        return (f"{said}: {r.value:.2f}{ci} over {over}, {what}; {why}"
                + (f"; {same}" if same else "") + caveat)

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
            "soft": self.soft.to_dict(), "margin": self.margin, "verdict": self.verdict,
            "judged": self.rate.n, "identical_not_judged": self.identical,
            "sentence": self.sentence(),
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
              judge_check: Any = None, criterion_source: str | None = None,
              margin: float = DEFAULT_MARGIN) -> PairwiseResult:
    """The figures of ``pairs``: the arithmetic ``compare_pairwise`` and the tests share.
    ``margin``: checked by the caller (``equivalence.check_margin``)."""
    pairs = list(pairs)
    counts = {k: 0 for k in (WIN, LOSS, TIE, INCONSISTENT, UNJUDGED)}
    for p in pairs:
        if not p.identical:  # counted apart: not a tie the judge gave
            counts[p.outcome] += 1
    counts["position_following"] = sum(p.follows_position for p in pairs)
    counts["identical"] = sum(p.identical for p in pairs)
    asked = [p for p in pairs if p.outcome != UNJUDGED and not p.identical]  # judged
    hard_values = [v for v in (p.hard() for p in asked) if v is not None]
    soft_values = [v for v in (p.soft() for p in asked) if v is not None]
    lacking = sum(p.soft() is None for p in asked)
    mode = "soft" if asked and not lacking else "hard"
    extra = list(notes)
    if lacking and lacking < len(asked):
        extra.append(f"{lacking} judged pairs have no verdict probabilities: the hard rate "
                     "is reported")
    if counts["identical"]:
        extra.append(f"{counts['identical']} pairs have the same answer in both versions "
                     "(white space aside) and the same contexts: not judged (no judge call) "
                     "and counted apart, in neither the preference nor its interval; the "
                     f"preference and the bias figures count the {len(asked)} pairs asked")
    hard = preference_interval(hard_values, n_resamples=n_resamples, seed=seed,
                               what="consistent pairs")
    soft = preference_interval(soft_values, n_resamples=n_resamples, seed=seed,
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
                          criterion_source, margin)
