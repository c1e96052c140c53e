"""User trial: the judge-only interval is named for what it is, an unfit judge's metrics
are not coloured as good, the subset is said in words, and the summary fits 1400 px."""

from __future__ import annotations

import re
import subprocess

from localeval.report import summary_table, write_html_report, write_markdown_report
from localeval.report.judged import CI_NOTE, judged_keys


def _summary(verdict: str | None = "fit", subset: dict | None = None) -> dict:
    metrics = {
        "faithfulness": {"mean": 1.0, "ci95": [1.0, 1.0], "n": 2, "unscored": 0},
        "mrr": {"mean": 0.5, "ci95": [0.25, 0.75], "n": 2, "unscored": 0},
    }
    sig = {"judge": "j.gguf", "judge_fingerprint": "ab" * 32, **({"subset": subset} if subset else {})}
    out = {"metrics": metrics, "n_samples": 2, "signature": sig, "signature_line": "judge:j.gguf",
           "usage": {"calls": 4}, "judge_health": {"warnings": []}}
    if verdict is not None:
        out["judge_check"] = {"verdict": verdict, "line": f"judge check: {verdict}", "metrics": {}}
    return out


def _terminal(summary: dict) -> str:
    from rich.console import Console

    con = Console(width=200, record=True, file=open("/dev/null", "w"))
    con.print(summary_table(summary), crop=False)
    return con.export_text()


def test_judged_interval_is_labelled_in_terminal_markdown_and_html(tmp_path):
    s = _summary()
    assert judged_keys(s) == {"faithfulness"}
    text = _terminal(s)
    assert "[1.000, 1.000]*" in text and "[0.250, 0.750]*" not in text
    assert "judge's own average" in text and "calibrated-estimates.md" in text
    md = write_markdown_report(tmp_path, s).read_text("utf-8")
    assert "judge's own average" in md and "\\*" in md
    html = write_html_report(tmp_path, s, [], []).read_text("utf-8")
    assert "judge&#39;s own average" in html or "judge's own average" in html
    # text and retrieval metrics alone: no judge wording
    s2 = _summary(None)
    del s2["metrics"]["faithfulness"]
    s2.pop("judge_health")
    s2["signature"]["judge"] = None
    s2["usage"] = {}
    assert "judge's own average" not in _terminal(s2)
    assert CI_NOTE.split(" (")[0] not in write_markdown_report(tmp_path / "b", s2).read_text("utf-8")


def test_unfit_judge_metrics_are_not_coloured_good(tmp_path):
    fit = write_html_report(tmp_path / "fit", _summary("fit"), [], []).read_text("utf-8")
    unfit = write_html_report(tmp_path / "unfit", _summary("unfit"), [], []).read_text("utf-8")
    assert 'score t-good">1.0000' in fit
    assert 'score t-good">1.0000' not in unfit and 'score t-plain">1.0000' in unfit
    assert "judge unfit" in unfit and "judge unfit" not in fit
    assert 'score t-mid">0.5000' in unfit  # mrr needs no judge: coloured as before
    assert "(judge unfit)" in _terminal(_summary("unfit"))


def test_subset_is_said_in_words(tmp_path):
    s = _summary(subset={"sample": 8, "seed": 0, "kept": 8, "of": 40})
    html = write_html_report(tmp_path, s, [], []).read_text("utf-8")
    assert "8 drawn at random (seed 0) of the dataset&#39;s 40 samples" in html
    s = _summary(subset={"limit": 5, "kept": 5, "of": 40})
    html = write_html_report(tmp_path / "l", s, [], []).read_text("utf-8")
    assert "the first 5 of the dataset&#39;s 40 samples (--limit 5)" in html


def test_summary_table_fits_1400px_without_sideways_scrolling(browser, tmp_path):
    long_key = "my_custom_rubric_metric_for_politeness_and_tone_checking:threshold=0.75"
    reason = ("HTTP judge http://judge-server-01.internal.example.com:8080/v1/chat/completions "
              "failed: ConnectionRefusedError(111,'Connection_refused_by_peer_while_reading_"
              "response_headers_from_the_server')")
    s = _summary()
    s["metrics"] = {k: {"mean": 0.857, "ci95": [0.817, 0.891], "n": 28000, "unscored": 1200,
                        "unscored_reasons": {reason: 1200}}
                    for k in ("faithfulness", "answer_correctness:weights=0.25,0.75;threshold=0.8",
                              long_key)}
    page = write_html_report(tmp_path, s, [], []).read_text("utf-8")
    # measure in Chromium: our CSP would block the measuring script, so this copy drops it
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    probe = ("<script>window.addEventListener('load',()=>{document.body.setAttribute("
             "'data-w',document.documentElement.scrollWidth+'/'+document.documentElement"
             ".clientWidth+'/'+[...document.querySelectorAll('.tablewrap')].map(e=>e.scrollWidth"
             "-e.clientWidth).join(','));});</script>")
    probe_page = tmp_path / "probe.html"
    probe_page.write_text(page.replace("</body>", probe + "</body>"), "utf-8")
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900",
                        "--dump-dom", probe_page.as_uri()], capture_output=True, text=True,
                       timeout=120)
    m = re.search(r'data-w="(\d+)/(\d+)/([-\d,]*)"', p.stdout)
    assert m, p.stderr[-2000:]
    page_w, view_w, overflows = int(m[1]), int(m[2]), [int(x) for x in m[3].split(",") if x]
    assert page_w <= view_w, f"the page scrolls sideways: {page_w} > {view_w}"
    assert all(o <= 0 for o in overflows), f"a table scrolls sideways: {overflows}"
