"""The in-process llama.cpp judge on a real (tiny, random-weight) GGUF model.

Random weights make the model a stress test for constrained decoding: it
picks bytes no real model would (control characters, broken UTF-8), so every
reply parsing strictly means the grammar and the byte checks hold.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Literal

import numpy as np
import pytest
from pydantic import BaseModel, Field

from localeval.cache import Cache
from localeval.errors import JudgeCallError, ModelError
from localeval.judge import CachedJudge, JudgeRequest, Usage
from localeval.judge import schema_to_gbnf, stock_gbnf
from localeval.judge import LlamaJudge
from localeval.testing import quote_bias

try:
    from localeval.metrics.schemas import ALL_SCHEMAS, ContextVerdict, Rating012, Statements, Verdicts
except ImportError:  # pragma: no cover - the metrics helper owns that module
    pytest.fail("localeval.metrics.schemas is missing")


@pytest.fixture(scope="module")
def judge(tiny_gguf):
    j = LlamaJudge(tiny_gguf, n_threads=1)
    yield j
    j.close()


def msgs(i: int, extra: str = "") -> tuple[dict[str, str], ...]:
    return (
        {"role": "system", "content": "You are a careful judge. Answer only with JSON."},
        {"role": "user", "content": f"Question {i}: where is the Eiffel Tower?{extra}\n"
                                    f"Context: The Eiffel Tower is in Paris ({i * 7})."},
    )


def strict_parse(raw: str, schema):
    return schema.model_validate(json.loads(raw))


@pytest.fixture(scope="module")
def short_judge(tiny_gguf, judge):
    """Same model, closing quotes favoured: random weights otherwise fill every maxLength."""
    j = LlamaJudge(tiny_gguf, n_threads=1, logit_bias=quote_bias(judge))
    yield j
    j.close()


def test_two_hundred_constrained_generations_parse_strictly(short_judge):
    n = 0
    per_schema = -(-200 // len(ALL_SCHEMAS))  # at least 200 generations in all
    for schema in ALL_SCHEMAS:
        for i in range(per_schema):
            temp = 0.0 if i % 4 == 0 else 0.9
            reply = short_judge.ask(JudgeRequest(step=schema.__name__, messages=msgs(i),
                                           schema=schema, seed=i, temperature=temp))
            assert isinstance(reply.output, schema)
            assert strict_parse(reply.raw, schema) == reply.output
            assert not any(ord(c) < 0x20 for c in reply.raw)  # nothing raw, even outside strings
            reply.raw.encode("utf-8")  # no lone surrogates
            n += 1
    assert n >= 200


def test_stock_rule_lets_control_characters_in_and_the_strict_rule_does_not(judge):
    prompt = judge.prompt_tokens(msgs(1))
    fails = {"stock": 0, "strict": 0}
    for name, conv in (("stock", stock_gbnf), ("strict", schema_to_gbnf)):
        gbnf = conv(ContextVerdict)
        for seed in range(30):
            gen = judge.generate(prompt, gbnf, 1000, temperature=1.0, seed=seed)
            try:
                strict_parse(gen.raw.decode("utf-8"), ContextVerdict)
            except ValueError:
                fails[name] += 1
    assert fails["strict"] == 0
    assert fails["stock"] >= 10, fails


def test_checking_the_picked_token_first_is_exact(judge):
    """Upstream llama.cpp's shortcut gives the same greedy output as filtering everything."""
    slow = {"check-first": 0, "full": 0}
    try:
        for schema in (Verdicts, ContextVerdict, Rating012, Statements):
            prompt = judge.prompt_tokens(msgs(3))
            gbnf = schema_to_gbnf(schema)
            judge.grammar_mode = "check-first"
            fast = judge.generate(prompt, gbnf, 2000)
            judge.grammar_mode = "full"
            full = judge.generate(prompt, gbnf, 2000)
            assert fast.tokens == full.tokens
            slow["check-first"] += fast.grammar_rejections
            slow["full"] += full.grammar_rejections
        assert slow["check-first"] < slow["full"]
    finally:
        judge.grammar_mode = "check-first"


def test_same_seed_same_output_and_seed_matters(judge):
    def run(seed):
        return judge.ask(JudgeRequest(step="s", messages=msgs(5), schema=ContextVerdict,
                                      seed=seed, temperature=0.9)).raw
    a, b = run(1), run(1)
    assert a == b
    assert len({run(s) for s in range(2, 6)}) > 1


def test_prompt_reuse_is_measured(judge):
    judge._llm.reset()
    first = judge.ask(JudgeRequest(step="s", messages=msgs(1), schema=Rating012))
    assert first.usage.reused_tokens == 0
    p1 = judge.prompt_tokens(msgs(1))
    p2 = judge.prompt_tokens(msgs(1, extra=" And when was it built?"))
    lcp = next(i for i, (a, b) in enumerate(zip(p1, p2)) if a != b)
    second = judge.ask(JudgeRequest(step="s", messages=msgs(1, " And when was it built?"),
                                    schema=Rating012))
    assert second.usage.prompt_tokens == len(p2)
    assert second.usage.reused_tokens == lcp
    assert second.usage.evaluated_tokens == len(p2) - lcp
    again = judge.ask(JudgeRequest(step="s", messages=msgs(1, " And when was it built?"),
                                   schema=Rating012))
    assert again.usage.reused_tokens == len(p2) - 2  # the last two are re-run for the logits
    assert again.raw == second.raw


def test_truncation_is_retried_once_then_reported(tiny_gguf):
    j = LlamaJudge(tiny_gguf, n_threads=1, max_tokens=4)
    with pytest.raises(JudgeCallError, match=r"^judge output truncated at 8 tokens$") as e:
        j.ask(JudgeRequest(step="s", messages=msgs(2), schema=ContextVerdict))
    assert e.value.decided
    j.close()


def _failed_usage(judge, tmp_path, request: JudgeRequest) -> tuple[JudgeCallError, Usage]:
    """The error of one failed call made as a run makes it (through the cache), and its usage."""
    with pytest.raises(JudgeCallError) as e:
        CachedJudge(judge, Cache(tmp_path / "c.sqlite")).ask(request)
    return e.value, e.value.usage


def test_a_truncated_call_counts_its_calls_and_tokens(tiny_gguf, tmp_path):
    j = LlamaJudge(tiny_gguf, n_threads=1, max_tokens=4)
    err, usage = _failed_usage(j, tmp_path, JudgeRequest(step="s", messages=msgs(2),
                                                         schema=ContextVerdict))
    n_prompt = len(j.prompt_tokens(msgs(2)))
    j.close()
    assert str(err) == "judge output truncated at 8 tokens"
    # two generations (4 tokens, then 8 after the retry), both prompts counted
    assert (usage.calls, usage.generated_tokens, usage.prompt_tokens) == (2, 4 + 8, 2 * n_prompt)


def test_an_unparsable_reply_counts_its_call_and_tokens(judge, tmp_path, monkeypatch):
    real = judge.generate

    def garbled(*a, **k):  # the grammar held, then the bytes went bad: not UTF-8
        return dataclasses.replace(real(*a, **k), raw=b"\xff", stop="eos")

    monkeypatch.setattr(judge, "generate", garbled)
    err, usage = _failed_usage(judge, tmp_path, JudgeRequest(step="s", messages=msgs(3),
                                                             schema=Rating012))
    assert "not valid UTF-8" in str(err) and err.decided
    assert usage.calls == 1 and usage.generated_tokens > 0
    assert usage.prompt_tokens == len(judge.prompt_tokens(msgs(3)))


def test_prompt_longer_than_the_context_names_the_token_counts(judge):
    long = msgs(0, extra=" Eiffel" * 2500)
    n = len(judge.prompt_tokens(long))
    with pytest.raises(JudgeCallError) as e:
        judge.ask(JudgeRequest(step="s", messages=long, schema=Rating012))
    assert str(e.value) == (f"prompt is {n} tokens, longer than the judge context of "
                            f"{judge.n_ctx} tokens")
    # the judge is still usable afterwards
    judge.ask(JudgeRequest(step="s", messages=msgs(0), schema=Rating012))


def test_verdict_probabilities(judge):
    for i in range(6):
        r = judge.ask(JudgeRequest(step="v", messages=msgs(i), schema=Verdicts,
                                   prob_field="verdict", seed=i, temperature=0.9))
        n_fields = len(re.findall(r'"verdict"\s*:', r.raw))
        assert n_fields == len(r.output.verdicts)
        assert r.probs is not None and len(r.probs) == n_fields
        for p, v in zip(r.probs, r.output.verdicts):
            assert set(p) == {"0", "1"}
            assert abs(sum(p.values()) - 1.0) < 1e-9
            assert all(0.0 <= x <= 1.0 for x in p.values())
    r = judge.ask(JudgeRequest(step="r", messages=msgs(1), schema=Rating012, prob_field="rating"))
    assert len(r.probs) == 1 and set(r.probs[0]) == {"0", "1", "2"}
    assert abs(sum(r.probs[0].values()) - 1.0) < 1e-9
    # greedy output: the chosen rating is the most probable allowed value
    assert max(r.probs[0], key=r.probs[0].get) == str(r.output.rating)


def test_verdict_probabilities_do_not_depend_on_the_kv_cache(judge, short_judge):
    req = JudgeRequest(step="r", messages=msgs(4), schema=ContextVerdict, prob_field="verdict")
    warm = judge.ask(req)
    judge._llm.reset()
    cold = judge.ask(req)
    assert warm.raw == cold.raw
    assert np.allclose(list(warm.probs[0].values()), list(cold.probs[0].values()), atol=1e-4)

    # several occurrences: computed last-first from a warm cache, reported in output order
    def verdicts(i):
        return short_judge.ask(JudgeRequest(step="v", messages=msgs(i), schema=Verdicts,
                                            prob_field="verdict", seed=i, temperature=0.9))

    i = next(i for i in range(40) if len(verdicts(i).output.verdicts) >= 3)
    warm = verdicts(i)
    short_judge._llm.reset()
    cold = verdicts(i)
    assert warm.raw == cold.raw and len(warm.probs) >= 3
    for a, b in zip(warm.probs, cold.probs):
        assert np.allclose(list(a.values()), list(b.values()), atol=1e-4)
    assert len({round(p["1"], 6) for p in warm.probs}) > 1  # positions differ, as they should


def test_unbounded_schema_is_refused_not_loosened(judge):
    class Free(BaseModel):
        text: str

    with pytest.raises(ValueError, match=r"^\$\.text: string has no maxLength"):
        judge.ask(JudgeRequest(step="s", messages=msgs(0), schema=Free))


def test_identity_and_helpers(judge, tiny_gguf):
    assert judge.name == tiny_gguf.name
    assert re.fullmatch(r"[0-9a-f]{64}", judge.fingerprint)
    assert judge.count_tokens("Hello world") == len(
        judge._llm.tokenize(b"Hello world", add_bos=False))
    other = LlamaJudge(tiny_gguf, n_threads=1, seed=1)
    hot = LlamaJudge(tiny_gguf, n_threads=1, temperature=0.5)
    same = LlamaJudge(tiny_gguf, n_threads=1)
    assert len({judge.fingerprint, other.fingerprint, hot.fingerprint}) == 3
    assert same.fingerprint == judge.fingerprint
    import llama_cpp

    if not llama_cpp.llama_supports_gpu_offload():
        assert judge.n_gpu_layers == 0
    for j in (other, hot, same):
        j.close()


def test_chat_template_from_the_gguf_and_named_fallback(tiny_gguf, tmp_path):
    j = LlamaJudge(tiny_gguf, n_threads=1)
    text = j.chat.render(msgs(0))
    assert text.startswith("<|im_start|>system\nYou are a careful judge.")
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")
    named = LlamaJudge(tiny_gguf, n_threads=1, chat_format="chatml")
    assert named.prompt_tokens(msgs(0))[:-1] == j.prompt_tokens(msgs(0))[:-1]
    assert named.fingerprint != j.fingerprint
    with pytest.raises(ModelError, match="unknown chat format 'nonesuch'; known: .*chatml"):
        LlamaJudge(tiny_gguf, n_threads=1, chat_format="nonesuch")

    from localeval.testing import TinyModelSpec, build_tiny_gguf

    bare = build_tiny_gguf(tmp_path / "bare.gguf", TinyModelSpec(chat_template=None))
    with pytest.raises(ModelError, match="has no chat template") as e:
        LlamaJudge(bare, n_threads=1)
    assert e.value.exit_code == 3 and str(bare) in str(e.value)
    ok = LlamaJudge(bare, n_threads=1, chat_format="chatml")
    r = ok.ask(JudgeRequest(step="s", messages=msgs(0), schema=Rating012))
    assert r.output.rating in (0, 1, 2)
    for x in (j, named, ok):
        x.close()


GEMMA_LIKE = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def test_templates_without_a_system_role_get_it_folded_into_the_user_turn(tmp_path):
    from localeval.testing import TinyModelSpec, build_tiny_gguf

    path = build_tiny_gguf(tmp_path / "gemma-like.gguf", TinyModelSpec(chat_template=GEMMA_LIKE))
    j = LlamaJudge(path, n_threads=1)
    text = j.chat.render(msgs(0))
    assert text.startswith("<|endoftext|><|im_start|>user\nYou are a careful judge.")
    assert "system" not in text
    # the template wrote BOS and the tokenizer would add none twice
    assert j.prompt_tokens(msgs(0)).count(j._llm.token_bos()) == 1
    r = j.ask(JudgeRequest(step="s", messages=msgs(0), schema=Rating012))
    assert r.output.rating in (0, 1, 2)
    j.close()


class Mixed(BaseModel):
    label: Literal["yes", "no", "maybe"]
    score: int
    ok: bool
    ratio: float
    note: str | None = Field(default=None, max_length=8)


def test_other_json_types_and_string_enums(judge):
    for i in range(5):
        r = judge.ask(JudgeRequest(step="m", messages=msgs(i), schema=Mixed, prob_field="label",
                                   seed=i, temperature=0.9))
        assert r.output.label in ("yes", "no", "maybe")
        assert set(r.probs[0]) == {"yes", "no", "maybe"}
        assert abs(sum(r.probs[0].values()) - 1) < 1e-9


@pytest.mark.parametrize("split", [None, 8])
def test_first_byte_prefilter_admits_exactly_what_the_grammar_admits(tiny_gguf, monkeypatch,
                                                                     split):
    """At every step of real generations the cheap pass and the full pass agree.

    ``split=8`` splits every first-byte group of more than 8 tokens on the
    second byte, as a 152K vocabulary's big groups are.
    """
    from localeval.judge.llama import byte_index as llama_mod

    if split:
        monkeypatch.setattr(llama_mod, "_SPLIT_GROUP", split)
    judge = LlamaJudge(tiny_gguf, n_threads=1)
    if split:
        assert len(judge.model.byte_index.by_second) >= 5  # space, letters, CJK lead bytes...
    rng = np.random.default_rng(0)
    model, grammar = judge.model, judge.sampler.filter
    # tokens that print nothing (control tokens) are never picked, whatever the grammar says
    printable = np.array([model.eog[i] or model.piece(i) != b"" for i in range(judge.n_vocab)])
    for schema, temp in ((Verdicts, 0.9), (Statements, 0.9), (Rating012, 0.0)):
        gbnf = schema_to_gbnf(schema)
        gen = judge.generate(judge.prompt_tokens(msgs(2)), gbnf, 1500, temperature=temp, seed=3)
        g = grammar.new(gbnf)
        try:
            for tok in gen.tokens + [None]:
                logits = rng.standard_normal(judge.n_vocab).astype(np.float32)
                fast = np.isfinite(grammar.constrain_by_first_byte(g, logits))
                full = np.isfinite(grammar.constrain(g, logits.copy())) & printable
                assert (fast == full).all()
                assert fast.any()
                if tok is not None:
                    grammar.accept(g, tok)
        finally:
            grammar.free(g)
    judge.close()
