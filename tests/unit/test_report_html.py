"""The HTML report: escaping, self-containment, content, and a real browser load.

The results here are written by hand (no judge, no metrics code), so the test
pins the report against the results *format*, including hostile dataset text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from localeval.errors import DataError
from localeval.report.details import MAX_LIST_ITEMS, to_node
from localeval.report.histogram import histogram
from localeval.report.html import render_html, write_html_report
from localeval.report.view import build_view
from localeval.results import read_run
from localeval.testing import headless_dom
from localeval.report.markdown import summary_markdown, write_markdown_report

EVIL_ANSWER = "<script>alert(1)</script> and <img src=x onerror=alert(2)>"
EVIL_QUESTION = '"><svg onload=alert(3)><a href="https://evil.example/x">click</a>'
EVIL_REASON = '" onmouseover="alert(4)" x="'
EVIL_KEY = "<b onclick=alert(5)>key</b>"
JA_QUESTION = "有給休暇は年に何日ありますか？"
JA_ANSWER = "正社員は年に25日の有給休暇があります。"

METRICS = ["faithfulness", "answer_correctness", "answer_relevancy", "noise_sensitivity",
           "nv_context_relevance", "hit_rate@5"]


def _samples() -> list[dict]:
    return [
        {"id": "ja-01", "question": JA_QUESTION, "answer": JA_ANSWER,
         "contexts": ["正社員には年25日の有給休暇が付与されます。", "社員食堂は11時半に開きます。"],
         "reference": "年25日です。", "retrieved_ids": ["doc-ja-1", "doc-ja-2"],
         "relevant_ids": {"doc-ja-1": 1.0}, "metadata": {"lang": "ja"}},
        {"id": "evil-1", "question": EVIL_QUESTION, "answer": EVIL_ANSWER,
         "contexts": ["</textarea><style>body{background:url(https://evil.example/a.png)}</style>"],
         "reference": "<iframe src='https://evil.example/f'></iframe>",
         "retrieved_ids": ["d1"], "relevant_ids": {"d2": 1.0},
         "metadata": {EVIL_KEY: "javascript:alert(6)"}},
        {"id": "en-03", "question": "How do I reset my password?",
         "answer": "Use the reset link.", "contexts": ["Choose 'Forgot password'."],
         "reference": "Choose 'Forgot password'.", "retrieved_ids": ["d3"],
         "relevant_ids": {"d3": 2.0}},
    ]


def _records() -> list[dict]:
    return [
        {"id": "ja-01",
         "scores": {"faithfulness": 1.0, "answer_correctness": 0.9, "answer_relevancy": 0.8123,
                    "noise_sensitivity": 0.0, "nv_context_relevance": 1.0, "hit_rate@5": 1.0},
         "errors": {},
         "details": {
             "faithfulness": {"statements": [JA_ANSWER],
                              "verdicts": [{"reason": "文脈1に記載。", "verdict": 1}]},
             "answer_correctness": {"TP": [{"statement": JA_ANSWER, "reason": "一致"}],
                                    "FP": [], "FN": [], "f1": 1.0, "similarity": 0.8},
             "answer_relevancy": {"questions": [{"question": "有給は何日？", "noncommittal": 0}],
                                  "cosines": [0.8123]},
             "nv_context_relevance": {"ratings": [2, 2]},
         }},
        {"id": "evil-1",
         "scores": {"faithfulness": None, "answer_correctness": 0.1, "answer_relevancy": 0.2,
                    "noise_sensitivity": 0.75, "nv_context_relevance": 0.25, "hit_rate@5": 0.0},
         "errors": {"faithfulness": EVIL_REASON},
         "details": {
             "answer_correctness": {"TP": [], "FP": [{"statement": EVIL_ANSWER,
                                                      "reason": "<u>not</u> in reference"}],
                                    "FN": [{"statement": "x", "reason": "missed"}]},
             "noise_sensitivity": {"statements": ["<script>alert(7)</script>", "b"],
                                   "verdicts": [{"reason": "r1", "verdict": 0},
                                                {"reason": "r2", "verdict": 1}],
                                   EVIL_KEY: {"nested": [EVIL_ANSWER, {"deep": EVIL_QUESTION}]}},
         }},
        {"id": "en-03",
         "scores": {"faithfulness": 0.5, "answer_correctness": None, "answer_relevancy": 0.9,
                    "noise_sensitivity": 0.25, "nv_context_relevance": 0.5, "hit_rate@5": 1.0},
         "errors": {"answer_correctness": "judge output truncated at max_tokens=512"},
         "details": {"faithfulness": {"statements": ["a", "b"], "verdicts": [1, 0]}}},
    ]


def _summary() -> dict:
    def entry(mean, ci, n, unscored=0, reasons=None, lower=False):
        e = {"mean": mean, "ci95": ci, "n": n, "unscored": unscored}
        if reasons:
            e["unscored_reasons"] = reasons
        if lower:
            e["lower_is_better"] = True
        return e

    return {
        "metrics": {
            "faithfulness": entry(0.75, [0.5, 1.0], 2, 1, {EVIL_REASON: 1}),
            "answer_correctness": entry(0.5, [0.1, 0.9], 2, 1,
                                        {"judge output truncated at max_tokens=512": 1}),
            "answer_relevancy": entry(0.6374, [0.2, 0.9], 3),
            "noise_sensitivity": entry(0.3333, [0.0, 0.75], 3, lower=True),
            "nv_context_relevance": entry(0.5833, [0.25, 1.0], 3),
            "hit_rate@5": entry(0.6667, [0.0, 1.0], 3),
        },
        "n_samples": 3,
        "signature": {"localeval": "0.1.0", "judge": "</style><script>alert(8)</script>",
                      "judge_fingerprint": "abc123", "embedder": "all-MiniLM-L6-v2",
                      "prompts": {"faithfulness.verdicts": "77e2b0"}, "seed": 0},
        "signature_line": "judge:tiny@abc123|prompts:77e2b0|seed:0|embed:all-MiniLM-L6-v2@none"
                          "|verdicts:hard|lang:auto|v:0.1.0",
        "usage": {"calls": 12, "prompt_tokens": 3400, "reused_tokens": 1200,
                  "evaluated_tokens": 2200, "generated_tokens": 640, "seconds": 9.25,
                  "cache_hits": 2},
        "notes": ["<script>alert(9)</script> note"],
    }


class _Collect(HTMLParser):
    """Every start tag with its attributes, and the text of script/style elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in:
            self.raw[self._in][-1] += data
        else:
            self.text.append(data)


@pytest.fixture(scope="module")
def html() -> str:
    return render_html(_summary(), _records(), _samples())


@pytest.fixture(scope="module")
def parsed(html) -> _Collect:
    p = _Collect()
    p.feed(html)
    p.close()
    return p


def test_no_injected_elements_or_handlers(html, parsed):
    names = [t for t, _ in parsed.tags]
    assert names.count("script") == 1  # ours, at the end of <body>
    assert names.count("style") == 1
    for bad in ("img", "iframe", "object", "embed", "base", "link", "form", "textarea", "b", "u"):
        assert bad not in names, f"injected <{bad}> element"
    assert names.count("svg") == len(METRICS)  # only our histograms
    for tag, attrs in parsed.tags:
        for name in attrs:
            assert not name.lower().startswith("on"), f"<{tag} {name}=...> event handler"
    # the attempted breakout out of a title attribute stays inside it
    titles = [a.get("title") for _, a in parsed.tags if a.get("title")]
    assert any(t and EVIL_REASON in t for t in titles)
    # all links are in-page anchors
    for tag, attrs in parsed.tags:
        for name in ("href", "src", "action", "xlink:href"):
            if attrs.get(name) is not None:
                assert attrs[name].startswith("#"), f"<{tag} {name}={attrs[name]!r}>"


def test_malicious_text_is_escaped_and_shown(html, parsed):
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    text = "".join(parsed.text)
    for s in (EVIL_ANSWER, EVIL_QUESTION, "<script>alert(7)</script>", EVIL_KEY,
              "</style><script>alert(8)</script>", "<script>alert(9)</script> note",
              "<u>not</u> in reference"):
        assert s in text, f"{s!r} not shown as text"
    # nothing of ours executes data: the only script has none of it
    assert "alert" not in parsed.raw["script"][0]
    assert "alert" not in parsed.raw["style"][0]


def test_self_contained(html, parsed):
    urls = re.compile(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", re.I)
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "action", "data", "poster", "srcset", "xlink:href"):
            v = attrs.get(name)
            assert v is None or not urls.search(v), f"<{tag} {name}={v!r}>"
        refresh = tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh"
        if tag == "link" or refresh:
            raise AssertionError(f"external reference <{tag} {attrs}>")
    css = parsed.raw["style"][0]
    assert "@import" not in css and not urls.search(css) and "url(" not in css
    assert not urls.search(parsed.raw["script"][0])
    js = parsed.raw["script"][0]
    assert "fetch(" not in js and "XMLHttpRequest" not in js


def test_csp_hashes_match_inline_code(parsed):
    csp = next(a["content"] for t, a in parsed.tags
               if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp

    def h(s: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()

    assert f"script-src '{h(parsed.raw['script'][0])}'" in csp
    assert f"style-src '{h(parsed.raw['style'][0])}'" in csp
    # the script never parses strings as HTML or code
    js = parsed.raw["script"][0]
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function",
                   "document.write"):
        assert banned not in js


def test_every_metric_has_a_histogram(parsed):
    hists = [a for t, a in parsed.tags if t == "svg" and "hist" in (a.get("class") or "")]
    labels = [a.get("aria-label", "") for a in hists]
    assert len(hists) == len(METRICS)
    for m in METRICS:
        assert sum(f"Distribution of {m} " in lab for lab in labels) == 1, m
    # one bar per bin, each with a count in its tooltip
    rects = [a for t, a in parsed.tags if t == "rect" and "bar" in (a.get("class") or "")]
    assert len(rects) == 10 * len(METRICS)


def test_japanese_and_charset(tmp_path):
    path = write_html_report(tmp_path, _summary(), _records(), _samples())
    assert path == tmp_path / "report.html"
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    assert '<meta charset="utf-8">' in text[:300]
    assert JA_QUESTION in text and JA_ANSWER in text  # not entity-encoded
    assert JA_QUESTION.encode("utf-8") in raw
    assert not list(tmp_path.glob("*.tmp"))


def test_summary_usage_and_working(html, parsed):
    text = " ".join(" ".join(parsed.text).split())
    assert _summary()["signature_line"] in text
    assert "judge calls 12" in text and "3,400" in text and "9.2 s" in text
    # unscored counts with reasons, in the table and on the sample
    assert "judge output truncated at max_tokens=512" in text
    assert "Unscored: judge output truncated" in text
    # known keys get friendly labels; verdicts shown as check / cross
    for lab in ("True positives (TP)", "False positives (FP)", "False negatives (FN)",
                "Generated questions", "Judge ratings", "Statements"):
        assert lab in text, lab
    assert "✓" in text and "✗" in text
    assert "0.8123" in text  # cosine beside its generated question
    assert "lower is better" in text
    # statements zipped with their verdicts: the failing row is tinted
    assert html.count('class="bad-row"') >= 2


def test_worst_samples_order():
    view = build_view(_summary(), _records(), _samples())
    by = {m["key"]: m for m in view["metrics"]}
    assert [w["id"] for w in by["answer_relevancy"]["worst"]] == ["evil-1", "ja-01", "en-03"]
    # lower is better: highest first; the perfect 0.0 is not a "worst" sample
    assert [w["id"] for w in by["noise_sensitivity"]["worst"]] == ["evil-1", "en-03"]
    assert [w["id"] for w in by["hit_rate@5"]["worst"]] == ["evil-1"]
    assert by["faithfulness"]["worst"][0]["id"] == "en-03"
    assert by["answer_correctness"]["mean_tone"] == "mid"
    assert by["answer_relevancy"]["worst"][0]["tone"] == "bad"


def test_records_without_samples_and_interrupted():
    summary = dict(_summary(), interrupted={"finished": 3, "total": 10})
    html = render_html(summary, _records(), [])
    assert "Interrupted run: 3 of 10" in html
    assert "3 results have no matching sample" in html
    # samples are matched by id, not position
    view = build_view(_summary(), _records(), list(reversed(_samples())))
    assert view["samples"][0]["question"] == JA_QUESTION


def test_histogram_bins():
    h = histogram([0.0, 0.05, 0.5, 1.0, 1.0], mean=0.51, ci=[0.1, 0.9])
    counts = [b["count"] for b in h.bars]
    assert counts == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]  # 1.0 falls in the last bin
    assert h.ymax == 2 and h.mean_x is not None and h.ci is not None
    tall = [b for b in h.bars if b["count"] == 2]
    assert all(b["y"] == h.top for b in tall)
    assert h.bars[0]["tone"] == "bad" and h.bars[-1]["tone"] == "good"
    # lower is better flips the colours; unbounded metrics bin over their range
    assert histogram([0.0], lower_is_better=True).bars[0]["tone"] == "good"
    u = histogram([10.0, 20.0, 30.0])
    assert sum(b["count"] for b in u.bars) == 3 and u.xticks[-1]["text"] == "30"
    assert histogram([]).ymax == 0


def test_to_node_shapes():
    n = to_node({"statements": ["a", "b"], "verdicts": [{"reason": "r", "verdict": 1},
                                                        {"reason": "s", "verdict": 0}]})
    (lab, _, table), = n["entries"]
    assert lab == "Statements" and table["kind"] == "table"
    assert table["columns"] == ["Statement", "Verdict", "Reason"]
    assert [r["bad"] for r in table["rows"]] == [False, True]
    deep: dict = {}
    cur = deep
    for _ in range(12):
        cur["x"] = {}
        cur = cur["x"]
    assert "mono" in json.dumps(to_node(deep))
    long = to_node({"sentences": list(map(str, range(MAX_LIST_ITEMS + 5)))})
    assert long["entries"][0][2]["more"] == 5
    assert to_node({"noncommittal": 1})["entries"][0][2] == {
        "kind": "verdict", "ok": False, "text": "yes", "title": "noncommittal"}
    assert to_node([])["text"] == "(none)"
    assert to_node({"faithfulness.verdicts": 1})["entries"][0][0] == "faithfulness.verdicts"


def test_markdown_report(tmp_path):
    s = dict(_summary(), interrupted={"finished": 3, "total": 10})
    path = write_markdown_report(tmp_path, s)
    assert path == tmp_path / "summary.md"
    md = path.read_text(encoding="utf-8")
    assert md.startswith("## localeval: 3 samples")
    assert "Interrupted run:** 3 of 10" in md
    assert md.endswith(summary_markdown(s))
    assert "| noise_sensitivity (lower is better) | 0.3333 |" in md


def test_read_run(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps(_summary()), encoding="utf-8")
    (tmp_path / "results.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in _records()) + "\n", encoding="utf-8")
    summary, records = read_run(tmp_path)
    assert [r["id"] for r in records] == ["ja-01", "evil-1", "en-03"]
    assert summary["n_samples"] == 3
    with open(tmp_path / "results.jsonl", "a", encoding="utf-8") as f:
        f.write("{not json\n")
    with pytest.raises(DataError, match=r"results\.jsonl, line 4"):
        read_run(tmp_path)
    with pytest.raises(DataError, match="summary.json"):
        read_run(tmp_path / "nowhere")


# ----------------------------------------------------------------------- real browser



def _chromium(url: str, profile: Path) -> tuple[str, list[str]]:
    """Load ``url`` headless; return the DOM after scripts ran and console lines.
    The report's script logs nothing, so any console line is a failure."""
    return headless_dom(url, profile)


def test_report_runs_in_headless_chromium(browser, tmp_path):
    path = write_html_report(tmp_path / "out", _summary(), _records(), _samples())
    dom, console = _chromium(path.as_uri() + "#s-1", tmp_path / "profile")
    assert console == []
    p = _Collect()
    p.feed(dom)
    # our script ran to the end and did its work
    html_attrs = next(a for t, a in p.tags if t == "html")
    assert html_attrs.get("data-report-ready") == "3"
    assert "3 of 3 shown" in dom
    controls = next(a for t, a in p.tags if a.get("id") == "controls")
    assert "hidden" not in controls
    opened = next(a for t, a in p.tags if a.get("id") == "s-1")
    assert "open" in opened  # the #s-1 fragment opened that sample
    # the live DOM holds no injected element either
    names = [t for t, _ in p.tags]
    assert names.count("script") == 1 and "img" not in names and "iframe" not in names
    assert all(not n.startswith("on") for _, a in p.tags for n in a)


def test_console_scan_sees_errors(browser, tmp_path):
    """The scan above is not blind: a page whose script throws is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><meta charset=utf-8><p>x</p>"
                   "<script>document.documentElement.dataset.a = '1'; nosuchfn();</script>",
                   encoding="utf-8")
    dom, console = _chromium(bad.as_uri(), tmp_path / "profile")
    assert 'data-a="1"' in dom
    assert any("Uncaught ReferenceError" in ln for ln in console)


def test_bounded_report_in_headless_chromium(browser, tmp_path):
    """A run larger than the page's bound: the script indexes only what is shown, and a
    worst-sample link far into the file opens its sample."""
    from localeval.report.view import MAX_SAMPLES

    n = MAX_SAMPLES + 300
    records = [{"id": f"r{i}", "scores": {"mrr": 1.0 if i != n - 7 else 0.0}, "errors": {},
                "details": {}} for i in range(n)]
    samples = [{"id": f"r{i}", "question": f"question {i}"} for i in range(n)]
    summary = {"metrics": {"mrr": {"mean": 0.99, "ci95": [0.98, 1.0], "n": n, "unscored": 0}},
               "n_samples": n}
    path = write_html_report(tmp_path / "out", summary, records, samples)
    dom, console = _chromium(path.as_uri() + f"#s-{n - 7}", tmp_path / "profile")
    assert console == []
    p = _Collect()
    p.feed(dom)
    html_attrs = next(a for t, a in p.tags if t == "html")
    assert html_attrs.get("data-report-ready") == str(MAX_SAMPLES)
    assert f"{MAX_SAMPLES} of {MAX_SAMPLES} shown" in dom
    assert f"This page shows {MAX_SAMPLES} of {n} samples" in dom
    assert "open" in next(a for t, a in p.tags if a.get("id") == f"s-{n - 7}")
