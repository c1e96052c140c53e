"""Empty inputs are decided without the judge; nothing extracted from a non-empty text is a
judge failure. The rules are read from docs/metrics.md's "Empty inputs" table, so the
documentation and the code cannot drift: every row is checked, and every rule in the code
must have its row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import localeval
from localeval.metrics import (
    AspectCritic,
    GEval,
    InstanceRubrics,
    Metric,
    RubricsScore,
    get_metric,
    registry,
    score_one,
)
from localeval.metrics.model_access import Judging
from localeval.report import judge_health
from localeval.testing import ScriptedJudge
from localeval.testing.metric_util import TableEmbedder
from localeval.types import Sample

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
USER_DEFINED = {
    "AspectCritic": lambda: AspectCritic(name="polite", definition="Is the answer polite?"),
    "RubricsScore": lambda: RubricsScore(name="rubric"),
    "InstanceRubrics": lambda: InstanceRubrics(name="own_rubric"),
    "GEval": lambda: GEval(name="clear", criteria="Is the answer clear?"),
}
#: Blank forms of each input: empty, white space (a newline included), invisible characters.
BLANKS = {
    "answer": ["", "  \n", "\u200b\ufeff"],
    "reference": ["", " \t\n"],
    "question": ["", "   "],
    "contexts": [[], ["", "  \n"]],
}


def doc_rows() -> list[tuple[str, str, str]]:
    """(input, metric, result) for every row of the table under "## Empty inputs"."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Empty inputs\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("input", "---"):
            continue
        rows.append((cells[0], cells[1].strip("`"), cells[2]))
    assert len(rows) >= 25, "the Empty inputs table was not found in docs/metrics.md"
    return rows


def make(name: str) -> Metric:
    return USER_DEFINED[name]() if name in USER_DEFINED else get_metric(name)()


def full_sample(**blank) -> Sample:
    """A sample with every input present and non-empty, but those given."""
    fields = dict(question="When does the cafeteria open?", answer="It opens at 8am.",
                  contexts=["The cafeteria opens at 8am.", "IT Service Desk: 4400."],
                  reference="At 8am.")
    fields.update(blank)
    return Sample(id="s", row=3, metadata={"rubrics": {"1": "bad", "5": "good"}}, **fields)


def score_without_models(metric: Metric, sample: Sample):
    """Score through the run's door (``score_one``) with a judge and an embedder that
    record every call; a call would also fail, the script being empty."""
    judge, emb = ScriptedJudge({}), TableEmbedder()
    ctx = Judging(judge=judge, embedder=emb)
    ctx.begin_sample()
    return score_one(metric, sample, ctx), judge, emb


ROWS = doc_rows()


@pytest.mark.parametrize("field, name, result", ROWS, ids=[f"{r[1]}-{r[0]}" for r in ROWS])
def test_each_row_of_the_docs_table_holds_without_a_model_call(field, name, result):
    metric = make(name)
    for blank in BLANKS[field]:
        score, judge, emb = score_without_models(metric, full_sample(**{field: blank}))
        assert judge.requests == [] and emb.calls == [], (name, field, blank)
        reason = f"the {field} {'are' if field == 'contexts' else 'is'} empty"
        if result == "unscored":
            assert score.value is None and score.reason == reason, (name, blank, score)
        else:
            assert score.value == float(result), (name, blank, score)
            assert score.details["decided_without_judge"] == reason


def test_every_rule_in_the_code_has_its_row_in_the_docs_table_in_order():
    documented: dict[str, list[tuple[str, float | None]]] = {}
    for field, name, result in ROWS:
        documented.setdefault(name, []).append(
            (field, None if result == "unscored" else float(result)))
    in_code = {n: list(c.on_empty) for n, c in registry().items() if c.on_empty}
    in_code.update({n: list(f().on_empty) for n, f in USER_DEFINED.items()})
    assert documented == in_code


def answer_metrics() -> list[Metric]:
    """Every metric that asks a model about the answer: registered and user-defined."""
    out = [c() for c in registry().values()
           if "answer" in c.requires and (c.uses_judge or c.uses_embedder is True
                                          or c.name == "answer_correctness")]
    return out + [f() for f in USER_DEFINED.values()]


@pytest.mark.parametrize("answer", ["", "  \n"], ids=["empty", "blank"])
def test_an_empty_answer_never_gets_a_positive_score_nor_a_judge_call(answer):
    metrics = answer_metrics()
    assert {"faithfulness", "answer_relevancy", "answer_correctness", "factual_correctness",
            "noise_sensitivity", "nv_answer_accuracy", "nv_response_groundedness",
            "polite"} <= {m.key for m in metrics}
    for m in metrics:
        assert any(f == "answer" for f, _ in m.on_empty), f"{m.key} has no rule for the answer"
        score, judge, emb = score_without_models(m, full_sample(answer=answer))
        assert judge.requests == [] and emb.calls == [], m.key
        assert score.value is None or (score.value == 0.0 and not m.lower_is_better), (
            m.key, score)


def test_the_first_empty_input_in_a_metrics_order_decides():
    both = full_sample(answer="", reference="")
    assert score_without_models(make("answer_correctness"), both)[0].reason == \
        "the reference is empty"
    # faithfulness: the answer first (unscored), then the contexts (0.0)
    score = score_without_models(make("faithfulness"), full_sample(answer="", contexts=[]))[0]
    assert score.value is None and score.reason == "the answer is empty"


def test_geval_decides_the_answer_only_when_its_criterion_reads_it():
    about_question = GEval(name="q_clear", criteria="Is the question clear?", fields=("question",))
    assert about_question.on_empty == ()
    judge = ScriptedJudge({"geval_steps": {"steps": ["Read it.", "Judge it.", "Score it."]},
                           "geval": {"reason": "clear", "score": 5}})
    ctx = Judging(judge=judge)
    ctx.begin_sample()
    score = score_one(about_question, full_sample(answer=""), ctx)
    assert score.value == 1.0 and judge.calls("geval")


# -- the run path: counted calls, the load-time warning, judge health ---------------------
ROWS_DATA = [{**{k: v for k, v in full_sample(answer=answer).to_dict().items() if k != "metadata"},
              "id": sid} for sid, answer in (("empty", ""), ("blank", "  \n"))]
RUN_METRICS = ["faithfulness", "answer_relevancy", "answer_correctness", "factual_correctness",
               "noise_sensitivity", "nv_answer_accuracy", "nv_response_groundedness",
               "context_utilization"]


def _run(judge, **kw):
    from localeval.testing import HashEmbedder

    seen: list[str] = []
    res = localeval.evaluate(ROWS_DATA, RUN_METRICS + [AspectCritic(name="polite",
                                                                    definition="Is it polite?")],
                             judge=judge, embedder=HashEmbedder(), cache=False, progress=False,
                             judge_check=False, on_warning=seen.append, **kw)
    return res, seen


def test_a_run_over_empty_answers_asks_the_judge_nothing_and_warns_at_load(tmp_path):
    judge = ScriptedJudge(auto=True)  # would answer anything, and give every verdict 1
    res, seen = _run(judge, out_dir=tmp_path / "out")
    assert judge.requests == [] and res.summary["usage"]["calls"] == 0
    for sc in res.scores:
        for key, s in sc.items():
            assert s.value is None or s.value == 0.0, (key, s)
    note = "2 of 2 rows have an empty answer (rows 1, 2)"
    assert any(w.startswith(note) for w in seen), seen
    assert any(n.startswith(note) for n in res.summary["notes"])
    assert note in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    health = res.summary["judge_health"]
    # input problems are not the judge's: left out of its unscored share
    assert health["decided_without_judge"] == 2 * (len(RUN_METRICS) + 1)
    assert health["unscored"] == 0 and health["warnings"] == []
    from localeval.report.health import health_line

    assert "(18 more decided without the judge: empty inputs)" in health_line(res.summary)


def test_a_run_over_empty_answers_with_the_real_tiny_judge_makes_no_call(tiny_gguf):
    res, _ = _run(str(tiny_gguf), judge_options={"n_ctx": 2048})
    assert res.summary["usage"]["calls"] == 0
    for sc in res.scores:
        for key, s in sc.items():
            assert s.value is None or s.value == 0.0, (key, s)


def test_no_warning_when_no_chosen_metric_reads_the_empty_input():
    seen: list[str] = []
    localeval.evaluate(ROWS_DATA, ["rougeL"], judge=False, embedder=False, cache=False,
                       progress=False, on_warning=seen.append)
    assert not any("empty answer" in w for w in seen)


# -- nothing extracted from a non-empty text ------------------------------------------------
def test_nothing_extracted_from_a_non_empty_answer_is_unscored_and_in_judge_health():
    data = [{"id": f"j{i}", "question": "返品はできますか。", "answer": "いいえ、返品はできません。",
             "contexts": ["購入後30日以内であれば返品できます。"], "reference": "はい、30日以内なら可能です。"}
            for i in range(2)]
    judge = ScriptedJudge({"statements": {"statements": []}}, auto=True)
    res = localeval.evaluate(data, ["faithfulness", "answer_correctness"], judge=judge,
                             embedder=False, cache=False, progress=False, judge_check=False,
                             on_warning=lambda m: None)
    for sc in res.scores:
        for key in ("faithfulness", "answer_correctness"):
            assert sc[key].value is None, key
            assert sc[key].reason == "judge extracted nothing from a non-empty answer"
    health = res.summary["judge_health"]
    assert health["extracted_nothing"] == {"texts": 2, "scores": 4, "by_source": {"answer": 2}}
    assert any(w.startswith("the judge extracted nothing from 2 non-empty text(s)")
               for w in health["warnings"])
    assert not health["ok"]


def test_judge_health_counts_extraction_failures_by_text_not_by_metric():
    from localeval.types import Score

    samples = [Sample(id="a", answer="x"), Sample(id="b", answer="y")]
    nothing = Score.unscored("judge extracted nothing from a non-empty reference",
                             extracted_nothing="reference")
    scores = [{"m1": nothing, "m2": nothing}, {"m1": Score(0.5), "m2": Score(0.5)}]
    h = judge_health(["m1", "m2"], samples, scores, {"calls": 4})
    assert h["extracted_nothing"] == {"texts": 1, "scores": 2, "by_source": {"reference": 1}}
    assert h["unscored"] == 2


def test_answer_metrics_list_is_what_the_docs_table_covers():
    names = {name for _, name, _ in ROWS}
    for m in answer_metrics():
        assert m.name in names or type(m).__name__ in names, m.key
    assert re.search(r"\| answer \| `faithfulness` \| unscored \|", DOC.read_text("utf-8"))


def test_the_load_note_names_each_empty_input_a_chosen_metric_reads():
    from localeval.metrics import empty_input_note, parse_metrics

    samples = [Sample(id=f"s{i}", question="q", answer="a", reference=" ",
                      contexts=[] if i == 0 else ["c"], row=i + 2) for i in range(12)]
    notes = empty_input_note(iter(samples), parse_metrics("context_recall,faithfulness,mrr"))
    assert notes == [
        "12 of 12 rows have an empty reference (rows 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more): "
        "context_recall score them without the judge (docs/metrics.md, 'Empty inputs')",
        "1 of 12 rows have empty contexts (rows 2): context_recall, faithfulness score them "
        "without the judge (docs/metrics.md, 'Empty inputs')"]
    # no chosen metric reads the reference: nothing said about it
    assert empty_input_note(samples, parse_metrics("faithfulness"))[0].startswith(
        "1 of 12 rows have empty contexts")
    coded = [Sample(id="x", answer="")]
    assert "(ids 'x')" in empty_input_note(coded, parse_metrics("answer_relevancy"))[0]
