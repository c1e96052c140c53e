"""Example-copy detection: a judge output that reproduces the prompt's few-shot example."""

from __future__ import annotations

import pytest

from localeval.prompts import find_copies, render
from localeval.types import Sample

LEAVE = Sample(id="x", question="How many days of leave do employees get?",
               contexts=["Employees get 25 days of paid leave.",
                         "Leave requests go to the PeopleDesk portal."],
               answer="25 days.", reference="Employees get 25 days.")
EINSTEIN = Sample(id="e", question="Who was Einstein?",
                  contexts=["Albert Einstein was a German-born physicist."],
                  answer="Albert Einstein was a German-born physicist. He won the 1921 Nobel Prize "
                         "in Physics.", reference="A physicist.")
LEAVE_JA = Sample(id="j", question="有給休暇は何日ですか。", contexts=["正社員には年間20日の有給休暇が付与される。"],
                  answer="20日です。", reference="20日です。")
LEAVE_ZH = Sample(id="z", question="年假有几天？", contexts=["正式员工每年享有十五天带薪年假。"],
                  answer="十五天。", reference="十五天。")


@pytest.mark.parametrize("text", [
    "Albert Einstein was a German-born physicist.",          # exact
    "Albert Einstein was a German born physicist",           # near-exact
    "Albert Einstein won the 1921 Nobel Prize.",             # borrowed names and numbers
])
def test_copied_statements_are_found(text):
    assert find_copies({"statements": [text, "Employees get 25 days."]}, "statements", LEAVE,
                       lang="en", target="answer") == [text]


def test_a_sample_about_the_example_subject_is_not_a_copy():
    out = {"statements": ["Albert Einstein was a German-born physicist.",
                          "Albert Einstein won the 1921 Nobel Prize in Physics."]}
    assert find_copies(out, "statements", EINSTEIN, lang="en", target="answer") == []


@pytest.mark.parametrize("reason, copied", [
    ("The context states that Paris is the capital of France.", True),
    ("The context states that Paris is the capital.", True),
    ("The context states that employees get 25 days of leave.", False),
    ("The context does not mention the PeopleDesk portal price.", False),
])
def test_copied_reasons_in_english(reason, copied):
    got = find_copies({"reason": reason, "verdict": 1}, "context_precision", LEAVE, lang="en", k=1)
    assert got == ([reason] if copied else [])


@pytest.mark.parametrize("sample, lang, reason, copied", [
    (LEAVE_JA, "ja", "文脈はパリが首都だと述べている。", True),
    (LEAVE_JA, "ja", "文脈は有給休暇について述べている。", False),
    (LEAVE_ZH, "zh", "上下文说明巴黎是首都。", True),
    (LEAVE_ZH, "zh", "上下文说明员工有十五天年假。", False),
])
def test_copied_reasons_in_japanese_and_chinese(sample, lang, reason, copied):
    got = find_copies({"reason": reason, "verdict": 1}, "context_precision", sample, lang=lang, k=1)
    assert got == ([reason] if copied else [])


def test_example_entities_are_copies_only_when_absent_from_the_sample():
    out = {"entities": ["Paris", "Eiffel Tower", "25 days"]}
    assert find_copies(out, "entities", LEAVE, lang="en", target="reference") == ["Paris", "Eiffel Tower"]


def test_the_example_free_prompt_has_no_example_but_the_same_sample_and_task():
    with_ex = render("faithfulness_verdicts", LEAVE, lang="en", statements=["25 days."])[0][1]["content"]
    without = render("faithfulness_verdicts", LEAVE, lang="en", examples=False,
                     statements=["25 days."])[0][1]["content"]
    assert "John studies computer science" in with_ex and "John" not in without
    assert "Employees get 25 days of paid leave." in without and "1. 25 days." in without
    assert len(without) < len(with_ex)
