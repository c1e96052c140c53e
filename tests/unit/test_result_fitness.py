"""The Python result and the ragas drop-in's result carry the judge's fitness where the numbers
are shown: ``repr`` / ``print``, ``to_pandas()`` and ``scores`` mark each judged number of a
judge that failed its judge check ("judge unfit"), and nothing else: ROUGE and hit rate never
get a marker, and a judge that passed its check leaves every view as it was. The numbers stay
plain floats, and the warning stays."""

from __future__ import annotations

import math
import pickle

import pytest

import localeval
from localeval.config import reset
from localeval.ragas import evaluate as ragas_evaluate
from localeval.ragas import metrics as rm
from localeval.report.judged import judge_unfit, judged_keys
from localeval.run import EvaluationResult
from localeval.testing import OracleJudge, RandomJudge
from localeval.types import Score

ROWS = [
    {"id": "a", "question": "When does the museum open?", "answer": "The museum opens at 9.",
     "contexts": ["The museum opens at 9 and closes at 17."], "reference": "It opens at 9.",
     "retrieved_ids": ["d1", "d2"], "relevant_ids": ["d1"]},
    {"id": "b", "question": "When does the museum open?", "answer": "The museum opens at 6.",
     "contexts": ["The museum opens at 9 and closes at 17."], "reference": "It opens at 9.",
     "retrieved_ids": ["d3"], "relevant_ids": ["d1"]},
]
METRICS = ["faithfulness", "rougeL", "hit_rate"]
UNFIT = "judge unfit"


@pytest.fixture(autouse=True)
def _fresh_config(monkeypatch):
    monkeypatch.delenv("LOCALEVAL_JUDGE_CHECK", raising=False)
    reset()
    yield
    reset()


def _run(judge, warned=None, **kw):
    return localeval.evaluate(ROWS, METRICS, judge=judge, cache=False, progress=False,
                              judge_check=True, on_warning=(warned if warned is not None
                                                            else []).append, **kw)


@pytest.fixture(scope="module")
def unfit():
    reset()
    warned: list[str] = []
    res = _run(RandomJudge(1), warned)
    assert res.summary["judge_check"]["verdict"] == "unfit"
    return res, warned


def _plain_repr(res) -> str:
    """What the repr was before: ragas's dict of rounded means."""
    return "{" + ", ".join(f"'{k}': {'nan' if v is None else round(v, 4)}"
                           for k, v in res.means().items()) + "}"


def test_repr_marks_the_judged_mean_and_names_the_check(unfit):
    res, warned = unfit
    text = repr(res)
    head, line = text.split("\n")
    f, r, h = res["faithfulness"], res["rougeL"], res["hit_rate"]
    assert head == (f"{{'faithfulness': {round(f, 4)} (judge unfit), 'rougeL': {round(r, 4)}, "
                    f"'hit_rate': {round(h, 4)}}}")
    assert line.startswith("  judge check: UNFIT") and line.endswith("not evidence")
    assert str(res) == text
    assert res.judge_fitness.verdict == "unfit" and res.judge_fitness.failed
    assert res.caveats == {"faithfulness": UNFIT}
    assert res.caveat("faithfulness") == UNFIT
    assert res.caveat("rougeL") is None and res.caveat("hit_rate") is None
    # the warning stays
    assert any(w.startswith("judge check: UNFIT") for w in warned)


def test_numbers_stay_plain_floats(unfit):
    res, _ = unfit
    assert type(res["faithfulness"]) is float and type(dict(res)["faithfulness"]) is float
    assert res.means() == dict(res)
    total = res["faithfulness"] + res["rougeL"]  # scripts do arithmetic with them
    assert math.isfinite(total)


def test_to_pandas_has_a_judge_check_column_for_judged_metrics_only(unfit):
    res, _ = unfit
    df = res.to_pandas()
    assert list(df["faithfulness_judge_check"]) == ["unfit", "unfit"]
    assert "rougeL_judge_check" not in df and "hit_rate_judge_check" not in df
    # the columns it had are unchanged, in order, before the new one
    before = ["id", "user_input", "retrieved_contexts", "response", "reference", *METRICS,
              *(f"{m}_reason" for m in METRICS)]
    assert list(df.columns) == before + ["faithfulness_judge_check"]
    assert list(df["faithfulness"]) == [s["faithfulness"].value for s in res.scores]
    assert df.attrs["judge_check"]["judge_check"] == "unfit"
    assert df.attrs["judge_check"]["marker"] == UNFIT


def test_scores_show_the_marker_after_judged_scores(unfit):
    res, _ = unfit
    row = res.scores[0]
    assert isinstance(row["faithfulness"], Score)
    assert row["faithfulness"].value == res.to_pandas()["faithfulness"][0]
    text = repr(row)
    assert f"{row['faithfulness']!r} (judge unfit)" in text
    assert text.count(UNFIT) == 1  # not after rougeL or hit_rate
    assert repr(res.scores).count(UNFIT) == len(ROWS)
    # still a plain dict of Scores for code that reads or copies it
    assert dict(row) == {k: row[k] for k in METRICS} and row == dict(row)
    again = pickle.loads(pickle.dumps(row))
    assert repr(again) == text and again == row
    assert [rec["scores"]["faithfulness"] for rec in res.records()] == [
        r["faithfulness"].value for r in res.scores]


def test_a_fit_judge_changes_nothing():
    warned: list[str] = []
    res = _run(OracleJudge(), warned)
    assert res.summary["judge_check"]["verdict"] == "fit"
    assert repr(res) == _plain_repr(res) and "\n" not in repr(res)
    assert res.caveats == {} and res.judge_fitness.marker is None
    assert all(type(row) is dict for row in res.scores)
    assert UNFIT not in repr(res.scores)
    df = res.to_pandas()
    assert not [c for c in df.columns if c.endswith("_judge_check")]
    assert df.attrs["judge_check"]["judge_check"] == "fit"
    assert not warned


def test_no_judge_changes_nothing():
    res = localeval.evaluate(ROWS, ["rougeL", "hit_rate"], judge=False, cache=False,
                             progress=False)
    assert repr(res) == _plain_repr(res)
    assert res.judge_fitness.verdict is None and res.caveats == {}
    df = res.to_pandas()
    assert "judge_check" not in df.attrs
    assert not [c for c in df.columns if c.endswith("_judge_check")]


def test_the_ragas_drop_in_prints_the_same_markers():
    rows = [{"user_input": r["question"], "response": r["answer"],
             "retrieved_contexts": r["contexts"], "reference": r["reference"],
             "retrieved_ids": r["retrieved_ids"], "relevant_ids": r["relevant_ids"]}
            for r in ROWS]
    with pytest.warns(UserWarning, match="judge check: UNFIT"):  # the warning stays
        res = ragas_evaluate(rows, [rm.faithfulness, rm.RougeScore(), "hit_rate"],
                             llm=RandomJudge(1), show_progress=False, cache=False,
                             judge_check=True)
    assert isinstance(res, EvaluationResult)
    head, line = repr(res).split("\n")
    rouge = "rougeL:stem=True"
    assert head == (f"{{'faithfulness': {round(res['faithfulness'], 4)} (judge unfit), "
                    f"'{rouge}': {round(res[rouge], 4)}, 'hit_rate': {round(res['hit_rate'], 4)}}}")
    assert line.startswith("  judge check: UNFIT")
    df = res.to_pandas()
    assert set(df["faithfulness_judge_check"]) == {"unfit"}
    assert f"{rouge}_judge_check" not in df and "hit_rate_judge_check" not in df
    assert repr(res.scores).count(UNFIT) == len(rows)


def test_report_reads_judged_ness_and_fitness_from_the_record(unfit):
    res, _ = unfit
    assert judged_keys(res.summary) == {"faithfulness"}
    assert judge_unfit(res.summary) == UNFIT
    # an earlier localeval's key for the check is read as today's
    old = {k: v for k, v in res.summary.items() if k != "judge_check"}
    old["judge_self_test"] = res.summary["judge_check"]
    assert judge_unfit(old) == UNFIT
    assert judged_keys({"metrics": {}}) == set()
    assert judge_unfit({"judge_check": {"verdict": "fit"}}) is None
    # a criterion the registry does not know is judged when the run had a judge
    crit = {"metrics": {"polite": {"mean": 1.0}, "bleu": {"mean": 0.5}},
            "signature": {"judge": "j.gguf"}, "judge_check": {"verdict": "doubtful"}}
    assert judged_keys(crit) == {"polite"} and judge_unfit(crit) == "judge doubtful"
    assert judged_keys({**crit, "signature": {}}) == set()
