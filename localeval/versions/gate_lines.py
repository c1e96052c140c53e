"""One gate's outcome and its line: what was tested, at what level, and what it could show.

Every gate asked for gets a line, passed or failed (a gate that passes says
why: "not shown worse ..."), and the same facts go into diff.json under
``gates``: the one-sided p, the Holm-adjusted p where several metrics are
gated at once, the smallest p the test could give at this size, and whether
the gate could have failed at all (``underpowered``). The tests themselves are
``gate_tests``; ``gate`` collects the family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localeval.versions.diff import MetricDiff
from localeval.versions.gate_tests import OneSided, fmt_p, one_way_needed
from localeval.versions.verdicts import ALPHA

__all__ = ["GateResult", "gate_result", "ALPHA"]


@dataclass(frozen=True)
class GateResult:
    """One gate: its metric and margin, its one-sided test, and its outcome in words."""

    metric: str
    kind: str
    option: str
    margin: float
    n: int
    loss: float | None
    p: float | None
    p_adjusted: float | None
    p_min: float | None
    correction: str
    method: str
    failed: bool
    #: the gate's outcome was fixed by the size: a "worse" gate that could not have
    #: failed, a "not_worse" gate that could not have passed
    underpowered: bool
    line: str

    @property
    def could_fail(self) -> bool:
        return not (self.kind == "worse" and self.underpowered)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "gate": self.option, "kind": self.kind,
                "margin": self.margin, "level": ALPHA, "sided": "one-sided",
                "correction": self.correction, "n": self.n, "loss": self.loss, "p": self.p,
                "p_adjusted": self.p_adjusted, "p_min": self.p_min, "method": self.method,
                "passed": not self.failed, "underpowered": self.underpowered,
                "could_fail": self.could_fail if self.kind == "worse" else None,
                "could_pass": (not self.underpowered) if self.kind == "not_worse" else None,
                "line": self.line}


def _rule(kind: str, family: int) -> str:
    if kind == "not_worse":
        return "no correction: every required metric must be shown"
    return (f"Holm over {family} gated metrics" if family > 1
            else "one gate: no correction")


def _size_note(md: MetricDiff, t: OneSided, kind: str, family: int, p_min: float) -> str:
    """Why the gate's outcome was fixed by the size, with what would have changed it."""
    way = "worse" if kind == "worse" else "better"
    verb = "failed" if kind == "worse" else "passed"
    need = one_way_needed(ALPHA / family)
    more = (f" (with {need} or more changed pairs, all {way}, it could; it has {t.changed})"
            if t.changed < need else "")
    return (f"this gate could not have {verb} at this size: even with every changed pair "
            f"{way} its one-sided p would be {fmt_p(p_min)}, not below {ALPHA:g}{more}")


def gate_result(md: MetricDiff, margin: float, kind: str, option: str, t: OneSided | None,
                family: int, p_adj: float | None, p_min_adj: float | None,
                allowance: Any) -> GateResult:
    """The outcome of one gate and its line (the line names the metric first)."""
    e = md.judge
    c = md.counts()
    gaps = f"; {md.unscored_text()}" if c["unscored"] else ""
    judge = f"; {md.judge_caveat}" if md.judge_caveat else ""
    rule = _rule(kind, family)

    def result(failed: bool, line: str, underpowered: bool = False) -> GateResult:
        return GateResult(md.metric, kind, option, margin, e.n, t.loss if t else None,
                          t.p if t else None, p_adj, t.p_min if t else None, rule,
                          t.method if t else "", failed, underpowered, line)

    if t is None:
        return result(True, f"{md.metric}: cannot show it is not worse: {e.reason}{gaps}{judge}")
    p = p_adj if p_adj is not None else t.p
    p_min = p_min_adj if p_min_adj is not None else t.p_min
    said = f"one-sided p = {fmt_p(t.p)}" + (f", Holm {fmt_p(p_adj)}" if p_adj is not None
                                           else "")
    shown = p < ALPHA
    if kind == "worse" and shown:
        return result(True, f"{md.metric}: new is worse by {t.loss:.3f}, beyond the allowed "
                            f"margin {margin:g} ({said} < {ALPHA:g}; {rule}; {t.method})"
                      + (f" ({e.caveat})" if e.caveat else "") + gaps + judge)
    fixed = p_min >= ALPHA
    size = f"; {_size_note(md, t, kind, family, p_min)}" if fixed else ""
    if kind == "worse":
        if c["unscored"] and not allowance.allows(c["unscored"], c["pairs"]):
            return result(True, f"{md.metric}: not shown worse beyond the margin {margin:g} on "
                                f"the {e.n} pairs scored in both, but {md.unscored_text()}; "
                                f"allowed: {allowance}{judge}", fixed)
        return result(False, f"{md.metric}: not shown worse beyond the margin {margin:g} "
                             f"(loss {t.loss:.3f}, {said}, not below {ALPHA:g}; {rule})"
                      + size + gaps + judge, fixed)
    if not shown:
        return result(True, f"{md.metric}: not shown to lose less than the margin {margin:g} "
                            f"(loss {t.loss:.3f}, {said}, not below {ALPHA:g}; {rule}; "
                            f"{t.method})" + size + gaps + judge, fixed)
    if c["unscored"] and not allowance.allows(c["unscored"], c["pairs"]):
        return result(True, f"{md.metric}: shown not worse beyond the margin {margin:g} on "
                            f"the {e.n} pairs scored in both, but {md.unscored_text()}; "
                            f"allowed: {allowance}{judge}")
    return result(False, f"{md.metric}: shown to lose less than the margin {margin:g} (loss "
                         f"{t.loss:.3f}, {said} < {ALPHA:g}; {rule}; {t.method})" + gaps + judge)
