"""The one interval shape: written one way, read back from it and from every earlier shape."""

from __future__ import annotations

import json
import math

from localeval.stats import Interval, read_interval


def test_round_trip_keeps_every_field() -> None:
    iv = Interval(0.8, 0.7, 0.9, 40, "Student t", 0.95, se=0.05, df=39.0, p=0.01)
    d = json.loads(json.dumps(iv.to_dict()))
    assert list(d)[:6] == ["value", "low", "high", "level", "n", "method"]
    assert read_interval(d) == iv


def test_no_interval_says_why() -> None:
    iv = Interval(0.1, None, None, 3, "exact", reason="fewer than 6 paired samples")
    d = iv.to_dict()
    assert d["low"] is None and d["high"] is None and d["reason"].startswith("fewer")
    assert read_interval(d).ci is None and not read_interval(d).contains(0.1)


def test_earlier_shapes_still_read() -> None:
    # compare/validate statistics
    a = read_interval({"value": 0.5, "ci95": [0.4, 0.6], "ci_method": "percentile"})
    assert (a.value, a.ci, a.method) == (0.5, (0.4, 0.6), "percentile")
    # diff estimates
    b = read_interval({"kind": "judge", "diff": -0.1, "ci95": [-0.2, 0.0], "n": 12,
                       "p": 0.04, "method": "bootstrap", "reason": ""})
    assert (b.value, b.ci, b.n, b.p, b.reason) == (-0.1, (-0.2, 0.0), 12, 0.04, None)
    # estimate.json and the corrected section of summary.json
    c = read_interval({"mean": 0.7, "low": 0.6, "high": 0.8, "se": 0.05, "n": 30,
                       "student_t_df": 29, "interval": "PPI++"})
    assert (c.value, c.ci, c.df, c.method) == (0.7, (0.6, 0.8), 29.0, "PPI++")
    # run summaries: mean and ci95, no n-type surprises
    d = read_interval({"mean": 0.9, "ci95": None, "n": 5})
    assert d.ci is None and d.n == 5


def test_damaged_numbers_read_as_missing() -> None:
    iv = read_interval({"value": "x", "low": float("nan"), "high": math.inf, "n": True})
    assert iv.value is None and iv.ci is None and iv.n == 0


def test_quantiles_equal_scipy_stats() -> None:
    import numpy as np
    from scipy import stats

    from localeval.stats import normal_quantile, t_quantile

    for p in (0.5, 0.9, 0.975, 0.995):
        assert abs(normal_quantile(p) - stats.norm.ppf(p)) < 1e-12
        for df in (1, 2.5, 9, 29.3, 1000):
            assert abs(t_quantile(p, df) - stats.t.ppf(p, df)) < 1e-9
    dfs = np.array([3.0, 10.0, 40.0])
    assert np.allclose(t_quantile(0.975, dfs), stats.t.ppf(0.975, dfs), atol=1e-9)
