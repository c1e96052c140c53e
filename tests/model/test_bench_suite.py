"""scripts/bench_suite.py: the accounting and comparison helpers (no model, no timing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from localeval.judge import JudgeReply, JudgeRequest, Usage
from localeval.metrics import Judging
from localeval.metrics.schemas import Statements

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    """The script, loaded by path as a user runs it."""
    spec = importlib.util.spec_from_file_location("bench_suite", ROOT / "scripts" / "bench_suite.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_suite"] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop("bench_suite", None)


def rec(bench, sample="s1", metric="faithfulness", step="statements", prompt=100, reused=60,
        gen=10, seconds=1.0):
    return bench.CallRecord(sample=sample, metric=metric, step=step, calls=1, prompt_tokens=prompt,
                            reused_tokens=reused, generated_tokens=gen, seconds=seconds)


def test_compute_floor_adds_prompt_and_generation_time(bench):
    speeds = bench.Speeds(pp=200.0, tg=20.0, pp_tokens=512, tg_tokens=64)
    assert bench.compute_floor(400, 40, speeds) == pytest.approx(2.0 + 2.0)
    assert bench.compute_floor(0, 0, speeds) == 0.0


def test_totals_and_groups_keep_first_seen_order(bench):
    rs = [rec(bench, sample="b", metric="context_recall"), rec(bench, sample="a"),
          rec(bench, sample="b", prompt=50, reused=0, gen=5, seconds=0.5)]
    t = bench.totals(rs)
    assert t == {"calls": 3, "prompt_tokens": 250, "evaluated_tokens": 130,
                 "generated_tokens": 25, "judge_seconds": 2.5}
    g = bench.group_totals(rs, lambda r: r.sample)
    assert list(g) == ["b", "a"]
    assert g["b"]["evaluated_tokens"] == 40 + 50
    by_metric = bench.group_totals(rs, lambda r: r.metric)
    assert by_metric["context_recall"]["calls"] == 1


def test_simulated_prefix_reuse_matches_the_judges_rule(bench):
    # first prompt cold; second shares 3 tokens; a prompt equal to the previous one
    # still evaluates its last token (its logits are needed)
    prompts = [[1, 2, 3, 4], [1, 2, 3, 9, 9], [1, 2, 3, 9, 9], [7]]
    assert bench.simulate_prefix_reuse(prompts) == [4, 2, 1, 1]
    assert bench.simulate_prefix_reuse([]) == []


def test_format_table_aligns_columns(bench):
    text = bench.format_table([{"name": "faithfulness", "calls": 2, "seconds": 1.5},
                               {"name": "TOTAL", "calls": 12, "seconds": 10.25}],
                              [("name", ""), ("calls", "calls"), ("seconds", "s")])
    lines = text.splitlines()
    assert len(lines) == 4 and set(lines[1]) <= {"-", " "}
    assert lines[2].startswith("faithfulness") and lines[2].endswith("1.50")
    assert len({len(x) for x in lines}) == 1  # every row as wide as the header


def test_targets_pass_and_miss(bench):
    out = bench.targets({"prompt_tokens": 400, "evaluated_tokens": 250},
                        {"prompt_tokens": 1000, "evaluated_tokens": 700}, wall=12.0,
                        floor=10.0, same_scores=True)
    verdicts = {t["target"].split(" (")[0] + (" reuse" if "single-slot" in t["target"] else ""):
                t["pass"] for t in out}
    assert verdicts["prompt tokens sent <= 50% of ragas"] is True
    assert verdicts["prompt tokens evaluated <= 30% of ragas"] is True  # 0.25
    assert verdicts["prompt tokens evaluated <= 30% of ragas reuse"] is False  # 250/700 = 0.36
    assert verdicts["wall <= 1.15 x compute floor"] is False  # 1.2
    no_ragas = bench.targets({"prompt_tokens": 1, "evaluated_tokens": 1}, None, 1.0, 1.0, None)
    assert [t["pass"] for t in no_ragas] == [True, None]


class _FakeLlm:
    def __init__(self) -> None:
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1


class _FakeJudge:
    fingerprint = "f"
    name = "fake"

    def __init__(self) -> None:
        self._llm = _FakeLlm()
        self.asked: list[str] = []

    def ask(self, request: JudgeRequest) -> JudgeReply:
        self.asked.append(request.step)
        return JudgeReply(output=Statements(statements=["x"]),
                          usage=Usage(calls=1, prompt_tokens=30, reused_tokens=20,
                                      generated_tokens=4, seconds=0.1))


def _req(step: str) -> JudgeRequest:
    return JudgeRequest(step=step, messages=({"role": "user", "content": "u"},),
                        schema=Statements)


def test_metered_judge_records_and_can_turn_prefix_reuse_off(bench):
    inner = _FakeJudge()
    on = bench.MeteredJudge(inner)
    on.sample = "s1"
    on.ask(_req("entities"))
    assert inner._llm.resets == 0
    r = on.records[0]
    assert (r.sample, r.metric, r.step, r.evaluated_tokens) == ("s1", "context_entity_recall",
                                                                "entities", 10)
    off = bench.MeteredJudge(inner, prefix_reuse=False)
    off.metric = "noise_sensitivity"
    off.ask(_req("statements"))
    assert inner._llm.resets == 1
    assert off.records[0].metric == "noise_sensitivity"  # the runner's metric wins over the step
    assert off.name == "fake" and off.fingerprint == "f"


def test_no_shared_statements_asks_again_and_restores(bench):
    from localeval.types import Sample

    inner = _FakeJudge()
    ctx = Judging(judge=inner, lang="en")
    s = Sample(id="1", question="Q?", answer="A.", contexts=["C."], reference="R.")
    ctx.ask("statements", Statements, s, target="answer")
    ctx.ask("statements", Statements, s, target="answer")
    assert inner.asked == ["statements"]  # memoised
    with bench.no_shared_statements():
        ctx.ask("statements", Statements, s, target="answer")
        ctx.ask("statements", Statements, s, target="answer")
    assert inner.asked == ["statements"] * 3
    ctx.ask("statements", Statements, s, target="answer")
    assert len(inner.asked) == 3  # the memo is back


def test_statement_inputs_for_ragas_fall_back_to_sentences(bench):
    s = SimpleNamespace(answer="One fact. Another fact.", reference="Ref.")
    a, g = bench.statements_for({"answer_correctness": {"answer_statements": ["x"],
                                                         "reference_statements": ["y"]}}, s)
    assert (a, g) == (["x"], ["y"])
    a, g = bench.statements_for({}, s)
    assert a == ["One fact.", "Another fact."] and g == ["Ref."]


def test_score_diffs_name_each_changed_score(bench):
    a = {"s1": {"faithfulness": 0.5, "answer_relevancy": None}, "s2": {"faithfulness": 1.0}}
    b = {"s1": {"faithfulness": 0.5 + 1e-12, "answer_relevancy": None}, "s2": {"faithfulness": 0.0}}
    assert bench._score_diffs(a, b) == ["s2/faithfulness: 1.0 vs 0.0"]
    assert bench._score_diffs(a, a) == []


def test_call_records_round_trip_through_json(bench):
    import dataclasses
    import json

    r = rec(bench)
    back = bench.calls_of(json.loads(json.dumps([dataclasses.asdict(r)])))
    assert back == [r] and back[0].evaluated_tokens == 40


def test_parallel_sweep_measures_speedup_floor_and_identity(bench, tiny_gguf, tmp_path):
    """``bench_suite.py --parallel 1,2``: real runs on the tiny model, figures and identity."""
    import json

    out = tmp_path / "par.json"
    report = bench.main(["--model", str(tiny_gguf), "--samples", "3", "--parallel", "2",
                         "--quote-bias", "--threads", "2", "--n-ctx", "2048",
                         "--parallel-metrics", "context_precision,nv_answer_accuracy",
                         "--floor-prefix", "64", "--json", str(out)])
    rows = report["rows"]
    assert [r["parallel"] for r in rows] == [1, 2]  # N = 1 is always the reference
    assert rows[1]["scores_identical_to_n1"] is True
    assert rows[0]["generated"] == rows[1]["generated"] > 0
    for r in rows:
        assert r["wall_s"] > 0 and r["floor_batched_s"] > 0 and r["samples_per_s"] > 0
        # rounded to 2 decimals: off by at most 0.005 however small the ratio
        assert r["speedup_vs_n1"] == pytest.approx(rows[0]["wall_s"] / r["wall_s"], abs=0.0051)
    assert rows[1]["tokens_per_decode"] > 1  # two sequences shared decodes
    assert all(r["pp_tok_s"] > 0 and r["tgN_tok_s"] > 0 for r in rows)
    for r in rows:  # the floor at the run's own shapes, and the fresh-prompt one beside it
        shape = r["shape"]
        assert shape["suffix"] * r["calls"] <= r["evaluated_prompt"] + r["calls"]
        assert shape["gen_position"] >= shape["prefix"] + shape["suffix"] - 1
        assert r["floor_batched_fresh_s"] > 0 and r["fresh_pp_tok_s"] > 0
    assert rows[1]["rows_per_generation_decode"] > 1
    assert json.loads(out.read_text())["rows"] == rows


def test_run_suite_counts_only_the_samples_calls(bench, tiny_gguf, bias, monkeypatch):
    """The per-sample figures hold the sample's own judge calls: no judge check
    before each sample (its probe calls were counted as the sample's once)."""
    monkeypatch.setenv("LOCALEVAL_JUDGE_CHECK", "1")  # as a user's shell has it
    from localeval.cli.example import example_path
    from localeval.dataset import load_dataset
    from localeval.embed import CachedEmbedder
    from localeval.judge import LlamaJudge
    from localeval.testing import HashEmbedder

    sample = load_dataset(example_path()).samples[0]
    judge = bench.MeteredJudge(LlamaJudge(tiny_gguf, n_threads=2, n_ctx=2048, logit_bias=bias))
    try:
        run = bench.run_suite([sample], judge, CachedEmbedder(HashEmbedder(), None),
                              ["context_precision"], seed=0, verdicts="hard")
    finally:
        judge.inner.close()
    steps = [r.step for r in judge.records]
    assert steps == ["context_precision"] * len(sample.contexts), steps
    assert {r.sample for r in judge.records} == {sample.id}
    assert run["scores"][sample.id]["context_precision"] is not None
