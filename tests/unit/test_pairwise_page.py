"""diff.html's and diff.md's pairwise section: counts, the preference, bias, the check, each
pair expandable to both answers and both orders' reasons (BASE preferred first), escaped
throughout, and the page as headless Chromium shows it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from test_pairwise_edges import run_diff, write_versions

from localeval.testing import ScriptedJudge, headless_dom
from localeval.types import Sample

HOSTILE = "<script>alert(1)</script>"
CTX = ["Kyoto was the capital of Japan from 794 to 1868."]


def hostile_versions() -> tuple[list[Sample], list[Sample]]:
    """Six pairs: NEW says 'good' on q0-q3; q4 and q5 lose; q5's base answer is hostile."""
    base = [Sample(id=f"q{i}", question=f"question {i}? <img src=x onerror=alert(2)>",
                   contexts=CTX, answer=f"base {i}" + (f" {HOSTILE}" if i == 5 else ""))
            for i in range(6)]
    new = [Sample(id=f"q{i}", question=base[i].question, contexts=CTX,
                  answer=f"{'good' if i < 4 else 'bad'} new {i}") for i in range(6)]
    return base, new


def judge_with_hostile_reasons(request):
    a, b = request.inputs["answer_a"], request.inputs["answer_b"]
    good_a = "good" in a or "bad" in b
    return {"reason": f"</details>{HOSTILE} A is {'better' if good_a else 'worse'}",
            "verdict": "A" if good_a else "B"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.html: dict = {}
        self.pair_ids: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "script":
            self.scripts += 1
        if tag == "html":
            self.html = a
        if tag == "details" and (a.get("id") or "").startswith("pw-"):
            self.pair_ids.append(a["id"])


def _write(tmp_path):
    judge = ScriptedJudge({"pairwise_preference": judge_with_hostile_reasons})
    assert run_diff(tmp_path, judge, "--pairwise", "--no-judge-check",
                    rows=hostile_versions()) == 0
    return tmp_path / "out"


def test_the_pairwise_section_is_written_and_escaped(tmp_path):
    out = _write(tmp_path)
    html = (out / "diff.html").read_text(encoding="utf-8")
    assert html.count("<script") == 1  # the page's own script only
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;/details&gt;" in html and "onerror=alert(2)>" not in html
    section = html[html.index('<section id="pairwise">'):html.index('<section id="metrics">')]
    assert "preference for NEW" in section and "position bias" in section
    assert "preference not shown: 0.67 [0.00, 1.00] over 6 judged pairs" in section
    p = _Tags()
    p.feed(section)
    # BASE preferred first (q4, q5), then the wins
    assert [re.sub(r"^pw-\d+-", "", i) for i in p.pair_ids] == ["q4", "q5", "q0", "q1", "q2",
                                                                  "q3"]
    q5 = section[section.index('id="pw-2-q5"'):section.index('id="pw-3-q0"')]
    assert "base 5 &lt;script&gt;" in q5 and "bad new 5" in q5  # both answers
    assert "BASE shown as A: B (NEW better)" not in q5
    assert "BASE shown as A: A (BASE better)" in q5 and "NEW shown as A: B (BASE better)" in q5
    assert q5.count("A is better") + q5.count("A is worse") == 2  # both orders' reasons
    md = (out / "diff.md").read_text(encoding="utf-8")
    pw = md[md.index("## Pairwise: which answer is better"):]
    assert "4 NEW better / 2 BASE better / 0 tie / 0 inconsistent" in pw
    assert "BASE preferred (2): `q4`, `q5`" in pw and "judge bias:" in pw
    doc = json.loads((out / "diff.json").read_text(encoding="utf-8"))
    assert doc["pairwise"]["preferred_base"] == ["q4", "q5"]


def test_a_diff_without_pairwise_has_no_section(tmp_path):
    from localeval.cli.app import main

    b, n = write_versions(tmp_path, *hostile_versions())
    assert main(["diff", b, n, "-o", str(tmp_path / "out")]) == 0
    assert 'id="pairwise"' not in (tmp_path / "out" / "diff.html").read_text(encoding="utf-8")
    assert "Pairwise" not in (tmp_path / "out" / "diff.md").read_text(encoding="utf-8")


def test_the_page_opens_in_headless_chromium_without_console_errors(browser, tmp_path):
    out = _write(tmp_path)
    dom, console = headless_dom((out / "diff.html").as_uri() + "#pw-2-q5", tmp_path / "profile")
    assert console == []  # a blocked style or script, or an error, would be here
    p = _Tags()
    p.feed(dom)
    # our script ran to its end and indexed the six pairs (no pointwise sample changed)
    assert p.scripts == 1 and p.html.get("data-report-ready") == "6"
    assert re.search(r'<details class="sample" id="pw-2-q5" open=""', dom)  # the hash opens it
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # shown as text
    assert len(p.pair_ids) == 6
