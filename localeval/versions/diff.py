"""Did my change help? Two versions of a pipeline, metric by metric: :func:`diff_runs`.

The samples of the two runs are paired (``pairing``), then for every metric
both runs scored: the mean of each version over the samples scored in both,
the paired mean difference with its interval (``estimate``), how many
samples got better, worse or stayed, which crossed the pass threshold, and
which became unscored (a regression shown, never dropped). Whether lower is
better is what the runs' summary.json recorded, else today's metric registry.
With several
metrics the verdicts use Holm-adjusted p-values; the raw intervals stay
beside them.

Each judged metric (the metric registry says which use a judge) carries the
judge fitness of both sides (``fitness``): a caveat beside its verdict when
either side's judge failed its judge check. Pairs unscored on either side are
counted per metric (``unscored_text``) and shown, never dropped silently.

A metric row holds a list of :class:`~localeval.versions.estimate.Difference`:
the judge-only difference (``kind="judge"``) first, then, with labels for
both versions, the label-corrected one (``kind="corrected"``, added by
``versions.corrected``) on the same page and in the same JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from localeval.errors import DataError, UsageError
from localeval.resultsets import (
    Alignment,
    SideFitness,
    describe_pairing,
    fitness_notes,
    judge_caveat,
    metric_models,
    pair_versions,
    pairing_dict,
    side_fitness,
)
from localeval.versions.changes import SampleChange, unscored_reasons, unscored_text
from localeval.versions.estimate import (
    DEFAULT_RESAMPLES,
    EXACT_METHOD,
    RANDOM_METHOD,
    SMALL_SAMPLE,
    Difference,
    holm,
    paired_difference,
)
from localeval.versions.load import Version, load_version
from localeval.versions.signatures import same_setup_text, signature_notes, signature_text
from localeval.versions.verdicts import NOT_SHOWN, power_facts, power_text

__all__ = ["SampleChange", "MetricDiff", "VersionDiff", "diff_runs", "lower_is_better",
           "SIGNIFICANCE", "UNCHANGED_TOL"]

#: A verdict ("better", "worse") needs a Holm-adjusted p below this.
SIGNIFICANCE = 0.05
#: Differences this small count as unchanged (scores computed twice differ in the last bits).
UNCHANGED_TOL = 1e-9


def lower_is_better(metric: str) -> bool:
    """From the metric registry (noise_sensitivity: lower is better); False when unknown."""
    from localeval.metrics import registry

    cls = registry().get(metric.split("@")[0].split(":")[0])
    return bool(getattr(cls, "lower_is_better", False))


def _direction(metric: str, v_base: Version, v_new: Version) -> tuple[bool, str | None]:
    """Lower is better? What the runs recorded (new, then base), else today's registry;
    with a note when the two runs recorded opposite directions."""
    said = [(side, v.directions[metric]) for side, v in (("new", v_new), ("base", v_base))
            if metric in v.directions]
    if not said:
        return lower_is_better(metric), None
    note = None
    if len({lib for _, lib in said}) > 1:
        note = (f"{metric}: the runs recorded opposite directions (new: "
                f"{'lower' if said[0][1] else 'higher'} is better; base: "
                f"{'lower' if said[1][1] else 'higher'} is better); new's is used")
    return said[0][1], note


@dataclass
class MetricDiff:
    """Everything the diff says about one metric."""

    metric: str
    lower_is_better: bool
    threshold: float
    samples: list[SampleChange]
    estimates: list[Difference] = field(default_factory=list)
    mean_base: float | None = None
    mean_new: float | None = None
    #: the metric uses a judge (registry; True for a metric it does not know)
    uses_judge: bool = True
    #: beside the judge-only verdict: either side's judge failed its check ("" when not)
    judge_caveat: str = ""

    def _ids(self, status: str) -> list[str]:
        return [s.new_id for s in self.samples if s.status == status]

    @property
    def scored(self) -> list[SampleChange]:
        return [s for s in self.samples if s.status == "scored"]

    @property
    def judge(self) -> Difference:
        return self.estimates[0]

    def passes(self, v: float) -> bool:
        return v <= self.threshold if self.lower_is_better else v >= self.threshold

    def counts(self) -> dict[str, int]:
        """Samples improved / worse / unchanged, and the scored-unscored transitions."""
        g = [s.gain for s in self.scored]
        return {"improved": sum(1 for x in g if x is not None and x > UNCHANGED_TOL),
                "worse": sum(1 for x in g if x is not None and x < -UNCHANGED_TOL),
                "unchanged": sum(1 for x in g if x is not None and abs(x) <= UNCHANGED_TOL),
                "became_unscored": len(self._ids("became_unscored")),
                "became_scored": len(self._ids("became_scored")),
                "unscored_in_both": len(self._ids("unscored")),
                "unscored": len(self.samples) - len(self.scored), "pairs": len(self.samples)}

    def unscored_reasons(self) -> dict[str, int]:
        """"side: reason" -> count over the pairs unscored on either side, commonest first."""
        return unscored_reasons(self.samples)

    def unscored_text(self) -> str:
        """``"7 of 12 paired samples unscored in base or new (new: reply did not parse: 7)"``."""
        return unscored_text(self.samples)

    def newly_failing(self) -> list[str]:
        return [s.new_id for s in self.scored
                if self.passes(s.base) and not self.passes(s.new)]  # type: ignore[arg-type]  # scored: both set

    def newly_passing(self) -> list[str]:
        return [s.new_id for s in self.scored
                if not self.passes(s.base) and self.passes(s.new)]  # type: ignore[arg-type]  # scored: both set

    def became_unscored(self) -> list[SampleChange]:
        return [s for s in self.samples if s.status == "became_unscored"]

    def changed_most(self, k: int | None = None) -> list[SampleChange]:
        """Samples that became unscored first, then by size of change (worse first on ties)."""
        moved = [s for s in self.samples if s.status in ("became_unscored", "became_scored")
                 or (s.gain is not None and abs(s.gain) > UNCHANGED_TOL)]
        moved.sort(key=lambda s: (s.status != "became_unscored", -abs(s.gain or 0.0),
                                  (s.gain or 0.0)))
        return moved[:k] if k is not None else moved

    def worst(self, k: int | None = None) -> list[SampleChange]:
        """Samples that became unscored, then those that lost most (direction-aware)."""
        bad = [s for s in self.samples if s.status == "became_unscored"
               or (s.gain is not None and s.gain < -UNCHANGED_TOL)]
        bad.sort(key=lambda s: (s.status != "became_unscored", s.gain or 0.0))
        return bad[:k] if k is not None else bad

    def verdict(self, est: Difference | None = None) -> str:
        """"better", "worse", "not after correction", "not shown" (never "no difference":
        see ``verdicts``) or "not compared"."""
        e = est or self.judge
        if e.ci is None or e.diff is None:
            return "not compared"
        lo, hi = e.ci
        sign = -1 if self.lower_is_better else 1
        raw = lo > 0 or hi < 0
        p = e.p_holm if e.p_holm is not None else e.p
        if raw and p is not None and p < SIGNIFICANCE:
            return "better" if sign * e.diff > 0 else "worse"
        return "not after correction" if raw else NOT_SHOWN

    def sentence(self, est: Difference | None = None, tested: int = 1) -> str:
        """The plain sentence: "new is better on faithfulness by 0.060 [0.020, 0.100]"."""
        e = est or self.judge
        v = self.verdict(e)
        tested = e.family or tested
        name = self.metric if e.kind == "judge" else f"{self.metric} ({e.kind}, {e.n} labels)"
        power = self.power_text(e)
        if v == "not compared":
            return f"{name}: not compared: {e.reason}" + (f"; {power}" if power else "")
        lo, hi = e.ci  # type: ignore[misc]  # compared: the estimate has its interval
        d = e.diff or 0.0
        sign = -1 if self.lower_is_better else 1
        # the size of the change with its interval: |d| and the interval of |d|'s sign
        size = abs(d)
        blo, bhi = (lo, hi) if d >= 0 else (-hi, -lo)
        word = "better" if sign * d > 0 else "worse"
        span = f"{size:.3f} [{blo:.3f}, {bhi:.3f}]"
        if v in ("better", "worse"):
            return f"new is {v} on {name} by {span}"
        if v == "not after correction":
            return (f"{name}: new looks {word} by {span}, but not after correcting for "
                    f"{tested} metrics tested (Holm p = {e.p_holm:.3f})")
        return (f"{name}: {NOT_SHOWN}: the interval {d:+.3f} [{lo:+.3f}, {hi:+.3f}] includes "
                f"0" + (f"; {power}" if power else ""))

    def power_text(self, e: Difference) -> str:
        """What this comparison could have shown, and the questions the observed change needs."""
        return power_text(e, worse_sign=1 if self.lower_is_better else -1)

    def to_dict(self, tested: int = 1) -> dict[str, Any]:
        return {
            "metric": self.metric, "lower_is_better": self.lower_is_better,
            "threshold": self.threshold, "mean_base": self.mean_base, "mean_new": self.mean_new,
            "uses_judge": self.uses_judge, "judge_caveat": self.judge_caveat or None,
            "estimates": [{**e.to_dict(), "verdict": self.verdict(e),
                           "power": power_facts(e, worse_sign=1 if self.lower_is_better else -1),
                           "sentence": self.sentence(e, tested),
                           "judge_caveat": self.judge_caveat if e.kind == "judge"
                           and self.judge_caveat else None} for e in self.estimates],
            "counts": self.counts(),
            "unscored": {"pairs": self.counts()["unscored"], "of": len(self.samples),
                         "reasons": self.unscored_reasons(), "text": self.unscored_text()},
            "newly_failing": self.newly_failing(),
            "newly_passing": self.newly_passing(),
            "worst": [s.new_id for s in self.worst(10)],
            "samples": [s.to_dict() for s in self.samples],
        }


@dataclass
class VersionDiff:
    """Two versions compared: how they paired, whether one judge scored both, every metric."""

    base: Version
    new: Version
    pairing: Alignment
    metrics: list[MetricDiff]
    #: metrics in one run only, or named but absent: (metric, why)
    not_compared: list[tuple[str, str]]
    signature_notes: list[str]
    same_setup: bool
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES
    #: the labels files behind the corrected estimates, and their draws (empty: none)
    labels: dict[str, Any] = field(default_factory=dict)
    #: runs that recorded opposite directions (lower / higher is better) for a metric
    direction_notes: list[str] = field(default_factory=list)
    #: each side's judge fitness (its judge check and health, from its summary.json)
    fitness: tuple[SideFitness, SideFitness] = (SideFitness("base"), SideFitness("new"))
    #: ``diff --pairwise``: the pairwise result's dict (``pairwise.PairwiseResult.to_dict``)
    pairwise: dict[str, Any] | None = None
    #: ``diff --pairwise``: its judge check (``judge_check.PairwiseCheck``), None when it
    #: did not run; the pages read it, not the dict (whose key names a run's record's too)
    pairwise_check: Any = None
    #: the gates asked for (``gate.GateResult.to_dict``) and ``--plan``'s table (``plan``)
    gates: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] | None = None

    @property
    def judged(self) -> list[str]:
        """The compared metrics that use a judge."""
        return [m.metric for m in self.metrics if m.uses_judge]

    def same_setup_text(self) -> str:
        """"the same judge, prompts, ... scored both runs", naming what the metrics use."""
        return same_setup_text(bool(self.judged), any(
            metric_models(m.metric)[1] for m in self.metrics))

    def fitness_notes(self) -> list[str]:
        return fitness_notes(*self.fitness, self.judged)

    @property
    def tested(self) -> int:
        """Metrics with an interval: the family Holm corrects over."""
        return sum(1 for m in self.metrics if m.judge.ci is not None)

    def pairing_text(self) -> str:
        return describe_pairing(self.pairing, "base", "new")

    def sentences(self) -> list[str]:
        """One sentence per metric and estimate (judge-only, then corrected)."""
        return [m.sentence(e, self.tested) for m in self.metrics for e in m.estimates]

    def to_dict(self) -> dict[str, Any]:
        b, n = self.base.results, self.new.results
        return {
            "base": {"name": b.name, "source": b.source, "format": b.format,
                     "signature": b.signature, "signature_line": signature_text(b.signature)},
            "new": {"name": n.name, "source": n.source, "format": n.format,
                    "signature": n.signature, "signature_line": signature_text(n.signature)},
            "pairing": {**pairing_dict(self.pairing), "text": self.pairing_text()},
            "same_setup": self.same_setup, "setup_notes": self.signature_notes,
            "judge_fitness": {"base": self.fitness[0].to_dict(), "new": self.fitness[1].to_dict(),
                              "judged_metrics": self.judged},
            "multiple_comparisons": {"metrics_tested": self.tested, "correction": "Holm",
                                     "p_values": "bootstrap test (twice the smaller tail at 0); "
                                                 f"below {SMALL_SAMPLE} pairs the paired "
                                                 "randomization (sign-flip) test; paired 0/1 "
                                                 "scores: the exact McNemar test"},
            "bootstrap": {"resamples": self.n_resamples, "seed": self.seed, "level": 0.95},
            "small_samples": {"below_pairs": SMALL_SAMPLE, "min_pairs_for_interval": 6,
                              "method": EXACT_METHOD + " up to 20 pairs; " + RANDOM_METHOD
                              + f" ({self.n_resamples} sign vectors, seed {self.seed}) above"},
            "metrics": [m.to_dict(self.tested) for m in self.metrics],
            "not_compared": [{"metric": k, "reason": r} for k, r in self.not_compared],
            **({"labels": self.labels} if self.labels else {}),
            **({"direction_notes": self.direction_notes} if self.direction_notes else {}),
            **({"pairwise": self.pairwise} if self.pairwise is not None else {}),
            **({"gates": self.gates} if self.gates else {}),
            **({"plan": self.plan} if self.plan is not None else {}),
        }


def _metric_diff(metric: str, v_base: Version, v_new: Version, pairs: Sequence[tuple[str, str]],
                 threshold: float, lib: bool) -> MetricDiff:
    b, n = v_base.results, v_new.results
    rows = []
    for ib, inew in pairs:
        x, y = b.scores[ib].get(metric), n.scores[inew].get(metric)
        status = ("scored" if x is not None and y is not None else "became_unscored"
                  if x is not None else "became_scored" if y is not None else "unscored")
        d = y - x if x is not None and y is not None else None
        rows.append(SampleChange(ib, inew, x, y, status, d,
                                 None if d is None else (-d if lib else d),
                                 b.reason(ib, metric), n.reason(inew, metric)))
    return MetricDiff(metric, lib, threshold, rows)


def _not_scored_reason(md: MetricDiff) -> str:
    """Why a metric has no paired values: which side scored nothing, and its commonest reason."""
    sides = []
    for side, vals, reasons in (("base", [s.base for s in md.samples],
                                 [s.base_reason for s in md.samples]),
                                ("new", [s.new for s in md.samples],
                                 [s.new_reason for s in md.samples])):
        if all(v is None for v in vals):
            why = next((r for r in reasons if r), "no value recorded")
            sides.append(f"unscored on every paired sample of {side} ({why})")
    return "; ".join(sides) or "no sample is scored in both runs"


def diff_runs(base: Any, new: Any, *, metrics: Sequence[str] | None = None,
              threshold: float = 0.5, thresholds: Mapping[str, float] | None = None,
              base_data: Any = None, new_data: Any = None,
              n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> VersionDiff:
    """Compare version ``new`` with version ``base`` (run folders, exports, or ResultSets).

    ``threshold`` is the pass mark for the newly-failing / newly-passing counts,
    ``thresholds`` overrides it per metric. Raises DataError (exit 2) when the
    runs cannot be paired or share no metric, UsageError for a named metric
    that one run lacks.
    """
    vb = load_version(base, data=base_data)
    vn = load_version(new, data=new_data)
    b, n = vb.results, vn.results
    if b.name == n.name:
        b.name, n.name = f"base:{b.name}", f"new:{n.name}"
    al = pair_versions(b, n)
    mb, mn = b.metrics, n.metrics
    common = [m for m in mb if m in mn]
    metrics = list(dict.fromkeys(metrics or ()))  # a metric named twice is compared once
    if metrics:
        for m in metrics:
            lacking = [s.source for s, ms in ((b, mb), (n, mn)) if m not in ms]
            if lacking:
                raise UsageError(f"metric {m!r} is not in {' or '.join(lacking)} (base has "
                                 f"{', '.join(mb) or 'none'}; new has {', '.join(mn) or 'none'})")
        common = list(metrics)
    if not common:
        raise DataError(f"no metric in both runs: {b.source} has {', '.join(mb)}; "
                        f"{n.source} has {', '.join(mn)}")
    skipped = [] if metrics else (
        [(m, "only in base") for m in mb if m not in mn] +
        [(m, "only in new") for m in mn if m not in mb])
    limits = dict(thresholds or {})
    out, direction_notes = [], []
    fitness = (side_fitness("base", b.fitness), side_fitness("new", n.fitness))
    caveat = judge_caveat(*fitness)
    models = {m: metric_models(m) for m in common}
    for m in common:
        lib, note = _direction(m, vb, vn)
        direction_notes += [note] if note else []
        md = _metric_diff(m, vb, vn, al.pairs, limits.get(m, threshold), lib)
        md.uses_judge = models[m][0]
        md.judge_caveat = caveat if md.uses_judge else ""
        sc = md.scored
        if sc:
            md.mean_base = sum(s.base for s in sc) / len(sc)  # type: ignore[misc]  # scored: both set
            md.mean_new = sum(s.new for s in sc) / len(sc)  # type: ignore[misc]  # scored: both set
        est = paired_difference([s.base for s in sc], [s.new for s in sc],  # type: ignore[misc]  # scored: both set
                                n_resamples=n_resamples, seed=seed)
        if not sc:
            est.reason = _not_scored_reason(md)
        md.estimates.append(est)
        out.append(md)
    for diff, p in zip(out, holm([md.judge.p for md in out])):
        diff.judge.p_holm = p
    notes, same = signature_notes(b.signature, n.signature,
                                  judged=any(j for j, _ in models.values()),
                                  embedded=any(e for _, e in models.values()))
    return VersionDiff(vb, vn, al, out, skipped, notes, same, seed, n_resamples,
                       direction_notes=direction_notes, fitness=fitness)
