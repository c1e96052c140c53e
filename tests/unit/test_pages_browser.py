"""comparison.html and report.html opened in a real headless browser (Chromium).

The pages are self-contained and locked down by a Content-Security-Policy; a
browser is the only judge of whether our own style and script still run under
it, and whether hostile strings from a data set stay text. CI installs
Chromium (.ci/run), so there this test never skips; on a developer machine
without Chromium it skips with the reason.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import localeval
from localeval.agreement import compare, write_comparison
from localeval.resultsets import load_result_set
from localeval.testing import headless_dom

EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)>'


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _open(url: str, profile: Path) -> tuple[str, list[str], list[tuple[str, dict]]]:
    """The DOM after scripts ran, console/CSP lines, and the DOM's tags."""
    dom, console = headless_dom(url, profile)
    c = _Collect()
    c.feed(dom)
    return dom, console, c.tags


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two runs of the same samples with working in their details and a hostile question."""
    rows = []
    for i in range(10):
        rows.append({"id": f"s{i}", "question": EVIL if i == 3 else f"Question {i}?",
                     "answer": f"Answer {i}", "contexts": [f"Context {i}"]})
    out = []
    for name, flip in (("judge-a", False), ("judge-b", True)):
        d = tmp_path / name
        d.mkdir()
        with open(d / "results.jsonl", "w", encoding="utf-8") as f:
            for i, r in enumerate(rows):
                v = (i % 3) / 2
                if flip and i in (0, 2, 3, 6):
                    v = 1.0 - v
                f.write(json.dumps({
                    "id": r["id"], "question": r["question"],
                    "scores": {"faithfulness": v, "context_recall": float(i % 2)},
                    "errors": {}, "details": {"faithfulness": {
                        "statements": [f"claim {i}", EVIL], "verdicts": [1, int(v >= 0.5)]}},
                }) + "\n")
        (d / "summary.json").write_text(json.dumps({"signature": {"judge": name + ".gguf"}}))
        out.append(d)
    return out[0], out[1]


def test_comparison_html_in_a_real_browser(browser, tmp_path):
    a, b = _runs(tmp_path)
    cmp = compare(load_result_set(a), load_result_set(b), n_boot=100)
    write_comparison(cmp, tmp_path / "cmp")
    page = tmp_path / "cmp" / "comparison.html"
    dom, console, tags = _open(page.as_uri() + "#m-faithfulness-1", tmp_path / "profile")
    assert console == []  # no script error, no CSP violation: our style and script ran
    html = next(t for n, t in tags if n == "html")
    n_disagree = sum(1 for n, t in tags if n == "details" and "sample" in (t.get("class") or ""))
    assert html.get("data-report-ready") == str(n_disagree) and n_disagree >= 3
    opened = next(t for n, t in tags if t.get("id") == "m-faithfulness-1")
    assert "open" in opened  # the fragment opened the largest disagreement
    # hostile strings stayed text: one script (ours), no img, no handler attributes
    names = [n for n, _ in tags]
    assert names.count("script") == 1 and "img" not in names
    assert all(not k.startswith("on") for _, t in tags for k in t)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    # plain names, means of A and B, notes folded under the table, a matrix per metric
    assert "Cohen's kappa @0.5" in dom and "mean A" in dom and "mean B" in dom
    assert dom.index('id="agreement"') < dom.index('class="notes"') < dom.index('id="matrices"')
    assert sum(1 for n, t in tags if n == "table" and t.get("class") == "matrix") == 2
    assert dom.count("<circle") == 20  # every sample drawn in both plots


def test_report_html_of_a_real_run_in_a_real_browser(browser, tmp_path):
    rows = [{"id": f"r{i}", "question": EVIL if i == 1 else f"q {i}", "answer": f"a {i} b",
             "reference": f"a {i}", "contexts": ["c"]} for i in range(4)]
    localeval.evaluate(rows, ["rougeL", "bleu"], judge=False, embedder=False, cache=False,
                       out_dir=tmp_path / "run", progress=False)
    dom, console, tags = _open((tmp_path / "run" / "report.html").as_uri() + "#s-2",
                               tmp_path / "profile")
    assert console == []
    html = next(t for n, t in tags if n == "html")
    assert html.get("data-report-ready") == "4"
    assert "open" in next(t for n, t in tags if t.get("id") == "s-2")
    names = [n for n, _ in tags]
    assert names.count("script") == 1 and "img" not in names
