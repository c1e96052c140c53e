"""The one resampler: agreement's intervals are scipy's paired percentile bootstrap."""

import numpy as np
import pytest
from scipy.stats import bootstrap

from localeval.agreement.statistics import CI_PERCENTILE, paired_stats
from localeval.stats import Resamples, percentile_interval


def _scipy_paired(x, y, stat, seed, n):
    res = bootstrap((x, y), stat, paired=True, vectorized=True, method="percentile",
                    n_resamples=n, rng=np.random.default_rng(seed))
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("seed", [0, 11])
def test_agreement_bias_and_mad_use_the_shared_percentile_bootstrap(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.random(60), rng.random(60)
    stats, _ = paired_stats(x, y, n_boot=500, seed=seed, which=("bias", "mad"))
    want_bias = _scipy_paired(x, y, lambda a, b, axis=-1: np.mean(b - a, axis=axis), seed, 500)
    want_mad = _scipy_paired(x, y, lambda a, b, axis=-1: np.mean(np.abs(b - a), axis=axis),
                             seed, 500)
    assert stats["bias"].ci95 == pytest.approx(want_bias, abs=1e-12)
    assert stats["mad"].ci95 == pytest.approx(want_mad, abs=1e-12)
    assert stats["bias"].method == stats["mad"].method == CI_PERCENTILE


def test_blocks_do_not_change_the_draws(monkeypatch):
    import localeval.stats.resampling as resampling_mod

    whole = Resamples(13, 50, 4).indices()
    monkeypatch.setattr(resampling_mod, "BLOCK", 13 * 3)
    assert np.array_equal(Resamples(13, 50, 4).indices(), whole)
    assert np.array_equal(whole, np.random.default_rng(4).integers(0, 13, (50, 13)))


def test_percentile_interval_drops_undefined_resamples():
    boot = np.r_[np.linspace(0, 1, 90), [np.nan] * 10]
    ci, dropped, why = percentile_interval(boot)
    assert dropped == 10 and why is None
    assert ci == pytest.approx(tuple(np.quantile(np.linspace(0, 1, 90), [0.025, 0.975])))
    ci, dropped, why = percentile_interval(np.r_[[1.0] * 40, [np.nan] * 60])
    assert ci is None and dropped == 60 and "60 of 100" in why
