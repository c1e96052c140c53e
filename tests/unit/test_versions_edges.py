"""``localeval diff`` on awkward inputs: each a clear message or a named page section, never a
traceback, with the documented exit codes (0 done, 1 gate failed, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path

from localeval.cli.app import main
from localeval.testing import headless_dom

EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)>'


def _run(d: Path, rows: list[dict], judge: str | None = "judge-a.gguf") -> Path:
    """A run folder: results.jsonl from ``rows`` ({id, question, scores[, errors, details]})."""
    d.mkdir(parents=True)
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"errors": {}, "details": {}, **r}) + "\n")
    if judge is not None:
        (d / "summary.json").write_text(json.dumps({"signature": {
            "judge": judge, "judge_fingerprint": judge.encode().hex()[:16], "prompts_hash": "p1",
            "verdicts": "hard", "seed": 0, "lang": "auto", "repeats": 1}}))
    return d


def _rows(n: int = 12, shift: float = 0.0, metric: str = "faithfulness", **extra) -> list[dict]:
    return [{"id": f"s{i}", "question": f"Question {i}?",
             "scores": {metric: min(1.0, (i % 4) / 4 + shift), **extra}} for i in range(n)]


def _diff(tmp_path: Path, base: Path, new: Path, *args: str) -> tuple[int, Path]:
    out = tmp_path / "out"
    code = main(["diff", str(base), str(new), "-o", str(out), *args])
    return code, out


def test_samples_in_one_run_only_are_listed(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(12))
    new = _run(tmp_path / "b", _rows(10) + [{"id": "extra", "question": "New one?",
                                              "scores": {"faithfulness": 1.0}}])
    code, out = _diff(tmp_path, base, new)
    text = capsys.readouterr().out
    assert code == 0 and "2 only in base" in text and "1 only in new" in text
    page = (out / "diff.html").read_text()
    assert 'id="unpaired"' in page and "s10, s11" in page and "extra" in page
    js = json.loads((out / "diff.json").read_text())
    assert js["pairing"]["only_base"] == ["s10", "s11"] and js["pairing"]["only_new"] == ["extra"]


def test_duplicate_questions_are_a_clear_error(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(4))
    rows = _rows(4)
    for i, r in enumerate(rows):
        r["id"] = f"x{i}"  # no shared ids: pairing falls to the questions
    rows[3]["question"] = rows[1]["question"]
    new = _run(tmp_path / "b", rows)
    code, _ = _diff(tmp_path, base, new)
    err = capsys.readouterr().err
    assert code == 2 and "occurs twice" in err and "'x1'" in err and "'x3'" in err
    assert "Traceback" not in err


def test_different_judges_are_said_plainly(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(12))
    new = _run(tmp_path / "b", _rows(12, 0.1), judge="judge-b.gguf")
    code, out = _diff(tmp_path, base, new)
    text = capsys.readouterr().out
    assert code == 0 and "the judge differs" in text
    page = (out / "diff.html").read_text()
    assert "Not the same scoring set-up" in page and "judge-b.gguf" in page


def test_no_common_metric_is_exit_2(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(6))
    new = _run(tmp_path / "b", _rows(6, metric="context_recall"))
    code, out = _diff(tmp_path, base, new)
    err = capsys.readouterr().err
    assert code == 2 and "no metric in both runs" in err and not (out / "diff.html").exists()


def test_metric_unscored_everywhere_on_one_side(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(8, bleu=0.5))
    rows = _rows(8, bleu=0.4)
    for r in rows:
        r["scores"]["faithfulness"] = None
        r["errors"] = {"faithfulness": "judge output truncated"}
    new = _run(tmp_path / "b", rows)
    code, out = _diff(tmp_path, base, new, "--fail-if-worse", "faithfulness")
    err = capsys.readouterr().err
    assert code == 1 and "faithfulness: cannot show it is not worse" in err
    page = (out / "diff.html").read_text()
    assert 'id="not-compared"' in page and "unscored on every paired sample of new" in page
    assert "judge output truncated" in page and "Became unscored in new: 8" not in page
    js = json.loads((out / "diff.json").read_text())
    faith = next(m for m in js["metrics"] if m["metric"] == "faithfulness")
    assert faith["counts"]["became_unscored"] == 8


def test_a_sample_that_became_unscored_is_shown(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(12))
    rows = _rows(12)
    rows[5]["scores"]["faithfulness"] = None
    rows[5]["errors"] = {"faithfulness": "prompt too long"}
    new = _run(tmp_path / "b", rows)
    code, out = _diff(tmp_path, base, new)
    assert code == 0
    page = (out / "diff.html").read_text()
    assert "Became unscored in new: 1" in page and "prompt too long" in page


def test_unknown_metric_and_bad_threshold_are_exit_2(tmp_path, capsys):
    base = _run(tmp_path / "a", _rows(6))
    new = _run(tmp_path / "b", _rows(6))
    assert _diff(tmp_path, base, new, "-m", "nope")[0] == 2
    assert _diff(tmp_path, base, new, "--threshold", "faithfulness=high")[0] == 2
    assert _diff(tmp_path, base, new, "--fail-if-worse", "rougeL")[0] == 2
    (tmp_path / "afile").write_text("x")
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "afile")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_page_in_a_real_browser_with_hostile_text(browser, tmp_path):
    from html.parser import HTMLParser

    rows_a, rows_b = _rows(10), _rows(10, 0.2)
    for rows in (rows_a, rows_b):
        rows[3]["id"] = EVIL
        rows[3]["question"] = EVIL
        for r in rows:
            r["details"] = {"faithfulness": {"statements": [EVIL], "verdicts": [1]}}
    base = _run(tmp_path / "a", rows_a)
    new = _run(tmp_path / "b", rows_b, judge=EVIL)
    data_b = tmp_path / "b.jsonl"
    data_b.write_text("".join(json.dumps({"id": r["id"], "question": r["question"],
                                          "answer": f"{EVIL} answer {i}", "contexts": [EVIL]})
                              + "\n" for i, r in enumerate(rows_b)))
    code, out = _diff(tmp_path, base, new, "--new-data", str(data_b))
    assert code == 0
    dom, console = headless_dom((out / "diff.html").as_uri(), tmp_path / "profile")
    assert console == []  # no script error, no CSP violation

    class Tags(HTMLParser):
        tags: list = []

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))

    p = Tags()
    p.tags = []
    p.feed(dom)
    names = [t for t, _ in p.tags]
    assert names.count("script") == 1 and "img" not in names
    assert not any(k.startswith("on") for _, a in p.tags for k in a)
    html = next(a for t, a in p.tags if t == "html")
    assert int(html.get("data-report-ready", "0")) >= 1  # our script ran to the end
    assert "&lt;script&gt;alert(1)" in dom
