"""Reports that are correct and scale: clamped cosines, robust histograms, the vectorised
bootstrap, Markdown that data cannot break, and a bounded report.html for large runs.

Report size and scale limits.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from localeval.metrics.answer import AnswerCorrectness, AnswerRelevancy, AnswerSimilarity, cosine_rows
from localeval.report import summary as summary_mod
from localeval.report.histogram import histogram
from localeval.report.html import render_html
from localeval.report.markdown import (
    code_span,
    escape_markdown,
    summary_markdown,
    summary_table,
    write_markdown_report,
)
from localeval.report.summary import summarize_metrics
from localeval.report.view import MAX_SAMPLES, WORST_K, build_view, pick_samples
from localeval.stats import bootstrap_ci, bootstrap_cis, bootstrap_means
from localeval.testing.metric_util import TableEmbedder, run
from localeval.types import Sample, Score

# A unit vector (float32, as embedders return them) whose cosine with itself is
# 1.0000000000000002 after cosine_rows' float64 re-normalisation.
ODD = [-0.8967022895812988, -0.4416643977165222, 0.029284391552209854]
SAME = Sample(id="s", question="q?", answer="same text", reference="same text")


# ----------------------------------------------------------------- item 1: clamp

def test_the_vector_really_overshoots():
    v = np.asarray(ODD, dtype=np.float32)
    assert cosine_rows(np.stack([v, v]))[1] > 1.0  # the raw cosine this guards against


def test_answer_similarity_is_clamped_to_one():
    emb = TableEmbedder({"same text": ODD})
    score, _, _ = run(AnswerSimilarity(), SAME, {}, embedder=emb)
    assert score.value == 1.0 and score.details["cosine"] == 1.0
    # thresholded form and answer_correctness's similarity part read the same clamped value
    score, _, _ = run(AnswerSimilarity(threshold=1.0), SAME, {}, embedder=emb)
    assert score.value == 1.0


def test_answer_relevancy_cosines_are_clamped():
    emb = TableEmbedder({"q?": ODD, "g": ODD})
    script = {"answer_relevancy": {"questions": [{"question": "g", "noncommittal": 0}] * 3}}
    score, _, _ = run(AnswerRelevancy(), SAME, script, embedder=emb)
    assert score.value == 1.0
    assert all(g["cosine"] <= 1.0 for g in score.details["generated"])


def test_answer_correctness_similarity_part_is_clamped():
    emb = TableEmbedder({"same text": ODD})
    # weights 0,1: the score is the similarity alone
    script = {"statements": {"statements": ["same text"]},
              "answer_correctness": {"answer": [{"reason": "r", "verdict": 1}],
                                     "reference": [{"reason": "r", "verdict": 1}]}}
    score, _, _ = run(AnswerCorrectness(weights=(0.0, 1.0)), SAME, script, embedder=emb)
    assert score.value == 1.0 and score.details["similarity"] == 1.0


@pytest.mark.parametrize("values", [
    [1.0] * 5,                      # every answer equals its reference
    [1.0, 1.0000000000000002],      # values an ulp apart: numpy's "Too many bins"
    [1.0000000000000002] * 3,
    [7.0, 7.0],                     # an unbounded metric with one value
    [1e300, 1e300 * (1 + 2e-16)],
    [-1.7e308, 1.7e308],            # a span that overflows
    [0.5, float("nan"), float("inf")],
])
def test_histogram_of_degenerate_values(values):
    h = histogram(values, mean=values[0], ci=[values[0], values[-1]])
    counts = [b["count"] for b in h.bars]
    assert len(counts) == 10 and h.n == len(values)
    assert sum(counts) == sum(np.isfinite(values))
    assert all(np.isfinite(b["x"]) and np.isfinite(b["h"]) for b in h.bars)


def test_report_with_every_answer_equal_to_its_reference():
    """The issue's reproduction: answer_similarity 1.0 everywhere (and one 1 + ulp)."""
    vals = [1.0, 1.0, 1.0000000000000002]
    records = [{"id": f"s{i}", "scores": {"answer_similarity": v}, "errors": {}, "details": {}}
               for i, v in enumerate(vals)]
    summary = {"metrics": summarize_metrics(
        {"answer_similarity": [Score(v) for v in vals]}), "n_samples": 3}
    html = render_html(summary, records, [{"id": r["id"]} for r in records])
    assert html.count('class="bar ') == 10


# ------------------------------------------------------- vectorised bootstrap CIs

def _scipy_bootstrap(x, seed, n_resamples=2000, level=0.95):
    """The previous implementation, verbatim: scipy's percentile bootstrap of the mean."""
    from scipy.stats import bootstrap

    res = bootstrap((np.asarray(x, dtype=float),), np.mean, n_resamples=n_resamples,
                    confidence_level=level, method="percentile",
                    random_state=np.random.default_rng(seed), vectorized=True)
    ci = [float(res.confidence_interval.low), float(res.confidence_interval.high)]
    return ci, res.bootstrap_distribution


@pytest.mark.parametrize("n,seed", [(2, 0), (3, 1), (17, 0), (250, 7), (5000, 0)])
def test_bootstrap_equals_scipy(n, seed):
    x = np.random.default_rng(100 + n).random(n)
    ci, dist = _scipy_bootstrap(x, seed)
    # the same resamples, hence the same bootstrap distribution, bit for bit
    assert np.array_equal(bootstrap_means(x[None], seed=seed)[0], dist)
    # the CI: the same type-7 quantile; scipy has changed its interpolation formula
    # between versions, so allow the last ulps
    assert bootstrap_ci(x, seed=seed) == pytest.approx(ci, rel=0, abs=1e-12)


def test_bootstrap_on_discrete_scores_and_other_levels():
    x = [0, 1, 1, 0, 1, 0.5, 1, 1]
    ci, _ = _scipy_bootstrap(x, 3, n_resamples=99, level=0.9)
    assert bootstrap_ci(x, seed=3, n_resamples=99, level=0.9) == pytest.approx(ci, abs=1e-12)


def test_bootstrap_blocks_and_shared_draws(monkeypatch):
    rng = np.random.default_rng(5)
    a, b, c = rng.random(300), rng.random(300), rng.random(40)
    alone = [bootstrap_ci(a), bootstrap_ci(b), bootstrap_ci(c)]
    # columns of equal length resampled together give what each gives alone
    assert bootstrap_cis([a, b, c]) == alone
    # drawing the indices in small blocks does not change the stream
    import localeval.stats.resampling as resampling_mod

    monkeypatch.setattr(resampling_mod, "BLOCK", 7 * 300)
    assert bootstrap_cis([a, b, c]) == alone
    assert bootstrap_cis([[], [0.3], [0.2, 0.2, 0.2]]) == [None, None, [0.2, 0.2]]


def test_summarize_metrics_matches_one_at_a_time():
    cols = {"a": [Score(v) for v in (0.1, 0.9, 0.4)] + [Score.unscored("no contexts")],
            "b": [Score(v) for v in (1.0, 0.0, 0.5, 0.5)]}
    both = summarize_metrics(cols, seed=2)
    for k, col in cols.items():
        assert both[k] == summary_mod.summarize_metric(col, seed=2)
    assert both["a"]["unscored_reasons"] == {"no contexts": 1} and both["a"]["n"] == 3


# --------------------------------------------------- item 16: Markdown from data

EVIL_JUDGE = "x`</code><img src=x onerror=alert(1)>``y"


def _render_md(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.code: list[str] = []
        self._in_code = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_code = tag == "code"
        if self._in_code:
            self.code.append("")

    def handle_endtag(self, tag):
        if tag == "code":
            self._in_code = False

    def handle_data(self, data):
        if self._in_code:
            self.code[-1] += data


def _md_summary() -> dict:
    sig = f"judge:{EVIL_JUDGE}@abc|prompts:none|seed:0|v:0.1.0"
    return {"n_samples": 2, "signature_line": sig,
            "metrics": {"faithful<b>ness</b>": {"mean": 0.5, "ci95": None, "n": 1, "unscored": 1,
                                                "unscored_reasons": {"`x` <img src=y> | *z*": 1}}},
            "notes": ["embedder *model* <script>alert(2)</script>\n# not a heading"],
            "judge_health": {"warnings": ["judge `a`_b_ <i>x</i>"]}}


def test_summary_md_renders_data_as_text(tmp_path):
    md = write_markdown_report(tmp_path, _md_summary()).read_text(encoding="utf-8")
    p = _Tags()
    p.feed(_render_md(md))
    for bad in ("img", "script", "b", "i", "em", "h1"):
        assert bad not in p.tags, f"<{bad}> from data in:\n{md}"
    assert p.tags.count("strong") == 1  # ours: "Judge health: these scores are doubtful."
    # the whole signature, backticks and all, is one code span
    assert _md_summary()["signature_line"] in p.code
    # the table survived the "|" in a reason: one row of five cells
    assert _render_md(md).count("<td") == 5


def test_code_span_and_escape():
    for text in ("plain", "a`b", "``x", "x`", "` `", "a ``` b"):
        html = _render_md(code_span(text))
        p = _Tags()
        p.feed(html)
        assert p.code == [text], (text, html)
    assert code_span("a|b", in_table=True) == "`a\\|b`"
    assert escape_markdown("noise_sensitivity") == "noise_sensitivity"  # intraword: inert
    assert escape_markdown("_x_ <b>&amp;") == "\\_x\\_ \\<b\\>\\&amp;"
    assert escape_markdown("a\n# b") == "a \\# b"


def test_summary_markdown_keeps_plain_names_readable():
    s = {"metrics": {"noise_sensitivity": {"mean": 0.25, "ci95": [0.1, 0.4], "n": 4,
                                           "unscored": 0, "lower_is_better": True}},
         "signature_line": "judge:tiny@abc|seed:0"}
    md = summary_markdown(s)
    # the judged metric's interval is marked: the judge's own average (the note under the table)
    assert "| noise_sensitivity (lower is better) | 0.2500 | [0.100, 0.400]\\* | 4 | 0 |" in md
    assert md.endswith("`judge:tiny@abc|seed:0`\n")


def test_terminal_table_shows_rich_markup_as_text():
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(summary_table(_md_summary() | {"signature_line": "judge:[/x]a",
                                                 "judge_health": {}}))
    out = console.export_text()
    assert "[/x]a" in out and "faithful<b>ness</b>" in out


# ------------------------------------------------------------ bounded report.html

def _big_run(n: int) -> tuple[dict, list[dict], list[Sample]]:
    rng = np.random.default_rng(0)
    vals = rng.random(n).round(4)
    records, samples = [], []
    for i in range(n):
        err = i % 997 == 3  # a few unscored samples, spread through the file
        records.append({"id": f"q{i}", "scores": {"mrr": None if err else float(vals[i])},
                        "errors": {"mrr": "no relevant_ids"} if err else {}, "details": {}})
        samples.append(Sample(id=f"q{i}", question=f"question {i}",
                              retrieved_ids=[f"d{i}", f"d{i + 1}"], relevant_ids={f"d{i}": 1.0}))
    col = [Score(None, reason="no relevant_ids") if r["scores"]["mrr"] is None
           else Score(r["scores"]["mrr"]) for r in records]
    return {"metrics": summarize_metrics({"mrr": col}), "n_samples": n}, records, samples


@pytest.fixture(scope="module")
def big() -> tuple[dict, list[dict], list[Sample], str]:
    summary, records, samples = _big_run(3000)
    return summary, records, samples, render_html(summary, records, samples)


def test_bounded_page_shows_worst_unscored_then_first(big):
    summary, records, samples, html = big
    shown = [int(m) for m in re.findall(r'<details class="sample" id="s-(\d+)"', html)]
    assert len(shown) == MAX_SAMPLES and shown == sorted(shown)
    worst = sorted(range(len(records)), key=lambda i: (records[i]["scores"]["mrr"] is None,
                                                       records[i]["scores"]["mrr"] or 0, i))
    for i in worst[:WORST_K]:  # every link of the worst-samples list lands on the page
        assert f'href="#s-{i}"' in html
    # half the page: the worst; then every unscored sample; then the first in file order
    unscored = [i for i, r in enumerate(records) if r["errors"]]
    assert set(worst[:MAX_SAMPLES // 2]) | set(unscored) <= set(shown)
    first = [i for i in range(len(records)) if i not in set(worst[:MAX_SAMPLES // 2]) | set(
        unscored)][:MAX_SAMPLES - MAX_SAMPLES // 2 - len(unscored)]
    assert sorted(set(worst[:MAX_SAMPLES // 2]) | set(unscored) | set(first)) == shown
    # the page says what it left out and where the rest is
    assert f"This page shows {MAX_SAMPLES} of 3,000 samples" in html and "results.jsonl" in html
    # distributions, means and CIs still cover every sample
    bars = [int(c) for c in re.findall(r'<text class="cnt"[^>]*>(\d+)</text>', html)]
    assert sum(bars) == 3000 - len(unscored)


def test_pick_samples_takes_the_worst_of_each_metric_in_turn():
    records = [{"scores": {"a": 0.5, "b": 0.5}, "errors": {}} for _ in range(100)]
    records[50] = {"scores": {"a": None, "b": 0.5}, "errors": {"a": "no contexts"}}
    ranked = [list(range(99, 50, -1)), list(range(0, 50))]  # a: worst at the end; b: start
    shown = pick_samples(records, ranked, limit=40)
    # 5 + 5 listed, then in turn up to 20, the unscored one, then file order up to 40
    assert shown == sorted({*range(90, 100), *range(0, 10), 50, *range(10, 29)})
    assert pick_samples(records[:30], ranked, limit=40) == list(range(30))


def test_small_runs_show_every_sample(big):
    summary, records, samples, _ = big
    view = build_view(summary, records[:40], samples[:40])
    assert view["n_shown"] == 40 and "This page shows" not in render_html(
        summary, records[:40], samples[:40])


def test_report_size_stays_bounded(big):
    """20k samples: the page is as large as at 3k (it was ~27 MB and growing linearly)."""
    summary, records, samples, html = big
    s2, r2, p2 = _big_run(20_000)
    html2 = render_html(s2, r2, p2)
    assert len(html2.encode()) < 1.2 * len(html.encode()) < 2_000_000


def test_samples_may_be_sample_objects_or_dicts(big):
    summary, records, samples, html = big
    as_dicts = render_html(summary, records, [s.to_dict() for s in samples])
    assert as_dicts == html


def test_bench_report_script_runs(tmp_path):
    """scripts/bench_report.py end to end on a small dataset (the 100k figures are in
    docs/performance.md)."""
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, str(root / "scripts" / "bench_report.py"), "--rows", "600",
                        "--keep", str(tmp_path)], capture_output=True, text=True, timeout=300,
                       cwd=root)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "end to end:" in p.stdout and "report.html" in p.stdout
    assert "bootstrap CIs" in p.stdout and "load + validate" in p.stdout
    html = (tmp_path / "out-cli-0" / "report.html").read_text(encoding="utf-8")
    assert "This page shows 500 of 600 samples" in html
