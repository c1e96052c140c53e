"""Statistics shared by the report, ``compare``/``validate`` and ``diff``: the one
bootstrap resampler and the percentile intervals read from it.

``resampling`` draws paired bootstrap indices from a seeded numpy Generator
(exactly the draws of ``scipy.stats.bootstrap`` with ``rng=default_rng(seed)``),
``intervals`` turns a bootstrap distribution into a percentile interval
(scipy's quantile, to the last bit), and ``rows`` computes correlations and
kappas on every resample at once.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "BLOCK": ".resampling",
    "Resamples": ".resampling",
    "bootstrap_means": ".resampling",
    "bootstrap_ci": ".intervals",
    "bootstrap_cis": ".intervals",
    "percentile_interval": ".intervals",
    "quantile": ".intervals",
    "kappa_rows": ".rows",
    "kendall_rows": ".rows",
    "pearson_rows": ".rows",
    "spearman_rows": ".rows",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
