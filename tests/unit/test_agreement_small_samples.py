"""Every 95% interval ``compare`` and ``validate`` print, at 3 to 20 samples and at 200:
seeded simulations with known truth (tests/unit/agreement_sim.py) show it covers at least
93% of the time, or the output says plainly that it is not reliable at that size, with
the coverage measured there (``small_samples.MEASURED``, the table in
docs/judging-the-judges.md).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import agreement_sim as sim  # noqa: E402

from localeval.agreement import compare, validate  # noqa: E402
from localeval.agreement import small_samples as ss  # noqa: E402
from localeval.agreement.pages import comparison_html, validation_html  # noqa: E402
from localeval.agreement.statistics import CI_PERCENTILE, paired_stats  # noqa: E402

SMALL = (3, 4, 5, 6, 7, 10, 15, 20)
FLOOR = 0.93
#: Monte Carlo slack: 2,000+ simulated data sets give a coverage near 95% to about 0.5%
SLACK = 0.007


def _caveat_figure(stat: str, n: int) -> int | None:
    text = ss.caveat(stat, n)
    if text is None:
        return None
    assert "not reliable" in text and f"{n}" in text
    return int(text.split("only about ")[1].split("%")[0])


def _check(stat: str | None, n: int, cov: float, slack: float = SLACK) -> None:
    """Covers, or carries a caveat whose figure is near the measured coverage."""
    if math.isnan(cov):  # no interval is printed at this size
        return
    figure = _caveat_figure(stat, n) if stat else None
    if figure is None:
        assert cov >= FLOOR - slack, f"{stat} n={n}: coverage {cov:.3f} and no caveat"
    else:
        assert cov < FLOOR + 0.02, f"{stat} n={n}: covers ({cov:.3f}) but says it does not"
        bands = ss.MEASURED[stat][1]
        if n in bands:  # the figure was measured at the band's first size
            assert abs(100 * cov - figure) <= 6, f"{stat} n={n}: says {figure}%, got {cov:.3f}"


# -- closed forms below SMALL_N ------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pearson", "spearman", "kendall"])
def test_correlation_intervals_cover_at_small_n(kind):
    for n in SMALL:
        _check(kind, n, sim.correlation(kind, n, reps=2000 if kind != "kendall" else 1000,
                                        seed=n), slack=SLACK if kind != "kendall" else 0.012)


@pytest.mark.parametrize("kind", ["mad", "bias"])
def test_difference_intervals_cover_at_small_n(kind):
    for n in SMALL:
        _check(kind, n, sim.difference(kind, n, reps=4000, seed=n))


def test_agreement_interval_covers_at_every_small_n_and_rate():
    for p in (0.5, 0.7, 0.9, 0.95):
        for n in SMALL:
            assert sim.agreement(n, p=p) >= 0.95 - 1e-9  # Clopper-Pearson, exact sum


@pytest.mark.parametrize("graded", [True, False])
def test_group_mean_intervals_cover_at_small_n(graded):
    for n in SMALL:
        _check("group_mean" if graded else None, n,
               sim.group_mean(n, graded=graded, reps=4000, seed=n))


# -- bootstrap with caveats ------------------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_kappa_intervals_cover_or_say_so(weighted):
    for n in SMALL:
        _check("weighted_kappa" if weighted else "kappa", n,
               sim.kappa(n, weighted=weighted, reps=1000, B=400, seed=n), slack=0.015)


def test_auc_and_pairwise_intervals_cover_or_say_so():
    for n in (2, 3, 5, 10, 15, 20):
        _check("auc", n, sim.auc(n, reps=800, B=300, seed=n), slack=0.02)
        _check("pairwise", n, sim.pairwise(n, reps=800, B=300, seed=n), slack=0.02)


def test_the_percentile_bootstrap_undercovers_at_small_n():
    # why the closed forms: the bootstrap these statistics used before misses at n = 10
    assert sim.correlation("pearson", 10, reps=1000, boot=400) < FLOOR - 0.01
    assert sim.difference("bias", 10, reps=1000, boot=400) < FLOOR - 0.01
    assert sim.agreement(10, reps=1000, boot=400) < 0.8


@pytest.mark.slow
def test_bootstrap_covers_at_large_n():
    n = 200
    for kind in ("pearson", "spearman"):
        _check(kind, n, sim.correlation(kind, n, reps=400, boot=400), slack=0.02)
    for kind in ("mad", "bias"):
        _check(kind, n, sim.difference(kind, n, reps=600, boot=400), slack=0.02)
    _check(None, n, sim.agreement(n, reps=600, boot=400), slack=0.02)
    _check(None, n, sim.group_mean(n, reps=600, boot=400), slack=0.02)
    _check("kappa", n, sim.kappa(n, reps=400), slack=0.02)
    _check("weighted_kappa", n, sim.kappa(n, weighted=True, reps=400), slack=0.02)
    _check("auc", n, sim.auc(n, reps=300), slack=0.02)
    _check("pairwise", n, sim.pairwise(n, reps=400), slack=0.02)


# -- the analyses use these intervals, and say so ------------------------------------------
def _pairs(n: int, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.choice([0.0, 0.5, 1.0], n, p=[0.3, 0.2, 0.5])
    b = np.where(rng.random(n) < 0.3, rng.choice([0.0, 0.5, 1.0], n), a)
    return a, b


def test_paired_stats_use_closed_forms_below_small_n_and_the_bootstrap_above():
    x, y = _pairs(12)
    s, _ = paired_stats(x, y, n_boot=500)
    lo, hi = ss.correlation_interval("pearson", s["pearson"].value, 12)
    assert s["pearson"].ci95 == pytest.approx((lo, hi))
    assert s["kendall"].method.startswith("Fisher z")
    assert s["bias"].method == "Student t" and s["agreement"].method.startswith("Clopper")
    assert s["kappa"].method == CI_PERCENTILE and s["kappa"].caveat
    assert all(st.n == 12 for st in s.values())
    big, _ = paired_stats(*_pairs(200), n_boot=200)
    assert all(st.method == CI_PERCENTILE and not st.caveat for st in big.values()
               if st.ci95 and not st.method.startswith("exact"))


def test_fisher_interval_at_n_3_is_not_printed():
    s, _ = paired_stats([0.1, 0.5, 0.7], [0.2, 0.3, 0.9], n_boot=200)
    for k in ("pearson", "spearman", "kendall"):
        assert s[k].value is not None and s[k].ci95 is None and "too few" in s[k].reason


def test_compare_says_which_intervals_are_not_reliable_in_every_output():
    from rich.console import Console

    from localeval.resultsets import ResultSet

    a, b = _pairs(8)
    ra = ResultSet.from_scores({i: {"m": a[i]} for i in range(8)}, name="a")
    rb = ResultSet.from_scores({i: {"m": b[i]} for i in range(8)}, name="b")
    c = compare(ra, rb, n_boot=300)
    d = c.to_dict()["metrics"]["m"]["stats"]
    assert d["kappa"]["reliable"] is False and "not reliable at n=8" in d["kappa"]["caveat"]
    assert all(v["n"] == 8 for v in d.values())
    md = c.to_markdown()
    assert "†" in md and "not reliable at n=8" in md and "Fisher's z" in md
    con = Console(record=True, width=200)
    con.print(c.render_table())
    assert "not reliable at n=8" in con.export_text()
    assert "not reliable at n=8" in comparison_html(c)


def test_validate_sets_n_and_caveats_on_group_means_auc_and_pairwise(tmp_path):
    from localeval.resultsets import ResultSet

    rng = np.random.default_rng(2)
    scores = {f"s{i}": {"m": float(rng.choice([0.0, 0.5, 1.0]))} for i in range(12)}
    rs = ResultSet.from_scores(scores, name="judge")
    lab = tmp_path / "labels.csv"
    lab.write_text("id,label,human_m,group\n" + "".join(
        f"s{i},{'positive' if i % 2 else 'negative'},{(i % 3) / 2},g{i // 3}\n"
        for i in range(12)))
    v = validate(rs, lab, n_boot=300)
    d = json.loads(json.dumps(v.to_dict()))
    sep = d["separation"]["m"]
    assert sep["positive"]["mean"]["n"] == 6 and sep["negative"]["mean"]["n"] == 6
    assert sep["roc_auc"]["n"] == 12 and "not reliable at 6 per label group" in \
        sep["roc_auc"]["caveat"]
    for name, st in d.get("human_agreement", {}).get("m", {}).get("stats", {}).items():
        assert st["n"] == 12, name
    pw = d.get("human_agreement", {}).get("m", {}).get("pairwise_accuracy")
    assert pw["n"] == 12 and "not reliable at 4 groups" in pw["caveat"]
    assert "not reliable" in v.to_markdown() and "not reliable" in validation_html(v)
