"""Copy retries in Judging.ask and the run's judge health (summary, terminal, Markdown, HTML)."""

from __future__ import annotations

import io
import json

import pytest

from localeval.errors import JudgeCallError
from localeval.metrics import Judging, get_metric
from localeval.report import judge_health, write_html_report, write_markdown_report
from localeval.report.markdown import summary_table
from localeval.testing import ScriptedJudge
from localeval.types import Sample, Score

SAMPLE = Sample(id="s1", question="How many days of leave do employees get?",
                contexts=["Employees get 25 days of paid leave."], answer="Employees get 25 days.",
                reference="25 days.")
COPY = {"reason": "The context states that Paris is the capital.", "verdict": 1}
OWN = {"reason": "The context gives the 25 days.", "verdict": 1}


def _prompt(req) -> str:
    return req.messages[-1]["content"]


def test_a_copied_reply_is_asked_again_without_the_example():
    judge = ScriptedJudge({"context_utilization": lambda r: COPY if "Example" in _prompt(r) else OWN})
    ctx = Judging(judge=judge)
    score = get_metric("context_utilization")().score(SAMPLE, ctx)
    assert score.value == 1.0
    first, second = judge.calls("context_utilization")
    assert "Example" in _prompt(first) and "Example" not in _prompt(second)
    assert "Employees get 25 days of paid leave." in _prompt(second)
    assert (ctx.usage.copied_calls, ctx.usage.copy_failures, ctx.usage.calls) == (1, 0, 2)


def test_a_judge_that_copies_without_the_example_too_leaves_the_metric_unscored():
    judge = ScriptedJudge({"context_utilization": COPY})
    ctx = Judging(judge=judge)
    with pytest.raises(JudgeCallError, match="judge copied the prompt's example"):
        get_metric("context_utilization")().score(SAMPLE, ctx)
    assert (ctx.usage.copied_calls, ctx.usage.copy_failures) == (1, 1)
    # the failure is memoised for the sample: asking again sends nothing
    with pytest.raises(JudgeCallError):
        get_metric("context_utilization")().score(SAMPLE, ctx)
    assert len(judge.calls()) == 2


def test_an_honest_judge_is_asked_once():
    judge = ScriptedJudge({"context_utilization": OWN})
    ctx = Judging(judge=judge)
    assert get_metric("context_utilization")().score(SAMPLE, ctx).value == 1.0
    assert len(judge.calls()) == 1 and ctx.usage.copied_calls == 0


def _samples(n: int, same: bool = False) -> list[Sample]:
    return [Sample(id=f"s{i}", question="q" if same else f"question {i}", answer="a", contexts=["c"])
            for i in range(n)]


def test_health_flags_copying_a_constant_metric_and_unscored_scores():
    samples = _samples(10)
    scores = [{"faithfulness": Score(0.5), "context_recall": Score(None, "judge output truncated")}
              for _ in samples]
    h = judge_health(["faithfulness", "context_recall"], samples, scores,
                     {"calls": 40, "copied_calls": 39, "copy_failures": 3})
    assert h["copy_rate"] == pytest.approx(0.975)
    assert h["constant_metrics"] == [{"metric": "faithfulness", "value": 0.5, "share": 1.0, "n": 10}]
    assert h["unscored_rate"] == 0.5 and h["unscored_by_reason"] == {"judge output truncated": 10}
    assert not h["ok"]
    text = " ".join(h["warnings"])
    assert "copied the prompt examples in 98% of calls" in text and "not evidence" in text
    assert "faithfulness is 0.5 on 100% of 10 samples" in text
    assert "50% of judge scores are unscored" in text


def test_health_is_quiet_for_a_judge_that_varies_and_does_not_copy():
    samples = _samples(10)
    scores = [{"faithfulness": Score(i / 10)} for i in range(10)]
    h = judge_health(["faithfulness"], samples, scores, {"calls": 20, "copied_calls": 0},
                     {"verdict": "fit", "metrics": {}})
    assert h["ok"] and h["warnings"] == [] and "self_test" not in h and "judge_check" not in h


def test_identical_samples_scored_alike_are_not_a_constant_metric():
    samples = _samples(10, same=True)
    h = judge_health(["faithfulness"], samples, [{"faithfulness": Score(1.0)}] * 10, {"calls": 10})
    assert h["constant_metrics"] == []


def test_a_failed_judge_check_is_a_warning():
    st = {"verdict": "unfit", "metrics": {"faithfulness": {"passed": 3, "pairs": 10}}}
    h = judge_health(["faithfulness"], _samples(2), [{"faithfulness": Score(1.0)}] * 2, {"calls": 4}, st)
    assert h["warnings"] == ["judge check: unfit: it ordered known good/bad pairs right only "
                             "faithfulness 3/10 times; its scores are not evidence"]


def _summary(h):
    return {"metrics": {"faithfulness": {"mean": 0.5, "ci95": [0.5, 0.5], "n": 10, "unscored": 0}},
            "n_samples": 10, "signature_line": "judge:x|v:0", "usage": {"calls": 40},
            "judge_health": h}


def test_banner_in_terminal_markdown_and_html(tmp_path):
    from rich.console import Console

    samples = _samples(10)
    h = judge_health(["faithfulness"], samples, [{"faithfulness": Score(0.5)} for _ in samples],
                     {"calls": 40, "copied_calls": 39})
    summary = _summary(h)
    buf = io.StringIO()
    Console(file=buf, width=100).print(summary_table(summary))
    assert "judge health: these scores are doubtful" in buf.getvalue()
    md = write_markdown_report(tmp_path, summary).read_text()
    assert "**Judge health: these scores are doubtful.**" in md and "98% of calls" in md
    records = [{"id": s.id, "scores": {"faithfulness": 0.5}, "errors": {}, "details": {}}
               for s in samples]
    html = write_html_report(tmp_path, summary, records, [s.to_dict() for s in samples]).read_text()
    assert 'class="banner warn health"' in html and "98% of calls" in html


def test_a_healthy_run_prints_one_health_line(tmp_path):
    from rich.console import Console

    samples = _samples(10)
    h = judge_health(["faithfulness"], samples, [{"faithfulness": Score(i / 10)} for i in range(10)],
                     {"calls": 20})
    buf = io.StringIO()
    Console(file=buf, width=120).print(summary_table(_summary(h)))
    assert "Judge health: no copied examples" in buf.getvalue()
    assert "Judge health: no copied examples" in write_markdown_report(tmp_path, _summary(h)).read_text()
    json.dumps(h, allow_nan=False)  # strict JSON


def _relevancy(picked: list[int], total: int) -> Score:
    return Score(len(picked) / total, details={"context_sentences": total, "selected": picked})


def test_a_judge_that_always_selects_one_sentence_is_caught():
    # SmolLM2 picks one sentence whatever the contexts hold: each score is 1/n, so
    # the scores vary and the constant check alone would pass it.
    samples = _samples(10)
    scores = [{"context_relevancy": _relevancy([1], n)} for n in range(2, 12)]
    h = judge_health(["context_relevancy"], samples, scores, {"calls": 10})
    assert h["constant_metrics"] == []
    assert h["fixed_choices"] == [{"metric": "context_relevancy", "choice": "selected", "value": 1,
                                   "share": 1.0, "n": 10}]
    assert "selected 1 item(s) on 100% of 10 samples" in " ".join(h["warnings"])


def test_selections_that_follow_the_contexts_are_not_flagged():
    samples = _samples(10)
    scores = [{"context_relevancy": _relevancy(list(range(1, 1 + n // 2)), n)} for n in range(2, 12)]
    assert judge_health(["context_relevancy"], samples, scores, {"calls": 10})["fixed_choices"] == []
    # one sentence of one, every time, is no evidence of a fixed choice
    same = [{"context_relevancy": _relevancy([1], 1)} for _ in range(10)]
    assert judge_health(["context_relevancy"], samples, same, {"calls": 10})["fixed_choices"] == []


def _relevance(flags: list[int], value: float) -> Score:
    return Score(value, details={"generated": [{"question": f"q{i}", "noncommittal": f}
                                               for i, f in enumerate(flags)]})


def test_a_noncommittal_flag_on_nearly_every_answer_is_caught():
    samples = _samples(10)
    scores = [{"answer_relevancy": _relevance([1, 0, 0], 0.0 if i % 3 else 0.4)} for i in range(10)]
    h = judge_health(["answer_relevancy"], samples, scores, {"calls": 10})
    assert [c["choice"] for c in h["fixed_choices"]] == ["generated"]
    assert "called the answer noncommittal on 100% of 10 samples" in " ".join(h["warnings"])
    honest = [{"answer_relevancy": _relevance([int(i == 3)] * 3, i / 10)} for i in range(10)]
    assert judge_health(["answer_relevancy"], samples, honest, {"calls": 10})["ok"]


def test_failed_calls_count_in_the_run_usage_with_their_tokens():
    from localeval.judge import Usage

    cut = JudgeCallError("judge output truncated at 512 tokens")
    cut.usage = Usage(calls=1, generated_tokens=512)  # what a judge attaches to its errors
    judge = ScriptedJudge({"context_utilization": cut})
    ctx = Judging(judge=judge)
    with pytest.raises(JudgeCallError, match="truncated"):
        get_metric("context_utilization")().score(SAMPLE, ctx)
    assert (ctx.usage.calls, ctx.usage.generated_tokens) == (1, 512)
    bare = Judging(judge=ScriptedJudge({"context_utilization": JudgeCallError("server said no")}))
    with pytest.raises(JudgeCallError):
        get_metric("context_utilization")().score(SAMPLE, bare)
    assert bare.usage.calls == 1  # an error without usage is still one call
