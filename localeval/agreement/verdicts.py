"""What ``validate`` says first: the judge's pass/fail verdicts against the labels, in words.

Correlations and AUCs answer "how well", but a reader without statistics
needs "on how many samples, and which way wrong": a judge that passes
everything people failed can show a respectable correlation. So per metric
the verdicts at the threshold (pass = score >= threshold) are counted against
the labels (a positive label, or a human score at or above the threshold, is
"people passed") and said in one sentence, with the confusion matrix beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Verdicts", "count_verdicts"]


@dataclass
class Verdicts:
    """Counts of (labels, judge) verdicts on one metric, at one threshold."""

    metric: str
    threshold: float
    #: labels pass -> judge pass / judge fail; labels fail -> judge pass / judge fail
    pass_pass: int = 0
    pass_fail: int = 0
    fail_pass: int = 0
    fail_fail: int = 0
    #: labelled samples the judge did not score
    unscored: int = 0
    #: "positive"/"negative" for label files, "pass"/"fail" for human scores
    label_words: tuple[str, str] = ("positive", "negative")

    @property
    def n(self) -> int:
        return self.pass_pass + self.pass_fail + self.fail_pass + self.fail_fail

    @property
    def agree(self) -> int:
        return self.pass_pass + self.fail_fail

    def sentence(self) -> str:
        """``faithfulness: the judge agrees with your labels on 3 of 6 samples (50%); ...``."""
        un = ("no sample unscored" if not self.unscored else
              f"{self.unscored} sample{'s' if self.unscored != 1 else ''} unscored")
        if not self.n:
            return (f"{self.metric}: the judge scored none of the labelled samples; {un}.")
        pct = round(100 * self.agree / self.n)
        return (f"{self.metric}: the judge agrees with your labels on {self.agree} of {self.n} "
                f"samples ({pct}%); it passed {_count(self.fail_pass)} that people failed and "
                f"failed {_count(self.pass_fail)} that people passed; {un}.")

    def matrix(self) -> dict[str, Any]:
        """The confusion matrix as rows and columns named for pages and tables."""
        t = f"{self.threshold:g}"
        pos, neg = self.label_words
        return {
            "columns": [f"judge pass (≥ {t})", f"judge fail (< {t})"],
            "rows": [{"name": f"labels {pos}", "cells": [self.pass_pass, self.pass_fail]},
                     {"name": f"labels {neg}", "cells": [self.fail_pass, self.fail_fail]}],
        }

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "n": self.n, "agree": self.agree,
                "judge_passed_labels_failed": self.fail_pass,
                "judge_failed_labels_passed": self.pass_fail,
                "both_passed": self.pass_pass, "both_failed": self.fail_fail,
                "unscored": self.unscored, "sentence": self.sentence()}


def _count(k: int) -> str:
    return "none" if k == 0 else str(k)


def count_verdicts(metric: str, judge: list[float | None], labels: list[bool],
                   threshold: float, label_words: tuple[str, str] = ("positive", "negative")
                   ) -> Verdicts:
    """Count the verdicts of paired (judge score or None, label passed) samples."""
    v = Verdicts(metric, threshold, label_words=label_words)
    for score, passed in zip(judge, labels):
        if score is None:
            v.unscored += 1
            continue
        judged = score >= threshold
        if passed:
            v.pass_pass += judged
            v.pass_fail += not judged
        else:
            v.fail_pass += judged
            v.fail_fail += not judged
    return v
