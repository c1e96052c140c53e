"""scripts/bench_quality.py: the draw, the statistics on constructed scores, a rule-based
judge through ``localeval.evaluate``, and the command line with the tiny real GGUF."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.errors import JudgeCallError
from localeval.testing import ScriptedJudge

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_quality.py"


@pytest.fixture(scope="module")
def bq():
    """The script, loaded by path as a user runs it."""
    spec = importlib.util.spec_from_file_location("bench_quality", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_quality"] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop("bench_quality", None)


def _row(id_, label, metric, question, context, answer=None, pair=None, **extra):
    return {"id": id_, "question": question, "contexts": [context], "answer": answer,
            "reference": None, "label_metric": metric, "label": label, "source": "test",
            "pair_id": pair, **extra}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A labelled folder in the shared data's shape, written for these tests (short texts)."""
    d = tmp_path_factory.mktemp("labelled")
    topics = [("What colour is the sky?", "The sky is blue.", "Grass is green."),
              ("Where is Paris?", "Paris is in France.", "Rome is in Italy."),
              ("What do bees make?", "Bees make honey.", "Cows give milk.")]
    ms = []
    for i, (q, good, bad) in enumerate(topics):
        ms += [_row(f"ms_{i}_pos", 1, "context_relevance", q, good, pair=f"q{i}"),
               _row(f"ms_{i}_neg", 0, "context_relevance", q, bad, pair=f"q{i}")]
    wiki = []
    for i, (q, good, bad) in enumerate(topics):
        wiki += [_row(f"wk_{i}_v1", 1, "context_relevance", q, good, pair=f"wk{i}_cr"),
                 _row(f"wk_{i}_v2", 0, "context_relevance", q, good + " " + bad,
                      pair=f"wk{i}_cr")]
    ares = [_row(f"ar_{i}", i % 2, "context_relevance", q, good if i % 2 else bad)
            for i, (q, good, bad) in enumerate(topics * 2)]
    jh = [_row(f"jh_{i}", lab, "faithfulness", "空の色は？", "空は青い。",
               "空は青いです。", label_binary=int(lab == 1.0))
          for i, lab in enumerate((1.0, 0.5, 1.0, 0.0))]
    for name, rows in (("msmarco_trulens_ctxrel", ms), ("wikieval", wiki),
                       ("ares_databricks_human", ares), ("jhars_ja", jh)):
        (d / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return d


# -- statistics on constructed scores -------------------------------------------------------
def _pairs(n):
    labels = {f"{i}{s}": int(s == "g") for i in range(n) for s in "gb"}
    return labels, {k: k[:-1] for k in labels}


def test_pairwise_right_order_is_one_ties_half_wrong_zero(bq):
    labels, pairs = _pairs(6)
    right = {k: 0.9 if v else 0.1 for k, v in labels.items()}
    ties = {k: 0.5 for k in labels}
    wrong = {k: 0.1 if v else 0.9 for k, v in labels.items()}
    r = bq.pairwise_stats(right, labels, pairs, "m", n_boot=200)
    assert (r["value"], r["n"], r["ci95"]) == (1.0, 6, [1.0, 1.0])
    assert bq.pairwise_stats(ties, labels, pairs, "m", n_boot=200)["value"] == 0.5
    assert bq.pairwise_stats(wrong, labels, pairs, "m", n_boot=200)["value"] == 0.0


def test_pairwise_mixes_credit_and_drops_unscored_pairs(bq):
    labels, pairs = _pairs(5)
    vals = {"0g": 1.0, "0b": 0.0, "1g": 1.0, "1b": 0.0, "2g": 0.8, "2b": 0.2,  # right x3
            "3g": 0.5, "3b": 0.5,  # tie: 1/2
            "4g": None, "4b": 0.3}  # unscored: left out
    r = bq.pairwise_stats(vals, labels, pairs, "m", n_boot=500)
    assert r["n"] == 4
    assert r["value"] == pytest.approx(3.5 / 4)
    assert r["ci95"][0] <= r["value"] <= r["ci95"][1]


def test_binary_auc_and_balanced_accuracy(bq):
    labels = {"a": 1, "b": 1, "c": 1, "d": 1, "e": 0, "f": 0}
    sep = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.2, "f": 0.1}
    auc, ba = bq.binary_stats(sep, labels, "m", n_boot=300)
    assert (auc["statistic"], auc["value"], auc["n"]) == ("ROC AUC", 1.0, 6)
    assert ba["value"] == 1.0
    # TPR 3/4 (0.2 fails), TNR 1/2 (0.6 passes): balanced accuracy 0.625;
    # AUC: of the 8 (good, bad) pairs only (0.2, 0.6) is misordered
    mixed = {"a": 0.9, "b": 0.2, "c": 0.8, "d": 0.7, "e": 0.1, "f": 0.6}
    auc, ba = bq.binary_stats(mixed, labels, "m", n_boot=300)
    assert ba["value"] == pytest.approx(0.625)
    assert auc["value"] == pytest.approx(7 / 8)
    assert 0.0 <= ba["ci95"][0] <= 0.625 <= ba["ci95"][1] <= 1.0
    # a judge that passes everything: balanced accuracy 0.5 however imbalanced the set
    assert bq.balanced_accuracy([1.0] * 9, [1.0], n_boot=0)["value"] == 0.5
    assert bq.balanced_accuracy([1.0], [], n_boot=0)["value"] is None


def test_graded_spearman_and_auc(bq):
    graded = {"a": 1.0, "b": 0.75, "c": 0.5, "d": 0.0}
    binary = {"a": 1, "b": 0, "c": 0, "d": 0}
    rho, auc = bq.graded_stats({"a": 0.9, "b": 0.6, "c": 0.3, "d": 0.1}, graded, binary, "m",
                               n_boot=200)
    assert rho["value"] == pytest.approx(1.0) and auc["value"] == 1.0
    const = bq.graded_stats({k: 0.5 for k in graded}, graded, binary, "m", n_boot=200)
    assert const[0]["value"] is None and "constant" in const[0]["reason"]
    assert const[1]["value"] == 0.5


# -- the draw ------------------------------------------------------------------------------
def test_choose_is_seeded_keeps_pairs_whole_and_stratifies(bq):
    rows = [{"id": f"{i}{s}", "pair_id": f"p{i}", "label": int(s == "g")}
            for i in range(10) for s in "gb"]
    a = bq.choose(rows, "pairwise", 3, 0, "x")
    assert a == bq.choose(rows, "pairwise", 3, 0, "x")
    assert len(a) == 6 and len({r["pair_id"] for r in a}) == 3
    draws = {tuple(r["id"] for r in bq.choose(rows, "pairwise", 3, s, "x")) for s in range(5)}
    assert len(draws) > 1
    assert len(bq.choose(rows, "pairwise", None, 0, "x")) == 20
    imbalanced = [{"id": str(i), "label": 0.0 if i < 3 else 1.0, "label_binary": int(i >= 3)}
                  for i in range(20)]
    got = bq.choose(imbalanced, "graded", 4, 0, "y")
    assert sorted(bq.binary_label(r) for r in got) == [0, 0, 1, 1]
    assert [r["id"] for r in got] == sorted((r["id"] for r in got), key=int)  # file order
    assert len(bq.choose(imbalanced, "binary", 10, 0, "y")) == 10
    assert sum(bq.binary_label(r) == 0 for r in bq.choose(imbalanced, "binary", 10, 0, "y")) == 3


def test_limit_caps_sets_and_metrics_apart(bq):
    limits = bq.parse_limit("10,faithfulness=3,msmarco=0")
    assert limits == {"": 10, "faithfulness": 3, "msmarco": 0}
    assert bq.limit_for(limits, "wikieval", "faithfulness") == 3
    assert bq.limit_for(limits, "wikieval", "context_relevance") == 10
    assert bq.limit_for(limits, "msmarco", "context_relevance") is None  # 0: every pair
    assert bq.limit_for(bq.parse_limit("0"), "ares", "faithfulness") is None
    with pytest.raises(SystemExit, match="not a set"):
        bq.parse_limit("5,faith=2")
    with pytest.raises(SystemExit, match="N,KEY=M"):
        bq.parse_limit("five")


# -- a rule-based judge through localeval.evaluate -----------------------------------------------
def test_rule_judge_orders_every_pair_and_coverage_is_counted(bq, data_dir):
    spec = bq.SETS["msmarco"]
    rows = bq.choose(bq.read_set(data_dir, spec)["context_relevance"], "pairwise", None, 0, "t")
    good = {r["id"] for r in rows if r["label"] == 1}

    def rate(req):
        if req.sample.id == "ms_2_pos":  # both judges fail: unscored, with a reason
            raise JudgeCallError("scripted failure")
        return {"rating": 2 if req.sample.id in good else 0}

    judge = ScriptedJudge({"nv_context_relevance_1": rate, "nv_context_relevance_2": rate})
    scores, summary = bq.score_rows(rows, ["nv_context_relevance"], judge=judge,
                                    embedder=False, verdicts="hard", lang="en", cache=False,
                                    quiet=True)
    assert summary["n_samples"] == 6
    nv = bq.measure_task(spec, "context_relevance", "nv_context_relevance", rows, scores,
                         n_boot=200, seed=0)[0]
    # 3 pairs, one with an unscored row: 2 compared, both ordered right
    assert (nv["value"], nv["n"], nv["rows_unscored"], nv["distinct_values"]) == (1.0, 2, 1, 2)
    assert list(nv["unscored_reasons"].values()) == [1]
    assert "scripted failure" in next(iter(nv["unscored_reasons"]))
    assert nv["anchor"] is None
    wiki = bq.measure_task(bq.SETS["wikieval"], "context_relevance", "nv_context_relevance",
                           rows, scores, n_boot=0, seed=0)[0]
    assert wiki["anchor"] == 0.70


# -- the command line ----------------------------------------------------------------------------
def _run(*args, timeout=240):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)


def test_cli_with_the_tiny_gguf_writes_quality_json(tiny_gguf, data_dir, tmp_path):
    out = tmp_path / "q"
    p = _run("--judge", str(tiny_gguf), "--data", str(data_dir), "--sets", "msmarco,jhars",
             "--limit", "2", "--n-boot", "100", "--threads", "1", "-o", str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    rep = json.loads((out / "quality.json").read_text(encoding="utf-8"))
    assert rep["sets"] == ["msmarco", "jhars"] and rep["limit"] == {"": 2}
    assert rep["judge_name"] and rep["git_commit"]
    got = {(r["set"], r["metric"], r["statistic"]) for r in rep["results"]}
    assert got == {("msmarco", "context_relevancy", "pairwise accuracy"),
                   ("msmarco", "nv_context_relevance", "pairwise accuracy"),
                   ("jhars", "faithfulness", "Spearman ρ (graded)"),
                   ("jhars", "faithfulness", "ROC AUC (label_binary)")}
    for r in rep["results"]:
        # every chosen row is either scored or counted as unscored with a reason
        assert r["rows"] == (4 if r["set"] == "msmarco" else 2)
        assert sum(r["unscored_reasons"].values()) == r["rows_unscored"]
        assert r["value"] is None or 0.0 <= r["value"] <= 1.0
    assert len(rep["scores"]) == 4 * 2 + 2
    assert {s["id"] for s in rep["scores"] if s["set"] == "jhars"} <= {f"jh_{i}" for i in range(4)}
    md = (out / "quality.md").read_text(encoding="utf-8")
    assert "| msmarco | context_relevance | nv_context_relevance | hard |" in md
    assert "msmarco/context_relevance hard" in p.stderr  # progress on stderr


def test_cli_refuses_a_ragas_path_without_ragas_and_bad_sets(bq, tmp_path, capsys):
    assert bq.main(["--judge", "x", "--ragas-path", str(tmp_path)]) == 2
    assert "no ragas package there" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--sets"):
        bq.main(["--judge", "x", "--sets", "wikieval,nope"])
