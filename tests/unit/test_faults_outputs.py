"""Fault injection, output half: what localeval writes (results.jsonl, results.csv, the lock,
report.html, the comparison page) under hostile names, hostile text and a full disk.

The contract is docs/failure-behaviour.md's: one message naming the file, the
documented exit code (2 for the user's input, options and output folder), nothing
torn, nothing silently lost; and nothing written lets data act on the reader (a
spreadsheet formula, a terminal escape, a bidirectional override that reverses the
text around it). A full disk is simulated with ``RLIMIT_FSIZE``: every write past
the limit fails (EFBIG) after writing what fits, as a disk that fills up does, so
the code under test runs unchanged in a real ``localeval`` process.
"""

from __future__ import annotations

import csv
import json
import os
import re
import resource
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import localeval
from localeval.errors import UsageError
from localeval.metrics import AspectCritic, load_metrics_file, parse_metrics

ROWS = [{"id": f"q{i:02d}", "question": f"What is item {i}?", "answer": f"Item {i} is blue.",
         "reference": f"Item {i} is blue.", "contexts": [f"Item {i} is blue."]}
        for i in range(20)]


def _jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _cli(*argv: str, cwd: Path, fsize: int | None = None) -> subprocess.CompletedProcess:
    """``localeval ARGV`` in a new process; ``fsize``: no file may grow past this many bytes."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run([sys.executable, "-m", "localeval.cli.app", *argv],
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "HF_HUB_OFFLINE": "1",
                               "PYTHONDONTWRITEBYTECODE": "1"},
                          preexec_fn=limit if fsize is not None else None)


def _one_error(proc: subprocess.CompletedProcess, code: int, *says: str) -> str:
    err = proc.stderr
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("localeval: error:")]
    assert len(lines) == 1, err
    for s in says:
        assert s in lines[0], (s, lines[0])
    return lines[0]


def _toml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "criteria.toml"
    p.write_text(text, encoding="utf-8")
    return p


def _critic(name: str) -> str:
    return f'[{json.dumps(name)}]\ntype = "aspect_critic"\ndefinition = "Is it polite?"\n'


# -- (a) metric names that collide with output columns --------------------------------
@pytest.mark.parametrize("name", ["id", "question", "user_input", "response", "reference",
                                  "ID", "retrieved_contexts", "polite_reason"])
def test_metrics_file_refuses_a_name_results_use_for_a_column(name, tmp_path):
    with pytest.raises(UsageError) as e:
        load_metrics_file(_toml(tmp_path, _critic(name)))
    assert name in str(e.value) and "column" in str(e.value)


def test_every_column_beside_the_metrics_is_a_refused_name(tmp_path):
    from localeval.metrics.criteria import REASON_SUFFIX, SAMPLE_COLUMNS

    res = localeval.evaluate(ROWS[:2], ["rougeL"], judge=False, cache=False, progress=False,
                             out_dir=tmp_path / "run")
    with open(tmp_path / "run" / "results.csv", encoding="utf-8-sig", newline="") as f:
        head = next(csv.reader(f))
    for cols in (head, list(res.to_pandas().columns)):
        others = [c for c in cols if c != "rougeL" and not c.endswith(REASON_SUFFIX)]
        assert others and set(others) <= SAMPLE_COLUMNS, others


def test_unknown_parameters_of_a_metrics_file_are_printed_escaped(tmp_path):
    with pytest.raises(UsageError) as e:
        load_metrics_file(_toml(tmp_path, _critic("polite") + r'"\u001b[2J" = 1' + "\n"))
    assert str(e.value).isprintable() and "\\x1b[2J" in str(e.value)


def test_a_metric_beside_its_reason_column_is_refused(tmp_path):
    with pytest.raises(UsageError, match="a_reason"):
        load_metrics_file(_toml(tmp_path, _critic("a") + _critic("a_reason")))


@pytest.mark.parametrize("text, says", [
    (_critic("Faithfulness"), "faithfulness"),
    (_critic("NDCG"), "ndcg"),
    (_critic("polite") + _critic("Polite"), "polite"),
])
def test_metrics_file_compares_names_ignoring_case(text, says, tmp_path):
    with pytest.raises(UsageError) as e:
        load_metrics_file(_toml(tmp_path, text))
    assert says in str(e.value).lower()


def test_python_metrics_equal_ignoring_case_are_refused():
    with pytest.raises(UsageError, match="(?i)faithfulness"):
        parse_metrics(["faithfulness", AspectCritic(name="Faithfulness", definition="x")])


def test_cli_refuses_a_colliding_metrics_file_with_exit_2(tmp_path):
    (tmp_path / "d.jsonl").write_text(_jsonl(ROWS[:2]), encoding="utf-8")
    _toml(tmp_path, _critic("question"))
    p = _cli("run", "d.jsonl", "-m", "question", "--metrics-file", "criteria.toml", "-o", "out",
             "--no-cache", "--quiet", cwd=tmp_path)
    _one_error(p, 2, "criteria.toml", "question")
    assert not (tmp_path / "out" / "results.csv").exists()


# -- (i) control characters and bidirectional overrides in names ----------------------
HOSTILE_NAMES = ["\x1b[31mred", "\u202essenlufhtiaf", "tab\there", "bell\x07", "rlm\u200f",
                 "isolate\u2066x", "nl\nx"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_metrics_file_refuses_control_and_bidi_characters_and_prints_them_escaped(name,
                                                                                   tmp_path):
    with pytest.raises(UsageError) as e:
        load_metrics_file(_toml(tmp_path, _critic(name)))
    msg = str(e.value)
    assert msg.isprintable(), repr(msg)  # no raw ESC, U+202E, tab or newline reaches a terminal
    bad = next(c for c in name if not c.isprintable())
    assert repr(bad)[1:-1] in msg  # shown escaped, e.g. \x1b or \u202e


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_python_metric_names_with_control_characters_are_refused(name):
    with pytest.raises(ValueError) as e:
        AspectCritic(name=name, definition="Is it polite?")
    assert str(e.value).isprintable()


def test_unknown_and_duplicated_metric_names_are_printed_escaped():
    for spec in ("\x1b[31mfoo", "rougeL,rougeL\x1b[0m"):
        with pytest.raises(UsageError) as e:
            parse_metrics(spec)
        assert str(e.value).isprintable(), repr(str(e.value))
    m = AspectCritic(name="same", definition="x")
    with pytest.raises(UsageError) as e:
        parse_metrics([m, m])
    assert "same" in str(e.value)


class _Isolation(HTMLParser):
    """For each text run holding ``needle``: is it inside <bdi> or an element whose class the
    page's CSS isolates (``unicode-bidi: isolate``)?"""

    def __init__(self, needle: str, isolated: set[str]):
        super().__init__()
        self.needle, self.isolated = needle, isolated
        self.stack: list[bool] = []
        self.found: list[bool] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("meta", "link", "br", "hr", "input", "img", "line", "rect"):
            return
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append(tag == "bdi" or bool(classes & self.isolated)
                          or (tag in self.isolated))

    def handle_endtag(self, tag):
        if tag in ("meta", "link", "br", "hr", "input", "img", "line", "rect"):
            return
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if self.needle in data:  # plain text (an SVG tooltip) isolates with U+2068 ... U+2069
            marked = re.search("\u2068" + re.escape(self.needle) + "[^\u2069]*\u2069", data)
            self.found.append(any(self.stack[-2:]) or bool(marked))


def _isolated_selectors(page: str) -> set[str]:
    """Class names (and bare tags) in CSS rules that set ``unicode-bidi: isolate``."""
    css = "".join(re.findall(r"<style>(.*?)</style>", page, re.S))
    out: set[str] = set()
    for sel, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        if re.search(r"unicode-bidi\s*:\s*(isolate|plaintext)", body):
            for part in sel.split(","):
                last = part.strip().split()[-1] if part.strip() else ""
                out.update(re.findall(r"\.([\w-]+)", last))
                if re.fullmatch(r"[a-z]+", last):
                    out.add(last)
    return out


def _assert_isolated(page: str, needle: str) -> None:
    p = _Isolation(needle, _isolated_selectors(page))
    p.feed(page)
    assert p.found, "the data text is not on the page"
    assert all(p.found), f"{p.found.count(False)} of {len(p.found)} runs of {needle!r} " \
                         "are not bidi-isolated"


def test_report_isolates_an_id_with_a_right_to_left_override(tmp_path):
    rows = [dict(ROWS[0], id="\u202eevil-id", question="\u202ereversed question"),
            *ROWS[1:3]]
    res = localeval.evaluate(rows, ["rougeL"], judge=False, cache=False, progress=False,
                             out_dir=tmp_path / "run")
    assert res is not None
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    _assert_isolated(page, "\u202eevil-id")
    _assert_isolated(page, "\u202ereversed question")


def test_comparison_page_isolates_an_id_with_a_right_to_left_override(tmp_path):
    from localeval.cli.app import main

    rows = [{"id": "\u202eevil" if i == 0 else f"q{i}", "retrieved_ids": ["a", "b"],
             "relevant_ids": ["a"]} for i in range(6)]
    localeval.evaluate(rows, ["mrr"], judge=False, cache=False, out_dir=tmp_path / "a",
                       progress=False)
    flipped = [dict(r, retrieved_ids=["b", "a"]) for r in rows]
    localeval.evaluate(flipped, ["mrr"], judge=False, cache=False, out_dir=tmp_path / "b",
                       progress=False)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o",
                 str(tmp_path / "c"), "--json"]) == 0
    _assert_isolated((tmp_path / "c" / "comparison.html").read_text(encoding="utf-8"),
                     "\u202eevil")


# -- (h) CSV formula injection ---------------------------------------------------------
def test_results_csv_neutralises_formulas_and_keeps_numbers_numbers(tmp_path):
    from localeval.results import write_results_csv

    records = [
        {"id": "=HYPERLINK(\"http://x\")", "question": "+1+1", "scores": {"=m": -0.5, "ok": None},
         "errors": {"ok": "@SUM(A1) judge failed"}},
        {"id": "-2", "question": "\tTAB", "scores": {"=m": 1.0, "ok": -1e-9}, "errors": {}},
        {"id": "plain", "question": "\rCR", "scores": {"=m": None, "ok": 0.25},
         "errors": {"=m": "=cmd|' /C calc'!A0"}},
    ]
    path = write_results_csv(tmp_path / "results.csv", records)
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "question", "'=m", "ok", "'=m_reason", "ok_reason"]
    assert rows[1][:2] == ["'=HYPERLINK(\"http://x\")", "'+1+1"]
    assert rows[1][5] == "'@SUM(A1) judge failed"
    assert rows[2][:2] == ["'-2", "'\tTAB"]
    assert rows[3][1] == "'\rCR" and rows[3][4] == "'=cmd|' /C calc'!A0"
    # scores are numbers, written as numbers: a negative score is not a formula
    assert float(rows[1][2]) == -0.5 and float(rows[2][3]) == -1e-9
    assert rows[3][0] == "plain" and float(rows[3][3]) == 0.25


def test_results_csv_of_a_cli_run_has_no_formula_cell(tmp_path):
    rows = [dict(ROWS[0], id="=1+1", question="@cmd"), dict(ROWS[1], id="+x", question="-y")]
    (tmp_path / "d.jsonl").write_text(_jsonl(rows), encoding="utf-8")
    p = _cli("run", "d.jsonl", "-m", "rougeL", "-o", "out", "--no-cache", "--quiet",
             cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    with open(tmp_path / "out" / "results.csv", encoding="utf-8-sig", newline="") as f:
        cells = [c for row in csv.reader(f) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")
                or (c[:1] == "-" and not re.fullmatch(r"-\d+(\.\d+)?(e-?\d+)?", c))]


# -- (f) a full disk while results.jsonl is written; torn last lines -------------------
def test_full_disk_mid_run_names_results_jsonl_and_leaves_whole_lines(tmp_path):
    (tmp_path / "d.jsonl").write_text(_jsonl(ROWS), encoding="utf-8")
    p = _cli("run", "d.jsonl", "-m", "rougeL", "-o", "out", "--no-cache", "--quiet",
             cwd=tmp_path, fsize=1000)  # a results line is ~240 bytes: the 5th is cut
    _one_error(p, 2, "results.jsonl")
    out = tmp_path / "out"
    raw = (out / "results.jsonl").read_bytes()
    assert raw and raw.endswith(b"\n"), raw[-80:]  # no torn last line
    lines = [json.loads(x) for x in raw.decode().splitlines()]
    assert [r["id"] for r in lines] == [f"q{i:02d}" for i in range(len(lines))]
    assert not list(out.glob("*.tmp")) and not (out / ".localeval.lock").exists()


def test_report_and_compare_read_a_folder_with_a_torn_last_line(tmp_path):
    from localeval.resultsets import load_result_set
    from localeval.results import read_run

    localeval.evaluate(ROWS[:4], ["rougeL"], judge=False, cache=False, progress=False,
                       out_dir=tmp_path / "run")
    results = tmp_path / "run" / "results.jsonl"
    whole = results.read_bytes()
    results.write_bytes(whole + b'{"id": "q04", "question": "What is it')  # a cut write
    with pytest.warns(UserWarning, match=r"results\.jsonl.*line 5"):
        _, records = read_run(tmp_path / "run")
    assert [r["id"] for r in records] == ["q00", "q01", "q02", "q03"]
    with pytest.warns(UserWarning, match=r"line 5"):
        rs = load_result_set(tmp_path / "run")
    assert sorted(rs.scores) == ["q00", "q01", "q02", "q03"]
    # only the last line may be torn: a bad line in the middle is still an error
    results.write_bytes(b'{"id": "q"\n' + whole)
    with pytest.raises(localeval.errors.DataError, match="line 1"):
        read_run(tmp_path / "run")


def test_report_command_warns_once_about_a_torn_line_and_rebuilds(tmp_path):
    localeval.evaluate(ROWS[:3], ["rougeL"], judge=False, cache=False, progress=False,
                       out_dir=tmp_path / "run")
    with open(tmp_path / "run" / "results.jsonl", "ab") as f:
        f.write(b'{"id": "q03", "scores": {"rou')
    p = _cli("report", "run", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("localeval: warning:") == 1 and "results.jsonl" in p.stderr, p.stderr


# -- (p) a full disk before the run, and while the report is written --------------------
def test_full_disk_before_the_run_names_the_lock_and_leaves_none(tmp_path):
    (tmp_path / "d.jsonl").write_text(_jsonl(ROWS[:2]), encoding="utf-8")
    p = _cli("run", "d.jsonl", "-m", "rougeL", "-o", "out", "--no-cache", "--quiet",
             cwd=tmp_path, fsize=0)
    _one_error(p, 2, str(Path("out") / ".localeval.lock"))
    assert not (tmp_path / "out" / ".localeval.lock").exists()


def test_full_disk_while_summary_is_written_names_it_and_leaves_no_temporary(tmp_path):
    (tmp_path / "d.jsonl").write_text(_jsonl(ROWS[:2]), encoding="utf-8")
    p = _cli("run", "d.jsonl", "-m", "rougeL", "-o", "out", "--no-cache", "--quiet",
             cwd=tmp_path, fsize=600)  # two results lines fit, summary.json does not
    _one_error(p, 2, "summary.json")
    out = tmp_path / "out"
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    assert not list(out.glob("*.tmp")) and not (out / ".localeval.lock").exists()


def test_full_disk_while_the_report_is_written_leaves_no_temporary(tmp_path):
    (tmp_path / "d.jsonl").write_text(_jsonl(ROWS[:2]), encoding="utf-8")
    p = _cli("run", "d.jsonl", "-m", "rougeL", "-o", "out", "--no-cache", "--quiet",
             cwd=tmp_path, fsize=20_000)  # results and summary fit, report.html does not
    assert p.returncode == 0, p.stderr
    assert "report.html" in p.stderr and "Traceback" not in p.stderr
    out = tmp_path / "out"
    assert not list(out.glob("*.tmp")), list(out.iterdir())
    assert not (out / "report.html").exists()
    # `localeval report` on the same disk: one message naming the page, exit 2, no temporary
    p = _cli("report", "out", cwd=tmp_path, fsize=20_000)
    _one_error(p, 2, "report.html")
    assert not list(out.glob("*.tmp")), list(out.iterdir())


# -- (n) the report is bounded in text, not only in samples -----------------------------
def test_report_page_stays_bounded_with_a_huge_answer_and_many_long_contexts(tmp_path):
    from localeval.report import write_html_report

    big = "word " * 1_000_000  # 5 MB
    samples = [dict(ROWS[0], answer=big, question="q " * 50_000,
                    contexts=[f"context {i} " + "x" * 20_000 for i in range(300)]),
               *ROWS[1:3]]
    records = [{"id": s["id"], "scores": {"rougeL": 0.5}, "errors": {},
                "details": {"rougeL": {"note": "y" * 100_000}}} for s in samples]
    summary = {"metrics": {"rougeL": {"mean": 0.5, "ci95": None, "n": 3, "unscored": 0}},
               "n_samples": 3}
    page = write_html_report(tmp_path, summary, records, samples).read_text(encoding="utf-8")
    assert len(page) < 1_000_000, len(page)  # 27 MB of text without the cut
    assert "(4,999,999 more characters" not in page
    assert f"({len(big) - 4_000:,} more characters; the full text is in the dataset)" in page
    assert "more characters; the full text is in results.jsonl" in page  # the working
    assert "280 more contexts not shown" in page


def test_report_page_text_budget_bounds_a_page_of_many_long_samples(tmp_path):
    from localeval.report import MAX_PAGE_TEXT, write_html_report

    samples = [dict(ROWS[0], id=f"s{i}", answer="a" * 50_000, contexts=["c" * 50_000] * 20)
               for i in range(120)]  # 126 MB of text
    records = [{"id": s["id"], "scores": {"rougeL": 0.5}, "errors": {}} for s in samples]
    summary = {"metrics": {"rougeL": {"mean": 0.5, "ci95": None, "n": 120, "unscored": 0}},
               "n_samples": 120}
    page = write_html_report(tmp_path, summary, records, samples).read_text(encoding="utf-8")
    assert len(page) < MAX_PAGE_TEXT + 1_500_000, len(page)
    assert page.count("more characters") == 120 * 21
