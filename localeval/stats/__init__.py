"""Statistics shared by the report, ``compare``/``validate`` and ``diff``: the one
bootstrap resampler and the percentile intervals read from it.

``resampling`` draws paired bootstrap indices from a seeded numpy Generator
(exactly the draws of ``scipy.stats.bootstrap`` with ``rng=default_rng(seed)``),
``intervals`` turns a bootstrap distribution into a percentile interval
(scipy's quantile, to the last bit), ``randomization`` is the paired sign-flip
test and the interval it inverts to (what ``diff`` uses for few pairs), ``rows`` computes
correlations and kappas on every resample at once, and ``interval`` is the one interval
value (``Interval``) and JSON shape every analysis writes and reads. ``mcnemar``
is the exact McNemar test and Newcombe's interval for paired 0/1 scores, ``power``
what a comparison could show and how many questions would show a given change.
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
    "INTERVAL_KEYS": ".interval",
    "Interval": ".interval",
    "read_interval": ".interval",
    "normal_quantile": ".quantiles",
    "t_quantile": ".quantiles",
    "check_draws": ".resampling",
    "SignFlip": ".randomization",
    "min_pairs": ".randomization",
    "sign_flip": ".randomization",
    "BINARY_METHOD": ".mcnemar",
    "PairedBinary": ".mcnemar",
    "changed_pairs_needed": ".mcnemar",
    "is_binary": ".mcnemar",
    "mcnemar_p": ".mcnemar",
    "newcombe_interval": ".mcnemar",
    "paired_binary": ".mcnemar",
    "smallest_shown": ".mcnemar",
    "POWER": ".power",
    "binary_power": ".power",
    "binary_questions": ".power",
    "graded_detectable": ".power",
    "graded_questions": ".power",
    "interval_detectable": ".power",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
