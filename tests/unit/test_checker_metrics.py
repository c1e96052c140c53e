"""Faithfulness scored by a checker (``--checker``): the arithmetic, with fake checkers of
known probabilities (tests/unit/checker_fake.py): the share of sentences supported, the
best window, en/ja/zh sentences, soft verdicts, span checkers, and the steps refused."""

from __future__ import annotations

import pytest
from checker_fake import FakeChecker, FakeSpanChecker, by_claim, words_in

from localeval.judge import CheckerJudge, checker_spec, read_span_reason
from localeval.run import evaluate

CONTEXT = "The library opens at 9. It closes at 17 on weekdays."


def _run(rows, checker, metrics="faithfulness", **kw):
    return evaluate(rows, metrics, judge=CheckerJudge(checker), embedder=False,
                              cache=False, judge_check=False, progress=False, **kw)


def _row(answer, contexts=(CONTEXT,), **kw):
    return {"id": kw.pop("id", "s1"), "question": kw.pop("question", "When is it open?"),
            "answer": answer, "contexts": list(contexts), **kw}


def test_share_of_sentences_supported_hard_and_soft():
    table = {"It opens at 9.": 0.9, "It has a cafe.": 0.2, "It closes at 17.": 0.7}
    answer = "It opens at 9. It has a cafe. It closes at 17."
    hard = _run([_row(answer)], FakeChecker(by_claim(table)))
    score = hard.scores[0]["faithfulness"]
    assert score.value == pytest.approx(2 / 3)
    assert score.details["statements"] == list(table)
    assert [v["verdict"] for v in score.details["verdicts"]] == [1, 0, 1]
    assert "p_verdict_1" not in score.details["verdicts"][0]
    soft = _run([_row(answer)], FakeChecker(by_claim(table)), verdicts="soft")
    s = soft.scores[0]["faithfulness"]
    assert s.value == pytest.approx((0.9 + 0.2 + 0.7) / 3)
    # the soft verdicts estimate and label-sheet --active read
    assert [v["p_verdict_1"] for v in s.details["verdicts"]] == [0.9, 0.2, 0.7]


def test_threshold_is_inclusive_and_reason_names_probability():
    answer = "It opens at 9."
    score = _run([_row(answer)], FakeChecker(by_claim({answer: 0.5}))).scores[0]["faithfulness"]
    assert score.value == 1.0
    assert score.details["verdicts"][0]["reason"] == "P(supported) 0.50"


def test_best_window_of_a_long_context_supports():
    filler = " ".join(f"Filler sentence number {i} says nothing." for i in range(60))
    context = filler + " The museum is closed on Mondays."
    claim = "The museum is closed on Mondays."
    fake = FakeChecker(lambda doc, c: 0.93 if "closed on Mondays" in doc else 0.04,
                       window_tokens=40, max_tokens=64)
    score = _run([_row(claim, contexts=[context])], fake).scores[0]["faithfulness"]
    assert score.value == 1.0
    pairs = fake.calls[0]
    assert len(pairs) > 5  # the context was cut into windows, all in one batch
    assert all(fake.count_tokens(doc) <= 64 for doc, _ in pairs)
    assert score.details["verdicts"][0]["reason"].startswith("P(supported) 0.93, window ")
    # the same claim against windows that never hold it: unsupported
    nowhere = FakeChecker(lambda doc, c: 0.04, window_tokens=40, max_tokens=64)
    assert _run([_row(claim, contexts=[filler])], nowhere).scores[0]["faithfulness"].value == 0


def test_contexts_are_joined_so_one_window_sees_both():
    fake = FakeChecker(words_in)
    row = _row("Anna lives in Oslo.", contexts=["Anna lives", "in Oslo."])
    assert _run([row], fake).scores[0]["faithfulness"].value == 1.0
    assert fake.calls[0] == [("Anna lives\n\nin Oslo.", "Anna lives in Oslo.")]


@pytest.mark.parametrize("answer, sentences", [
    ("東京は日本の首都です。富士山は高い山です。", ["東京は日本の首都です。", "富士山は高い山です。"]),
    ("北京是中国的首都。长城很长。", ["北京是中国的首都。", "长城很长。"]),
    ("He said: \u201cIt is open.\u201d Then he left.", ["He said: \u201cIt is open.\u201d",
                                                     "Then he left."]),
])
def test_sentences_in_english_japanese_chinese(answer, sentences):
    fake = FakeChecker(by_claim({sentences[0]: 0.8}))
    score = _run([_row(answer)], fake).scores[0]["faithfulness"]
    assert score.details["statements"] == sentences
    assert score.value == pytest.approx(1 / len(sentences))


def test_other_judged_metrics_are_refused_by_name():
    res = _run([_row("It opens at 9.", reference="It opens at 9.")], FakeChecker(words_in),
               metrics="faithfulness,context_recall")
    assert res.scores[0]["faithfulness"].value == 1.0
    recall = res.scores[0]["context_recall"]
    assert recall.value is None
    assert "scores only faithfulness" in recall.reason and "context_recall" in recall.reason


def test_span_checker_marks_the_sentence_holding_the_span():
    answer = "It opens at 9. It was built in 1850. It closes at 17."
    fake = FakeSpanChecker({"1850": 0.88})
    score = _run([_row(answer, question="When?")], fake,
                 verdicts="soft").scores[0]["faithfulness"]
    probs = [v["p_verdict_1"] for v in score.details["verdicts"]]
    assert probs == [1.0, pytest.approx(0.12), 1.0]
    assert score.value == pytest.approx((1 + 0.12 + 1) / 3)
    assert read_span_reason(score.details["verdicts"][1]["reason"]) == [("1850", 0.88)]
    assert score.details["verdicts"][0]["reason"] == "no unsupported span"
    # the whole answer is read once, with the question and the contexts
    assert fake.span_calls == [([CONTEXT], "When?", answer)]


def test_judge_signature_names_the_checker():
    fake = FakeChecker(words_in, name="minicheck-x")
    judge = CheckerJudge(fake)
    assert judge.name == "checker:minicheck-x"
    other = CheckerJudge(FakeChecker(words_in, name="minicheck-x", window_tokens=200))
    assert judge.fingerprint != other.fingerprint  # the checker's fingerprint is in it
    res = _run([_row("It opens at 9.")], fake)
    assert res.summary["signature"]["judge"] == "checker:minicheck-x"
    assert res.summary["signature_line"].startswith("judge:checker:minicheck-x@")
    assert checker_spec("models/x") == "checker:models/x" == checker_spec("checker:models/x")


def test_reason_modes_none_and_short():
    answer = "It was built in 1850 by a famous architect from the northern provinces."
    fake = FakeSpanChecker({"built in 1850 by a famous architect from the northern": 0.9})
    none = _run([_row(answer)], fake, reasons="none").scores[0]["faithfulness"]
    assert none.value == 0.0 and "reason" not in none.details["verdicts"][0]
    short = _run([_row(answer)], fake, reasons="short").scores[0]["faithfulness"]
    reason = short.details["verdicts"][0]["reason"]
    assert 0 < len(reason) <= 60 and reason.startswith("unsupported: ")
    assert read_span_reason(reason) == []  # cut before the span ended: nothing to mark
