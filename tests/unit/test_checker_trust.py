"""A checker is judged as a judge is: the judge check's faithfulness probes, judge health,
the signature that keeps a checker's faithfulness apart from a judge's in ``diff`` and
``history``, ``validate`` against labels and ``compare`` against a judge's scores."""

from __future__ import annotations

import json

from checker_fake import FakeChecker, FakeSpanChecker, words_in

from localeval.cli.app import main
from localeval.judge import CheckerJudge
from localeval.judge_check import run_judge_check
from localeval.results import read_record
from localeval.run import evaluate
from localeval.testing import OracleJudge

ROWS = [
    {"id": f"q{i}", "question": "When does the library open?",
     "answer": ("The library opens at 9." if i % 2 else
                "The library opens at 9. It serves free lunch."),
     "contexts": ["The library opens at 9. It closes at 17."]}
    for i in range(12)
]


def _run(folder, judge, **kw):
    return evaluate(ROWS, "faithfulness", judge=judge, embedder=False, cache=False,
                              judge_check=False, progress=False, out_dir=folder, **kw)


def test_judge_check_runs_faithfulness_probes_on_a_checker():
    result = run_judge_check(CheckerJudge(FakeChecker(words_in)), ["faithfulness"])
    check = result.metrics["faithfulness"]
    assert check.pairs > 0 and check.unscored == 0
    assert result.judge.startswith("checker:")
    # a checker that says the same of everything orders no pair: unfit
    constant = run_judge_check(CheckerJudge(FakeChecker(lambda d, c: 0.7)), ["faithfulness"])
    assert constant.metrics["faithfulness"].verdict == "unfit"
    assert constant.metrics["faithfulness"].passed == 0


def test_health_flags_a_checker_with_one_score(tmp_path):
    res = _run(tmp_path / "c", CheckerJudge(FakeChecker(lambda d, c: 0.9)))
    warnings = res.summary["judge_health"]["warnings"]
    assert any("faithfulness" in w for w in warnings)


def test_signature_keeps_checker_and_judge_apart(tmp_path):
    _run(tmp_path / "checker", CheckerJudge(FakeChecker(words_in)))
    _run(tmp_path / "judge", OracleJudge())
    a, b = read_record(tmp_path / "checker"), read_record(tmp_path / "judge")
    notes, same = a.identity.setup_notes(b.identity, "checker", "judge")
    assert not same
    assert any(n.startswith("the judge differs: checker checker:fake-pair@") for n in notes)
    assert any("may be the judge's" in n for n in notes)
    assert a.identity.folder_key() != b.identity.folder_key()


def test_validate_and_compare_take_a_checker_run(tmp_path, capsys):
    _run(tmp_path / "checker", CheckerJudge(FakeChecker(words_in)), verdicts="soft")
    _run(tmp_path / "judge", OracleJudge())
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps({"id": r["id"], "metric": "faithfulness",
                                            "label": int(str(r["id"])[1:]) % 2})
                                for r in ROWS))
    assert main(["validate", str(tmp_path / "checker"), str(labels), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "faithfulness" in json.dumps(out)
    assert main(["estimate", str(tmp_path / "checker"), str(labels), "--json", "-m", "faithfulness",
                 "-o", str(tmp_path / "est")]) == 0
    assert "faithfulness" in capsys.readouterr().out
    code = main(["compare", str(tmp_path / "checker"), str(tmp_path / "judge"),
                 "-o", str(tmp_path / "cmp"), "--json"])
    assert code == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["metrics"]["faithfulness"]["n"] == len(ROWS)


def test_report_marks_a_span_checkers_unsupported_spans(tmp_path):
    _run(tmp_path / "span", CheckerJudge(FakeSpanChecker({"free lunch": 0.91})))
    page = (tmp_path / "span" / "report.html").read_text(encoding="utf-8")
    assert '<mark class="unsupported" title="P(unsupported) 0.91">free lunch</mark>' in page
    assert "spans the checker found unsupported" in page
    # a generative judge's run marks nothing
    _run(tmp_path / "oracle", OracleJudge())
    assert '<mark class="unsupported"' not in (tmp_path / "oracle" / "report.html").read_text(
        encoding="utf-8")
