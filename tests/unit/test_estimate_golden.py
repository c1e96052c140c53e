"""The corrected mean equals the PPI authors' reference (ppi-python) to 1e-6.

The reference's numbers were computed once by scripts/golden_ppi.py (ppi-python
pulls numba, too heavy for the test install) and committed with their exact
inputs in tests/data/ppi_golden.json.

Below ``SMALL_SAMPLE`` labels localeval's default departs from the reference on
purpose (cross-fitted lambda, Student-t interval: ``ppi.crossfit_from_moments``);
``reference=True`` is the reference's estimator at every n, and from
``SMALL_SAMPLE`` labels on the default is that estimator.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from localeval.estimate import corrected_mean, labels_only
from localeval.estimate.ppi import SMALL_SAMPLE

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
def test_the_default_is_the_reference_from_small_sample_labels_on(case: dict) -> None:
    fl, fu = case["judge_labelled"], case["judge_unlabelled"]
    est = corrected_mean(np.array(fl + fu), case["labels"], np.arange(len(fl)))
    if len(fl) >= SMALL_SAMPLE:
        assert (est.low, est.high) == pytest.approx((case["ppi_low"], case["ppi_high"]), abs=1e-6)
        assert est.df is None
    else:  # cross-fitted: another (unbiased) point, a t interval
        assert est.df == len(fl) - 1
        assert est.low != pytest.approx(case["ppi_low"], abs=1e-6)
