"""Prompt rendering: the shared-prefix layout, languages, versions."""

from __future__ import annotations

import re

import jinja2
import pytest

from localeval.metrics import Judging, parse_metrics, registry, transcript
from localeval.prompts import renderer as prompting
from localeval.testing import HashEmbedder
from localeval.testing.scripted import ScriptedJudge
from localeval.types import Message, MultiTurnSample, Sample, ToolCall

EN = Sample(id="en", question="When was the first Super Bowl?",
            answer="The first Super Bowl was held on Jan 15, 1967.",
            contexts=["The First AFL-NFL World Championship Game was played on January 15, 1967.",
                      "The Green Bay Packers won it."],
            reference="The first Super Bowl was held on January 15, 1967.")
JA = Sample(id="ja", question="映画『オッペンハイマー』の監督は誰ですか？",
            answer="クリストファー・ノーランが映画『オッペンハイマー』を監督しました。",
            contexts=["『オッペンハイマー』は2023年の伝記映画で、クリストファー・ノーランが脚本・監督を務めた。"],
            reference="監督はクリストファー・ノーランです。")
ZH = Sample(id="zh", question="爱因斯坦是哪一年在哪个国家出生的？", answer="爱因斯坦于1879年出生在西班牙。",
            contexts=["爱因斯坦于1879年出生在德国乌尔姆。"], reference="爱因斯坦于1879年出生在德国。")

# a conversation as the conversation steps get it (localeval.metrics.transcript)
CONVERSATION = [{"role": "user", "content": "Book a table", "calls": []},
                {"role": "assistant", "content": "", "calls": ['book {"people": 2}']},
                {"role": "tool", "content": "booked", "calls": []},
                {"role": "assistant", "content": "Done.", "calls": []}]

# step -> the per-call inputs a metric passes
INPUTS = {
    "statements": {"target": "answer"},
    "faithfulness_verdicts": {"statements": ["s one", "s two"]},
    "noise_verdicts": {"statements": ["s one"], "source": 1},
    "answer_relevancy": {"n": 3},
    "context_precision": {"k": 1},
    "context_utilization": {"k": 1},
    "context_recall": {"sentences": ["r one", "r two"]},
    "entities": {"target": "reference"},
    "answer_correctness": {"answer_statements": ["a"], "reference_statements": ["b"]},
    "context_relevancy": {"sentences": ["c one", "c two"]},
    "claims": {"target": "answer", "atomicity": "low", "coverage": "low"},
    "claim_verdicts": {"statements": ["s one"], "source": "answer"},
    "aspect_critic": {"definition": "Is the answer polite?"},
    "rubric_score": {"rubric": [(1, "bad"), (5, "good")]},
    "geval_steps": {"criteria": "c", "fields": ["answer"], "min_steps": 3, "max_steps": 6},
    "geval": {"criteria": "c", "steps": ["s"], "low": 1, "high": 5, "fields": ["answer"]},
    **{f"nv_{m}_{i}": {} for m in ("context_relevance", "answer_accuracy",
                                   "response_groundedness") for i in (1, 2)},
    # the question-writing steps of localeval.generate.synthesize
    "synth_single_hop_specific": {"persona": "", "style": "", "avoid": []},
    "synth_multi_hop_specific": {"persona": "a nurse", "style": "misspelled", "avoid": ["q?"]},
    "synth_multi_hop_abstract": {"persona": "", "style": "web search like", "avoid": []},
    # localeval.pairwise: two answers, contexts shared (None) or one list each
    "pairwise_preference": {"answer_a": "one", "answer_b": "two", "contexts_a": None,
                            "contexts_b": None, "criterion": None},
    # the conversation steps of localeval.metrics.agents and topics
    "agent_goal_outcome": {"conversation": CONVERSATION},
    "agent_goal_compare": {"desired": "a table is booked", "arrived": "no table is booked"},
    "topic_extraction": {"conversation": CONVERSATION},
    "topic_refused": {"conversation": CONVERSATION, "topic": "booking"},
    "topic_classification": {"statements": ["booking"], "reference_topics": ["restaurants"]},
    "conversation_intentions": {"conversation": CONVERSATION},
    "conversation_completeness": {"conversation": CONVERSATION, "statements": ["book"]},
    "turn_relevancy": {"conversation": CONVERSATION},
    "knowledge_facts": {"conversation": CONVERSATION},
    "knowledge_retention": {"conversation": CONVERSATION, "statements": ["two people"]},
    # the simulated user and the scenario writers of localeval.simulate
    "simulate_user": {"goal": "book a table", "persona": "a nurse", "opening": False,
                      "conversation": CONVERSATION},
    "simulate_goal_tool": {"persona": "", "avoid": []},
    "simulate_goal_doc": {"persona": "a nurse", "avoid": ["g?"]},
}
CONVERSATION_STEPS = ["agent_goal_outcome", "topic_extraction", "topic_refused",
                      "conversation_intentions", "conversation_completeness", "turn_relevancy",
                      "knowledge_facts", "knowledge_retention", "simulate_user"]
FREE_TEXT_STEPS = ["statements", "faithfulness_verdicts", "noise_verdicts", "answer_relevancy",
                   "context_precision", "context_utilization", "context_recall",
                   "answer_correctness"]


def test_every_step_has_a_template_and_inputs_listed():
    assert set(prompting.steps()) == set(INPUTS)


@pytest.mark.parametrize("sample", [EN, JA, ZH], ids=["en", "ja", "zh"])
def test_layout_shared_system_and_sample_prefix(sample):
    lang = prompting.sample_language(sample, "auto")
    block = prompting.sample_block(sample)
    systems = set()
    for step, inputs in INPUTS.items():
        messages, version = prompting.render(step, sample, lang=lang, **inputs)
        assert [m["role"] for m in messages] == ["system", "user"]
        systems.add(messages[0]["content"])
        user = messages[1]["content"]
        if step in prompting.STANDALONE_STEPS:
            assert not user.startswith("# Sample") and sample.question not in user
            assert sample.answer in user
        else:
            assert user.startswith(block), step
            assert len(user) > len(block)
        assert re.fullmatch(r"[0-9a-f]{12}", version)
    assert systems == {prompting.system_text()}


def test_system_text_is_the_same_for_all_samples():
    a = prompting.render("statements", EN, lang="en", target="answer")[0][0]
    b = prompting.render("context_recall", JA, lang="ja", sentences=["r"])[0][0]
    assert a == b


def test_sample_block_contents_and_missing_fields():
    block = prompting.sample_block(EN)
    assert "[1] The First AFL-NFL" in block and "[2] The Green Bay" in block
    assert block.index("Question:") < block.index("Contexts:") < block.index("Answer:") \
        < block.index("Reference:")
    only_q = prompting.sample_block(Sample(id="q", question="Q?", contexts=[]))
    assert "Answer:" not in only_q and "Reference:" not in only_q and "(none)" in only_q


@pytest.mark.parametrize("sample,lang,name,marker,english_marker", [
    (JA, "ja", "Japanese", "アインシュタイン", "Albert Einstein was a German-born physicist"),
    (ZH, "zh", "Chinese", "爱因斯坦", "Albert Einstein was a German-born physicist"),
])
def test_cjk_samples_get_native_examples_and_language_instruction(sample, lang, name, marker,
                                                                  english_marker):
    assert prompting.sample_language(sample, "auto") == lang
    for step in FREE_TEXT_STEPS:
        messages, _ = prompting.render(step, sample, lang=lang, **INPUTS[step])
        task = messages[1]["content"].split("# Task", 1)[1]
        assert f"in {name}" in task, step
        assert "John" not in task and "Paris" not in task and english_marker not in task, step
    task = prompting.render("statements", sample, lang=lang, target="answer")[0][1]["content"]
    assert marker in task.split("# Task", 1)[1]


def test_english_sample_gets_english_examples():
    task = prompting.render("statements", EN, lang="en", target="answer")[0][1]["content"]
    assert "Albert Einstein was a German-born physicist" in task and "in English" in task


def test_sample_language():
    assert prompting.sample_language(JA, "en") == "en"  # configured wins
    assert prompting.sample_language(EN, "auto") == "en"
    with pytest.raises(ValueError):
        prompting.sample_language(EN, "fr")


def test_versions_stable_and_distinct():
    v = {s: prompting.render(s, EN, lang="en", **INPUTS[s])[1] for s in INPUTS}
    assert len(set(v.values())) == len(v)
    assert v["statements"] == prompting.render("statements", JA, lang="ja", target="reference")[1]


def test_render_errors():
    with pytest.raises(ValueError, match="no prompt template"):
        prompting.render("no_such_step", EN, lang="en")
    with pytest.raises(jinja2.UndefinedError):
        prompting.render("context_precision", EN, lang="en")  # k missing
    with pytest.raises(ValueError):
        prompting.render("statements", EN, lang="fr", target="answer")


def test_user_text_is_not_a_template():
    s = Sample(id="t", question="{{ 7*7 }} {% if x %}", answer="a", contexts=["c"])
    user = prompting.render("statements", s, lang="en", target="answer")[0][1]["content"]
    assert "{{ 7*7 }} {% if x %}" in user


def test_all_metrics_of_one_sample_share_the_prefix():
    """Every judge call of every metric: same system message, same sample-block prefix;
    the answer's statements are extracted once for faithfulness, answer_correctness and
    noise_sensitivity; prefix reuse shows in the usage accounting."""
    judge = ScriptedJudge(auto=True)
    ctx = Judging(judge=judge, embedder=HashEmbedder())
    metrics = [m() for m in registry().values()]
    for sample in (EN, JA):
        ctx.begin_sample()
        n0 = len(judge.requests)
        for m in metrics:
            m.score(sample, ctx)
        reqs = judge.requests[n0:]
        block = prompting.sample_block(sample)
        assert {r.messages[0]["content"] for r in reqs} == {prompting.system_text()}
        shared = [r for r in reqs if r.step not in prompting.STANDALONE_STEPS]
        assert all(r.messages[1]["content"].startswith(block) for r in shared)
        answer_extractions = [r for r in reqs if r.step == "statements"
                              and "Break the Answer" in r.messages[1]["content"]]
        assert len(answer_extractions) == 1
        assert set(ctx.prompt_versions) == {r.step for r in reqs}
    assert ctx.usage.reused_tokens > 0.5 * ctx.usage.prompt_tokens


def test_spec_string_builds_all_judge_metrics():
    ms = parse_metrics("faithfulness,answer_relevancy,context_precision,context_utilization,"
                       "context_recall,context_entity_recall,noise_sensitivity,answer_similarity,"
                       "answer_correctness,context_relevancy,nv_context_relevance,"
                       "nv_answer_accuracy,nv_response_groundedness,semantic_similarity:threshold=0.8")
    assert [m.name for m in ms][-1] == "answer_similarity"
    assert ms[-1].threshold == 0.8


def test_a_conversation_is_rendered_turn_by_turn_and_takes_its_language_from_user_turns():
    conv = MultiTurnSample(id="c", messages=[
        Message("system", "Be brief."), Message("user", "明日19時に2名で予約して"),
        Message("assistant", "", [ToolCall("book_table", {"people": 2, "time": "19:00"})]),
        Message("tool", "予約番号 A12"), Message("assistant", "予約しました。")])
    assert prompting.sample_language(conv, "auto") == "ja"
    assert prompting.sample_language(conv, "en") == "en"
    user = prompting.render("agent_goal_outcome", conv, lang="ja",
                            conversation=transcript(conv))[0][1]["content"]
    assert ("# Conversation\nSystem: Be brief.\nHuman: 明日19時に2名で予約して\nTools:\n"
            '  book_table {"people": 2, "time": "19:00"}\nToolOutput: 予約番号 A12\n'
            "AI: 予約しました。\n") in user
    assert user.index("# Conversation") < user.index("# Task") and "in Japanese" in user


def test_the_conversation_part_changes_only_the_versions_of_the_steps_that_include_it(
        monkeypatch):
    before = {s: prompting.prompt_version(s) for s in INPUTS}
    source = prompting._source

    def edited(name):
        return source(name) + ("\nchanged" if name == "_part_conversation.j2" else "")

    monkeypatch.setattr(prompting, "_source", edited)
    prompting.prompt_version.cache_clear()
    try:
        after = {s: prompting.prompt_version(s) for s in INPUTS}
    finally:
        prompting.prompt_version.cache_clear()
    changed = {s for s in INPUTS if before[s] != after[s]}
    assert changed == set(CONVERSATION_STEPS)
