"""The judge check (``localeval judge check``, and the check before every run).

A judge that answers right by rule (``OracleJudge``) must be called fit on
every judge metric, and judges that answer at random or always the same must
be called unfit; the result is cached; the check before a run changes no score
and keeps its usage apart. The real llama.cpp path (tiny GGUF in a subprocess,
SmolLM2) is in tests/model/test_judge_check_real.py.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import localeval
from localeval.cache import Cache
from localeval.cli.app import main
from localeval.config import reset
from localeval.judge import CachedJudge
from localeval.judge_check import KIND_METRICS, QUICK_PAIRS, load_probes, probes_for, run_judge_check
from localeval.metrics import Judging, NoJudge, parse_metrics, registry, score_one
from localeval.testing import HashEmbedder, OracleJudge, RandomJudge, ScriptedJudge
from localeval.types import Sample

JUDGE_METRICS = sorted(n for n, c in registry().items() if c.uses_judge)
EVERY = JUDGE_METRICS + ["noise_sensitivity:mode=irrelevant"]


@pytest.fixture(autouse=True)
def _fresh_config(monkeypatch):
    """Default configuration: the judge check on (a suite may switch it off for other tests)."""
    monkeypatch.delenv("LOCALEVAL_JUDGE_CHECK", raising=False)
    reset()
    yield
    reset()


# -- the probe set -------------------------------------------------------------------------
def test_every_judge_metric_has_ten_pairs_in_three_languages():
    for name in JUDGE_METRICS:
        probes = probes_for(name)
        assert len(probes) >= 10, name
        assert {p.lang for p in probes} == {"en", "ja", "zh"}, name
    covered = {n for names in KIND_METRICS.values() for n in names}
    assert covered == set(JUDGE_METRICS)


def test_a_quick_check_takes_every_language_in_turn():
    for name in JUDGE_METRICS:
        quick = probes_for(name, QUICK_PAIRS)
        assert len(quick) == QUICK_PAIRS and {p.lang for p in quick} == {"en", "ja", "zh"}
        assert len({p.id for p in quick}) == QUICK_PAIRS
        assert {p.id for p in quick} <= {p.id for p in probes_for(name)}


def test_probe_variants_differ_and_have_what_their_metrics_need():
    probes = load_probes()
    assert len({p.id for p in probes}) == len(probes)
    for p in probes:
        assert p.good.to_dict() != p.bad.to_dict()
        assert p.good.id.endswith("/good") and p.bad.id.endswith("/bad")
        for m in parse_metrics(",".join(KIND_METRICS[p.kind])):
            assert not m.missing_fields(p.good) and not m.missing_fields(p.bad), (p.id, m.key)


# -- verdicts ------------------------------------------------------------------------------
@pytest.mark.parametrize("verdicts", ["hard", "soft"])
def test_a_judge_that_answers_right_is_fit_on_every_metric(verdicts):
    judge = OracleJudge()
    res = run_judge_check(judge, EVERY, embedder=HashEmbedder(dim=256), verdicts=verdicts)
    assert res.fit and res.verdict == "fit"
    assert set(res.metrics) == set(EVERY) and not res.skipped
    for key, m in res.metrics.items():
        assert m.pairs >= 10 and m.unscored == 0, key
        assert m.pass_rate >= 0.9, (key, m.misses)
    assert res.copied_calls == 0, "the oracle writes from the inputs, never the example"
    assert res.usage["calls"] == len(judge.requests) > 300
    assert res.summary_line().startswith("judge check: fit (")


def test_a_judge_answering_at_random_is_not_fit():
    res = run_judge_check(RandomJudge(seed=7), EVERY, embedder=HashEmbedder(dim=256))
    assert not res.fit and res.verdict == "unfit"
    assert res.pass_rate < 0.5
    assert all(m.verdict != "fit" for m in res.metrics.values())
    assert "UNFIT" in res.summary_line() and "not evidence" in res.summary_line()


def test_a_judge_that_always_says_the_same_passes_no_pair():
    res = run_judge_check(ScriptedJudge(auto=True), EVERY, embedder=HashEmbedder(dim=256))
    assert res.verdict == "unfit"
    for key, m in res.metrics.items():
        # answer_correctness is checked on its judge part: its embedding share
        # alone would order these pairs right with any judge
        assert m.passed == 0, (key, m.to_dict())
        assert m.ties + m.unscored == m.pairs, key


def test_the_verdict_is_the_worst_metric_and_thresholds_are_checked_raw():
    def half_right(request):
        return OracleJudge().ask(request).output.model_dump()

    oracle = OracleJudge()
    # faithfulness right, context_precision always "useful": fit and unfit
    judge = ScriptedJudge({"statements": lambda r: oracle.ask(r).output.model_dump(),
                           "faithfulness_verdicts": half_right,
                           "context_precision": {"reason": "r", "verdict": 1}})
    res = run_judge_check(judge, ["faithfulness:threshold=0.8", "context_precision", "mrr"])
    assert res.metrics["faithfulness"].verdict == "fit"
    assert res.metrics["context_precision"].verdict == "unfit"
    assert res.verdict == "unfit"
    assert "mrr" not in res.metrics and "mrr" not in res.skipped  # no judge: not a judge test


def test_metrics_that_embed_are_skipped_without_an_embedder():
    res = run_judge_check(OracleJudge(), ["answer_relevancy", "faithfulness"])
    assert res.skipped == {"answer_relevancy": "needs an embedding model, and none is loaded"}
    assert list(res.metrics) == ["faithfulness"] and res.fit


# -- cache -----------------------------------------------------------------------------------
def test_a_second_check_makes_no_judge_call(tmp_path):
    store = Cache(tmp_path / "c.sqlite")
    inner = OracleJudge()
    first = run_judge_check(CachedJudge(inner, store), ["faithfulness", "context_recall"],
                        cache=store)
    n = len(inner.requests)
    assert n > 0 and first.fit
    again = run_judge_check(CachedJudge(inner, store), ["faithfulness", "context_recall"],
                        cache=store)
    assert len(inner.requests) == n, "cached: no new judge call"
    assert again.usage["calls"] == 0, "per-metric results come from the cache"
    assert again.to_dict()["metrics"] == first.to_dict()["metrics"]
    # without the per-metric results the judge call cache still answers every call
    fresh = run_judge_check(CachedJudge(inner, Cache(tmp_path / "c.sqlite")), ["faithfulness"],
                        verdicts="hard", cache=None)
    assert len(inner.requests) == n and fresh.usage["cache_hits"] == fresh.usage["calls"] > 0


def test_the_cached_result_depends_on_the_judge(tmp_path):
    store = Cache(tmp_path / "c.sqlite")
    assert run_judge_check(OracleJudge(), ["faithfulness"], cache=store).fit
    assert not run_judge_check(RandomJudge(3), ["faithfulness"], cache=store).fit


# -- one implementation of "score one metric on one sample safely" --------------------------
def test_score_one_names_what_is_missing_and_catches_model_failures():
    m = parse_metrics("answer_correctness")[0]
    s = Sample(id="x", question="q", answer="a")
    assert score_one(m, s, Judging()).reason == "missing reference"
    full = Sample(id="y", question="q", answer="a", contexts=["c"], reference="r")
    assert score_one(parse_metrics("faithfulness")[0], full, Judging()).reason == str(NoJudge())
    from localeval.metrics import missing_reason

    assert missing_reason(m, s) == "missing reference"


# -- before every run ----------------------------------------------------------------------
DATA = [
    {"id": "a", "question": "When does the museum open?", "answer": "The museum opens at 9.",
     "contexts": ["The museum opens at 9 and closes at 17."], "reference": "It opens at 9."},
    {"id": "b", "question": "When does the museum open?", "answer": "The museum opens at 6.",
     "contexts": ["The museum opens at 9 and closes at 17."], "reference": "It opens at 9."},
]
RUN_METRICS = ["faithfulness", "answer_relevancy", "context_recall", "nv_answer_accuracy",
               "rougeL"]


def _st(summary):
    """The judge check record: one key, whether or not a judge was loaded here."""
    assert "self_test" not in (summary.get("judge_health") or {})
    assert "judge_self_test" not in summary
    return summary.get("judge_check")


def _run(judge, **kw):
    return localeval.evaluate(DATA, RUN_METRICS, judge=judge, embedder=HashEmbedder(dim=256),
                              cache=False, progress=False, **kw)


def test_the_run_checks_its_judge_first_and_no_score_changes():
    info, warned = [], []
    checked = _run(OracleJudge(), judge_check=True, on_info=info.append,
                   on_warning=warned.append)
    plain = _run(OracleJudge(), judge_check=False)
    assert checked.records() == plain.records()
    # the check's calls are not in the run's usage (only the KV reuse of the first
    # call differs: the check's last prompt was in the judge's cache before it)
    for k in ("calls", "prompt_tokens", "generated_tokens", "cache_hits"):
        assert checked.summary["usage"][k] == plain.summary["usage"][k], k
    st = _st(checked.summary)
    assert st["verdict"] == "fit" and st["usage"]["calls"] > 0
    assert {m["pairs"] for m in st["metrics"].values()} == {QUICK_PAIRS}, "the quick check"
    assert set(st["metrics"]) == {"faithfulness", "answer_relevancy", "context_recall",
                                  "nv_answer_accuracy"}
    assert info == [st["line"]] and not warned
    assert _st(plain.summary) == {
        "verdict": "skipped", "reason": "switched off (--no-judge-check)", "metrics": {},
        "line": "judge check: skipped (switched off (--no-judge-check))"}
    # the oracle scored the faithful sample above the unfaithful one
    assert checked.scores[0]["faithfulness"].value > checked.scores[1]["faithfulness"].value


def test_a_run_with_an_unfit_judge_warns_in_plain_words():
    warned = []
    res = _run(RandomJudge(1), judge_check=True, on_warning=warned.append)
    assert _st(res.summary)["verdict"] == "unfit"
    assert any(w.startswith("judge check: UNFIT") and "not evidence" in w for w in warned)


def test_the_check_is_off_by_configuration_and_absent_without_judge_metrics(monkeypatch):
    monkeypatch.setenv("LOCALEVAL_JUDGE_CHECK", "0")
    assert _st(_run(OracleJudge()).summary)["verdict"] == "skipped"
    monkeypatch.delenv("LOCALEVAL_JUDGE_CHECK")
    assert _st(_run(OracleJudge()).summary)["verdict"] == "fit"
    localeval.configure(judge_check=False)
    assert _st(_run(OracleJudge()).summary)["verdict"] == "skipped"
    res = localeval.evaluate(DATA, ["rougeL"], judge=OracleJudge(), cache=False, progress=False,
                             judge_check=True)
    assert _st(res.summary) is None
    assert _st(_run(False, judge_check=True).summary)["reason"] == "no judge model"


def test_a_crashing_judge_check_does_not_end_the_run():
    def statements(request):
        if "/" in request.sample.id:  # a probe ("grounding-en-1/good"), not the run's data
            raise RuntimeError("boom")
        return {"statements": ["s"]}

    judge = ScriptedJudge({"statements": statements,
                           "faithfulness_verdicts": {"verdicts": [{"reason": "r", "verdict": 1}]}})
    res = localeval.evaluate(DATA, ["faithfulness"], judge=judge, cache=False, progress=False,
                             judge_check=True, on_warning=lambda m: None)
    st = _st(res.summary)
    assert st["verdict"] == "error" and "judge check failed: RuntimeError: boom" in st["line"]
    assert res["faithfulness"] == 1.0


# -- the command line ------------------------------------------------------------------------
def test_judge_check_command_exit_codes_and_output(capsys):
    localeval.configure(judge=OracleJudge(), embedder=HashEmbedder(dim=256))
    assert main(["judge", "check", "-m", "faithfulness,answer_relevancy", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "faithfulness" in out and "10/10" in out and "judge check: fit" in out
    assert main(["judge", "check", "-m", "context_recall", "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "fit" and doc["metrics"]["context_recall"]["pairs"] == 10
    localeval.configure(judge=RandomJudge(2))
    assert main(["judge", "check", "-m", "faithfulness,context_precision", "--no-cache"]) == 1
    assert "UNFIT" in capsys.readouterr().out
    assert main(["judge", "check", "-m", "mrr"]) == 2  # nothing to check: usage error
    assert "nothing to check" in capsys.readouterr().err
    assert main(["judge", "check", "-m", "no_such_metric"]) == 2
    assert main(["judge", "check", "--judge", "does/not/exist.gguf"]) == 3
    assert "does/not/exist.gguf" in capsys.readouterr().err


def test_run_command_checks_the_judge_and_can_skip_it(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in DATA) + "\n", encoding="utf-8")
    localeval.configure(judge=OracleJudge(), embedder=HashEmbedder(dim=256))
    base = ["run", str(data), "-m", "faithfulness,context_recall", "--no-cache"]
    assert main(base + ["-o", str(tmp_path / "a")]) == 0
    assert "judge check: fit" in capsys.readouterr().err
    assert main(base + ["-o", str(tmp_path / "b"), "--no-judge-check"]) == 0
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in "ab")
    assert _st(a)["verdict"] == "fit"
    assert _st(b)["verdict"] == "skipped"
    assert (tmp_path / "a" / "results.jsonl").read_text() == \
        (tmp_path / "b" / "results.jsonl").read_text()


def test_oracle_statements_come_from_the_text_and_evasive_answers_are_noncommittal():
    judge = OracleJudge()
    ctx = Judging(judge=judge, embedder=HashEmbedder())
    s = Sample(id="e", question="When does the shop open?", answer="I'm not sure, I don't know.")
    sc = score_one(parse_metrics("answer_relevancy")[0], s, ctx)
    assert sc.value == 0.0 and sc.details["all_noncommittal"]
    steps = Counter(r.step for r in judge.requests)
    assert steps == {"answer_relevancy": 1}


def test_the_run_judge_check_takes_as_many_pairs_as_asked():
    quick = _st(_run(OracleJudge(), judge_check=True).summary)
    one = _st(_run(OracleJudge(), judge_check=1).summary)
    assert {m["pairs"] for m in quick["metrics"].values()} == {4}
    assert {m["pairs"] for m in one["metrics"].values()} == {1}
    with pytest.raises(localeval.UsageError):
        _run(OracleJudge(), judge_check=0)
