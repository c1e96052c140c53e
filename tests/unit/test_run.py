"""The evaluation run through the Python API and the CLI, with a scripted judge.

The real-model path (tiny GGUF through llama.cpp) is in test_end_to_end.py;
here the judge is scripted so the runner's own behaviour is pinned exactly.
"""

from __future__ import annotations

import json
import math

import pytest

import localeval
from localeval.cli.app import example_path, main
from localeval.testing import HashEmbedder
from localeval.testing.scripted import ScriptedJudge


def verdicts_for(request):
    """Faithful (1) for samples whose answer mentions nothing unsupported: here, by id parity."""
    n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 2)
    text = request.messages[-1]["content"]
    v = 0 if "unfaithful" in text.lower() else 1
    return {"verdicts": [{"reason": "r", "verdict": v if i == 0 else 1} for i in range(n)]}


def make_judge(**extra):
    return ScriptedJudge({
        "statements": {"statements": ["first claim", "second claim"]},
        "faithfulness_verdicts": verdicts_for,
        **extra,
    })


DATA = [
    {"id": "a", "question": "Q1?", "answer": "A1.", "contexts": ["c"], "reference": "A1.",
     "retrieved_ids": ["d1", "d2"], "relevant_ids": ["d1"]},
    {"id": "b", "question": "Q2?", "answer": "unfaithful answer", "contexts": ["c"],
     "reference": "other", "retrieved_ids": ["d3", "d1"], "relevant_ids": ["d1"]},
    {"id": "c", "question": "Q3?", "answer": "A3.", "contexts": ["c"], "reference": "A3.",
     "retrieved_ids": ["d9"], "relevant_ids": ["d1"]},
]


def test_evaluate_api_files_and_pandas(tmp_path):
    res = localeval.evaluate(DATA, ["faithfulness", "answer_similarity", "mrr", "hit_rate@1"],
                             judge=make_judge(), embedder=HashEmbedder(), cache=False,
                             out_dir=tmp_path / "out", progress=False)
    assert res["faithfulness"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert res["mrr"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert res.scores[0]["answer_similarity"].value == pytest.approx(1.0, abs=1e-6)
    assert repr(res).startswith("{'faithfulness': 0.8333")
    df = res.to_pandas()
    keys = ["faithfulness", "answer_similarity", "mrr", "hit_rate@1"]
    assert list(df.columns[-8:]) == keys + [f"{k}_reason" for k in keys]
    assert set(df["faithfulness_reason"]) == {None}, "every sample was scored"
    assert list(df["id"]) == ["a", "b", "c"]
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    assert [r["id"] for r in recs] == ["a", "b", "c"]
    assert recs[1]["scores"]["faithfulness"] == 0.5
    assert recs[1]["details"]["faithfulness"], "the working is exposed"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    f = summary["metrics"]["faithfulness"]
    assert f["n"] == 3 and f["unscored"] == 0 and f["ci95"][0] <= f["mean"] <= f["ci95"][1]
    assert summary["signature"]["judge"] == "scripted"
    assert summary["signature"]["prompts"]["statements"]
    assert "judge:scripted@" in summary["signature_line"]
    assert summary["usage"]["calls"] >= 6


def test_no_judge_means_unscored_with_reason(tmp_path):
    res = localeval.evaluate(DATA, ["faithfulness", "mrr"], judge=False, cache=False,
                             progress=False)
    assert all(s["faithfulness"].value is None for s in res.scores)
    assert res.scores[0]["faithfulness"].reason.startswith("no judge model")
    e = res.summary["metrics"]["faithfulness"]
    assert e["mean"] is None and e["unscored"] == 3 and e["n"] == 0
    assert res["mrr"] == pytest.approx(0.5)


def test_repeats_report_spread(tmp_path):
    def by_seed(request):
        n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 2)
        return {"verdicts": [{"reason": "r", "verdict": request.seed % 2} for _ in range(n)]}

    judge = make_judge(faithfulness_verdicts=by_seed)
    res = localeval.evaluate(DATA[:2], ["faithfulness"], judge=judge, cache=False, repeats=3,
                             progress=False)
    sc = res.scores[0]["faithfulness"]
    assert sc.details["repeats"] == [0.0, 1.0, 0.0]
    assert sc.value == pytest.approx(1 / 3)
    assert sc.details["std"] == pytest.approx(math.sqrt(2 / 9))
    m = res.summary["metrics"]["faithfulness"]
    assert m["run_means"] == [0.0, 1.0, 0.0]
    assert m["run_spread"] == pytest.approx(math.sqrt(2 / 9))
    assert {r.seed for r in judge.requests} == {0, 1, 2}
    assert all(r.temperature == 0.7 for r in judge.requests)


def test_interrupt_leaves_valid_files(tmp_path):
    calls = {"n": 0}

    def boom(request):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return verdicts_for(request)

    with pytest.raises(KeyboardInterrupt):
        localeval.evaluate(DATA, ["faithfulness", "mrr"], judge=make_judge(
            faithfulness_verdicts=boom), cache=False, out_dir=tmp_path, progress=False)
    recs = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in recs] == ["a"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["interrupted"] == {"finished": 1, "total": 3}
    assert summary["metrics"]["mrr"]["n"] == 1


def test_observer_sees_each_model_metric_of_each_sample():
    seen = []

    class Recorder:
        def started(self, sample, metric):
            seen.append(("start", sample.id, metric.key))

        def finished(self, sample, metric, score, seconds):
            assert seconds >= 0
            seen.append(("end", sample.id, metric.key, score.value))

    res = localeval.evaluate(DATA[:2], ["faithfulness", "mrr"], judge=make_judge(), cache=False,
                             progress=False, observer=Recorder())
    # model metrics only (mrr uses no model), started and finished around each, in order
    assert seen == [("start", "a", "faithfulness"), ("end", "a", "faithfulness", 1.0),
                    ("start", "b", "faithfulness"), ("end", "b", "faithfulness", 0.5)]
    assert res["faithfulness"] == pytest.approx(0.75)
    with pytest.raises(localeval.UsageError, match="observer"):
        localeval.evaluate(DATA, ["faithfulness"], judge="j.gguf", workers=2, cache=False,
                           progress=False, observer=Recorder())


def test_threshold_and_params_in_keys():
    res = localeval.evaluate(DATA, ["mrr:threshold=0.5", "ndcg@2:gain=exponential"],
                             judge=False, cache=False, progress=False)
    assert [s["mrr:threshold=0.5"].value for s in res.scores] == [1.0, 1.0, 0.0]
    assert res.scores[1]["mrr:threshold=0.5"].details["raw_score"] == 0.5
    assert "ndcg@2:gain=exponential" in res.summary["metrics"]


def test_cli_run_example_without_models(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no models/ here
    out = tmp_path / "out"
    code = main(["run", "example", "-m", "faithfulness,hit_rate@3,mrr,rougeL", "-o", str(out),
                 "--quiet"])
    assert code == 0
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(recs) == 40
    assert all(r["scores"]["faithfulness"] is None for r in recs)
    assert "no judge model" in recs[0]["errors"]["faithfulness"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_samples"] == 40 and 0 < summary["metrics"]["mrr"]["mean"] < 1


def test_cli_gates(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in DATA))
    args = ["run", str(data), "-m", "mrr,hit_rate@1", "-o", str(tmp_path / "o"), "--quiet"]
    assert main(args + ["--fail-under", "mrr=0.4"]) == 0
    assert main(args + ["--fail-under", "mrr=0.6", "--fail-under", "hit_rate@1=0.2"]) == 1
    err = capsys.readouterr().err
    assert "gate failed: mrr 0.5000 is below 0.6" in err and "hit_rate@1" not in err
    assert main(args + ["--fail-under", "ndcg=0.1"]) == 2


def test_cli_json_output(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in DATA))
    assert main(["run", str(data), "-m", "mrr", "-o", str(tmp_path / "o"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["mrr"]["mean"] == pytest.approx(0.5)


def test_assert_scores_helper():
    from localeval.testing import assert_scores

    assert_scores(DATA, {"mrr": 0.4}, judge=False, cache=False)
    with pytest.raises(AssertionError, match="mrr 0.5000 is below 0.9"):
        assert_scores(DATA, {"mrr": 0.9}, judge=False, cache=False)


def test_metrics_listing(capsys):
    assert main(["metrics", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    expected = {"faithfulness", "answer_relevancy", "context_precision", "context_utilization",
                "context_recall", "context_entity_recall", "noise_sensitivity",
                "answer_similarity", "answer_correctness", "context_relevancy",
                "nv_context_relevance", "nv_answer_accuracy", "nv_response_groundedness",
                "hit_rate", "mrr", "precision", "recall", "map", "dcg", "ndcg", "bleu",
                "rouge1", "rouge2", "rougeL"}
    assert expected <= set(rows)
    assert rows["faithfulness"]["needs"] == "judge"
    assert rows["answer_similarity"]["needs"] == "embedder"
    assert "semantic_similarity" in rows["answer_similarity"]["aliases"]
    assert set(rows["ndcg"]["requires"]) == {"retrieved_ids", "relevant_ids"}


def test_example_is_package_data():
    assert example_path().exists()


def test_corpus_bleu_in_summary():
    data = [{"answer": "the cat sat on the mat", "reference": "the cat sat on the mat"},
            {"answer": "a dog ran", "reference": "the dog ran away fast"}]
    res = localeval.evaluate(data, ["bleu"], judge=False, cache=False, progress=False)
    import sacrebleu

    want = sacrebleu.corpus_bleu([d["answer"] for d in data],
                                 [[d["reference"] for d in data]]).score / 100
    assert res.summary["metrics"]["bleu"]["corpus"] == pytest.approx(want, abs=1e-12)


def test_cache_stats_and_clear(tmp_path, capsys):
    import numpy as np

    from localeval.cache import Cache

    path = tmp_path / "c.sqlite"
    c = Cache(path)
    c.put_call("k1", "judge-a", "statements", {"raw": "{}"})
    c.put_vectors("emb", {"t": np.ones(3, np.float32)})
    c.close()
    assert main(["cache", "stats", "--cache", str(path)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["judge_calls"] == 1 and stats["embeddings"] == 1
    assert stats["judges"] == {"judge-a": 1}
    assert main(["cache", "clear", "--cache", str(path)]) == 0
    assert "cleared 1 judge calls and 1 embeddings" in capsys.readouterr().out
    assert Cache(path).stats()["judge_calls"] == 0
