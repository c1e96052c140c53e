"""Reports show gaps: unscored samples lead the "Worst samples" lists with their reasons, and
every summary row of a metric with unscored samples says so next to the mean (terminal
table, summary.md, report.html).
"""

from __future__ import annotations

import io
import re

from rich.console import Console

from localeval.report.html import render_html
from localeval.report.markdown import summary_markdown, summary_table
from localeval.report.view import WORST_K, build_view

IDS = ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]
EMPTY = "the answer is empty"
NOTHING = "judge extracted nothing from a non-empty answer"


def _records() -> list[dict]:
    """faithfulness: six perfect scores and two unscored samples (the trial that read as
    "No sample below a perfect score.")."""
    recs = []
    for i, sid in enumerate(IDS):
        gap = {1: EMPTY, 5: NOTHING}.get(i)
        recs.append({"id": sid, "scores": {"faithfulness": None if gap else 1.0, "mrr": 0.5},
                     "errors": {"faithfulness": gap} if gap else {}, "details": {}})
    return recs


def _summary() -> dict:
    return {"metrics": {"faithfulness": {"mean": 1.0, "ci95": [1.0, 1.0], "n": 6, "unscored": 2,
                                         "unscored_reasons": {EMPTY: 1, NOTHING: 1}},
                        "mrr": {"mean": 0.5, "ci95": [0.5, 0.5], "n": 8, "unscored": 0}},
            "n_samples": 8, "signature_line": "judge:x|seed:0"}


def _samples() -> list[dict]:
    return [{"id": sid, "question": f"question {sid}?", "answer": "" if sid == "s2" else "a"}
            for sid in IDS]


def test_worst_samples_list_unscored_samples_first_with_their_reasons():
    view = build_view(_summary(), _records(), _samples())
    faith = next(m for m in view["metrics"] if m["key"] == "faithfulness")
    assert [(g["id"], g["reason"]) for g in faith["gaps"]] == [("s2", EMPTY), ("s6", NOTHING)]
    assert faith["gaps"][0]["question"] == "question s2?"
    assert faith["worst"] == []  # the scored ones are perfect
    html = render_html(_summary(), _records(), _samples())
    worst = html.split('<section id="worst">', 1)[1].split("</section>", 1)[0]
    card = worst.split("<h3>faithfulness", 1)[1].split("</div>", 1)[0]
    assert "No sample below a perfect score." not in card
    assert "2 unscored, then lowest 0" in card
    assert card.index("s2") < card.index(EMPTY) < card.index("s6") < card.index(NOTHING)
    assert 'href="#s-1"' in card and 'href="#s-5"' in card  # linked to the samples shown
    mrr_card = worst.split("<h3>mrr", 1)[1].split("</div>", 1)[0]
    assert "unscored" not in mrr_card


def test_unscored_come_before_the_lowest_scores_and_are_bounded():
    recs = _records()
    recs[3]["scores"]["faithfulness"] = 0.2
    recs += [{"id": f"g{i}", "scores": {"faithfulness": None}, "errors": {"faithfulness": "x"}}
             for i in range(WORST_K + 3)]
    summary = _summary()
    summary["metrics"]["faithfulness"].update(unscored=2 + WORST_K + 3, n=6)
    view = build_view(summary, recs, _samples())
    faith = view["metrics"][0]
    assert len(faith["gaps"]) == WORST_K and faith["gaps_more"] == 5
    assert [w["id"] for w in faith["worst"]] == ["s4"]
    html = render_html(summary, recs, _samples())
    card = html.split("<h3>faithfulness", 2)[1].split("</div>", 1)[0]
    assert card.index(EMPTY) < card.index(">s4<")
    assert "5 more unscored" in card


def test_linked_unscored_samples_are_shown_on_a_bounded_page():
    recs = [{"id": f"r{i}", "scores": {"m": 1.0 if i != 150 else None},
             "errors": {"m": EMPTY} if i == 150 else {}} for i in range(300)]
    summary = {"metrics": {"m": {"mean": 1.0, "n": 299, "unscored": 1,
                                 "unscored_reasons": {EMPTY: 1}}}, "n_samples": 300}
    view = build_view(summary, recs, [], max_samples=20)
    assert 150 in [s["index"] for s in view["samples"]]
    assert view["metrics"][0]["gaps"][0]["anchor"] == "s-150"


def test_summary_rows_say_unscored_next_to_the_mean():
    md = summary_markdown(_summary())
    assert "| faithfulness | 1.0000 (2 of 8 unscored) |" in md
    assert re.search(r"\| mrr \| 0\.5000 \|", md)  # nothing unscored, nothing added
    buf = io.StringIO()
    Console(file=buf, width=160).print(summary_table(_summary()), crop=False)
    row = next(line for line in buf.getvalue().splitlines() if "faithfulness" in line)
    assert "1.0000 (2 of 8 unscored)" in row
    html = render_html(_summary(), _records(), _samples())
    summary = html.split('<table class="summary">', 1)[1].split("</table>", 1)[0]
    faith_row = summary.split("faithfulness", 1)[1].split("</tr>", 1)[0]
    assert '<div class="gapnote">2 of 8 unscored</div>' in faith_row
    mrr_row = summary.split(">mrr<", 1)[1].split("</tr>", 1)[0]
    assert "gapnote" not in mrr_row


def test_a_metric_with_every_sample_unscored_says_so_too():
    summary = {"metrics": {"m": {"mean": None, "ci95": None, "n": 0, "unscored": 3,
                                 "unscored_reasons": {EMPTY: 3}}}, "n_samples": 3}
    assert "| m | - (3 of 3 unscored) |" in summary_markdown(summary)
    recs = [{"id": f"r{i}", "scores": {"m": None}, "errors": {"m": EMPTY}} for i in range(3)]
    html = render_html(summary, recs, [])
    card = html.split("<h3>m ", 1)[1].split("</div>", 1)[0]
    assert "No scored samples." not in card and card.count(EMPTY) == 3
