"""report.html shows a conversation turn by turn: roles and texts, an assistant's tool calls with
their arguments as indented JSON, the call each tool result answers, the reference tool calls
and topics; the sample list and worst samples show its first user turn. Every text is escaped
(checked as Chromium renders the page, scripts run and the CSP enforced), and a 2,000-turn
conversation is cut to a bounded section with a note. Also the texts other pages use:
``sample_question`` and ``conversation_text``, the same for objects and mappings.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from localeval.dataset import load_dataset
from localeval.report import conversation_text, is_conversation, sample_question
from localeval.report.conversation_view import HEAD_TURNS, TAIL_TURNS
from localeval.report.html import render_html, write_html_report
from localeval.testing import headless_dom
from localeval.types import Message, MultiTurnSample, Sample, ToolCall

EVIL = "<script>alert(1)</script><img src=x onerror=alert(2)>"
EVIL_ARG = '"><svg onload=alert(3)>'
JA = "明日19時に2名で予約して"

ROWS = [
    {"id": "weather-1", "user_input": [
        {"type": "human", "content": f"Weather in Paris? {EVIL}"},
        {"type": "ai", "content": "", "tool_calls": [
            {"name": "weather", "args": {"city": "Paris", "when": {"day": "today", "h": 9}}}]},
        {"type": "tool", "content": "18C, sunny"},
        {"type": "ai", "content": "It is 18C and sunny."}],
     "reference_tool_calls": [{"name": "weather", "args": {"city": "Paris"}}],
     "reference_topics": ["weather", EVIL]},
    {"id": "booking-ja", "messages": [
        {"role": "system", "content": "簡潔に答えてください。"},
        {"role": "user", "content": JA},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {
                "name": "book_table", "arguments": json.dumps({"people": 2, "note": EVIL_ARG})}},
            {"id": "call_2", "type": "function", "function": {
                "name": "notify", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "sent"},
        {"role": "tool", "tool_call_id": "call_1", "content": "予約番号 A12"},
        {"role": "assistant", "content": "予約しました（予約番号 A12）。"}],
     "reference_tool_calls": [{"name": "book_table", "args": {"people": 2, "time": "19:00"}}]},
]
SINGLE = {"id": "plain-1", "question": "How do I reset my password?", "answer": "Use the link.",
          "contexts": ["Reset it from the login page."]}


def _samples(tmp: Path) -> list[Any]:
    data = tmp / "conv.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                    encoding="utf-8")
    return list(load_dataset(data))


def _summary_records(samples: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    values = [1.0, 0.5, 0.25][: len(samples)]
    records = [{"id": s.id if isinstance(s, Sample) else s["id"],
                "scores": {"tool_call_accuracy": v}, "errors": {}, "details": {}}
               for s, v in zip(samples, values)]
    summary = {"n_samples": len(samples), "metrics": {"tool_call_accuracy": {
        "mean": sum(values) / len(values), "ci95": None, "n": len(values), "unscored": 0}}}
    return summary, records


class _Page(HTMLParser):
    """Start tags (name, attributes) and the text inside each element of class ``text``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if self._depth:
            self._depth += 1
        elif tag == "div" and "text" in (a.get("class") or "").split():
            self._depth = 1
            self.texts.append("")

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.texts[-1] += data


def _parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    p.close()
    return p


@pytest.fixture
def samples(tmp_path: Path) -> list[Any]:
    return [*_samples(tmp_path), Sample(**SINGLE)]


def test_turns_tool_calls_and_references_are_shown_in_order_as_text(samples) -> None:
    summary, records = _summary_records(samples)
    html = render_html(summary, records, samples)
    page = _parse(html)
    texts = page.texts
    # weather-1: the user's text (with its markup as text), the call's arguments as indented
    # JSON in their own order, the tool result, the reply
    user = f"Weather in Paris? {EVIL}"
    args = json.dumps({"city": "Paris", "when": {"day": "today", "h": 9}}, indent=2)
    i = texts.index(user)
    assert texts[i:i + 4] == [user, args, "18C, sunny", "It is 18C and sunny."]
    assert '<div class="cmeta">tool call <code>weather</code></div>' in html
    assert 'result of <code>weather</code>' in html
    # the reference calls and topics, beside the turns
    assert "Reference tool calls <span" in html and json.dumps({"city": "Paris"}, indent=2) in texts
    assert "<code>weather</code><code>&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "(4 turns, 1 tool call)" in html and "(6 turns, 2 tool calls)" in html
    # booking-ja: a tool result is matched to its call by id, whatever the order
    assert "result of <code>notify</code> <code>call_2</code>" in html
    assert "result of <code>book_table</code> <code>call_1</code>" in html
    assert json.dumps({"people": 2, "note": EVIL_ARG}, indent=2, ensure_ascii=False) in texts
    # the messages are no longer listed as data under "Other fields"
    assert "Other fields" not in html
    # the sample list shows the first user turn where a single-turn sample shows its question
    excerpts = html.split('<span class="sq">')[1:]
    assert excerpts[0].startswith("Weather in Paris? &lt;script&gt;")
    assert excerpts[1].startswith(JA) and excerpts[2].startswith("How do I reset")
    # the worst-samples list too
    assert f'<span class="wid">booking-ja</span></a><span class="wq">{JA}</span>' in html
    # nothing of the data became markup
    names = [t for t, _ in page.tags]
    assert names.count("script") == 1 and "img" not in names
    assert not [a for t, a in page.tags if any(k.startswith("on") for k in a)]
    assert "<img" not in html and "<svg onload" not in html


def test_mappings_render_as_the_objects_do(samples) -> None:
    """``localeval report`` and the Python API may hand the report ``to_dict()`` mappings."""
    summary, records = _summary_records(samples)
    assert render_html(summary, records, samples) == render_html(
        summary, records, [s.to_dict() for s in samples])


def test_in_headless_chromium_no_console_error_and_the_script_stays_text(
        samples, tmp_path, browser) -> None:
    summary, records = _summary_records(samples)
    path = write_html_report(tmp_path / "out", summary, records, samples)
    dom, console = headless_dom(path.as_uri() + "#s-0", tmp_path / "profile")
    assert console == []
    page = _parse(dom)
    html_attrs = next(a for t, a in page.tags if t == "html")
    assert html_attrs.get("data-report-ready") == "3"  # the report's script ran to the end
    opened = next(a for t, a in page.tags if a.get("id") == "s-0")
    assert "open" in opened
    names = [t for t, _ in page.tags]
    assert names.count("script") == 1 and "img" not in names
    assert not [a for t, a in page.tags if any(k.startswith("on") for k in a)]
    assert f"Weather in Paris? {EVIL}" in page.texts  # the <script> is shown as its text
    assert json.dumps({"city": "Paris", "when": {"day": "today", "h": 9}}, indent=2) in page.texts
    assert "tool call <code>book_table</code>" in dom and "予約しました（予約番号 A12）。" in dom


def test_a_2000_turn_conversation_is_cut_with_a_note_and_keeps_its_end(tmp_path) -> None:
    msgs = []
    for k in range(500):
        msgs += [Message("user", f"step {k}"),
                 Message("assistant", "", [ToolCall("lookup", {"k": k})]),
                 Message("tool", f"result {k}"), Message("assistant", f"reply {k}")]
    long = MultiTurnSample(id="long", messages=msgs, reference_tool_calls=[ToolCall("lookup")])
    summary, records = _summary_records([long])
    html = render_html(summary, records, [long])
    page = _parse(html)
    shown = [int(a["value"] or 0) for t, a in page.tags if t == "li" and "value" in a]
    assert shown == [*range(1, HEAD_TURNS + 1), *range(2000 - TAIL_TURNS + 1, 2001)]
    gap = 2000 - HEAD_TURNS - TAIL_TURNS
    assert (f"… {gap:,} turns not shown ({HEAD_TURNS + 1} to {2000 - TAIL_TURNS}); "
            "the dataset holds them all") in html
    assert "(2000 turns, 500 tool calls)" in html and "reply 499" in html
    assert f'start="{2000 - TAIL_TURNS + 1}"' in html
    assert len(html) < 400_000


def test_the_question_and_text_of_a_conversation(samples) -> None:
    weather, booking, single = samples
    for s in (weather, weather.to_dict()):
        assert is_conversation(s)
        assert sample_question(s) == f"Weather in Paris? {EVIL}"
        assert conversation_text(s) == "\n".join([
            f"user: Weather in Paris? {EVIL}",
            'assistant calls weather {"city": "Paris", "when": {"day": "today", "h": 9}}',
            "tool (weather): 18C, sunny",
            "assistant: It is 18C and sunny.",
            'expected tool calls: weather {"city": "Paris"}',
            f"reference topics: weather, {EVIL}"])
    text = conversation_text(booking)
    assert text is not None and text.splitlines()[2:5] == [
        'assistant calls book_table {"people": 2, "note": "\\"><svg onload=alert(3)>"}',
        "assistant calls notify {}", "tool (notify): sent"]
    assert sample_question(booking) == JA  # the system turn is not the question
    assert not is_conversation(single) and conversation_text(single) is None
    assert sample_question(single) == sample_question(single.to_dict()) == SINGLE["question"]
    # no user turn with text: no question; no calls expected: said so
    quiet = MultiTurnSample(id="q", messages=[Message("user", "  "), Message("assistant", "hi")],
                            reference_tool_calls=[])
    assert sample_question(quiet) is None and sample_question(None) is None
    assert conversation_text(quiet) == "user:   \nassistant: hi\nexpected tool calls: none"


def test_a_run_and_localeval_report_show_the_conversation(tmp_path, capsys) -> None:
    from localeval.cli.app import main

    data = tmp_path / "conv.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                    encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(data), "-m", "tool_call_accuracy,tool_call_f1", "-o", str(out),
                 "--no-cache", "--quiet"]) == 0
    page = _parse((out / "report.html").read_text(encoding="utf-8"))
    assert JA in page.texts and "予約番号 A12" in page.texts
    # rebuilt from the run folder without the data: ids and scores only, said so
    assert main(["report", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert JA not in html and "Conversation <span" not in html
    assert main(["report", str(out), "--data", str(data)]) == 0
    assert "tool call <code>book_table</code>" in (out / "report.html").read_text(encoding="utf-8")
