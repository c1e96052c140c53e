"""User-defined criteria and FactualCorrectness through real llama.cpp: the tiny
random-weight GGUF (every metric, hard and soft, the CLI with a metrics file and
a gate) and SmolLM2-135M-Instruct (a few samples: it is slow on shared cores).

A random-weight model's answers mean nothing; what these tests pin is what
must hold for any judge: the grammar yields only allowed values, soft scores
come from distributions that sum to one over exactly the allowed values, a
1-10 scale (whose "1" and "10" share a first token) gets probability on every
value, and everything the user defines reaches results, report and gates.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

import localeval
from localeval.cli.app import example_path
from localeval.judge import JudgeRequest, LlamaJudge
from localeval.metrics import (AspectCritic, FactualCorrectness, GEval, InstanceRubrics,
                               RubricsScore)
from localeval.metrics.schemas import rating_schema

RUBRIC = {1: "Wrong or off-topic.", 2: "Partly right.", 3: "Right and complete."}
STEPS = ("Check that the answer responds to the question.",
         "Check that it names the figures the question asks for.")


def metrics():
    return [AspectCritic(name="polite", definition="Is the answer polite?"),
            AspectCritic(name="polite3", definition="Is the answer polite?", strictness=3),
            RubricsScore(name="complete", rubrics=RUBRIC),
            InstanceRubrics(column="rubric"),
            GEval(name="helpful", criteria="Is the answer helpful?", evaluation_steps=STEPS,
                  scale=(1, 10)),
            GEval(name="clear", criteria="Is the answer clear?"),
            FactualCorrectness(),
            FactualCorrectness(mode="recall", atomicity="high", coverage="high")]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    pick = [r for r in rows if r["id"] in ("en-01", "ja-01")]
    for r in pick:
        r["rubric"] = RUBRIC
    path = tmp_path_factory.mktemp("crit") / "three.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in pick), "utf-8")
    return path


def _check(result, soft):
    keys = {m.key for m in metrics()}
    assert set(result.summary["metrics"]) == keys
    for rec in result.records():
        for key in keys:
            value = rec["scores"][key]
            assert value is not None, (key, rec["errors"].get(key))
            assert 0.0 <= value <= 1.0, (key, value)
        d = rec["details"]
        assert d["complete"]["rating"] in RUBRIC and d["instance_rubrics"]["rating"] in RUBRIC
        assert 1 <= d["helpful"]["rating"] <= 10
        assert len(d["polite3"].get("votes", [1, 2, 3])) == 3
        if soft:
            for key, n in (("complete", 3), ("instance_rubrics", 3), ("helpful", 10),
                           ("clear", 5)):
                dist = d[key]["distribution"]
                # rounded to 6 decimals in the details
                assert len(dist) == n and math.fsum(dist.values()) == pytest.approx(1.0, abs=1e-5), key
                assert min(dist.values()) >= 0.0
            assert 0.0 <= d["polite"]["p_yes"] <= 1.0
            assert d["polite"]["p_yes"] == pytest.approx(rec["scores"]["polite"])
    sig = result.summary["signature"]["prompts"]
    assert {"aspect_critic:polite", "rubric_score:complete", "geval:helpful",
            "geval:clear", "claims", "claim_verdicts"} <= set(sig)


@pytest.mark.parametrize("verdicts", ["hard", "soft"])
def test_every_new_judge_metric_on_the_tiny_gguf(tiny_gguf, data, tmp_path, verdicts):
    # No quote bias: with it the random model's claim lists come back empty, and the
    # claim verdict step would never run. Its long strings fit a 4096 context.
    kw = dict(judge=str(tiny_gguf), judge_options={"n_ctx": 4096},
              embedder=False, progress=False, judge_check=False, verdicts=verdicts)
    first = localeval.evaluate(data, metrics(), cache=tmp_path / "c.sqlite", **kw)
    _check(first, verdicts == "soft")
    if verdicts == "hard":  # seeded votes and written-once steps: reproducible
        again = localeval.evaluate(data, metrics(), cache=False, **kw)
        assert again.records() == first.records()


def test_soft_scores_on_a_1_to_10_scale_cover_every_value(tiny_gguf):
    """"1" and "10" share a first token: the probability tree still sums to one."""
    judge = LlamaJudge(tiny_gguf, n_threads=1)
    try:
        for values in ((1, 2, 3, 4, 5), tuple(range(1, 11)), tuple(range(0, 11)), (1, 10, 100)):
            req = JudgeRequest(step="t", schema=rating_schema(values), prob_field="score",
                               messages=({"role": "user", "content": "Rate it."},))
            reply = judge.ask(req)
            probs = reply.probs[0]
            assert set(probs) == {str(v) for v in values}
            assert math.fsum(probs.values()) == pytest.approx(1.0)
            assert reply.output.score in values
    finally:
        judge.close()


_DRIVER = ("import json, os, sys, localeval; "
           "localeval.configure(logit_bias={int(k): v for k, v in "
           "json.loads(os.environ['TEST_BIAS']).items()}); "
           "from localeval.cli.app import main; sys.exit(main(sys.argv[1:]))")
TOML = """
[polite]
type = "aspect_critic"
definition = "Is the answer polite?"

[complete]
type = "rubrics_score"
rubrics = { 1 = "Wrong.", 2 = "Partly right.", 3 = "Right and complete." }
"""


def _cli(args, bias):
    env = dict(os.environ, TEST_BIAS=json.dumps(bias))
    return subprocess.run([sys.executable, "-c", _DRIVER, *args], env=env, capture_output=True,
                          text=True, timeout=600)


def test_cli_metrics_file_report_and_gate(tiny_gguf, bias, data, tmp_path):
    (tmp_path / "criteria.toml").write_text(TOML, encoding="utf-8")
    base = ["run", str(data), "--judge", str(tiny_gguf), "--n-ctx", "4096", "--embedder",
            "none", "--metrics-file", str(tmp_path / "criteria.toml"), "--verdicts", "soft",
            "--no-judge-check", "--cache", str(tmp_path / "c.sqlite")]
    ok = _cli(base + ["-m", "polite,complete,exact_match", "-o", str(tmp_path / "a"),
                      "--fail-under", "polite=0", "--json"], bias)
    assert ok.returncode == 0, ok.stderr
    summary = json.loads(ok.stdout)
    assert set(summary["metrics"]) == {"polite", "complete", "exact_match"}
    assert "polite" in (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    # P(yes) of a random model is never exactly 1: a gate at 1.0 fails (exit 1)
    gate = _cli(base + ["-m", "polite", "-o", str(tmp_path / "b"), "--fail-under",
                        "polite=1.0", "--quiet"], bias)
    assert gate.returncode == 1 and "gate failed" in gate.stderr and "polite" in gate.stderr
    # without -m the file's metrics run
    alone = _cli(base + ["-o", str(tmp_path / "c"), "--json"], bias)
    assert alone.returncode == 0 and set(json.loads(alone.stdout)["metrics"]) == {
        "polite", "complete"}
    # a bad file: one message naming file and table, exit 2, no traceback
    (tmp_path / "bad.toml").write_text("[rude]\ntype = 'aspect_critic'\n", encoding="utf-8")
    bad = _cli(["run", str(data), "--metrics-file", str(tmp_path / "bad.toml"), "-o",
                str(tmp_path / "d")], bias)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "bad.toml" in bad.stderr and "[rude]" in bad.stderr


def test_smollm2_judges_the_new_metrics(smollm2, data):
    """A real instruct judge on two samples: scored (or a judge failure detected: the example
    copied, nothing extracted from a non-empty answer), soft distributions over the allowed
    values only."""
    ms = [AspectCritic(name="polite", definition="Is the answer polite?"),
          RubricsScore(name="complete", rubrics=RUBRIC),
          GEval(name="helpful", criteria="Is the answer helpful?", evaluation_steps=STEPS,
                scale=(1, 10)),
          FactualCorrectness(mode="precision", atomicity="high", coverage="high")]
    res = localeval.evaluate(data, ms, judge=str(smollm2), embedder=False, cache=False,
                             progress=False, judge_check=False, verdicts="soft")
    for rec in res.records():
        for m in ms:
            value = rec["scores"][m.key]
            if value is None:
                reason = rec["errors"][m.key]
                assert reason in ("judge copied the prompt's example",
                                  "judge extracted nothing from a non-empty answer"), (m.key, reason)
                continue
            assert 0.0 <= value <= 1.0
        for key, n in (("complete", 3), ("helpful", 10)):
            if rec["scores"][key] is not None:
                dist = rec["details"][key]["distribution"]
                assert len(dist) == n
                assert math.fsum(dist.values()) == pytest.approx(1.0, abs=1e-5)
    scored = sum(v is not None for rec in res.records() for v in rec["scores"].values())
    assert scored >= 4, "most of the judge's answers count"
