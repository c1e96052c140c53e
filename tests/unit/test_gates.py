"""Quality gates refuse thresholds that could never fail."""

from __future__ import annotations

import math

import pytest

from localeval.errors import UsageError
from localeval.report import check_gates, parse_gates

SUMMARY = {"metrics": {"mrr": {"mean": 0.4}, "noise_sensitivity": {"mean": 0.3,
                                                                  "lower_is_better": True}}}


def test_gates_pass_and_fail_both_ways():
    assert check_gates(SUMMARY, parse_gates(["mrr=0.4", "noise_sensitivity=0.3"])) == []
    assert check_gates(SUMMARY, parse_gates(["mrr=0.5"])) == ["mrr 0.4000 is below 0.5"]
    assert check_gates(SUMMARY, {"noise_sensitivity": 0.2}) == ["noise_sensitivity 0.3000 is above 0.2"]


@pytest.mark.parametrize("item", ["mrr=nan", "mrr=inf", "mrr=-inf", "mrr", "=0.5"])
def test_parse_refuses_bad_and_non_finite_thresholds(item):
    with pytest.raises(UsageError, match="bad --fail-under"):
        parse_gates([item])


def test_check_refuses_a_nan_threshold_given_from_python():
    # assert_scores passes a dict straight to check_gates: nan < x is always False
    with pytest.raises(UsageError, match="not a finite number"):
        check_gates(SUMMARY, {"mrr": math.nan})
