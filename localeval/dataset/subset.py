"""A subset of a dataset to try first: the first N samples, or N drawn at random.

``--limit N`` keeps the first N samples (file order). ``--sample N --seed S``
draws N samples at random, stratified by the question's language: each
language gets its share of N (at least one while N allows), so a mixed
English/Japanese/Chinese dataset is still mixed in a small sample. The draw
depends only on the seed and the data, so the same command draws the same
samples; the samples keep their file order. Both are recorded in the run's
signature (``report.signature``): a mean over a subset is not comparable
with a mean over the whole dataset. N at least the number of samples is the
whole dataset: nothing is recorded, and the run says so (``Subset.note``).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from localeval.dataset.samples import Dataset, present_fields
from localeval.errors import UsageError
from localeval.types import Sample

__all__ = ["Subset", "select_samples"]


@dataclass(frozen=True)
class Subset:
    """Which samples a run keeps: ``limit`` first ones or a ``sample`` drawn with ``seed``."""

    limit: int | None = None
    sample: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("limit", "sample"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise UsageError(f"{name} must be a whole number of at least 1, got {v!r}")
        if self.limit is not None and self.sample is not None:
            raise UsageError("give limit (the first N samples) or sample (N at random), "
                             "not both")

    @property
    def active(self) -> bool:
        return self.limit is not None or self.sample is not None

    def covers(self, total: int) -> bool:
        """Whether the subset asked for is the whole of ``total`` samples (N >= total)."""
        n = self.limit if self.limit is not None else self.sample
        return n is not None and n >= total

    def note(self, total: int, options_as: str = "python") -> str | None:
        """What to tell when the subset asked for is the whole data (None otherwise)."""
        if not (self.active and self.covers(total)):
            return None
        name = "limit" if self.limit is not None else "sample"
        n = self.limit if self.limit is not None else self.sample
        opt = f"--{name} {n}" if options_as == "cli" else f"{name}={n}"
        return (f"{opt} asks for at least all {total} samples of the data: every sample is "
                "scored, and the signature records no subset (the means are the whole data's)")

    def record(self, total: int, kept: int) -> dict[str, Any] | None:
        """The signature entry: what was asked and how many of how many samples ran.

        None when nothing was asked, or when what was asked is the whole data
        (``--sample 100`` of 6 rows scores all 6: its means are the whole data's,
        comparable with any run of it, so ``sample:100of6`` would mislead).
        """
        if not self.active or self.covers(total):
            return None
        how = {"limit": self.limit} if self.limit is not None else {
            "sample": self.sample, "seed": self.seed}
        return {**how, "kept": kept, "of": total}


def select_samples(ds: Dataset, subset: Subset) -> Dataset:
    """The samples of ``ds`` that ``subset`` keeps (all of them when it is inactive)."""
    n = subset.limit if subset.limit is not None else subset.sample
    if n is None or n >= len(ds):
        return ds
    if subset.limit is not None:
        kept = ds.samples[:n]
    else:
        kept = _stratified(ds, n, subset.seed)
    return replace(ds, samples=kept, columns=present_fields(kept))


def _stratified(ds: Dataset, n: int, seed: int) -> list[Sample]:
    """``n`` samples drawn per language in proportion (largest remainder), file order kept."""
    from localeval.lang import detect_lang

    groups: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(ds.samples):
        groups[detect_lang(s.question or s.answer or "")].append(i)
    langs = sorted(groups)
    # one each while n allows, then the rest in proportion to the group sizes
    share = {g: 0 for g in langs}
    for g in sorted(langs, key=lambda g: -len(groups[g]))[:n]:
        share[g] = 1
    left = n - sum(share.values())
    if left:
        room = {g: len(groups[g]) - share[g] for g in langs}
        total = sum(room.values())
        exact = {g: left * room[g] / total for g in langs}
        for g in langs:
            share[g] += int(exact[g])
        rest = n - sum(share.values())
        for g in sorted(langs, key=lambda g: (-(exact[g] - int(exact[g])), g))[:rest]:
            share[g] += 1
    rng = random.Random(seed)
    picked = sorted(i for g in langs for i in rng.sample(groups[g], min(share[g], len(groups[g]))))
    return [ds.samples[i] for i in picked]
