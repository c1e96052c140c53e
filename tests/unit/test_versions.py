"""``localeval diff``: two versions of a pipeline on the bundled example, paired and compared.

The base is the bundled example, the new version a copy with five answers
degraded and its ids dropped (so samples pair by question). Text metrics
(BLEU, ROUGE-L) need no judge, so every run here takes a fraction of a second.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from versions_util import DEGRADED, degraded_copy, ragas_export, run

from localeval.cli.app import example_path, main
from localeval.stats import sign_flip
from localeval.testing import assert_not_worse
from localeval.versions import diff_runs
from localeval.versions.estimate import RANDOM_METHOD


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("versions")
    data2 = degraded_copy(tmp / "v2.jsonl")
    base = run(example_path(), tmp / "v1")
    new = run(data2, tmp / "v2")
    return tmp, base, new, data2


def _sign_flip_ci(d, metric: str, seed: int = 0, n: int = 9999) -> tuple[float, float]:
    """40 pairs: the paired randomization interval (random sign vectors, seeded)."""
    m = next(x for x in d.metrics if x.metric == metric)
    x = np.array([s.base for s in m.scored])
    y = np.array([s.new for s in m.scored])
    return sign_flip(y - x, n_resamples=n, seed=seed).ci


def test_pairs_by_question_and_names_the_degraded_samples(versions):
    tmp, base, new, _ = versions
    d = diff_runs(base, new, base_data="example")
    assert d.pairing.rule == "question" and len(d.pairing.pairs) == 40
    assert not d.pairing.only_a and not d.pairing.only_b
    assert "40 samples paired by question" in d.pairing_text()
    rouge = next(m for m in d.metrics if m.metric == "rougeL")
    worst = {s.base_id for s in rouge.worst(len(DEGRADED))}
    assert worst == set(DEGRADED)
    assert rouge.counts()["worse"] == 8 and rouge.counts()["unchanged"] == 32
    assert rouge.judge.diff == pytest.approx(rouge.mean_new - rouge.mean_base)
    for m in d.metrics:
        lo, hi = _sign_flip_ci(d, m.metric)
        assert m.judge.method == RANDOM_METHOD and "only 40 pairs" in m.judge.caveat
        assert m.judge.ci[0] == pytest.approx(lo, abs=1e-12)
        assert m.judge.ci[1] == pytest.approx(hi, abs=1e-12)
    assert rouge.verdict() == "worse" and rouge.sentence().startswith("new is worse on rougeL by")


def test_a_shuffled_reindexed_ragas_export_gives_the_same_result(versions):
    tmp, base, new, data2 = versions
    export = ragas_export(new, data2, tmp / "v2_ragas.csv")
    a = diff_runs(base, new).to_dict()
    db = diff_runs(base, export)
    b = db.to_dict()
    assert b["pairing"]["rule"] == "question" and b["pairing"]["paired"] == 40
    for ma, mb in zip(a["metrics"], b["metrics"]):
        assert ma["estimates"][0]["value"] == pytest.approx(mb["estimates"][0]["value"], abs=1e-12)
        assert [ma["estimates"][0][k] for k in ("low", "high")] == pytest.approx(
            [mb["estimates"][0][k] for k in ("low", "high")], abs=1e-9)
        assert ma["counts"] == mb["counts"]
    # the export names its samples by row; the worst five are the degraded questions
    rouge = next(m for m in db.metrics if m.metric == "rougeL")
    assert {s.base_id for s in rouge.worst(len(DEGRADED))} == set(DEGRADED)


def test_a_deepeval_export_mixes_with_a_localeval_run(versions):
    tmp, base, new, _ = versions
    cases = []
    for ln in (new / "results.jsonl").read_text().splitlines():
        r = json.loads(ln)
        cases.append({"name": f"test_case_{len(cases)}", "input": r["question"],
                      "metrics_data": [{"name": k, "score": v, "success": True}
                                       for k, v in r["scores"].items()]})
    export = tmp / "v2_deepeval.json"
    export.write_text(json.dumps({"test_results": cases[::-1]}))
    a, b = diff_runs(base, new), diff_runs(base, export)
    assert b.pairing.rule == "question" and len(b.pairing.pairs) == 40
    assert [m.judge.ci for m in a.metrics] == [m.judge.ci for m in b.metrics]


def test_cli_writes_three_files_says_so_and_gates(versions, capsys):
    tmp, base, new, data2 = versions
    out = tmp / "cli"
    code = main(["diff", str(base), str(new), "--base-data", "example", "--new-data",
                 str(data2), "-o", str(out), "--fail-if-worse", "rougeL"])
    err = capsys.readouterr().err
    assert code == 1 and "gate failed: rougeL: new is worse by" in err
    for name in ("diff.json", "diff.md", "diff.html"):
        assert (out / name).is_file() and f"wrote {out / name}" in err
    page = (out / "diff.html").read_text(encoding="utf-8")
    assert 'class="del"' in page and 'class="ins"' in page  # the answers' change
    assert '<span class="ins">I do not know; please ask someone else</span>' in page
    summary = json.loads((out / "diff.json").read_text())
    assert summary["metrics"][0]["estimates"][0]["kind"] == "judge"
    # a margin wider than the loss passes; the reverse direction passes at margin 0
    # (without --base-data/--new-data, and then reversed: other settings, so --overwrite)
    assert main(["diff", str(base), str(new), "-o", str(out), "--fail-if-worse",
                 "rougeL=0.5,bleu=0.5", "--overwrite"]) == 0
    assert main(["diff", str(new), str(base), "-o", str(out), "--fail-if-worse", "all",
                 "--overwrite"]) == 0


def test_assert_not_worse(versions):
    _, base, new, _ = versions
    with pytest.raises(AssertionError, match="rougeL: new is worse by"):
        assert_not_worse(base, new, {"rougeL": 0.0})
    d = assert_not_worse(base, new, {"rougeL": 0.5})
    assert d.metrics


@pytest.mark.parametrize("spec", ["rougeL=x", "rougeL=-1", "=0.1"])
def test_bad_gate_is_exit_2(versions, spec, capsys):
    _, base, new, _ = versions
    assert main(["diff", str(base), str(new), "--fail-if-worse", spec]) == 2
    assert "--fail-if-worse" in capsys.readouterr().err
