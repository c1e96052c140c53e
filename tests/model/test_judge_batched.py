"""Batched in-process judging (``LlamaJudge(parallel=N)``): same outputs as one at a time.

Calls from several threads are decoded together, one ``llama_decode`` per
step; every output, verdict probability, cache entry and score must equal the
sequential loop's at the same settings, on the tiny random model and on the
real SmolLM2.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import localeval
from localeval.cache import Cache
from localeval.cli.example import example_path
from localeval.errors import JudgeCallError, UsageError
from localeval.judge import CachedJudge, JudgeRequest, LlamaJudge, load_judge
from localeval.judge.llama.batch import common_prefix
from localeval.metrics.schemas import ALL_SCHEMAS, ContextVerdict, Rating012, Statements


def msgs(i: int) -> tuple[dict[str, str], ...]:
    return (
        {"role": "system", "content": "You are a careful judge. Answer only with JSON."},
        {"role": "user", "content": f"Question {i % 3}: where is the Eiffel Tower?\n"
                                    f"Context: The Eiffel Tower is in Paris ({i * 7})."},
    )


def requests(n: int) -> list[JudgeRequest]:
    out = []
    for i in range(n):
        schema = ALL_SCHEMAS[i % len(ALL_SCHEMAS)]
        prob = {ContextVerdict: "verdict", Rating012: "rating"}.get(schema)
        out.append(JudgeRequest(step=schema.__name__, messages=msgs(i), schema=schema, seed=i,
                                temperature=0.0 if i % 3 else 0.8, prob_field=prob))
    return out


#: Documented bound (docs/performance.md): verdict probabilities read after a batched
#: generation may differ from the sequential ones in the last float32 bits of the logits.
PROB_TOL = 1e-6


def close_probs(p, q) -> bool:
    if p is None or q is None:
        return p is q
    return len(p) == len(q) and all(
        d1.keys() == d2.keys() and all(abs(d1[k] - d2[k]) <= PROB_TOL for k in d1)
        for d1, d2 in zip(p, q))


def both(path, groups, **kw):
    """Replies of a sequential judge and of a parallel judge, one thread per group.

    The sequential judge starts each group with an empty KV cache, as each
    thread's slot does: the same calls after the same cached prefix, so the
    replies must be identical to the last bit.
    """
    seq = LlamaJudge(path, n_threads=2, n_ctx=2048, **kw)
    try:
        a = []
        for g in groups:
            seq._llm.reset()
            a.append([seq.ask(r) for r in g])
    finally:
        seq.close()
    par = LlamaJudge(path, n_threads=2, n_ctx=2048, parallel=len(groups), **kw)
    try:
        assert par.capacity == len(groups) and par.fingerprint == seq.fingerprint
        with ThreadPoolExecutor(len(groups)) as ex:
            b = list(ex.map(lambda g: [par.ask(r) for r in g], groups))
        decodes, tokens = par.batch_stats["decodes"], par.batch_stats["batch_tokens"]
    finally:
        par.close()
    return [x for g in a for x in g], [y for g in b for y in g], decodes, tokens


def test_parallel_replies_equal_sequential_ones_on_the_tiny_model(tiny_gguf, bias):
    reqs = requests(32)
    a, b, decodes, tokens = both(tiny_gguf, [reqs[i::4] for i in range(4)], logit_bias=bias)
    for x, y in zip(a, b):
        assert (y.raw, y.output) == (x.raw, x.output)
        assert close_probs(x.probs, y.probs)
        assert y.usage.generated_tokens == x.usage.generated_tokens
        assert y.usage.prompt_tokens == x.usage.prompt_tokens
    # A slot may copy a prefix another slot already evaluated: more reuse, never less.
    assert sum(y.usage.reused_tokens for y in b) >= sum(x.usage.reused_tokens for x in a)
    assert any(x.probs for x in a), "verdict probabilities went through the engine"
    generated = sum(x.usage.generated_tokens for x in a)
    # Sequences really shared decodes: fewer decodes than generated tokens.
    assert decodes < generated and tokens > decodes


def test_parallel_replies_equal_sequential_ones_on_smollm2(smollm2):
    reqs = [JudgeRequest(step="s", messages=msgs(i), schema=s, seed=i)
            for i, s in enumerate([Rating012, ContextVerdict, Statements, Rating012,
                                   ContextVerdict, Rating012])]
    a, b, _, _ = both(smollm2, [reqs[0::3], reqs[1::3], reqs[2::3]])
    assert [y.raw for y in b] == [x.raw for x in a]
    assert all(x.raw for x in a)


def test_evaluate_with_parallel_judge_gives_identical_scores_and_cache(tiny_gguf, bias,
                                                                        tmp_path):
    data = tmp_path / "five.jsonl"
    rows = example_path().read_text(encoding="utf-8").splitlines()[:5]
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    metrics = "faithfulness,context_precision,nv_context_relevance"
    runs, caches = [], []
    for n in (1, 3):
        cache = Cache(tmp_path / f"c{n}.sqlite")
        judge = CachedJudge(LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, logit_bias=bias,
                                       parallel=n), cache)
        res = localeval.evaluate(data, metrics, judge=judge, cache=cache, embedder=False,
                                 progress=False, judge_check=False)
        judge.close()
        runs.append(res)
        cache.close()
        with sqlite3.connect(tmp_path / f"c{n}.sqlite") as db:
            rows = db.execute("SELECT key, value FROM judge_calls ORDER BY key").fetchall()
        # Entries equal but for the timing and KV-reuse accounting in "usage".
        caches.append([(k, {x: y for x, y in json.loads(v).items() if x != "usage"})
                       for k, v in rows])
    assert runs[0].records() == runs[1].records()
    assert runs[0].summary["usage"]["calls"] == runs[1].summary["usage"]["calls"]
    assert caches[0] == caches[1] and len(caches[0]) > 10


def test_a_failing_call_fails_alone(tiny_gguf):
    j = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=1024, parallel=2)
    try:
        prompt = j.prompt_tokens(msgs(1))
        with pytest.raises((JudgeCallError, ValueError)):
            j.generate(prompt, "root ::= undefined-rule", 5)
        g = j.generate(prompt, None, 5)
        assert len(g.tokens) <= 5 and g.prompt_tokens == len(prompt)
        # The second call found the first's prompt in the cache (prefix reuse).
        g2 = j.generate(prompt + [prompt[-1]], None, 3)
        assert g2.reused_tokens >= len(prompt) - 1
    finally:
        j.close()


def test_parallel_is_validated_and_defaults_from_the_hardware(tiny_gguf):
    with pytest.raises(UsageError, match="--parallel 0 is out of range"):
        LlamaJudge(tiny_gguf, parallel=0)
    j = load_judge(str(tiny_gguf), parallel="auto", n_ctx=512)
    try:
        from localeval.judge.llama.cpu import available_cores

        assert j.capacity == (8 if available_cores() >= 8 else 1)
    finally:
        j.close()
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2 and common_prefix([], [1]) == 0


def test_cli_parallel_option(tiny_gguf, bias, tmp_path):
    driver = ("import json, os, sys, localeval; "
              "localeval.configure(logit_bias={int(k): v for k, v in "
              "json.loads(os.environ['TEST_BIAS']).items()}); "
              "from localeval.cli.app import main; sys.exit(main(sys.argv[1:]))")
    env = dict(os.environ, TEST_BIAS=json.dumps(bias))
    data = tmp_path / "three.jsonl"
    data.write_text("\n".join(example_path().read_text(encoding="utf-8").splitlines()[:3])
                    + "\n", encoding="utf-8")
    base = [sys.executable, "-c", driver, "run", str(data), "-m", "context_precision",
            "--judge", str(tiny_gguf), "--n-ctx", "2048", "--no-cache", "--json",
            "--no-judge-check"]
    bad = subprocess.run(base + ["--parallel", "0", "-o", str(tmp_path / "o0")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--parallel must be at least 1" in bad.stderr
    assert "Traceback" not in bad.stderr
    outs = []
    for n in ("1", "3"):
        p = subprocess.run(base + ["--parallel", n, "-o", str(tmp_path / f"o{n}")], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append((tmp_path / f"o{n}" / "results.jsonl").read_text(encoding="utf-8"))
    assert outs[0] == outs[1] and outs[0].count("\n") == 3


def test_calls_arriving_together_evaluate_their_shared_prefix_once(tiny_gguf):
    """A sample's fanned-out calls share its prefix: the first evaluates it, the rest copy it."""
    j = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, parallel=4)
    try:
        base = j.prompt_tokens(msgs(5))
        filler = (base * 4)[:300]  # the sample block every step repeats
        prompts = [filler + base[: 10 + 7 * i] for i in range(4)]
        shared = common_prefix(prompts[0], prompts[1])
        assert shared >= 300
        start = threading.Barrier(4)

        def call(p):
            start.wait()
            return j.generate(p, None, 4)

        with ThreadPoolExecutor(4) as ex:
            gens = list(ex.map(call, prompts))
        evaluated = sum(g.prompt_tokens - g.reused_tokens for g in gens)
        suffixes = sum(len(p) - shared for p in prompts)
        # Without waiting for the first prompt, each call evaluates the prefix: ~4 x 300.
        assert evaluated <= shared + suffixes + 4, (evaluated, shared, suffixes)
        # (a prompt that is all prefix still evaluates its last two tokens: decode_plan.reusable)
        assert sum(g.reused_tokens >= shared - 2 for g in gens) == 3
        st = j.batch_stats
        # The engine's own accounting agrees with the calls': every prompt token it
        # decoded is one a call evaluated; the three later calls copied the prefix (whether a
        # call had to wait for it depends on when its thread ran: not asserted).
        assert st["prompt_tokens"] == evaluated and st["copies"] >= 3 and st["waits"] <= 3
        assert st["gen_rows"] >= st["gen_decodes"] > 0 and st["step_seconds"] > 0
        assert st["decodes"] == st["gen_decodes"] + st["prompt_decodes"]
    finally:
        j.close()


def test_two_slots_do_not_evict_each_others_prefix(tiny_gguf, bias, tmp_path):
    """Below 8 slots the in-process judge scores one sample at a time (its calls fan out):
    two samples in two slots would evaluate each other's sample block again on every switch."""
    data = tmp_path / "four.jsonl"
    data.write_text("\n".join(example_path().read_text(encoding="utf-8").splitlines()[:4])
                    + "\n", encoding="utf-8")
    evaluated = {}
    for n in (1, 2):
        judge = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, logit_bias=bias, parallel=n)
        try:
            res = localeval.evaluate(data, "context_precision,nv_answer_accuracy,faithfulness",
                                     judge=judge, embedder=False, cache=False, progress=False,
                                     judge_check=False)
        finally:
            judge.close()
        u = res.summary["usage"]
        evaluated[n] = u["prompt_tokens"] - u["reused_tokens"]
    assert evaluated[2] <= 1.05 * evaluated[1], evaluated


def test_dummy_rows_change_no_output_and_leave_no_kv_entry(tiny_gguf, bias, monkeypatch):
    """Padding a generation decode with dummy rows in idle slots (``decode_plan``)
    changes no reply and no prefix reuse: later calls that reuse an idle slot's prefix
    find it as it was. A row computed in a larger decode may differ in the last float32
    bits (as between batched and sequential decoding; which rows share a decode also
    depends on thread timing), so verdict probabilities agree within ``PROB_TOL``."""
    import localeval.judge.llama.batch as batch

    reqs = requests(24)
    groups = [reqs[i::3] for i in range(3)]

    def run(pad: bool):
        if pad:  # every idle slot adds a row to every generation decode
            monkeypatch.setattr(batch, "padded_rows", lambda stats, live, spare: live + spare)
        else:
            monkeypatch.setattr(batch, "padded_rows", lambda stats, live, spare: live)
        j = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, logit_bias=bias, parallel=6,
                       draft="none")
        try:
            with ThreadPoolExecutor(3) as ex:
                out = list(ex.map(lambda g: [j.ask(r) for r in g], groups))
            return [(r.raw, r.output, r.probs, r.usage.reused_tokens) for g in out for r in g], \
                j.batch_stats
        finally:
            j.close()

    plain, st0 = run(False)
    padded, st1 = run(True)
    # pad rows: the two-row floor (``floor_rows``) in both, idle slots' dummies in the second
    assert st1["pad_rows"] > st0["pad_rows"] + st1["gen_decodes"]
    assert [(raw, out, reused) for raw, out, _, reused in padded] == \
        [(raw, out, reused) for raw, out, _, reused in plain]
    assert all(close_probs(p[2], q[2]) for p, q in zip(padded, plain))
    assert st1["gen_rows"] == st0["gen_rows"]
    assert sum(int(n) * c for n, (c, _) in st1["gen_by_rows"].items()) == \
        st1["gen_rows"] + st1["pad_rows"]


def test_padded_rows_follows_measured_costs():
    from localeval.judge.llama.decode_plan import MIN_SEEN, EngineStats, padded_rows

    st = EngineStats()
    assert padded_rows(st, 13, 3) == 13  # nothing measured: never pad on a guess
    for _ in range(MIN_SEEN):
        st.count_generation(13, 0, 0.129)
        st.count_generation(16, 0, 0.123)
        st.count_generation(14, 0, 0.137)
        st.count_generation(2, 0, 0.049)
        st.count_generation(4, 0, 0.073)
    assert padded_rows(st, 13, 3) == 16
    assert padded_rows(st, 13, 2) == 13  # 16 rows would need three idle slots
    assert padded_rows(st, 14, 2) == 16
    assert padded_rows(st, 2, 2) == 2  # a dearer decode is never chosen
    st.count_generation(15, 1, 0.123)  # a padded decode counts under the rows decoded
    assert st.gen_by_rows[16][0] == MIN_SEEN + 1 and st.pad_rows == 1
    assert st.to_dict()["gen_by_rows"]["16"] == [MIN_SEEN + 1, round(0.123 * (MIN_SEEN + 1), 3)]


@pytest.mark.parametrize("parallel", [1, 3])
def test_exclusive_runs_where_the_judge_decodes_and_leaves_no_stale_prefix(
        tiny_gguf, bias, parallel):
    """``LlamaJudge.exclusive``: a batched judge runs the function on its decode thread
    (llama.cpp called from a second thread starts a second OpenMP team, which slows the
    run's decodes), after the calls in flight and before the next; afterwards no slot
    claims a prefix the function may have overwritten, so a repeated call evaluates its
    whole prompt again and replies as before."""
    reqs = requests(6)
    j = LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, logit_bias=bias, parallel=parallel)
    try:
        first = j.ask(reqs[0])
        again = j.ask(reqs[0])
        assert again.usage.reused_tokens > 0  # the prefix is cached ...
        seen: list[int] = []

        def clobber() -> str:
            seen.append(threading.get_ident())
            import llama_cpp as lc

            mem = lc.llama_get_memory(j.llm.ctx)
            for s in range(parallel):  # overwrite every sequence, as a benchmark loop does
                lc.llama_memory_seq_rm(mem, s, -1, -1)
            return "done"

        with ThreadPoolExecutor(3) as ex:  # calls in flight while it is asked for
            busy = [ex.submit(j.ask, r) for r in reqs[1:4]]
            assert j.exclusive(clobber) == "done"
            assert all(f.result().raw for f in busy)
        expected = (threading.get_ident() if parallel == 1
                    else j.decoder.decode_thread.ident)
        assert seen == [expected] and seen[0] is not None
        j.ask(reqs[0])
        assert j.ask(reqs[0]).usage.reused_tokens > 0
        j.exclusive(clobber)
        after = j.ask(reqs[0])
        assert after.usage.reused_tokens == 0  # ... and forgotten after ``exclusive``
        assert (after.raw, after.output, after.probs) == (first.raw, first.output, first.probs)
        with pytest.raises(ZeroDivisionError):  # the function's error reaches the caller
            j.exclusive(lambda: 1 // 0)
        assert j.ask(reqs[0]).raw == first.raw  # and the judge still works
    finally:
        j.close()
