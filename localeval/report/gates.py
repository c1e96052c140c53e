"""Quality gates: fail a CI job when a metric falls below a threshold, never on no evidence.

Used by ``localeval run --fail-under`` / ``--fail-under-each`` /
``--fail-if-unfit-judge`` (exit 1) and by ``localeval.testing``'s assertions
inside a user's own pytest suite. Three kinds:

- the **mean gate**: a metric's mean against a threshold (a ceiling for metrics
  where lower is better). A mean is taken over the scored samples only, so an
  unscored sample could hide the worst answer: the gate fails when the metric
  has unscored samples, unless the user allows that many (``Allowance``);
- the **per-sample gate** (``report.sample_gates``): every sample against the
  threshold, with the same allowance for unscored samples;
- the **judge gate**: the run's judge passed its judge check.

Every failure message counts the unscored samples and their reasons.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from localeval.errors import UsageError

__all__ = ["parse_gates", "check_gates", "Allowance", "UnscoredPolicy", "parse_allow_unscored",
           "unscored_policy", "resolve_gate_keys", "gate_entry", "judge_fit_failure",
           "unscored_text",
           "threshold_missed"]

#: Reasons named in one gate line; the rest are counted.
MAX_REASONS = 3


def parse_gates(items: Iterable[str], option: str = "--fail-under") -> dict[str, float]:
    """``["faithfulness=0.85"]`` -> ``{"faithfulness": 0.85}``; the last ``=`` splits,
    a metric key keeps its parameters (``rougeL:threshold=0.5=0.3``); the value must
    be finite (NaN never fails a comparison): ``metrics.parse_metric_values``."""
    from localeval.metrics import ValueRule, parse_metric_values

    rule = ValueRule(option, what="value", form="METRIC=VALUE with a finite VALUE",
                     example="faithfulness=0.85")
    return {k: v for k, v in parse_metric_values(items, rule) if k is not None}


# -- how many unscored samples a gate tolerates ----------------------------------------------


@dataclass(frozen=True)
class Allowance:
    """How many unscored samples a gate tolerates: a count, or a share of the samples.

    ``Allowance()`` is none (the default: no evidence is not a pass);
    ``Allowance(fraction=1.0)`` is all of them (a gate over the scored samples only).
    """

    count: int = 0
    fraction: float | None = None

    def allows(self, unscored: int, total: int) -> bool:
        if self.fraction is not None:
            return unscored <= self.fraction * total + 1e-9
        return unscored <= self.count

    def __str__(self) -> str:
        if self.fraction is None:
            return str(self.count)
        return "all" if self.fraction >= 1 else f"{100 * self.fraction:g}%"


NONE = Allowance()
ALL = Allowance(fraction=1.0)
_PERCENT = re.compile(r"^\s*([0-9.]+)\s*%\s*$")


def parse_allowance(text: str, option: str = "--allow-unscored") -> Allowance:
    """``"2"`` -> 2 samples; ``"0.1"`` or ``"10%"`` -> a tenth of them; ``"all"`` -> every one.

    A whole number is a count and a number with a point or ``%`` a share, so
    ``1`` is one sample and ``1.0`` is all of them.
    """
    t = text.strip().lower()
    if t == "all":
        return ALL
    try:
        m = _PERCENT.match(t)
        if m:
            share = float(m.group(1)) / 100
        elif t.isdigit():
            return Allowance(count=int(t))
        else:
            share = float(t)
        if not (math.isfinite(share) and 0 <= share <= 1):
            raise ValueError
    except ValueError:
        raise UsageError(f"bad {option} {text!r}: expected a count of samples (2), a share "
                         "between 0 and 1 (0.1 or 10%), or 'all'") from None
    return Allowance(fraction=share)


@dataclass(frozen=True)
class UnscoredPolicy:
    """The allowance of each metric: ``per_metric`` where named, else ``default``."""

    default: Allowance = NONE
    per_metric: Mapping[str, Allowance] = field(default_factory=dict)

    def of(self, key: str) -> Allowance:
        return self.per_metric.get(key, self.default)


def parse_allow_unscored(items: Iterable[str]) -> UnscoredPolicy:
    """``--allow-unscored`` values: ``N`` for every gated metric, ``METRIC=N`` for one.

    A metric name never parses as an allowance, so ``faithfulness=2`` and ``2``
    cannot be confused; a later value for the same metric replaces an earlier one.
    """
    default, per_metric = NONE, {}
    for it in items:
        key, sep, val = it.rpartition("=")
        if sep:
            if not key.strip():
                raise UsageError(f"bad --allow-unscored {it!r}: expected N or METRIC=N")
            per_metric[key.strip()] = parse_allowance(val, f"--allow-unscored {key.strip()}=")
        else:
            default = parse_allowance(val)
    return UnscoredPolicy(default, per_metric)


def unscored_policy(value: Any) -> UnscoredPolicy:
    """The Python form: ``False``/``None``/0 none, ``True`` all, an int a count, a float a
    share, a string as on the command line, a mapping metric -> any of these."""
    if isinstance(value, UnscoredPolicy):
        return value
    if isinstance(value, Mapping):
        return UnscoredPolicy(NONE, {k: _allowance(v) for k, v in value.items()})
    return UnscoredPolicy(_allowance(value))


def _allowance(value: Any) -> Allowance:
    if isinstance(value, Allowance):
        return value
    if value is None or value is False:
        return NONE
    if value is True:  # before int: bool is an int, and True is not "one sample"
        return ALL
    if isinstance(value, int):
        if value < 0:
            raise UsageError(f"allow_unscored={value}: a count cannot be negative")
        return Allowance(count=value)
    if isinstance(value, float):
        return parse_allowance(repr(value), "allow_unscored")
    if isinstance(value, str):
        return parse_allowance(value, "allow_unscored")
    raise UsageError(f"allow_unscored={value!r}: expected a count, a share, 'all' or a "
                     "mapping metric -> one of these")


# -- checking ---------------------------------------------------------------------------------


def resolve_gate_keys(names: Iterable[str], metrics: Sequence[Any],
                      option: str = "--fail-under") -> dict[str, str]:
    """Each gate name -> the result column it reads (``Metric.key``).

    A name is a key (``answer_correctness:weights=0.5,0.5``) or, when exactly one
    of the run's metrics has it, a metric name (``answer_correctness``). Anything
    else is a usage error naming what the run computes: called before any judging.
    """
    keys = [m.key for m in metrics]
    out = {}
    for name in names:
        if name in keys:
            out[name] = name
            continue
        same = [m.key for m in metrics if getattr(m, "name", None) == name]
        if len(same) == 1:
            out[name] = same[0]
            continue
        why = (f"names {name!r}, which matches several metrics of this run ({', '.join(same)}): "
               "give the full name" if same else
               f"names {name!r}, which this run does not compute")
        raise UsageError(f"{option} {why}; computed: {', '.join(keys) or 'nothing'}")
    return out


def unscored_text(entry: Mapping[str, Any]) -> str:
    """``"2 of 8 samples unscored (no judge model: 1, reply did not parse: 1)"``."""
    unscored = int(entry.get("unscored") or 0)
    total = unscored + int(entry.get("n") or 0)
    reasons = list((entry.get("unscored_reasons") or {}).items())
    shown = ", ".join(f"{r}: {c}" for r, c in reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown += f", {len(reasons) - MAX_REASONS} other reasons"
    return f"{unscored} of {total} samples unscored" + (f" ({shown})" if shown else "")


def threshold_missed(value: float, threshold: float, lower_is_better: bool) -> bool:
    """True when ``value`` misses ``threshold`` (a ceiling when lower is better)."""
    return value > threshold if lower_is_better else value < threshold


def gate_entry(summary: Mapping[str, Any], key: str, threshold: float) -> Mapping[str, Any]:
    """The summary entry a gate reads; a usage error for a threshold that could never fail
    (NaN compares False) or a metric the run did not compute."""
    if not math.isfinite(threshold):
        raise UsageError(f"gate {key}={threshold} is not a finite number: it could never fail")
    entry = summary["metrics"].get(key)
    if entry is None:
        raise UsageError(f"gate names {key!r}, which this run did not compute; computed: "
                         + ", ".join(summary["metrics"]))
    return entry


def check_gates(summary: Mapping[str, Any], gates: Mapping[str, float],
                allow_unscored: Any = None) -> list[str]:
    """One message per failed mean gate (empty when all pass).

    ``gates`` maps a metric key (``resolve_gate_keys`` turns names into keys) to
    its threshold. A gate fails when its mean
    misses the threshold, when nothing was scored, or when more samples are
    unscored than ``allow_unscored`` (see ``unscored_policy``) allows.
    """
    policy = unscored_policy(allow_unscored)
    failed = []
    for name, threshold in gates.items():
        entry = gate_entry(summary, name, threshold)
        mean = entry["mean"]
        lower = bool(entry.get("lower_is_better"))
        unscored, total = int(entry.get("unscored") or 0), int(entry.get("n") or 0)
        total += unscored
        allowance = policy.of(name)
        gaps = unscored_text(entry)
        side = "above" if lower else "below"
        if mean is None:
            failed.append(f"{name} unscored: {gaps}")
        elif threshold_missed(mean, threshold, lower):
            tail = f"; {gaps}" if unscored else ""
            failed.append(f"{name} {mean:.4f} is {side} {threshold}{tail}")
        elif unscored and not allowance.allows(unscored, total):
            failed.append(f"{name} {mean:.4f} meets {threshold} on the scored samples, but "
                          f"{gaps}; allowed: {allowance}")
    return failed


def judge_fit_failure(summary: Mapping[str, Any]) -> str | None:
    """Why ``--fail-if-unfit-judge`` fails this run, or None when the judge passed its judge check.

    Only a "fit" verdict passes: "doubtful" and "unfit" judges do not reliably
    tell good from bad, and a judge check that was skipped or crashed shows
    nothing. A run without judge metrics has no judge to doubt and passes.
    """
    st = summary.get("judge_check")
    if st is None:
        return None
    verdict = st.get("verdict")
    if verdict == "fit":
        return None
    line = st.get("line") or f"judge check: {verdict}"
    if verdict in ("skipped", "error", "unchecked"):
        return f"{line}; --fail-if-unfit-judge needs a judge that passed the judge check"
    return line
