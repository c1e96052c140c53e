"""Judge-vs-judge comparison: statistics equal scipy/sklearn, exports import, edges are named."""

from __future__ import annotations

import argparse
import io
import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from localeval.agreement import compare
from localeval.resultsets import ResultSet, align, load_result_set
from localeval.resultsets import canonical_metric_name
from localeval.agreement.scatter import scatter_svg
from localeval.agreement.statistics import CI_PERCENTILE, paired_stats, rating_levels
from localeval.cli.agreement import add_compare_arguments
from localeval.cli.agreement import cmd_compare as compare_main
from localeval.errors import DataError, UsageError
from localeval.stats import kappa_rows as _kappa_rows
from localeval.stats import kendall_rows as _kendall_rows
from localeval.stats import pearson_rows as _pearson_rows
from localeval.stats import spearman_rows as _spearman_rows


def _judges(n: int = 150, seed: int = 3) -> tuple[np.ndarray, ...]:
    """Continuous scores (faithfulness-like) and 0/0.5/1 ratings for two judges."""
    rng = np.random.default_rng(seed)
    f_a = rng.random(n)
    f_b = np.clip(f_a + rng.normal(0, 0.25, n), 0, 1)
    r_a = rng.choice([0.0, 0.5, 1.0], n, p=[0.3, 0.2, 0.5])
    flip = rng.random(n) < 0.25
    r_b = np.where(flip, rng.choice([0.0, 0.5, 1.0], n), r_a)
    return f_a, f_b, r_a, r_b


def _no_nan(obj) -> None:
    json.dumps(obj, allow_nan=False)  # raises on NaN / inf anywhere


# -- statistics ------------------------------------------------------------------------
def test_point_estimates_equal_scipy_and_sklearn():
    f_a, f_b, r_a, r_b = _judges()
    a = ResultSet.from_scores({i: {"faithfulness": f_a[i], "nv_context_relevance": r_a[i]}
                               for i in range(len(f_a))})
    b = ResultSet.from_scores({i: {"faithfulness": f_b[i], "nv_context_relevance": r_b[i]}
                               for i in range(len(f_a))})
    c = compare(a, b, threshold=0.5, n_boot=300, seed=1)
    for name, x, y in (("faithfulness", f_a, f_b), ("nv_context_relevance", r_a, r_b)):
        m = c[name]
        s = m.stats
        assert m.n == len(x)
        assert s["pearson"].value == pytest.approx(st.pearsonr(x, y).statistic, abs=1e-12)
        assert s["spearman"].value == pytest.approx(st.spearmanr(x, y).statistic, abs=1e-12)
        assert s["kendall"].value == pytest.approx(st.kendalltau(x, y).statistic, abs=1e-12)
        assert s["mad"].value == pytest.approx(np.mean(np.abs(y - x)))
        assert s["bias"].value == pytest.approx(np.mean(y) - np.mean(x))
        pa, pb = (x >= 0.5).astype(int), (y >= 0.5).astype(int)
        assert s["kappa"].value == pytest.approx(cohen_kappa_score(pa, pb), abs=1e-12)
        assert s["agreement"].value == pytest.approx(np.mean(pa == pb))
        assert m.confusion == confusion_matrix(pa, pb, labels=[0, 1]).tolist()
        for k, stat in s.items():
            if stat.value is None:
                continue
            lo, hi = stat.ci95
            assert lo <= stat.value + 1e-9 and stat.value - 1e-9 <= hi, k
            assert hi > lo, k  # real spread on real data
        assert s["mad"].method == CI_PERCENTILE and s["pearson"].method == CI_PERCENTILE
    # weighted kappa only on the rating grid
    wk = c["nv_context_relevance"].stats["weighted_kappa"]
    assert c["nv_context_relevance"].levels == 3
    assert wk.value == pytest.approx(cohen_kappa_score(
        (r_a * 2).astype(int), (r_b * 2).astype(int), weights="quadratic"), abs=1e-12)
    fw = c["faithfulness"].stats["weighted_kappa"]
    assert fw.value is None and "grid" in fw.reason
    _no_nan(c.to_dict(values=True))


def test_vectorised_resample_statistics_equal_the_libraries(monkeypatch):
    rng = np.random.default_rng(7)
    X = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(40, 30))
    Y = np.clip(X + rng.choice([-0.25, 0, 0.25], size=X.shape), 0, 1)
    X[0] = 0.5  # a constant row: undefined, NaN (and dropped by the bootstrap)
    pr, sr = _pearson_rows(X, Y), _spearman_rows(X, Y)
    assert math.isnan(pr[0]) and math.isnan(sr[0])
    for i in range(1, 40):
        assert pr[i] == pytest.approx(st.pearsonr(X[i], Y[i]).statistic, abs=1e-10)
        assert sr[i] == pytest.approx(st.spearmanr(X[i], Y[i]).statistic, abs=1e-10)
    # Kendall from resample counts (quadratic forms) vs scipy on the resampled arrays
    x, y = X[1], Y[1]
    idx = rng.integers(0, 30, size=(40, 30))
    idx[0] = 3  # every draw the same sample: constant, NaN
    kr = _kendall_rows(x, y, idx)
    assert math.isnan(kr[0])
    for i in range(1, 40):
        assert kr[i] == pytest.approx(st.kendalltau(x[idx[i]], y[idx[i]]).statistic, abs=1e-10)
    import localeval.stats.rows as cmp_mod  # above _KENDALL_DENSE: scipy per resample, same values

    monkeypatch.setattr(cmp_mod, "_KENDALL_DENSE", 10)
    np.testing.assert_allclose(_kendall_rows(x, y, idx), kr, atol=1e-10)
    A, B = np.rint(X * 4).astype(int), np.rint(Y * 4).astype(int)
    qk, bk = _kappa_rows(A, B, 5, "quadratic"), _kappa_rows((A >= 2) * 1, (B >= 2) * 1, 2, None)
    for i in range(1, 40):
        assert qk[i] == pytest.approx(cohen_kappa_score(A[i], B[i], labels=range(5),
                                                        weights="quadratic"), abs=1e-10)
        assert bk[i] == pytest.approx(cohen_kappa_score(A[i] >= 2, B[i] >= 2,
                                                        labels=[False, True]), abs=1e-10)


def test_bootstrap_ci_of_pearson_matches_fisher_interval():
    # On bivariate normal data the percentile bootstrap and Fisher's z interval
    # (scipy) should nearly coincide; a wrong pairing of resamples would not.
    rng = np.random.default_rng(11)
    x = rng.normal(size=400)
    y = 0.6 * x + 0.8 * rng.normal(size=400)
    s, _ = paired_stats(x, y, threshold=None, n_boot=2000, seed=0, which=("pearson",))
    fisher = st.pearsonr(x, y).confidence_interval(0.95)
    assert s["pearson"].ci95[0] == pytest.approx(fisher.low, abs=0.03)
    assert s["pearson"].ci95[1] == pytest.approx(fisher.high, abs=0.03)
    again, _ = paired_stats(x, y, threshold=None, n_boot=2000, seed=0, which=("pearson",))
    other, _ = paired_stats(x, y, threshold=None, n_boot=2000, seed=1, which=("pearson",))
    assert again["pearson"].ci95 == s["pearson"].ci95  # seeded
    assert other["pearson"].ci95 != s["pearson"].ci95


def test_constant_inputs_give_none_with_reasons_not_nan():
    x = [1.0] * 20
    y = [1.0] * 19 + [0.0]
    s, extra = paired_stats(x, y, threshold=0.5, n_boot=200)
    for k in ("pearson", "spearman", "kendall"):
        assert s[k].value is None and "A is constant" in s[k].reason
    assert s["kappa"].value == pytest.approx(0.0)  # defined: one side varies
    s2, _ = paired_stats(x, x, threshold=0.5, n_boot=200)
    assert s2["kappa"].value is None and "undefined" in s2["kappa"].reason
    assert "both constant" in s2["pearson"].reason
    assert "same rating" in s2["weighted_kappa"].reason
    s5, _ = paired_stats([0.0] * 10, [1.0] * 10, threshold=0.5, n_boot=100)
    assert s5["kappa"].value == 0.0 and s5["weighted_kappa"].value == 0.0  # defined: chance
    assert s2["mad"].value == 0.0 and s2["mad"].ci95 == (0.0, 0.0)
    s3, _ = paired_stats([0.2, 0.9], [0.1, 0.8], n_boot=200)
    assert s3["pearson"].value is None and "at least 3" in s3["pearson"].reason
    s4, _ = paired_stats([], [], n_boot=200)
    assert all(v.value is None for v in s4.values())
    _no_nan({k: v.to_dict() for k, v in {**s, **s2, **s3, **s4}.items()})


def test_rating_levels():
    assert rating_levels([0, 0.5, 1], [1, 1]) == 2
    assert rating_levels([0, 0.25, 0.75]) == 4
    assert rating_levels([0, 1]) == 1
    assert rating_levels([0.3, 0.7]) == 10
    assert rating_levels([0.123]) is None
    assert rating_levels([2.0]) is None


# -- imports: RAGAS, deepeval, localeval -----------------------------------------------
QUESTIONS = [f"What is fact number {i}?" for i in range(12)]


def _write_localeval(path, ids, scores: dict[str, list], errors=None):
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "results.jsonl", "w", encoding="utf-8") as f:
        for i, sid in enumerate(ids):
            sc = {m: v[i] for m, v in scores.items()}
            er = {m: "judge output truncated" for m, v in sc.items() if v is None}
            f.write(json.dumps({"id": sid, "scores": sc, "errors": er,
                                "details": {"faithfulness": {"verdicts": [1, 0]}}}) + "\n")
    sig = {"signature": {"judge": path.name + ".gguf", "seed": 0}}
    (path / "summary.json").write_text(json.dumps(sig))
    return path


def _ragas_frame(faith, relev, recall):
    # The columns ragas 0.4 EvaluationResult.to_pandas() gives for a single-turn run.
    return pd.DataFrame({
        "user_input": QUESTIONS,
        "retrieved_contexts": [[f"Fact {i} is {i * 7}.", "Unrelated text."] for i in range(12)],
        "response": [f"It is {i * 7}." for i in range(12)],
        "reference": [f"Fact {i} is {i * 7}." for i in range(12)],
        "faithfulness": faith,
        "answer_relevancy": relev,
        "context_recall": recall,
    })


def test_ragas_csv_imports_and_compares_with_localeval(tmp_path):
    rng = np.random.default_rng(0)
    faith = rng.choice([0.0, 0.5, 1.0], 12)
    relev = rng.random(12)
    recall = rng.choice([0.0, 1.0], 12).astype(float)
    recall[3] = np.nan  # a failed judge call in RAGAS
    csv_path = tmp_path / "ragas.csv"
    _ragas_frame(faith, relev, recall).to_csv(csv_path)  # default: with the index column
    rs = load_result_set(csv_path)
    assert rs.format == "ragas" and rs.ids_from == "row" and len(rs) == 12
    assert rs.metrics == ["faithfulness", "answer_relevancy", "context_recall"]
    assert rs["4"]["faithfulness"] == faith[3]
    assert rs["4"]["context_recall"] is None and "NaN" in rs.reason("4", "context_recall")
    assert rs.questions["1"] == QUESTIONS[0]

    # localeval judged the same dataset (with its own ids) and disagreed on two samples
    ids = [f"q{i:02d}" for i in range(12)]
    lf = list(faith)
    lf[0], lf[5] = 1.0 - lf[0], 0.5
    lr = list(recall)
    lr[3] = 1.0
    lr[7] = None
    run = _write_localeval(tmp_path / "run", ids, {"faithfulness": lf, "context_recall": lr,
                                                   "answer_relevancy": list(relev)})
    a = load_result_set(run)
    assert a.format == "localeval" and a.details["q00"]["faithfulness"]["verdicts"] == [1, 0]
    # this run records no questions (written before localeval did): nothing to check the
    # row order against, so pairing by position needs asking for
    with pytest.raises(DataError, match="--align position"):
        compare(a, rs, n_boot=200)
    c = compare(a, rs, n_boot=200, align_by="position")
    assert c.alignment.rule == "position" and len(c.alignment.pairs) == 12
    cr = c["context_recall"]
    assert (cr.n, cr.unscored_a, cr.unscored_b) == (10, 1, 1)
    assert c["answer_relevancy"].stats["pearson"].value == pytest.approx(1.0)
    assert c["answer_relevancy"].stats["mad"].value == pytest.approx(0.0, abs=1e-12)
    fa = c["faithfulness"]
    assert fa.stats["mad"].value == pytest.approx(
        np.mean(np.abs(np.asarray(lf) - faith)))
    assert fa.levels == 3
    md = c.to_markdown()
    assert "| faithfulness | 12 |" in md and "paired by position" in md
    assert "1 pair(s) unscored by A, 1 by B" in md


def test_ragas_export_in_other_order_is_matched_on_question_text(tmp_path):
    faith = np.linspace(0, 1, 12)
    df = _ragas_frame(faith, faith, faith).iloc[::-1]  # reversed rows
    df.to_json(tmp_path / "ragas.json", orient="records", force_ascii=False)
    b = load_result_set(tmp_path / "ragas.json")
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"s{i}", "question": q})
                              for i, q in enumerate(QUESTIONS)) + "\n")
    run = _write_localeval(tmp_path / "run", [f"s{i}" for i in range(12)],
                           {"faithfulness": list(faith)})
    a = load_result_set(run, dataset=data)
    c = compare(a, b, n_boot=100)
    assert c.alignment.rule == "content"
    assert c.alignment.checked == ("question",)
    # pandas' to_json keeps 10 significant digits
    assert c["faithfulness"].stats["mad"].value == pytest.approx(0.0, abs=1e-9)
    # pandas' default orient="columns" reads the same
    df.to_json(tmp_path / "cols.json")
    assert load_result_set(tmp_path / "cols.json").column("faithfulness") == \
        b.column("faithfulness")


def test_deepeval_json_imports(tmp_path):
    cases = []
    for i in range(6):
        md = [{"name": "Faithfulness", "score": i / 5, "threshold": 0.5, "success": i >= 3,
               "reason": "ok", "evaluation_model": "local"},
              {"name": "Answer Relevancy", "score": 1.0 - i / 5, "success": True},
              {"name": "Contextual Recall", "score": None, "success": False,
               "error": "timed out"} if i == 2 else
              {"name": "Contextual Recall", "score": 1.0, "success": True}]
        cases.append({"name": f"test_case_{i}", "success": True, "metrics_data": md,
                      "input": QUESTIONS[i], "actual_output": "x",
                      "additional_metadata": {"id": f"q{i}"}})
    p = tmp_path / "deepeval.json"
    p.write_text(json.dumps({"test_results": cases, "confident_link": None}))
    rs = load_result_set(p)
    assert rs.format == "deepeval" and rs.ids_from == "id"
    assert list(rs) == [f"q{i}" for i in range(6)]
    assert rs.metrics == ["faithfulness", "answer_relevancy", "context_recall"]
    assert rs["q4"]["faithfulness"] == pytest.approx(0.8)
    assert rs["q2"]["context_recall"] is None and rs.reason("q2", "context_recall") == "timed out"
    assert rs.details["q3"]["faithfulness"]["success"] is True

    # camelCase (deepeval's saved test run), automatic names -> row order
    camel = {"testCases": [{"name": f"test_case_{i}", "input": QUESTIONS[i],
                            "metricsData": [{"name": "Faithfulness", "score": i / 5,
                                             "success": True}]} for i in range(6)]}
    (tmp_path / "camel.json").write_text(json.dumps(camel))
    rc = load_result_set(tmp_path / "camel.json")
    assert rc.ids_from == "row" and list(rc) == ["1", "2", "3", "4", "5", "6"]
    c = compare(rs, rc, metrics=["faithfulness"], n_boot=100)
    assert c.alignment.rule == "content" and c.alignment.checked == ("question",)
    assert c["faithfulness"].stats["pearson"].value == pytest.approx(1.0)


def test_canonical_metric_names():
    assert canonical_metric_name("Faithfulness") == "faithfulness"
    assert canonical_metric_name("Answer Relevancy") == "answer_relevancy"
    assert canonical_metric_name("Contextual Precision") == "context_precision"
    assert canonical_metric_name("semantic_similarity") == "answer_similarity"
    assert canonical_metric_name("nv_accuracy") == "nv_answer_accuracy"
    assert canonical_metric_name("context_relevance") == "nv_context_relevance"
    assert canonical_metric_name("ndcg@10") == "ndcg@10"
    assert canonical_metric_name("rougeL") == "rougeL"
    assert canonical_metric_name("Correctness [GEval]") == "correctness"


# -- pairing and errors --------------------------------------------------------------------
def test_unmatched_samples_and_metrics_are_reported():
    a = ResultSet.from_scores({i: {"faithfulness": i / 20, "bleu": 0.1 * (i % 3)}
                               for i in range(10)}, name="A")
    b = ResultSet.from_scores({i: {"faithfulness": i / 20, "rougeL": 0.2}
                               for i in range(5, 15)}, name="B")
    c = compare(a, b, n_boot=100)
    assert len(c.alignment.pairs) == 5
    assert len(c.alignment.only_a) == 5 and len(c.alignment.only_b) == 5
    assert c.only_in_a == ["bleu"] and c.only_in_b == ["rougeL"]
    assert "5 only in A, 5 only in B" in c.to_markdown()
    with pytest.raises(UsageError, match="'nope' is not in A"):
        compare(a, b, metrics=["nope"])
    c2 = compare(a, b, metrics={"bleu": "rougeL"}, n_boot=100)
    assert c2.metrics[0].label == "bleu ~ rougeL"


def test_cannot_pair_without_ids_lengths_or_questions():
    a = ResultSet({"1": {"m": 1.0}, "2": {"m": 0.0}}, ids_from="row")
    b = ResultSet({"1": {"m": 1.0}}, ids_from="row")
    with pytest.raises(DataError, match="cannot pair"):
        align(a, b)


def test_bad_inputs_name_file_row_and_column(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("user_input,faithfulness\nq1,0.5\nq2,0.7\nq3,high\n")
    with pytest.raises(DataError, match=r"bad\.csv, row 3, column 'faithfulness'.*'high'"):
        load_result_set(p)
    j = tmp_path / "results.jsonl"
    j.write_text('{"id": "a", "scores": {"faithfulness": 0.5}}\n'
                 '{"id": "b", "scores": {"faithfulness": "0.5x"}}\n')
    with pytest.raises(DataError, match=r"line 2, column 'scores\.faithfulness'"):
        load_result_set(j)
    j.write_text('{"id": "a", "scores": {"faithfulness": 0.5}}\n{"id": "a", "scores": {}}\n')
    with pytest.raises(DataError, match="line 2.*duplicate id 'a'"):
        load_result_set(j)
    (tmp_path / "empty_run").mkdir()
    with pytest.raises(DataError, match="no results.jsonl"):
        load_result_set(tmp_path / "empty_run")
    with pytest.raises(DataError, match="file not found"):
        load_result_set(tmp_path / "missing.csv")
    (tmp_path / "text.csv").write_text("user_input,notes\nq,hello\n")
    with pytest.raises(DataError, match="no metric columns"):
        load_result_set(tmp_path / "text.csv")


# -- views ---------------------------------------------------------------------------------
def test_scatter_svg_is_valid_and_spreads_identical_points():
    svg = scatter_svg([0, 0, 0.5, 1, 1, 1], [0, 0, 1, 1, 1, 0.5], "cr <A & B>",
                      a_label="judge<1>", b_label="gpt", ids=list("abcdef"))
    root = ET.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    circles = root.findall(f"{ns}circle")
    assert len(circles) == 6  # every sample drawn
    # ids are bidi-isolated (U+2068 ... U+2069) in tooltips
    titles = sorted(c.find(f"{ns}title").text.replace("\u2068", "").replace("\u2069", "")
                    for c in circles)
    assert "a: A=0, B=0 (2 samples at this point)" in titles and "c: A=0.5, B=1" in titles
    # the two samples at (0, 0) are drawn apart, not on top of each other
    at_00 = [(c.get("cx"), c.get("cy")) for c in circles if "A=0, B=0" in
             c.find(f"{ns}title").text]
    assert len(set(at_00)) == 2
    assert svg == scatter_svg([0, 0, 0.5, 1, 1, 1], [0, 0, 1, 1, 1, 0.5], "cr <A & B>",
                              a_label="judge<1>", b_label="gpt", ids=list("abcdef"))
    assert "cr <A & B> (n=6)" in "".join(root.itertext())
    assert "<script" not in svg


def test_render_table_and_cli(tmp_path, capsys):
    from rich.console import Console
    from rich.table import Table

    f_a, f_b, r_a, r_b = _judges(40)
    ids = [f"s{i}" for i in range(40)]
    ra = _write_localeval(tmp_path / "a", ids, {"faithfulness": list(f_a),
                                                "context_precision": list(r_a)})
    rb = _write_localeval(tmp_path / "b", ids, {"faithfulness": list(f_b),
                                                "context_precision": list(r_b)})
    c = compare(load_result_set(ra), load_result_set(rb), n_boot=100)
    t = c.render_table()
    assert isinstance(t, Table)
    con = Console(record=True, width=220, file=io.StringIO())
    con.print(t)
    out = con.export_text()
    assert "faithfulness" in out and "Kendall" in out and "paired by id" in out

    p = argparse.ArgumentParser()
    add_compare_arguments(p)
    args = p.parse_args([str(ra), str(rb), "--json", "--n-boot", "100", "-o",
                         str(tmp_path / "cmp"), "--threshold", "0.6"])
    assert compare_main(args) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["threshold"] == 0.6 and set(d["metrics"]) == {"faithfulness", "context_precision"}
    assert (d["a"]["name"], d["b"]["name"]) == ("a", "b")
    assert d["a"]["signature"]["judge"] == "a.gguf"
    saved = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert len(saved["metrics"]["faithfulness"]["pairs"]) == 40
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    assert md.startswith("## Agreement") and "judge b.gguf" in md
    ET.parse(tmp_path / "cmp" / "scatter" / "faithfulness.svg")


def test_cis_do_not_depend_on_which_other_metrics_are_compared():
    f_a, f_b, r_a, r_b = _judges(60)
    a = ResultSet.from_scores({i: {"x": f_a[i], "y": r_a[i]} for i in range(60)})
    b = ResultSet.from_scores({i: {"x": f_b[i], "y": r_b[i]} for i in range(60)})
    both = compare(a, b, n_boot=200)
    only_y = compare(a, b, metrics=["y"], n_boot=200)
    assert both["y"].stats["kendall"].ci95 == only_y["y"].stats["kendall"].ci95
    assert both["y"].stats["bias"].ci95 == only_y["y"].stats["bias"].ci95


def test_large_n_bootstraps_in_chunks():
    rng = np.random.default_rng(4)
    x = rng.random(6000)
    y = x + rng.normal(0, 0.1, 6000)
    s, _ = paired_stats(x, y, threshold=0.5, n_boot=400, seed=0,
                        which=("pearson", "spearman", "kappa"))
    for k in ("pearson", "spearman", "kappa"):
        lo, hi = s[k].ci95
        assert lo < s[k].value < hi and hi - lo < 0.05


def test_comparison_markdown_escapes_names_from_the_files():
    a = ResultSet.from_scores({i: {"<img src=x>": i / 4} for i in range(5)}, name="**a|b**")
    b = ResultSet.from_scores({i: {"<img src=x>": 1 - i / 4} for i in range(5)}, name="`b`")
    md = compare(a, b, n_boot=50).to_markdown()
    import re

    assert not re.search(r"(?<!\\)[<>]", md) and "\\<img src=x\\>" in md
    assert "\\*\\*a\\|b\\*\\*" in md and "\\`b\\`" in md
    cells = [ln for ln in md.splitlines() if ln.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", ln)) for ln in cells}
    assert len(widths) == 1  # an escaped | in a name splits no cell
    assert "Cohen's kappa @0.5" in md and "Kendall's tau" in md


def test_terminal_tables_show_markup_like_names_as_written():
    from rich.console import Console

    a = ResultSet.from_scores({i: {"[/x]m": i / 4} for i in range(5)}, name="[bold]a")
    b = ResultSet.from_scores({i: {"[/x]m": 1 - i / 4} for i in range(5)}, name="b")
    con = Console(record=True, width=200, file=io.StringIO())
    con.print(compare(a, b, n_boot=50).render_table())  # no MarkupError
    out = con.export_text()
    assert "[/x]m" in out and "[bold]a" in out
