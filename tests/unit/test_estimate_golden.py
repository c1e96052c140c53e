"""The corrected mean equals the PPI authors' reference (ppi-python) to 1e-6.

The reference's numbers were computed once by scripts/golden_ppi.py (ppi-python
pulls numba, too heavy for the test install) and committed with their exact
inputs in tests/data/ppi_golden.json.

``reference=True`` is the reference's estimator at every n. The default has
the reference's point and lambda, and an interval that contains the
reference's: its residual variance has the pseudo-rows of
``ppi.pseudo_from_moments`` and it uses Student's t.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from localeval.estimate import corrected_mean, labels_only
from localeval.estimate.ppi import REFERENCE_METHOD, interval_method

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "data" / "ppi_golden.json")
                    .read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["name"])
def test_corrected_mean_and_interval_equal_the_reference(case: dict) -> None:
    fl, fu = case["judge_labelled"], case["judge_unlabelled"]
    judge = np.array(fl + fu)
    est = corrected_mean(judge, case["labels"], np.arange(len(fl)), reference=True)
    assert est.mean == pytest.approx(case["ppi_point"], abs=1e-6)
    assert est.low == pytest.approx(case["ppi_low"], abs=1e-6)
    assert est.high == pytest.approx(case["ppi_high"], abs=1e-6)
    classical = labels_only(case["labels"], reference=True)
    assert classical.low == pytest.approx(case["classical_low"], abs=1e-6)
    assert classical.high == pytest.approx(case["classical_high"], abs=1e-6)


def test_labelled_rows_may_sit_anywhere_among_the_judge_scores() -> None:
    case = GOLDEN["cases"][0]
    fl, fu = case["judge_labelled"], case["judge_unlabelled"]
    judge = np.array(fu[:10] + fl + fu[10:])
    est = corrected_mean(judge, case["labels"], np.arange(10, 10 + len(fl)), reference=True)
    assert est.low == pytest.approx(case["ppi_low"], abs=1e-6)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["name"])
def test_the_default_is_the_reference_point_in_a_wider_interval(case: dict) -> None:
    fl, fu = case["judge_labelled"], case["judge_unlabelled"]
    judge = np.array(fl + fu)
    est = corrected_mean(judge, case["labels"], np.arange(len(fl)))
    ref = corrected_mean(judge, case["labels"], np.arange(len(fl)), reference=True)
    assert est.mean == pytest.approx(case["ppi_point"], abs=1e-6)
    assert est.lam == ref.lam
    assert est.low <= case["ppi_low"] + 1e-12 and est.high >= case["ppi_high"] - 1e-12
    assert est.half_width > ref.half_width
    assert est.df == len(fl) - 1
    assert (est.method, ref.method) == (interval_method(), REFERENCE_METHOD)
