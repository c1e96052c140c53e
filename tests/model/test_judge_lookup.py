"""Prompt-lookup drafting in the in-process judge: fewer decodes, the very same replies.

Every output string, score and verdict probability must be what the
one-token loop gives (``draft="none"``), greedy and sampled, on the tiny
random-weight model and on the real SmolLM2; the KV cache must hold no
refused guess afterwards; the usage counts what drafting did.
"""

from __future__ import annotations

import json

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


#: The tiny model's F32 weights go through llama.cpp's tinyBLAS kernels for decodes of two
#: rows or more and through a dot product for one row: float32 logits differ in the last
#: bits (about 1e-7), so verdict probabilities read from KV entries written by a drafted
#: decode may differ by a few 1e-6 (measured 1.7e-6). Outputs are identical, and SmolLM2's
#: Q4_1 weights use one kernel for any row count: its probabilities are equal to the bit.
PROB_TOL = 1e-5


def close(a, b) -> bool:
    """``a == b``, but floats may differ by ``PROB_TOL`` (scores, verdict probabilities)."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= PROB_TOL
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a == b


def replies(path, draft: str, reqs, **kw):
    judge = LlamaJudge(path, n_threads=2, n_ctx=2048, draft=draft, **kw)
    try:
        return [judge.ask(r) for r in reqs]
    finally:
        judge.close()


def assert_same(a, b, exact: bool = True) -> None:
    for x, y in zip(a, b, strict=True):
        assert (y.raw, y.output) == (x.raw, x.output)
        assert y.probs == x.probs if exact else close(y.probs, x.probs)
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
                replies(tiny_gguf, "lookup", reqs, logit_bias=bias), exact=False)


def test_rollback_leaves_no_stale_cache(smollm2):
    """After a drafted call (refused guesses cut from the cache) the cache holds exactly
    what the one-token loop leaves, and the next call, reusing its prefix, replies as it
    does after the same call on a judge that never drafted."""
    reqs = requests()
    judge = LlamaJudge(smollm2, n_threads=2, n_ctx=2048, draft="lookup")
    try:
        first = judge.ask(reqs[0])
        assert first.usage.drafted_tokens > first.usage.accepted_tokens  # some were refused
        llm = judge._llm
        prompt = judge.prompt_tokens(reqs[0].messages)
        n = llm.n_tokens
        assert list(llm.input_ids[: len(prompt)]) == prompt
        # Nothing cached past what the loop used: no refused guess left behind.
        assert judge._lc.llama_memory_seq_pos_max(
            judge._lc.llama_get_memory(llm.ctx), 0) == n - 1
        second = judge.ask(reqs[3])
        assert second.usage.reused_tokens > 0  # it did build on the drafted call's cache
    finally:
        judge.close()
    plain = replies(smollm2, "none", [reqs[0], reqs[3]])
    assert (first.raw, first.probs) == (plain[0].raw, plain[0].probs)
    assert (second.raw, second.probs) == (plain[1].raw, plain[1].probs)
    assert second.usage.reused_tokens == plain[1].usage.reused_tokens


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
    assert close(records[0], records[1])
    assert usage[0]["drafted_tokens"] == 0 and usage[1]["decode_steps"] > 0
    assert usage[0]["generated_tokens"] == usage[1]["generated_tokens"]


def test_draft_option_is_validated_and_reported(tiny_gguf):
    with pytest.raises(ValueError, match="draft must be one of"):
        LlamaJudge(tiny_gguf, n_threads=1, draft="always")
    judge = LlamaJudge(tiny_gguf, n_threads=1, draft="none")
    try:
        assert not judge.drafting.enabled
        assert LlamaJudge.__init__.__kwdefaults__["draft"] == "none"
        auto = LlamaJudge(tiny_gguf, n_threads=1, draft="auto")
        assert auto.drafting.mode == "auto" and auto.fingerprint == judge.fingerprint
        assert auto.signature() == judge.signature()
        auto.close()
    finally:
        judge.close()
    assert isinstance(DraftGovernor().to_dict(), dict)


def test_cli_draft_option(tiny_gguf, bias, tmp_path, capsys):
    from localeval.cli.app import main

    data = tmp_path / "two.jsonl"
    data.write_text("\n".join(example_path().read_text(encoding="utf-8").splitlines()[:2])
                    + "\n", encoding="utf-8")
    base = ["run", str(data), "-m", "faithfulness", "--judge", str(tiny_gguf), "--n-ctx",
            "2048", "--no-cache", "--json", "--no-judge-check", "--parallel", "1"]

    def cli(*extra: str) -> int:
        try:
            return main(base + list(extra))
        except SystemExit as e:  # argparse's own exit for a bad choice
            return int(e.code or 0)

    localeval.configure(logit_bias=bias)
    try:
        assert cli("--draft", "always", "-o", str(tmp_path / "bad")) == 2
        err = capsys.readouterr().err
        assert "--draft" in err and "Traceback" not in err
        outs, usage = [], []
        for mode in ("none", "lookup"):
            out = tmp_path / mode
            assert cli("--draft", mode, "-o", str(out)) == 0, capsys.readouterr().err
            outs.append((out / "results.jsonl").read_text(encoding="utf-8"))
            usage.append(json.loads((out / "summary.json").read_text(encoding="utf-8"))["usage"])
    finally:
        localeval.configure(logit_bias=None)
    assert outs[0] == outs[1] and outs[0].count("\n") == 2
    assert usage[0]["drafted_tokens"] == 0 and usage[1]["drafted_tokens"] > 0
