"""The judge check through real llama.cpp: the CLI in a subprocess, a run, and SmolLM2.

The tiny random-weight GGUF shows the machinery end to end (the command runs,
reports a verdict and exits by it; a run records the check; worker runs say why
they skip it). SmolLM2-135M-Instruct, a real but far too small instruct model,
must be called NOT fit: it rates every answer "fully matches" and selects every
context sentence, whatever the pair. Measured on the whole probe set (2 shared CPU
cores): 0/10 pairs ordered right on context_precision, context_utilization,
context_recall, context_entity_recall, context_relevancy and nv_answer_accuracy;
1/10 faithfulness and nv_response_groundedness, 2/10 nv_context_relevance, 3/10
answer_relevancy. The test checks the two cheapest metrics (rating and selection
steps, ~2 minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import localeval
from localeval.cache import Cache
from localeval.judge import CachedJudge, load_judge
from localeval.judge_check import QUICK_PAIRS, run_judge_check

# Rating steps write no free text, so the random-weight model needs no quote bias.
CHEAP = "nv_answer_accuracy"


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("LOCALEVAL_JUDGE_CHECK", None)  # the default: the judge check is on
    return env


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "localeval.cli", *args, "--cache", str(cache)],
                          capture_output=True, text=True, timeout=600, env=_env())


def test_judge_check_command_in_a_subprocess(tiny_gguf, tmp_path):
    cache = tmp_path / "c.sqlite"
    done = _cli("judge", "check", "--judge", str(tiny_gguf), "-m", CHEAP, "--n-ctx", "2048",
                "--json", cache=cache)
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"] in ("fit", "doubtful", "unfit")
    assert done.returncode == (0 if doc["verdict"] == "fit" else 1)
    m = doc["metrics"][CHEAP]
    assert m["pairs"] == 10 and 0 <= m["passed"] <= 10
    assert doc["judge"] == tiny_gguf.name and doc["usage"]["calls"] == 40
    # the table, from the cache this time: same verdict, no judge call
    again = _cli("judge", "check", "--judge", str(tiny_gguf), "-m", CHEAP, "--n-ctx", "2048",
                 cache=cache)
    assert again.returncode == done.returncode, again.stderr
    assert f"judge check: {doc['verdict'].upper() if doc['verdict'] != 'fit' else 'fit'}" \
        in again.stdout
    assert f"{m['passed']}/10" in again.stdout
    bad = _cli("judge", "check", "--judge", str(tmp_path / "missing.gguf"), cache=cache)
    assert bad.returncode == 3 and "Traceback" not in bad.stderr


def test_a_run_records_the_check_and_workers_say_why_they_skip_it(tiny_gguf, tmp_path):
    data = tmp_path / "d.jsonl"
    rows = [{"id": str(i), "question": "Who wrote it?", "answer": f"Ann wrote it in {1990 + i}.",
             "reference": "Ann wrote it in 1990."} for i in range(2)]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    done = _cli("run", str(data), "-m", CHEAP, "--judge", str(tiny_gguf), "--n-ctx", "2048",
                "-o", str(out), cache=tmp_path / "c.sqlite")
    assert done.returncode == 0, done.stderr
    assert "judge check:" in done.stderr
    st = json.loads((out / "summary.json").read_text())["judge_check"]
    # a run takes the quick check: QUICK_PAIRS pairs, two samples each, two judges each
    assert st["metrics"][CHEAP]["pairs"] == QUICK_PAIRS
    assert st["usage"]["calls"] == 4 * QUICK_PAIRS
    pooled = localeval.evaluate(data, [CHEAP], judge=str(tiny_gguf),
                                judge_options={"n_ctx": 2048}, workers=2, cache=False,
                                progress=False, judge_check=True)
    summary = pooled.summary
    skipped = summary["judge_check"]
    assert skipped["verdict"] == "skipped" and "worker processes" in skipped["reason"]
    assert all(sc[CHEAP].value is not None for sc in pooled.scores)


@pytest.fixture(scope="module")
def smol_judge(smollm2):
    """SmolLM2 loaded once for this module (``smollm2`` is the installed GGUF's path)."""
    judge = load_judge(str(smollm2), n_ctx=4096)
    yield judge
    judge.close()


def test_smollm2_is_not_fit_to_judge(smol_judge, tmp_path):
    store = Cache(tmp_path / "c.sqlite")
    metrics = ["context_relevancy", "nv_answer_accuracy"]
    res = run_judge_check(CachedJudge(smol_judge, store), metrics, cache=store)
    print("\n" + res.summary_line())
    for key, m in res.metrics.items():
        print(f"  {key}: {m.passed}/{m.pairs} ordered right, {m.ties} ties, "
              f"{m.unscored} unscored")
    assert not res.fit and res.verdict == "unfit"
    assert set(res.metrics) == set(metrics)
    assert all(m.pass_rate < 0.6 for m in res.metrics.values())
    assert "its scores are not evidence" in res.summary_line()
    # the same check again is answered from the cache: same result, no generation
    again = run_judge_check(CachedJudge(smol_judge, store), metrics, cache=store)
    assert again.to_dict()["metrics"] == res.to_dict()["metrics"]
    assert again.usage["calls"] == 0
