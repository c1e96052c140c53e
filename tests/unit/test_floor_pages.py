"""One page toolkit under every page: the environment, the CSP, the assets, the atomic
writer and SVG scales that never draw a non-finite coordinate; rank's page; and every
page opened in headless Chromium at 1280 px with nothing cut off.

The width check opens a test copy of each page with one more script, hashed into the
page's own Content-Security-Policy (an unhashed script would be blocked): it opens
every ``<details>``, then writes into ``<html data-measure>`` the page's scroll width
against its client width and every element whose content runs past a box that hides
it (a deliberate one-line ellipsis aside). A wide table may scroll inside its own box;
the page itself may not scroll sideways.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import localeval
from localeval.testing import ScriptedJudge, chromium_path
from localeval.testing.scripted import ScriptedReply

LONG = "tool_call_accuracy_with_reference_and_a_much_longer_custom_suffix_for_wrapping"
URLISH = "https://example.invalid/" + "a" * 160


# -- the pages, built from small data --------------------------------------------------------
def report_page(tmp: Path) -> Path:
    """report.html with many metrics, long metric names, ids and unscored reasons."""
    from localeval.report import write_html_report

    keys = [f"{LONG}_{i}" if i % 3 == 0 else f"metric_{i}" for i in range(14)]
    samples = [{"id": f"sample-{'x' * 90}-{i}", "question": f"question {i} " + "w" * 200,
                "answer": "answer " + "z" * 300, "contexts": ["c " + "y" * 400],
                "reference": "ref"} for i in range(4)]
    records = [{"id": s["id"], "scores": {k: (None if j == 1 and i == 0 else (i + j) % 3 / 2)
                                          for j, k in enumerate(keys)},
                "errors": {keys[1]: URLISH} if i == 0 else {}, "details": {}}
               for i, s in enumerate(samples)]
    metrics = {k: {"mean": 0.5, "ci95": [0.25, 0.75], "n": 4 - (j == 1),
                   "unscored": int(j == 1), **({"unscored_reasons": {URLISH: 1}} if j == 1
                                               else {})}
               for j, k in enumerate(keys)}
    summary = {"metrics": metrics, "n_samples": 4,
               "signature": {"judge": "j" * 120, "seed": 0},
               "signature_line": "judge:" + "j" * 200 + "|seed:0"}
    return write_html_report(tmp / "run", summary, records, samples)


def _version_files(tmp: Path) -> tuple[str, str]:
    """Two versions with six score columns, long names among them."""
    cols = [f"{LONG}_{i}" if i % 2 else f"m{i}" for i in range(6)]
    paths = []
    for name, good in (("base", False), ("new", True)):
        rows = [{"id": f"q{i}-{'k' * 70}", "question": f"question {i}?", "contexts": ["ctx"],
                 "answer": f"{'good' if good else 'plain'} answer {i} " + "a" * 120,
                 **{c: ((i + k + good) % 4) / 3 for k, c in enumerate(cols)}}
                for i in range(8)]
        p = tmp / f"{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(str(p))
    return paths[0], paths[1]


def _pairwise(request):
    a, b = request.inputs["answer_a"], request.inputs["answer_b"]
    good_a = a.startswith("good") or b.startswith("plain")
    return ScriptedReply({"reason": "r " + "why" * 40, "verdict": "A" if good_a else "B"},
                         [{"A": 0.8 if good_a else 0.2, "B": 0.2 if good_a else 0.8,
                           "tie": 0.0}])


def pairwise_judge() -> ScriptedJudge:
    return ScriptedJudge({"pairwise_preference": _pairwise})


def diff_page(tmp: Path) -> Path:
    from localeval.pairwise import compare_pairwise
    from localeval.versions import diff_runs, write_diff

    b, n = _version_files(tmp)
    d = diff_runs(b, n, n_resamples=999)
    r = compare_pairwise(d.base, d.new, judge=pairwise_judge(), n_resamples=999,
                         judge_check=False)
    d.pairwise, d.pairwise_check = r.to_dict(), r.judge_check
    write_diff(d, tmp / "diff")
    return tmp / "diff" / "diff.html"


def rank_files(tmp: Path) -> list[str]:
    """Three versions' answers; the second (a long name) is the better one."""
    paths = []
    for k, name in enumerate(("v1", f"v2-{'n' * 60}", "v3")):
        rows = [{"id": f"q{i}", "question": f"question {i}?", "contexts": ["ctx"],
                 "answer": f"{'good' if k == 1 else 'plain'} {name} {i}", "bleu": 0.5}
                for i in range(8)]
        p = tmp / f"{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(str(p))
    return paths


def rank_page(tmp: Path, *, judge_check: bool | int = False) -> Path:
    from localeval.pairwise import rank_versions, write_rank_page

    r = rank_versions(rank_files(tmp), judge=pairwise_judge(), n_resamples=999,
                      judge_check=judge_check)
    (tmp / "rank").mkdir()
    return write_rank_page(r, tmp / "rank")


def history_page(tmp: Path) -> Path:
    from localeval.history import build_history, write_history

    judge = ScriptedJudge({"statements": {"statements": ["a claim"]},
                           "faithfulness_verdicts": {"verdicts": [{"reason": "r",
                                                                   "verdict": 1}]}})
    for k in range(3):
        rows = [{"id": f"r{i}-{'h' * 60}", "question": f"Q{i}?", "answer": f"answer {i} {k}",
                 "contexts": [f"context {i}"], "reference": f"answer {i}"} for i in range(4)]
        localeval.evaluate(rows, ["faithfulness", "rougeL"], judge=judge,
                           out_dir=tmp / "runs" / f"{k}-{'r' * 50}", name=f"run-{k}-" + "n" * 60,
                           tags={"branch": "b" * 70}, cache=False, progress=False,
                           judge_check=False)
    page = tmp / "history.html"
    write_history(build_history([tmp / "runs"], page))
    return page


def generated_set_page(tmp: Path) -> Path:
    from test_generate_page import CHUNKS, DROPPED, KEPT, SUMMARY

    from localeval.generate import write_testset_page

    return write_testset_page(tmp, KEPT, DROPPED, CHUNKS, SUMMARY)


def conversations_page(tmp: Path) -> Path:
    """conversations.html (localeval simulate) with long ids, turns and tool arguments."""
    from localeval.simulate import write_conversations_page

    rows = [{"id": f"s{i}-{'x' * 80}", "reference": "booked " + "r" * 300,
             "reference_tool_calls": [{"name": LONG, "args": {"room": URLISH}}],
             "messages": [{"role": "user", "content": "book " + "w" * 400},
                          {"role": "assistant", "content": "",
                           "tool_calls": [{"name": LONG, "args": {"room": URLISH}, "id": "c1"}]},
                          {"role": "tool", "content": URLISH, "tool_call_id": "c1"},
                          {"role": "assistant", "content": "done " + "z" * 300}],
             "simulation": {"goal": "g " + "y" * 200, "persona": "p", "lang": "en",
                            "stop": "goal_reached", "user_turns": 1, "notes": [URLISH]}}
            for i in range(3)]
    summary = {"scenarios": 3, "simulator_health": ["the judge copied " + "c" * 200],
               "setup": {"agent": "agents/" + "a" * 150 + ".py:reply", "seed": 0}}
    return write_conversations_page(tmp, rows, summary)


def _runs(tmp: Path) -> tuple[Path, Path]:
    rows = [{"id": f"q{i}-{'c' * 60}", "retrieved_ids": ["a", "b", "c"],
             "relevant_ids": [["a"], ["b"], ["c"], ["z"]][i % 4]} for i in range(12)]
    metrics = ["mrr", "hit_rate@1", "ndcg@3", "precision@3", "recall@3"]
    localeval.evaluate(rows, metrics, judge=False, cache=False, out_dir=tmp / "a",
                       progress=False)
    shuffled = [dict(r, retrieved_ids=list(reversed(r["retrieved_ids"]))) for r in rows]
    localeval.evaluate(shuffled, metrics, judge=False, cache=False, out_dir=tmp / "b",
                       progress=False)
    return tmp / "a", tmp / "b"


def comparison_page(tmp: Path) -> Path:
    from localeval.agreement import compare, write_comparison
    from localeval.resultsets import load_result_set

    a, b = _runs(tmp)
    write_comparison(compare(load_result_set(a), load_result_set(b), n_boot=200), tmp / "c")
    return tmp / "c" / "comparison.html"


def validation_page(tmp: Path) -> Path:
    from localeval.agreement import validate, write_validation
    from localeval.resultsets import load_result_set

    a, _ = _runs(tmp)
    labels = tmp / "labels.jsonl"
    labels.write_text("\n".join(json.dumps({"id": f"q{i}-{'c' * 60}",
                                            "label": "positive" if i % 4 == 0 else "negative"})
                                for i in range(12)), encoding="utf-8")
    write_validation(validate(load_result_set(a), labels, n_boot=200), tmp / "v")
    return tmp / "v" / "validation.html"


PAGES = {"report": report_page, "diff": diff_page, "rank": rank_page,
         "history": history_page, "testset": generated_set_page, "comparison": comparison_page,
         "validation": validation_page, "conversations": conversations_page}


# -- the width check --------------------------------------------------------------------------
MEASURE = """(function () {
  "use strict";
  var root = document.documentElement;
  Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  function name(el) {
    return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "");
  }
  var cut = [], scrolls = [];
  Array.prototype.forEach.call(document.querySelectorAll("body *"), function (el) {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") { return; }
    var s = window.getComputedStyle(el);
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
      if (s.overflowX === "auto" || s.overflowX === "scroll") {
        var t = el.querySelector("table");
        scrolls.push(t ? name(t) : name(el));
      }
      else if (s.textOverflow !== "ellipsis") {
        cut.push(name(el) + " " + el.scrollWidth + ">" + el.clientWidth);
      }
    }
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > root.clientWidth + 1) {
      var p = el.parentElement, boxed = false;
      while (p && p !== root) {
        var o = window.getComputedStyle(p).overflowX;
        if (o === "auto" || o === "scroll" || o === "hidden") { boxed = true; break; }
        p = p.parentElement;
      }
      if (!boxed) { cut.push(name(el) + " right " + Math.round(r.right)); }
    }
  });
  root.setAttribute("data-measure", JSON.stringify({
    viewport: root.clientWidth, window: window.innerWidth, page: root.scrollWidth,
    cut: cut.slice(0, 20), scrolls: scrolls.slice(0, 20),
    tables: document.querySelectorAll("table").length}));
})();"""


def _source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def measuring_copy(page: Path) -> Path:
    """A copy of ``page`` beside it with MEASURE added and hashed into its CSP."""
    html = page.read_text(encoding="utf-8")
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert meta, f"{page.name} has no CSP meta"
    policy = meta.group(1)
    if "script-src " in policy:
        policy = policy.replace("script-src ", f"script-src {_source(MEASURE)} ", 1)
    else:
        policy = policy.replace("default-src 'none'; ",
                                f"default-src 'none'; script-src {_source(MEASURE)}; ", 1)
    html = html.replace(meta.group(0), meta.group(0).replace(meta.group(1), policy), 1)
    html = html.replace("</body>", f"<script>{MEASURE}</script>\n</body>", 1)
    copy = page.with_name("measure-" + page.name)
    copy.write_text(html, encoding="utf-8")
    return copy


class _Root(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag, attrs):
        if tag == "html":
            self.attrs = dict(attrs)


def measure(page: Path, profile: Path, width: int = 1280) -> tuple[dict, list[str]]:
    """What MEASURE found in ``page`` at ``width`` px, and the console's complaints."""
    exe = chromium_path()
    assert exe is not None
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           f"--window-size={width},900", "--dump-dom", measuring_copy(page).as_uri()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    console = [ln for ln in p.stderr.splitlines()
               if ":CONSOLE" in ln or "Uncaught" in ln or "Content Security Policy" in ln]
    root = _Root()
    root.feed(p.stdout)
    found = root.attrs.get("data-measure")
    assert found, f"the measuring script did not run: {console}"
    return json.loads(found), console


def _blocks(html: str) -> tuple[str, str | None]:
    """The page's inline style and script (None without one)."""
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    assert style
    return style.group(1), script.group(1) if script else None


# -- one page in 1280 px, one CSP, built with the toolkit ------------------------------------
@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_fits_1280_px_without_a_cut_column(name, browser, tmp_path):
    page = PAGES[name](tmp_path)
    html = page.read_text(encoding="utf-8")
    # the one policy, built by the toolkit from the page's own inline blocks
    from localeval.report import content_security_policy

    style, script = _blocks(html)
    assert (f'<meta http-equiv="Content-Security-Policy" '
            f'content="{content_security_policy(style, script)}">') in html.replace("&#39;", "'")
    found, console = measure(page, tmp_path / "profile")
    assert console == []  # our own style and script (and the measuring one) ran
    assert found["viewport"] == 1280 and found["tables"] >= 1
    assert found["page"] <= found["viewport"], found  # the page never scrolls sideways
    assert found["cut"] == [], found  # nothing runs past a box that hides it
    # a table scrolls inside its own box only when it cannot wrap: a confusion matrix
    assert all(s.startswith("table.matrix") for s in found["scrolls"]), found


WIDE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}"><style>{{ css }}</style></head>
<body><main class="wrap">{% for box in ("bare", "tablewrap") %}<div class="{{ box }}">
<table class="summary"><tr>{% for i in range(40) %}<td class="r">value {{ i }}</td>{% endfor %}
</tr></table></div>{% endfor %}</main><script>{{ js }}</script></body></html>"""


def test_the_measuring_check_sees_a_cut_column(browser, tmp_path):
    """The check itself: a table wider than the page, and one that scrolls in its box."""
    from localeval.report import page_assets, page_env, write_page

    env = page_env()
    page = write_page(tmp_path / "wide.html", env.from_string(WIDE).render(**page_assets(env)))
    found, console = measure(page, tmp_path / "profile")
    assert console == []
    assert found["page"] > found["viewport"] or found["cut"], found
    assert found["scrolls"] == ["table.summary"], found


def test_templates_share_one_policy_and_modules_one_environment():
    """No template spells out its own policy; no page module builds its own environment."""
    root = Path(localeval.__file__).parent
    templates = sorted(root.glob("*/templates/*.html.j2"))
    pages = [t for t in templates if not t.name.startswith("_")]
    assert len(pages) == 8  # report, diff, history, testset, comparison, validation, rank,
    # conversations
    for t in pages:
        text = t.read_text(encoding="utf-8")
        assert '<meta http-equiv="Content-Security-Policy" content="{{ csp }}">' in text, t
        assert "sha256" not in text and "css_hash" not in text, t
    for module in root.rglob("*.py"):
        src = module.read_text(encoding="utf-8")
        if module.name == "pages.py" and module.parent.name == "report":
            continue
        if module.parent.name == "prompts":  # the judge's prompts: not a page
            continue
        assert "jinja2.Environment(" not in src, module
        assert "b64encode(hashlib.sha256" not in src, module  # a CSP source of its own


def test_page_env_escapes_and_finds_the_report_assets():
    from localeval.report import page_assets, page_env

    env = page_env("localeval.pairwise")
    assert env.autoescape
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assets = page_assets(env, ())
    assert "--bg" in assets["css"] and "data-report-ready" in assets["js"]
    assert "'sha256-" in assets["csp"] and "script-src" in assets["csp"]
    assert page_assets(env, (), script=False)["js"] is None
    assert "script-src" not in page_assets(env, (), script=False)["csp"]


def test_write_page_is_atomic_and_names_the_file(tmp_path):
    from localeval.errors import OutputError
    from localeval.report import write_page

    (tmp_path / "plain").write_text("a file, not a folder")
    with pytest.raises(OutputError, match="plain/page.html") as e:
        write_page(tmp_path / "plain" / "page.html", "<html></html>")
    assert e.value.exit_code == 2
    done = write_page(tmp_path / "page.html", "<html></html>")
    assert done.read_text() == "<html></html>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html", "plain"]


def test_comparison_and_validation_pages_are_written_atomically(tmp_path):
    """A page that cannot be put in place is one OutputError naming it (exit 2), with no
    .tmp left: these two were written with write_text before."""
    from localeval.agreement import compare, validate, write_comparison, write_validation
    from localeval.errors import OutputError
    from localeval.resultsets import load_result_set

    a, b = _runs(tmp_path)
    (tmp_path / "c" / "comparison.html").mkdir(parents=True)  # in the way of the page
    with pytest.raises(OutputError, match="comparison.html") as e:
        write_comparison(compare(load_result_set(a), load_result_set(b), n_boot=200),
                         tmp_path / "c")
    assert e.value.exit_code == 2 and not list((tmp_path / "c").rglob("*.tmp"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps({"id": f"q{i}-{'c' * 60}", "label": i % 2})
                                for i in range(12)), encoding="utf-8")
    (tmp_path / "v" / "validation.html").mkdir(parents=True)
    with pytest.raises(OutputError, match="validation.html"):
        write_validation(validate(load_result_set(a), labels, n_boot=200), tmp_path / "v")
    assert not list((tmp_path / "v").rglob("*.tmp"))


# -- scales never draw a non-finite value ------------------------------------------------------
BAD = [float("nan"), float("inf"), float("-inf"), None]
_NUM = re.compile(r'\b(?:x|y|x1|x2|y1|y2|cx|cy|r|width|height|points|d)="([^"]*)"')


def _coordinates_are_finite(svg: str) -> None:
    assert not re.search(r"\b(nan|inf)\b", svg, re.I), svg
    for value in _NUM.findall(svg):
        for part in re.split(r"[ ,]+", value.strip()):
            if part:
                assert math.isfinite(float(part)), (part, svg)


def test_the_scale():
    from localeval.report import Scale, domain

    s = Scale(0.0, 1.0, 10.0, 110.0)
    assert s(0.5) == 60.0 and s(2.0) == 110.0 and s(-1.0) == 10.0  # clamped to the range
    assert all(s(v) is None for v in BAD) and s("x") is None
    assert s.at(0.25) == "35.0" and s.at(float("nan")) is None
    flat = Scale(3.0, 3.0, 0.0, 100.0)  # a degenerate range is widened, not divided by
    assert flat(3.0) == 50.0 and flat.lo < 3.0 < flat.hi
    assert domain([]) == (0.0, 1.0) and domain(BAD) == (0.0, 1.0)
    assert domain([2.0, float("nan"), 4.0]) == (2.0, 4.0)
    lo, hi = domain([-1.7e308, 1.7e308])  # a span that would overflow
    huge = Scale(lo, hi, 0.0, 100.0)
    assert all(math.isfinite(huge(v)) for v in (-1.7e308, 0.0, 1.7e308))
    down = Scale(0.0, 1.0, 200.0, 0.0)  # a y axis
    assert down(1.0) == 0.0 and down(0.0) == 200.0


def test_histogram_draws_no_non_finite_value():
    from localeval.report import score_histogram

    for values, mean, ci in (([*BAD, 0.5, 2.0], float("nan"), [float("nan"), float("inf")]),
                             (BAD, float("inf"), [None, 0.5]), ([0.3, 0.3], None, [0.3, 0.3]),
                             ([1e308, -1e308, float("nan")], 0.0, [-1e308, 1e308])):
        h = score_histogram(values, mean=mean, ci=ci)
        numbers = [h.mean_x, *(h.ci or ()), *(t["x"] for t in h.xticks),
                   *(b[k] for b in h.bars for k in ("x", "y", "w", "h", "tx"))]
        assert all(v is None or math.isfinite(v) for v in numbers), h
        assert h.n == len(values)


def test_reliability_diagram_leaves_out_bins_it_cannot_place():
    from localeval.report.corrected import reliability

    bins = [{"low": 0.0, "high": 0.5, "n": 3, "mean_score": float("nan"), "mean_label": 0.2},
            {"low": 0.5, "high": 1.0, "n": 2, "mean_score": 0.7, "mean_label": float("inf")},
            {"low": 0.5, "high": 1.0, "n": 2, "mean_score": None, "mean_label": 0.5},
            {"low": 0.5, "high": 1.0, "n": 4, "mean_score": 0.8, "mean_label": 0.75}]
    g = reliability({"bins": bins})
    assert len(g["dots"]) == 1 and g["dots"][0]["cx"] == 30 + 0.8 * 160
    assert "nan" not in g["path"] and "inf" not in g["path"]
    assert all(math.isfinite(v) for d in g["dots"] for v in (d["cx"], d["cy"], d["r"]))


def test_scatter_draws_no_non_finite_value():
    from localeval.agreement.scatter import scatter_svg

    svg = scatter_svg([float("nan"), 1.0, float("inf"), None, 0.5, 0.0],
                      [0.2, float("nan"), 1.0, 0.3, 0.5, float("-inf")], "m",
                      ids=[f"s{i}" for i in range(6)])
    _coordinates_are_finite(svg)
    assert svg.count("<circle") == 1 and "(n=6, 5 not finite, not drawn)" in svg
    _coordinates_are_finite(scatter_svg(BAD, BAD, "all bad"))
    _coordinates_are_finite(scatter_svg([1e308, -1e308], [1e308, 0.0], "huge"))
    same = scatter_svg([0.5, 0.5], [0.5, 0.5], "same")  # unchanged for finite values
    assert "(n=2)" in same and same.count("<circle") == 2


def test_trend_draws_no_non_finite_value(tmp_path):
    from localeval.history import build_history
    from localeval.history.chart import trend_svg
    from localeval.history.runs import MetricPoint

    for k in range(4):
        localeval.evaluate([{"id": "a", "question": "q?", "answer": f"a {k}",
                             "reference": "a"}], ["rougeL"], judge=False, cache=False,
                           out_dir=tmp_path / "runs" / f"r{k}", progress=False)
    runs = build_history([tmp_path / "runs"], tmp_path / "h.html").groups[0].runs
    assert len(runs) == 4
    points = [MetricPoint(float("nan"), 0.1, 0.2), MetricPoint(0.4, float("-inf"), float("inf")),
              MetricPoint(None, None, None), MetricPoint(float("inf"), 0.2, 0.3)]
    for r, p in zip(runs, points):
        r.metrics["rougeL"] = p
    svg = trend_svg("rougeL", runs, [])
    _coordinates_are_finite(svg)
    assert svg.count('class="pt') == 1  # only the run with a finite mean is a point
    assert '<line class="ci"' not in svg  # its interval has an infinite end: not drawn
    runs[0].metrics["rougeL"] = MetricPoint(5.0, 4.0, 6.0)  # outside [0, 1]: its own range
    runs[2].metrics["rougeL"] = MetricPoint(5.0, 5.0, 5.0)
    _coordinates_are_finite(trend_svg("rougeL", runs, []))


# -- rank.html ---------------------------------------------------------------------------------
def test_rank_page_shows_the_ranking_neighbours_bias_and_caveats(tmp_path):
    from localeval.pairwise import rank_html, rank_versions
    from localeval.results import JudgeFitness

    hostile = "<script>alert(1)</script>\x1b[31m"
    r = rank_versions(rank_files(tmp_path), judge=pairwise_judge(), n_resamples=999,
                      judge_check=False, names=["v1", hostile, "v3"])
    r.version_fitness["v3"] = JudgeFitness(verdict="unfit",
                                           line="judge check: UNFIT: 2 of 8 probes right")
    html = rank_html(r)
    assert html.count("<script") == 1 and "alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m" in html  # escaped, made visible
    assert "\x1b" not in html
    ranking = html[html.index('id="ranking"'):html.index('id="neighbours"')]
    assert ranking.index("&lt;script&gt;") < ranking.index(">v1<")  # the better one first
    assert "ranking by Bradley-Terry strength over 8 questions" in ranking
    assert re.search(r"\+\d\.\d\d \[[+-]\d\.\d\d, [+-]\d\.\d\d\]", ranking)  # with intervals
    assert re.search(r"(v1 and v3|v3 and v1) cannot be told apart", html)  # the neighbours
    assert 'tag unfit">judge unfit' in html and "judge check: UNFIT: 2 of 8 probes" in html
    bias = html[html.index('id="bias"'):]
    assert "followed the position in" in bias and bias.count("<tr>") == 4  # head + 3 pairs
    assert "did not run (--no-judge-check)" in html


def test_rank_page_says_not_evidence_when_the_pairwise_check_fails(tmp_path):
    from localeval.pairwise import rank_html, rank_versions

    always_a = ScriptedJudge({"pairwise_preference": {"reason": "first", "verdict": "A"}})
    r = rank_versions(rank_files(tmp_path), judge=always_a, verdicts="hard", n_resamples=500,
                      judge_check=2)
    html = rank_html(r)
    assert 'class="banner warn" id="pairwise-check" role="alert"><strong>Not evidence.' in html
    assert "a one-order comparison with this judge is not evidence" in html


def test_localeval_rank_writes_rank_html_beside_rank_json(tmp_path, capsys):
    from localeval.cli.app import main
    from localeval.judge import register_judge_backend, unregister_judge_backend

    judge = pairwise_judge()
    register_judge_backend("floor-pages", lambda spec: spec == "scripted-floor",
                           lambda spec, **kw: judge)
    try:
        code = main(["rank", *rank_files(tmp_path), "--judge", "scripted-floor",
                     "--resamples", "999", "--no-judge-check", "--no-cache",
                     "-o", str(tmp_path / "out")])
    finally:
        unregister_judge_backend("floor-pages")
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"wrote {tmp_path / 'out' / 'rank.html'}" in err
    html = (tmp_path / "out" / "rank.html").read_text(encoding="utf-8")
    doc = json.loads((tmp_path / "out" / "rank.json").read_text(encoding="utf-8"))
    assert doc["ranking"]["sentence"] in html.replace("&gt;", ">").replace("&#39;", "'")
    assert not list((tmp_path / "out").glob("*.tmp"))
