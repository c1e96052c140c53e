"""``compare``, ``validate`` and ``estimate`` say each run's judge check, as ``diff`` does: the
check in plain words in every output, and beside each judged metric (never a text metric's) a
caveat when a judge failed it; ``estimate`` says the corrected mean stays valid while the
judge-only mean is not evidence, and so does a run with ``--labels``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import localeval
from localeval.cli.app import example_path, main
from localeval.estimate import run_corrections
from localeval.testing import ScriptedJudge

UNFIT_LINE = ("judge check: UNFIT: this judge does not reliably tell good from bad on "
              "known-answer pairs (answer_correctness 1/4); its scores are not evidence")
FIT_LINE = "judge check: fit: the judge tells good from bad on known-answer pairs"
SIG = {"judge": "judge-a.gguf", "judge_fingerprint": "aaaa", "prompts_hash": "p1",
       "verdicts": "hard", "seed": 0, "lang": "auto", "repeats": 1}
AGREEMENT = "agreement with a judge that did not pass its check is not evidence of quality"
VALIDATION = "the judge also failed its judge check on known-answer pairs (unfit)"
ESTIMATE = "the labels correct the judge's bias, so the corrected means"
N = 40


def _check(verdict: str, line: str) -> dict:
    return {"judge": "judge-a.gguf", "fingerprint": "aaaa", "verdict": verdict, "line": line,
            "metrics": {}}


def _run(d: Path, shift: float = 0.0, check: dict | None = None) -> Path:
    """A run folder: answer_correctness (judged) and bleu (text) on N rows, and its summary."""
    d.mkdir(parents=True)
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i in range(N):
            v = min(1.0, max(0.0, (i % 4) / 4 + shift))
            f.write(json.dumps({"id": f"s{i}", "question": f"Question {i}?",
                                "scores": {"answer_correctness": v, "bleu": v},
                                "errors": {}, "details": {}}) + "\n")
    summary: dict = {"signature": SIG}
    if check is not None:
        summary["judge_check"] = check
    (d / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return d


def _flat(text: str) -> str:
    """Terminal text with its wrapping and table borders undone."""
    return " ".join(text.replace("│", " ").split())


def _texts(out: Path, terminal: str, stem: str) -> dict[str, str]:
    return {"terminal": _flat(terminal),
            f"{stem}.md": _flat((out / f"{stem}.md").read_text(encoding="utf-8")),
            f"{stem}.html": (out / f"{stem}.html").read_text(encoding="utf-8"),
            f"{stem}.json": (out / f"{stem}.json").read_text(encoding="utf-8")}


# -- compare -----------------------------------------------------------------------------------

def test_compare_says_each_judge_check_and_the_caveat_beside_judged_metrics(tmp_path, capsys):
    a = _run(tmp_path / "a", check=_check("unfit", UNFIT_LINE))
    b = _run(tmp_path / "b", 0.1, check=_check("fit", FIT_LINE))
    out = tmp_path / "o"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    caveat = "the judge failed its judge check on A (unfit): " + AGREEMENT
    for name, text in _texts(out, capsys.readouterr().out, "comparison").items():
        text = text.replace("&#39;", "'")
        assert "A: " + UNFIT_LINE in text, name
        assert "B: " + FIT_LINE in text, name
        assert caveat in text, name
    js = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    ac, bleu = js["metrics"]["answer_correctness"], js["metrics"]["bleu"]
    assert ac["uses_judge"] and ac["judge_caveat"] == caveat
    assert not bleu["uses_judge"] and bleu["judge_caveat"] is None
    assert js["judge_fitness"]["A"]["judge_check"] == "unfit"
    assert js["judge_fitness"]["A"]["failed"] and not js["judge_fitness"]["B"]["failed"]
    assert js["judge_fitness"]["judged_metrics"] == ["answer_correctness"]
    md = (out / "comparison.md").read_text(encoding="utf-8")
    assert next(ln for ln in md.splitlines() if ln.startswith("| answer_correctness")
                ).startswith("| answer_correctness ⚠ not evidence")
    assert next(ln for ln in md.splitlines() if ln.startswith("| bleu |"))
    assert 'id="judge-fitness"' in (out / "comparison.html").read_text(encoding="utf-8")


def test_compare_of_text_metrics_says_nothing_of_judges(tmp_path, capsys):
    a = _run(tmp_path / "a", check=_check("unfit", UNFIT_LINE))
    b = _run(tmp_path / "b", 0.1, check=_check("unfit", UNFIT_LINE))
    out = tmp_path / "o"
    assert main(["compare", str(a), str(b), "-m", "bleu", "-o", str(out)]) == 0
    texts = _texts(out, capsys.readouterr().out, "comparison")
    js = json.loads(texts.pop("comparison.json"))  # the data records both checks, unsaid
    assert js["judge_fitness"]["notes"] == [] and js["judge_fitness"]["judged_metrics"] == []
    assert js["metrics"]["bleu"]["judge_caveat"] is None
    for name, text in texts.items():
        assert "judge check" not in text and "not evidence" not in text, name


def test_compare_with_fit_judges_states_the_checks_without_caveat(tmp_path, capsys):
    a = _run(tmp_path / "a", check=_check("fit", FIT_LINE))
    b = _run(tmp_path / "b", 0.1)  # records no judge check
    out = tmp_path / "o"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    for name, text in _texts(out, capsys.readouterr().out, "comparison").items():
        assert "A: " + FIT_LINE in text, name
        assert "B: no judge check recorded" in text, name
        assert "not evidence" not in text, name


# -- validate ----------------------------------------------------------------------------------

def _binary_labels(path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "label"])
        for i in range(N):
            w.writerow([f"s{i}", "positive" if i % 4 >= 2 else "negative"])
    return path


def test_validate_says_the_judge_also_failed_its_check(tmp_path, capsys):
    run = _run(tmp_path / "a", check=_check("unfit", UNFIT_LINE))
    labels = _binary_labels(tmp_path / "labels.csv")
    out = tmp_path / "o"
    assert main(["validate", str(run), str(labels), "-o", str(out)]) == 0
    for name, text in _texts(out, capsys.readouterr().out, "validation").items():
        text = text.replace("&#39;", "'")
        assert UNFIT_LINE in text, name
        assert VALIDATION in text, name
    js = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    assert VALIDATION in js["verdicts"]["answer_correctness"]["judge_caveat"]
    assert js["verdicts"]["bleu"]["judge_caveat"] is None
    assert js["judge_fitness"]["judge_check"] == "unfit"
    said = [s for s in js["summary"] if VALIDATION in s]
    assert len(said) == 1 and said[0].startswith("answer_correctness:")


def test_validate_of_a_fit_judge_states_its_check_only(tmp_path, capsys):
    run = _run(tmp_path / "a", check=_check("fit", FIT_LINE))
    labels = _binary_labels(tmp_path / "labels.csv")
    out = tmp_path / "o"
    assert main(["validate", str(run), str(labels), "-o", str(out)]) == 0
    for name, text in _texts(out, capsys.readouterr().out, "validation").items():
        assert FIT_LINE in text, name
        assert "failed its judge check" not in text, name


# -- estimate ----------------------------------------------------------------------------------

def _estimate_labels(path: Path, n: int = 30) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "label_answer_correctness"])
        for i in range(n):
            w.writerow([f"s{i}", 1 if i % 4 >= 2 else 0])
    return path


def test_estimate_says_the_corrected_mean_stays_valid_and_the_judge_only_is_not_evidence(
        tmp_path, capsys):
    run = _run(tmp_path / "a", check=_check("unfit", UNFIT_LINE))
    labels = _estimate_labels(tmp_path / "labels.csv")
    out = tmp_path / "o"
    assert main(["estimate", str(run), str(labels), "--random-draw", "-o", str(out)]) == 0
    terminal = _flat(capsys.readouterr().out)
    md = _flat((out / "estimate.md").read_text(encoding="utf-8"))
    js = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    for name, text in (("terminal", terminal), ("estimate.md", md),
                       ("estimate.json", " ".join(js["notes"]))):
        assert UNFIT_LINE in text, name
        assert ESTIMATE in text and "judge-only means are not evidence" in text, name
    assert "⚠ not evidence" in md and "⚠ not evidence" in terminal
    assert js["judge_check"]["judge_check"] == "unfit"
    assert js["judge_check"]["judge_only_not_evidence"] is True


def test_estimate_of_a_fit_judge_adds_no_note(tmp_path, capsys):
    run = _run(tmp_path / "a", check=_check("fit", FIT_LINE))
    labels = _estimate_labels(tmp_path / "labels.csv")
    out = tmp_path / "o"
    assert main(["estimate", str(run), str(labels), "--random-draw", "-o", str(out)]) == 0
    js = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    assert not any("judge check" in n for n in js["notes"])
    assert "not evidence" not in capsys.readouterr().out
    assert js["judge_check"]["judge_only_not_evidence"] is False


def test_run_corrections_of_records_take_the_judge_check(tmp_path):
    run = _run(tmp_path / "a")
    labels = _estimate_labels(tmp_path / "labels.csv")
    records = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    plain = run_corrections(records, labels, random_draw=True)
    assert not any("judge check" in n for n in plain["notes"])
    told = run_corrections(records, labels, random_draw=True,
                           judge_check=_check("unfit", UNFIT_LINE))
    assert any(ESTIMATE in n and UNFIT_LINE in n for n in told["notes"])


@pytest.mark.filterwarnings("ignore")
def test_a_run_with_labels_and_an_unfit_judge_says_so_beside_its_corrected_means(tmp_path):
    """``run --labels``: the corrected section is computed before summary.json is written;
    the reports read the judge check beside it and say what it means for each mean."""
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()
            if x.strip()][:12]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    labels = tmp_path / "labels.csv"
    with open(labels, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "label_faithfulness"])
        for i, r in enumerate(rows):
            w.writerow([r.get("id", str(i)), i % 2])
    r = localeval.evaluate(
        data, ["faithfulness", "bleu"], judge=ScriptedJudge({}, auto=True), cache=False,
        judge_check=1, out_dir=tmp_path / "run", progress=False,
        summary_sections=lambda recs: {"corrected": run_corrections(recs, labels,
                                                                    random_draw=True)})
    assert r.summary["judge_check"]["verdict"] in ("unfit", "doubtful")
    md = _flat((tmp_path / "run" / "summary.md").read_text(encoding="utf-8"))
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8").replace("&#39;", "'")
    for name, text in (("summary.md", md), ("report.html", page)):
        assert "judge-only means are not evidence" in text, name
        assert "so the corrected means and their intervals stay valid" in text, name
