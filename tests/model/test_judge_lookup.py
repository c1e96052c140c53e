"""Prompt-lookup drafting in the in-process judge: the same outputs, fewer decodes.

``LlamaJudge(draft="lookup")`` guesses the next tokens from the prompt and the
output so far and verifies them in one decode; every output string must
equal ``draft="none"``'s (the padded one-token loop), verdict probabilities
within 1e-6, sequentially and batched, greedy and seeded sampling, on the
tiny random model and on the real SmolLM2 (which copies enough of its
prompts for guesses to be kept).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from localeval.judge import JudgeRequest, LlamaJudge
from localeval.metrics.schemas import ContextVerdict, Statements

PROB_TOL = 1e-6
PASSAGE = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
           "France. It is named after the engineer Gustave Eiffel, whose company designed and "
           "built the tower from 1887 to 1889. ")


def request(i: int, repeat: int, temperature: float = 0.0) -> JudgeRequest:
    """A long prompt that repeats a passage, so the judge's output can be guessed from it."""
    schema, prob = (Statements, None) if i % 2 == 0 else (ContextVerdict, "verdict")
    text = f"Passage {i}: " + PASSAGE * repeat
    return JudgeRequest(step=schema.__name__, schema=schema, seed=i, temperature=temperature,
                        prob_field=prob, messages=(
                            {"role": "system", "content": "You are a careful judge. Answer "
                                                          "only with JSON."},
                            {"role": "user", "content": f"Context: {text}\nList the statements "
                                                        f"the context makes, quoting it."}))


def run(path, draft: str, groups, **kw):
    """Replies per group; one thread per group when ``parallel`` > 1 (a group per slot)."""
    j = LlamaJudge(path, n_threads=2, n_ctx=2048, draft=draft, **kw)
    try:
        if j.parallel > 1:
            with ThreadPoolExecutor(len(groups)) as ex:
                out = list(ex.map(lambda g: [j.ask(r) for r in g], groups))
        else:
            out = []
            for g in groups:
                j.llm.reset()  # each group starts with an empty cache, as a slot does
                out.append([j.ask(r) for r in g])
        return [r for g in out for r in g], j.signature()
    finally:
        j.close()


def same(a, b) -> None:
    assert [r.raw for r in a] == [r.raw for r in b]
    for x, y in zip(a, b):
        assert (x.probs is None) == (y.probs is None)
        for d1, d2 in zip(x.probs or [], y.probs or []):
            assert d1.keys() == d2.keys()
            assert all(abs(d1[k] - d2[k]) <= PROB_TOL for k in d1)
    assert [r.usage.generated_tokens for r in a] == [r.usage.generated_tokens for r in b]


def totals(replies) -> tuple[int, int, int, int]:
    u = [r.usage for r in replies]
    return (sum(x.generated_tokens for x in u), sum(x.decode_steps for x in u),
            sum(x.drafted_tokens for x in u), sum(x.accepted_tokens for x in u))


def check_counters(plain, drafted) -> None:
    gen, steps, drafted_n, kept = totals(drafted)
    assert totals(plain)[2:] == (0, 0)
    assert 0 < kept <= drafted_n
    # every decode makes its head token plus the guesses it keeps
    assert steps < gen and steps + kept >= gen - len(drafted) * 2


@pytest.mark.parametrize("parallel", [1, 4])
def test_tiny_model_same_outputs_with_and_without_drafting(tiny_gguf, bias, parallel):
    groups = [[request(i, 6), request(i + 4, 3)] for i in range(4)]
    plain, sig_plain = run(tiny_gguf, "none", groups, logit_bias=bias, parallel=parallel)
    drafted, sig = run(tiny_gguf, "lookup", groups, logit_bias=bias, parallel=parallel)
    same(plain, drafted)
    assert sig == sig_plain
    # the padded loop: one decode per evaluated token (the last pick is never evaluated)
    assert totals(plain)[1] <= totals(plain)[0]
    assert totals(drafted)[2] > 0  # guesses were made (and cut by the grammar)


@pytest.mark.parametrize("parallel", [1, 4])
def test_demo_judge_same_outputs_and_fewer_decodes(smollm2, parallel):
    groups = [[request(i, 20)] for i in range(4)] if parallel > 1 else [[request(0, 20),
                                                                         request(1, 20)]]
    plain, sig_plain = run(smollm2, "none", groups, parallel=parallel)
    drafted, sig = run(smollm2, "lookup", groups, parallel=parallel)
    assert all(r.usage.prompt_tokens > 900 for r in plain)
    same(plain, drafted)
    assert sig == sig_plain
    check_counters(plain, drafted)


def test_seeded_sampling_same_outputs_with_drafting(smollm2):
    groups = [[request(0, 7, temperature=0.8), request(2, 7, temperature=0.8)]]
    plain, _ = run(smollm2, "none", groups)
    drafted, _ = run(smollm2, "lookup", groups)
    same(plain, drafted)
    assert totals(drafted)[2] > 0  # guesses were made and walked with the same draws


def test_draft_option_reaches_the_judge_and_leaves_the_signature(tiny_gguf):
    from localeval.cli.app import build_parser
    from localeval.cli.run import judge_options
    from localeval.judge import load_judge

    sigs = {}
    for mode in ("none", "lookup", None):
        argv = ["run", "data.jsonl", "--judge", str(tiny_gguf), "--parallel", "1"]
        args = build_parser().parse_args(argv + (["--draft", mode] if mode else []))
        j = load_judge(str(tiny_gguf), n_threads=1, **judge_options(args))
        try:
            assert j.drafting.mode == (mode or "auto")
            sigs[mode] = j.signature()
        finally:
            j.close()
    assert sigs["none"] == sigs["lookup"] == sigs[None]


def test_rollback_leaves_prefix_reuse_exact(tiny_gguf):
    """After a drafted generation (refused guesses rolled back), logits read through the
    reused cache are those of the undrafted loop's cache, to the bit."""
    from localeval.judge.grammar import schema_to_gbnf

    out = {}
    for mode in ("none", "lookup"):
        j = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, draft=mode)
        try:
            prompt = j.prompt_tokens(request(0, 6).messages)
            gen = j.generate(prompt, schema_to_gbnf(Statements), 40)
            logits, reused = j.decoder.logits_after(prompt + gen.tokens[:30])
            assert reused == len(prompt) + 28  # all but the last two: a two-row decode
            out[mode] = (gen.tokens, gen.draft, logits.copy())
        finally:
            j.close()
    assert out["none"][0] == out["lookup"][0]
    assert out["lookup"][1].drafted > out["lookup"][1].accepted  # some were rolled back
    assert (out["none"][2] == out["lookup"][2]).all()


# --- the bundled example, end to end ------------------------------------------------------

#: Judge metrics without embeddings; verdict probabilities read where ``--verdicts soft`` reads.
EXAMPLE_METRICS = ["faithfulness", "context_precision", "context_recall",
                   "context_entity_recall", "noise_sensitivity", "nv_context_relevance",
                   "nv_answer_accuracy"]


class Recording:
    """Forwards to a judge and keeps every reply (the run signature names the real model)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.replies: dict[str, object] = {}

    def __getattr__(self, item: str):
        return getattr(self.inner, item)

    def ask(self, request):
        reply = self.inner.ask(request)
        self.replies[repr((request.step, request.messages, request.seed))] = reply
        return reply


def example_run(path, draft: str, parallel: int, limit: int, **kw):
    """Scores and replies of the first ``limit`` example samples, soft verdicts, no cache."""
    from localeval import evaluate
    from localeval.cli.example import example_path

    judge = Recording(LlamaJudge(path, n_threads=2, draft=draft, parallel=parallel, **kw))
    try:
        res = evaluate(str(example_path()), EXAMPLE_METRICS, judge=judge, cache=False, seed=0,
                       verdicts="soft", progress=False, judge_check=False, limit=limit,
                       on_warning=lambda m: None)
        return [r["scores"] for r in res.records()], judge.replies
    finally:
        judge.close()


@pytest.mark.slow
@pytest.mark.parametrize("parallel", [1, 4])
@pytest.mark.parametrize("model", ["tiny", "demo"])
def test_bundled_example_same_with_and_without_drafting(model, parallel, request):
    """Every reply, verdict probability and score of the bundled example's first samples is
    the same with drafting as without (probabilities and the scores made of them within
    1e-6), on the random-weight and the real judge, sequential and batched."""
    if model == "tiny":
        path, kw, limit = request.getfixturevalue("tiny_gguf"), {
            "logit_bias": request.getfixturevalue("bias")}, 3
    else:
        path, kw, limit = request.getfixturevalue("smollm2"), {}, 1
    scores_none, none = example_run(path, "none", parallel, limit, **kw)
    scores_lookup, drafted = example_run(path, "lookup", parallel, limit, **kw)
    assert none.keys() == drafted.keys() and len(none) >= 6 * limit
    keys = sorted(none)
    same([none[k] for k in keys], [drafted[k] for k in keys])
    # Soft scores are made of verdict probabilities: equal within the same tolerance.
    for a, b in zip(scores_none, scores_lookup, strict=True):
        assert a.keys() == b.keys()
        assert all((a[k] is None) == (b[k] is None) for k in a)
        assert {k: b[k] for k in b if b[k] is not None} == pytest.approx(
            {k: a[k] for k in a if a[k] is not None}, abs=PROB_TOL)
    assert any(r.probs for r in none.values())  # the soft verdicts were read
    assert sum(r.usage.decode_steps for r in drafted.values()) < sum(
        r.usage.decode_steps for r in none.values())
