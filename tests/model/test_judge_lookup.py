"""Prompt-lookup drafting in the in-process judge: fewer decodes, the very same replies.

Every output string, score and verdict probability must be what the
one-token loop gives (``draft="none"``), greedy and sampled, on the tiny
random-weight model and on the real SmolLM2; the KV cache must hold no
refused guess afterwards; the usage counts what drafting did.
"""

from __future__ import annotations

import pytest

import localeval
from localeval.cli.example import example_path
from localeval.judge import JudgeRequest, LlamaJudge
from localeval.judge.llama.lookup import DraftGovernor
from localeval.metrics.schemas import ContextVerdict, Rating012, Statements


def msgs(i: int) -> tuple[dict[str, str], ...]:
    text = ("The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair "
            f"and is 330 metres tall (note {i}).")
    return (
        {"role": "system", "content": "You are a careful judge. Answer only with JSON."},
        {"role": "user", "content": f"Context: {text}\nAnswer: {text}\n"
                                    "Break the answer into statements, copying its words."},
    )


def requests() -> list[JudgeRequest]:
    schemas = [Statements, ContextVerdict, Rating012, Statements, ContextVerdict, Statements]
    return [JudgeRequest(step=s.__name__, messages=msgs(i), schema=s, seed=i,
                         temperature=0.8 if i % 3 == 0 else 0.0,
                         prob_field={ContextVerdict: "verdict", Rating012: "rating"}.get(s))
            for i, s in enumerate(schemas)]


def replies(path, draft: str, reqs, **kw):
    judge = LlamaJudge(path, n_threads=2, n_ctx=2048, draft=draft, **kw)
    try:
        return [judge.ask(r) for r in reqs]
    finally:
        judge.close()


def assert_same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        assert (y.raw, y.output) == (x.raw, x.output)
        assert y.probs == x.probs  # the same KV entries: equal to the last bit
        assert y.usage.generated_tokens == x.usage.generated_tokens


def test_smollm2_replies_identical_with_fewer_decodes(smollm2):
    reqs = requests()
    plain, drafted = replies(smollm2, "none", reqs), replies(smollm2, "lookup", reqs)
    assert_same(plain, drafted)
    assert any(x.probs for x in plain) and any(r.temperature > 0 for r in reqs)
    gen = sum(x.usage.generated_tokens for x in plain)
    # The one-token loop decodes once per generated token that is not the last;
    # drafting confirms guesses and needs fewer decodes.
    assert sum(x.usage.decode_steps for x in plain) >= gen - len(reqs)
    assert sum(x.usage.drafted_tokens for x in plain) == 0
    steps = sum(y.usage.decode_steps for y in drafted)
    accepted = sum(y.usage.accepted_tokens for y in drafted)
    assert 0 < accepted <= sum(y.usage.drafted_tokens for y in drafted)
    assert steps + accepted == sum(x.usage.decode_steps for x in plain)
    assert steps < 0.8 * gen


def test_tiny_model_replies_identical(tiny_gguf, bias):
    reqs = requests()
    assert_same(replies(tiny_gguf, "none", reqs, logit_bias=bias),
                replies(tiny_gguf, "lookup", reqs, logit_bias=bias))


def test_rollback_leaves_no_stale_cache(smollm2):
    """A call after a drafted call (refused guesses cut from the cache) replies as a fresh
    judge does, and the cache records exactly the tokens it holds."""
    reqs = requests()
    judge = LlamaJudge(smollm2, n_threads=2, n_ctx=2048, draft="lookup")
    try:
        first = judge.ask(reqs[0])
        assert first.usage.drafted_tokens > first.usage.accepted_tokens  # some were refused
        llm = judge._llm
        prompt = judge.prompt_tokens(reqs[0].messages)
        n = llm.n_tokens
        assert list(llm.input_ids[: len(prompt)]) == prompt
        # Nothing cached past what the loop used: the next position is free.
        assert judge._lc.llama_memory_seq_pos_max(
            judge._lc.llama_get_memory(llm.ctx), 0) == n - 1
        second = judge.ask(reqs[3])
    finally:
        judge.close()
    fresh = replies(smollm2, "none", [reqs[3]])[0]
    assert (second.raw, second.probs) == (fresh.raw, fresh.probs)


def test_evaluate_identical_on_the_example_with_soft_verdicts(tiny_gguf, bias, tmp_path):
    data = tmp_path / "three.jsonl"
    rows = example_path().read_text(encoding="utf-8").splitlines()[:3]
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    metrics = "faithfulness,context_precision,answer_relevancy,context_recall"
    records, usage = [], []
    for draft in ("none", "lookup"):
        judge = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, logit_bias=bias, draft=draft)
        try:
            res = localeval.evaluate(data, metrics, judge=judge, cache=False, embedder=False,
                                     progress=False, judge_check=False, verdicts="soft")
        finally:
            judge.close()
        records.append(res.records())
        usage.append(res.summary["usage"])
    assert records[0] == records[1]
    assert usage[0]["drafted_tokens"] == 0 and usage[1]["decode_steps"] > 0
    assert usage[0]["generated_tokens"] == usage[1]["generated_tokens"]


def test_draft_option_is_validated_and_reported(tiny_gguf):
    with pytest.raises(ValueError, match="draft must be one of"):
        LlamaJudge(tiny_gguf, n_threads=1, draft="always")
    judge = LlamaJudge(tiny_gguf, n_threads=1, draft="none")
    try:
        assert not judge.drafting.enabled
        auto = LlamaJudge(tiny_gguf, n_threads=1)
        assert auto.drafting.mode == "auto" and auto.fingerprint == judge.fingerprint
        assert auto.signature() == judge.signature()
        auto.close()
    finally:
        judge.close()
    assert isinstance(DraftGovernor().to_dict(), dict)
