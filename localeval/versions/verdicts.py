"""What a verdict of a version diff could have shown: the power beside "not shown".

An interval that includes 0 is not evidence of no difference: with ten
questions and five changed pairs no test at 5% can show anything. So a verdict
never reads "no difference"; it reads "not shown", beside the smallest
difference this comparison could have shown and, where a difference was
observed, how many questions would show a difference of that size:

- **paired 0/1 scores** (the exact McNemar test): from the number of changed
  pairs. With ``m`` changed of ``n``, the smallest difference the exact test
  can show is ``(2k - m) / n`` for the fewest ``k`` of them one way that reach
  p < 0.05 (``stats.smallest_shown``); below six changed pairs there is none,
  and the text says how many are needed. The questions needed come from the
  exact power at the observed share of changed pairs (``stats.binary_questions``).
- **graded scores** (the randomization test, the bootstrap): from the observed
  spread of the per-pair changes at 80% power (``stats.graded_detectable``);
  fewer than six changed pairs can show nothing at all, as for 0/1 scores.
- an estimate without per-pair changes (corrected by labels): from its
  interval's half-width (``stats.interval_detectable``).

:func:`power_facts` is the JSON (``power`` beside each estimate), :func:`power_text`
the words every output prints.
"""

from __future__ import annotations

from typing import Any

from localeval.versions.estimate import LEVEL, Difference

__all__ = ["power_facts", "power_text", "power_badge", "NOT_SHOWN", "ALPHA"]

#: The verdict of an interval that includes 0.
NOT_SHOWN = "not shown"
ALPHA = 1 - LEVEL


def _needed_pairs() -> int:
    from localeval.stats import changed_pairs_needed

    return changed_pairs_needed(ALPHA, sided=2)


def power_facts(e: Difference, *, worse_sign: int = -1) -> dict[str, Any]:
    """What this estimate could show, as data: ``basis``, ``detectable`` (None: nothing),
    ``changed_pairs``, ``changed_pairs_needed``, ``questions_for_observed`` and
    ``power``. ``worse_sign``: the sign of a worse change of new - base (-1 unless
    lower is better), so the text says "all worse" or "all better" as observed."""
    from localeval.stats import (
        POWER,
        binary_questions,
        graded_detectable,
        graded_questions,
        interval_detectable,
        smallest_shown,
    )

    out: dict[str, Any] = {"power": POWER, "level": LEVEL, "detectable": None,
                           "questions_for_observed": None}
    if e.diff is None or e.n == 0:
        return {**out, "basis": "no paired sample"}
    size = abs(e.diff)
    if e.binary and e.changed is not None:
        shown = smallest_shown(e.changed, e.n, ALPHA)
        out.update(basis="exact McNemar test on the changed pairs",
                   changed_pairs=e.changed, changed_pairs_needed=(
                       shown[0] if shown else max(_needed_pairs(), e.changed + 1)),
                   detectable=shown[1] if shown else None)
        if size > 0:
            out["questions_for_observed"] = binary_questions(e.changed / e.n, size,
                                                             alpha=ALPHA, power=POWER)
    elif e.spread is not None or e.changed is not None:
        changed = e.changed or 0
        out.update(basis=f"observed spread of the per-pair changes, {POWER:.0%} power "
                         "(normal approximation of the paired t-test)",
                   changed_pairs=changed, changed_pairs_needed=_needed_pairs(),
                   spread=e.spread)
        if changed >= _needed_pairs() and e.spread is not None:
            out["detectable"] = graded_detectable(e.spread, e.n, alpha=ALPHA, power=POWER)
        if size > 0 and e.spread is not None:
            out["questions_for_observed"] = graded_questions(e.spread, size, alpha=ALPHA,
                                                             power=POWER)
    elif e.ci is not None:
        out.update(basis=f"the interval's half-width, {POWER:.0%} power",
                   detectable=interval_detectable(*e.ci, level=LEVEL, power=POWER))
    else:
        out["basis"] = "no interval"
    out["worse_sign"] = worse_sign
    return out


def power_text(e: Difference, *, worse_sign: int = -1) -> str:
    """"it could have shown a difference of 0.300 or more (...)", or why it could show
    none, then the questions that would show the observed difference; "" when unknown."""
    f = power_facts(e, worse_sign=worse_sign)
    parts = []
    if f["detectable"] is not None:
        how = (f"at least {f['changed_pairs_needed']} of its {f['changed_pairs']} changed "
               "pairs one way" if e.binary else f"{f['power']:.0%} power, from the spread "
               "of the per-pair changes" if "spread" in f else f"{f['power']:.0%} power")
        parts.append(f"this comparison could show a difference of {f['detectable']:.3f} or "
                     f"more ({how})")
    elif "changed_pairs" in f:
        way = ("all worse" if e.diff is not None and e.diff * worse_sign > 0 else
               "all better" if e.diff else "all one way")
        parts.append(f"this comparison could not show any difference: at least "
                     f"{f['changed_pairs_needed']} changed pairs, {way}, are needed "
                     f"(it has {f['changed_pairs']})")
    q = f["questions_for_observed"]
    if q is not None and e.diff:
        parts.append(f"about {q:,} questions would show a difference of {abs(e.diff):.3f} "
                     f"with {f['power']:.0%} power")
    return "; ".join(parts)


def power_badge(e: Difference, *, worse_sign: int = -1) -> str:
    """The short form beside "not shown" in a table cell or a badge:
    "could show ≥ 0.300", "could show none (needs 6 changed pairs, has 5)"."""
    f = power_facts(e, worse_sign=worse_sign)
    if f["detectable"] is not None:
        return f"could show ≥ {f['detectable']:.3f}"
    if "changed_pairs" in f:
        return (f"could show none: needs {f['changed_pairs_needed']} changed pairs, has "
                f"{f['changed_pairs']}")
    return ""
