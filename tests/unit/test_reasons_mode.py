"""``--reasons full|short|none``: verdicts with or without the judge's reasons.

Each judged binary metric is scored in every mode with the same verdicts (a
scripted judge that answers what the request's schema allows): the scores must
be equal, and the requests of ``none`` must carry no reason field, a prompt that
asks for the verdict only and an example without reasons. The cache and the
signature keep the modes apart.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import localeval
from localeval.cache import Cache
from localeval.config import RunConfig, configure, reset, run_config
from localeval.errors import UsageError
from localeval.judge import CachedJudge
from localeval.metrics import Judging, get_metric
from localeval.metrics.criteria import AspectCritic
from localeval.metrics.schemas import SHORT_REASON_CHARS
from localeval.report import signature, signature_line
from localeval.testing import HashEmbedder
from localeval.testing.scripted import ScriptedJudge
from localeval.types import Sample
from localeval.versions import signature_notes

SAMPLE = Sample(
    id="s1", question="Who directed Oppenheimer and who played the lead?",
    answer="Christopher Nolan directed Oppenheimer. Cillian Murphy played Oppenheimer. "
           "It was released in 2022.",
    contexts=["Oppenheimer is a 2023 film written and directed by Christopher Nolan.",
              "Cillian Murphy stars as J. Robert Oppenheimer.",
              "The film grossed almost one billion dollars."],
    reference="Christopher Nolan directed Oppenheimer. Cillian Murphy played the title role. "
              "It premiered in Paris.")
ANSWER = ["Nolan directed Oppenheimer.", "Murphy played Oppenheimer.",
          "Oppenheimer was released in 2022."]
REFERENCE = ["Nolan directed Oppenheimer.", "Murphy played the title role.",
             "Oppenheimer premiered in Paris."]
#: Steps whose items carry a reason in full mode.
VERDICT_STEPS = {"faithfulness_verdicts", "noise_verdicts", "claim_verdicts", "context_recall",
                 "context_precision", "context_utilization", "answer_correctness",
                 "aspect_critic"}


def _bit(req: Any, i: int) -> int:
    """A verdict fixed by what is judged (step, inputs, position), not by the mode."""
    inputs = {k: v for k, v in req.inputs.items()}
    key = json.dumps([req.step, inputs, i, req.seed], sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).digest()[0] % 2


def _has_reason(req: Any) -> bool:
    return "reason" in json.dumps(req.schema.model_json_schema())


def answer(req: Any) -> dict[str, Any]:
    """A reply the request's schema accepts: the same verdicts, a reason only where allowed."""
    if req.step in ("statements", "claims"):
        return {"statements": ANSWER if req.inputs["target"] == "answer" else REFERENCE}
    props = req.schema.model_json_schema()["properties"]

    def item(i: int) -> dict[str, Any]:
        return {**({"reason": f"why {i}"} if _has_reason(req) else {}), "verdict": _bit(req, i)}

    if "verdicts" in props:
        return {"verdicts": [item(i) for i in range(props["verdicts"]["minItems"])]}
    if "answer" in props:
        return {"answer": [item(i) for i in range(props["answer"]["minItems"])],
                "reference": [item(100 + i) for i in range(props["reference"]["minItems"])]}
    return item(0)


def scripted() -> ScriptedJudge:
    return ScriptedJudge({s: answer for s in VERDICT_STEPS | {"statements", "claims"}})


METRICS = [
    "faithfulness", "context_precision", "context_utilization", "context_recall",
    "answer_correctness", "noise_sensitivity", "noise_sensitivity:mode=irrelevant",
    "factual_correctness", "factual_correctness:mode=precision",
    "factual_correctness:atomicity=high,coverage=high",
]
CRITICS = [AspectCritic(name="polite", definition="Is the answer polite?"),
           AspectCritic(name="polite3", definition="Is the answer polite?", strictness=3)]


def _metric(spec: Any) -> Any:
    if not isinstance(spec, str):
        return spec
    from localeval.metrics import parse_metrics

    return parse_metrics(spec)[0]


def _score(spec: Any, reasons: str, verdicts: str = "hard") -> tuple[Any, ScriptedJudge]:
    judge = scripted()
    ctx = Judging(judge=judge, embedder=HashEmbedder(), reasons=reasons, verdicts=verdicts,
                  copy_check=False)
    ctx.begin_sample()
    return _metric(spec).score(SAMPLE, ctx), judge


def _strip(details: Any) -> Any:
    """``details`` without the judge's reasons, at any depth."""
    if isinstance(details, dict):
        return {k: _strip(v) for k, v in details.items() if k != "reason"}
    if isinstance(details, list):
        return [_strip(v) for v in details]
    return details


def _rows(details: Any) -> list[dict[str, Any]]:
    """Every dict in the details that holds a verdict (or a TP/FP/FN statement)."""
    if isinstance(details, dict):
        own = [details] if "verdict" in details or "statement" in details else []
        return own + [r for v in details.values() for r in _rows(v)]
    if isinstance(details, list):
        return [r for v in details for r in _rows(v)]
    return []


@pytest.mark.parametrize("verdicts", ["hard", "soft"])
@pytest.mark.parametrize("spec", METRICS + CRITICS, ids=lambda m: str(getattr(m, "name", m)))
def test_each_metric_scores_the_same_verdicts_the_same_in_every_mode(spec, verdicts):
    full, full_judge = _score(spec, "full", verdicts)
    assert full.scored
    for mode in ("short", "none"):
        got, judge = _score(spec, mode, verdicts)
        assert got.value == pytest.approx(full.value), mode
        assert [r.step for r in judge.requests] == [r.step for r in full_judge.requests]
    # full mode's details keep their reasons; none mode's have none, and nothing else changed
    none, none_judge = _score(spec, "none", verdicts)
    full_rows, none_rows = _rows(full.details), _rows(none.details)
    assert any("reason" in r for r in full_rows)
    assert none_rows and not any("reason" in r for r in none_rows)
    assert none.details == _strip(full.details)
    for req in none_judge.requests:
        task = req.messages[-1]["content"]
        if req.step in VERDICT_STEPS:
            assert not _has_reason(req), req.step
            assert "only, with no reason" in task and '"reason"' not in task
            assert '"verdict": 1' in task or req.step == "answer_correctness"  # the example
        else:  # extraction is asked exactly as in full mode
            twin = next(r for r in full_judge.requests if r.step == req.step
                        and r.inputs == req.inputs)
            assert (twin.messages, twin.schema) == (req.messages, req.schema)


def test_the_metrics_that_take_the_setting_say_so():
    from localeval.metrics import registry

    marked = {n for n, cls in registry().items() if cls.gives_reasons}
    assert marked == {"faithfulness", "context_precision", "context_utilization",
                      "context_recall", "answer_correctness", "noise_sensitivity",
                      "factual_correctness", "agent_goal_accuracy",
                      "agent_goal_accuracy_without_reference", "topic_adherence",
                      "conversation_completeness", "turn_relevancy", "knowledge_retention"}
    assert all(_metric(m).gives_reasons for m in METRICS) and all(c.gives_reasons for c in CRITICS)


def test_soft_verdicts_without_reasons_are_read_at_the_verdict():
    score, judge = _score("faithfulness", "none", "soft")
    req = judge.calls("faithfulness_verdicts")[0]
    assert req.prob_field == "verdict"
    assert [set(r) for r in score.details["verdicts"]] == [
        {"statement", "verdict", "p_verdict_1"}] * 3


def test_short_reasons_are_capped_by_the_schema():
    _, judge = _score("faithfulness", "short")
    req = judge.calls("faithfulness_verdicts")[0]
    schema = req.schema.model_json_schema()
    item = schema["$defs"][schema["properties"]["verdicts"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert item["properties"]["reason"]["maxLength"] <= SHORT_REASON_CHARS
    assert "a reason of a few words" in req.messages[-1]["content"]
    _, full = _score("faithfulness", "full")
    assert "Give a short reason first" in full.calls("faithfulness_verdicts")[0].messages[-1][
        "content"]


@pytest.mark.parametrize("lang, sample", [
    ("ja", Sample(id="j", question="有給休暇は何日ですか。", contexts=["年間20日の有給休暇がある。"],
                  answer="20日です。", reference="20日です。")),
    ("zh", Sample(id="z", question="年假有几天？", contexts=["每年享有十五天带薪年假。"],
                  answer="十五天。", reference="十五天。"))])
def test_the_example_loses_its_reasons_in_every_language(lang, sample):
    from localeval.prompts import render

    for step in ("faithfulness_verdicts", "context_precision", "answer_correctness",
                 "context_recall", "aspect_critic"):
        inputs = dict(statements=["a"], k=1, answer_statements=["a"], reference_statements=["b"],
                      sentences=["s"], definition="d")
        full, _ = render(step, sample, lang=lang, **inputs)
        none, _ = render(step, sample, lang=lang, reasons="none", **inputs)
        assert '"reason"' in full[-1]["content"] and '"reason"' not in none[-1]["content"]
        assert '"verdict": 0' in none[-1]["content"] or '"verdict": 1' in none[-1]["content"]


def test_a_none_run_after_a_full_run_asks_the_judge_again(tmp_path):
    cache = Cache(tmp_path / "c.sqlite")
    inner = scripted()
    judge = CachedJudge(inner, cache)
    metric = get_metric("faithfulness")()

    def score(reasons: str) -> float | None:
        ctx = Judging(judge=judge, reasons=reasons, copy_check=False)
        ctx.begin_sample()
        return metric.score(SAMPLE, ctx).value

    full = score("full")
    assert inner.steps() == ["statements", "faithfulness_verdicts"]
    assert score("none") == full
    # the statements are the same request (a hit); the verdicts are asked anew
    assert inner.steps() == ["statements", "faithfulness_verdicts", "faithfulness_verdicts"]
    score("none")
    score("full")
    assert len(inner.steps()) == 3  # each mode's verdicts now come from the cache


DATA = [{"id": "a", "question": "Q1?", "answer": "A1. A2.", "contexts": ["c"],
         "reference": "A1."}]


def test_the_mode_is_in_the_signature_and_its_line():
    runs = {mode: localeval.evaluate(DATA, ["faithfulness"], judge=ScriptedJudge(auto=True),
                                     cache=False, judge_check=False, reasons=mode,
                                     progress=False)
            for mode in ("full", "none")}
    full, none = (runs[m].summary for m in ("full", "none"))
    assert (full["signature"]["reasons"], none["signature"]["reasons"]) == ("full", "none")
    assert "reasons:" not in full["signature_line"]  # the default line is as before
    assert "|reasons:none|" in none["signature_line"]
    notes, same = signature_notes(full["signature"], none["signature"])
    assert not same
    assert "the reason mode differs: base full, new none" in notes
    # a summary from before the setting records none: its judge wrote full reasons
    old = {k: v for k, v in full["signature"].items() if k != "reasons"}
    assert signature_notes(old, full["signature"]) == signature_notes(full["signature"],
                                                                      full["signature"])
    assert signature_notes(old, none["signature"])[1] is False
    # a metric that uses no judge does not compare it
    assert signature_notes(full["signature"], none["signature"], judged=False)[1]


def test_the_signature_line_names_short_reasons():
    sig = signature(version="x", reasons="short")
    assert "|reasons:short|" in signature_line(sig)


def test_the_setting_is_read_like_the_others(monkeypatch):
    assert RunConfig().reasons == "full"
    monkeypatch.setenv("LOCALEVAL_REASONS", "none")
    assert run_config().reasons == "none"
    assert run_config(reasons="short").reasons == "short"
    try:
        configure(reasons="short")
        assert run_config().reasons == "short"
        with pytest.raises(UsageError, match="reasons must be one of full, short, none"):
            configure(reasons="brief")
        assert run_config().reasons == "short"  # a refused value is not kept
    finally:
        reset()
    monkeypatch.setenv("LOCALEVAL_REASONS", "some")
    with pytest.raises(UsageError, match="not 'some'"):
        run_config()


def test_the_command_line_takes_reasons(tmp_path, capsys):
    from localeval.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(["run", "x.jsonl", "--reasons", "brief"])
    assert e.value.code == 2
    assert "--reasons" in capsys.readouterr().err


def test_the_report_says_the_judge_gave_no_reasons(tmp_path):
    from localeval.report.view import NO_REASONS, build_view

    res = {mode: localeval.evaluate(DATA, ["faithfulness"], judge=ScriptedJudge(auto=True),
                                    cache=False, judge_check=False, reasons=mode,
                                    progress=False, out_dir=tmp_path / mode)
           for mode in ("full", "none")}
    for mode, r in res.items():
        page = (tmp_path / mode / "report.html").read_text()
        assert (NO_REASONS in page) == (mode == "none")
        records = [json.loads(x) for x in (tmp_path / mode / "results.jsonl").read_text()
                   .splitlines()]
        view = build_view(r.summary, records, [dict(d) for d in DATA])
        notes = [row["reasons_note"] for s in view["samples"] for row in s["rows"]]
        assert notes == ([NO_REASONS] if mode == "none" else [None])


# -- reasons on demand: localeval explain ----------------------------------------------------
ROWS = [{"id": f"r{i}", "question": f"Q{i}?", "answer": f"A{i}. B{i}.", "contexts": [f"c{i}"],
         "reference": f"A{i}."} for i in range(4)]


def _bad_for(bad: set[str]) -> ScriptedJudge:
    """Verdict 0 for the samples in ``bad`` (by their answer), 1 elsewhere; reasons when asked."""
    def verdicts(req: Any) -> dict[str, Any]:
        v = 0 if any(f"A{b[1:]}." in req.messages[-1]["content"] for b in bad) else 1
        n = req.schema.model_json_schema()["properties"]["verdicts"]["minItems"]
        return {"verdicts": [{**({"reason": f"because {i}"} if _has_reason(req) else {}),
                              "verdict": v} for i in range(n)]}
    return ScriptedJudge({"statements": {"statements": ["one", "two"]},
                          "faithfulness_verdicts": verdicts})


def test_explain_asks_the_reasons_of_the_worst_samples(tmp_path):
    from localeval.report import EXPLAIN_FILE, read_explained
    from localeval.run import explain

    run_dir = tmp_path / "run"
    localeval.evaluate(ROWS, ["faithfulness", "rougeL"], judge=_bad_for({"r2"}), cache=False,
                       judge_check=False, reasons="none", progress=False, out_dir=run_dir)
    told: list[str] = []
    judge = _bad_for({"r2"})
    out = explain(run_dir, ROWS, worst=1, judge=judge, cache=False, on_info=told.append)
    assert out == run_dir / EXPLAIN_FILE
    # only the worst sample is asked again, with full reasons
    assert {r.step for r in judge.requests} == {"statements", "faithfulness_verdicts"}
    assert all(_has_reason(r) for r in judge.calls("faithfulness_verdicts"))
    got = read_explained(run_dir)
    assert list(got) == ["r2"] and list(got["r2"]) == ["faithfulness"]  # rougeL gives none
    entry = got["r2"]["faithfulness"]
    assert entry["score"] == entry["run_score"] == 0.0
    assert [v["reason"] for v in entry["details"]["verdicts"]] == ["because 0", "because 1"]
    assert any("r2" in t for t in told)
    page = (run_dir / "report.html").read_text()
    assert "because 0" in page and "reasons asked afterwards (localeval explain)" in page
    # the page keeps saying the run's own verdicts came without reasons
    assert "the judge gave no reasons (--reasons none)" in page


def test_explain_says_when_the_reasoned_verdict_differs(tmp_path):
    from localeval.run import explain

    run_dir = tmp_path / "run"
    localeval.evaluate(ROWS, ["faithfulness"], judge=_bad_for(set()), cache=False,
                       judge_check=False, reasons="none", progress=False, out_dir=run_dir)
    explain(run_dir, ROWS, ids=["r1"], judge=_bad_for({"r1"}), cache=False)
    page = (run_dir / "report.html").read_text()
    assert "that call scored 0.000, the run 1.000" in page


def test_explain_refuses_other_data_and_unknown_ids(tmp_path):
    from localeval.errors import DataError
    from localeval.run import explain

    run_dir = tmp_path / "run"
    localeval.evaluate(ROWS, ["faithfulness"], judge=_bad_for(set()), cache=False,
                       judge_check=False, reasons="none", progress=False, out_dir=run_dir)
    with pytest.raises(UsageError, match="no sample 'zz'"):
        explain(run_dir, ROWS, ids=["zz"], judge=_bad_for(set()), cache=False)
    changed = [dict(r, answer="Something else.") if r["id"] == "r0" else r for r in ROWS]
    with pytest.raises(DataError, match="sample 'r0' differs from the one the run scored"):
        explain(run_dir, changed, ids=["r0"], judge=_bad_for(set()), cache=False)


def test_explain_on_the_command_line(tmp_path, capsys):
    from localeval.cli.app import main

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    code = main(["explain", str(tmp_path / "nothing"), "--data", str(data), "--judge", "x"])
    assert code == 2
    assert "not found" in capsys.readouterr().err


def test_the_bench_scores_contrast_pairs(tmp_path, monkeypatch):
    """scripts/bench_reasons.py --labelled: complete pairs only; ties and gaps count half."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import bench_reasons

    rows = [{"id": f"{p}{lab}", "question": "q", "contexts": ["c"], "answer": "a",
             "reference": None, "label_metric": "faithfulness", "label": lab, "pair_id": p}
            for p in ("p", "q", "r") for lab in (1, 0)]
    rows.append({**rows[0], "id": "lonely", "pair_id": "s"})  # half a pair: left out
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = bench_reasons.labelled_pairs(str(path), "faithfulness", 10)
    assert [r["pair_id"] for r in got] == ["p", "p", "q", "q", "r", "r"]
    scores = {"p1": 1.0, "p0": 0.0, "q1": 0.5, "q0": 0.5, "r1": None, "r0": 1.0}
    assert bench_reasons.pairwise_accuracy(got, scores) == pytest.approx((1 + 0.5 + 0.5) / 3, abs=1e-4)
    assert bench_reasons.pairwise_accuracy(got, {"p1": 0.0, "p0": 1.0}) == pytest.approx(1 / 3, abs=1e-4)
