"""testset.html and summary.md of a generated test set (localeval.generate.page, .summary_md):
every kept and dropped row with its reason, the documents without a question, the support
marks from the support filter, escaping, the CSP and nothing loaded from elsewhere, a
bound on the size of a large set, and next commands the real command line accepts."""

from __future__ import annotations

import base64
import hashlib
import re
import shlex
from html import escape
from html.parser import HTMLParser
from pathlib import Path

from localeval.corpus import Chunk
from localeval.generate import (
    TESTSET_FILES,
    Candidate,
    filter_candidates,
    render_testset_page,
    render_testset_summary,
    write_testset_files,
    write_testset_page,
)
from localeval.generate.page import MAX_FULL_ROWS
from localeval.metrics import Judging
from localeval.testing import ScriptedJudge, headless_dom

LAMP = ("The Lumo lamp has three brightness levels. Hold the button for two seconds to "
        "switch between warm and cold light.")
LEAVE = ("Employees receive twenty-five days of paid annual leave. Unused days expire at "
         "the end of March of the following year.")


def chunk(doc: str, text: str, position: int = 0) -> Chunk:
    return Chunk(id=f"{doc}#{position}-abcd1234", doc_id=doc, position=position, text=text,
                 lang="en", char_start=0, char_end=len(text))


CHUNKS = [chunk("lamp.md", LAMP), chunk("leave.md", LEAVE), chunk("silent.md", "Nothing here.")]


def cand(id: str, question: str, reference: str, chunks: list[Chunk], **kw) -> Candidate:
    return Candidate(id=id, question=question, reference=reference,
                     contexts=tuple(c.text for c in chunks), chunk_ids=tuple(c.id for c in chunks),
                     doc_ids=tuple(dict.fromkeys(c.doc_id for c in chunks)),
                     synthesizer=kw.pop("synthesizer", "single_hop_specific"), lang="en", **kw)


KEPT = [
    cand("k1", "How many brightness levels does the Lumo lamp have?", "Three, in warm light.",
         [CHUNKS[0]], checks={"support": 0.83, "round_trip_rank": 1, "statements": [
             {"statement": "The lamp has three levels.", "supported": True},
             {"statement": "Its light is always warm.", "supported": False}]}),
    cand("k2", "How many leave days do employees get, and what colour is the lamp?",
         "Twenty-five days.", [CHUNKS[1], CHUNKS[0]], synthesizer="multi_hop_specific",
         checks={"support": 1.0, "statements": [{"statement": "Twenty-five days.",
                                                 "supported": True}]}),
]
DROPPED = [
    cand("d1", "What colour is the Lumo lamp?", "The lamp is purple.", [CHUNKS[0]]).drop(
        "unsupported", support=0.0, statements=[{"statement": "The lamp is purple.",
                                                 "supported": False}],
        unsupported_statements=["The lamp is purple."]),
    cand("d2", "When do unused leave days expire?", "At the end of March.", [CHUNKS[1]]).drop(
        "near_duplicate", duplicate_of="k2"),
    # written before the filter recorded every statement: only the unsupported ones
    cand("d3", "Does the lamp float?", "It floats.", [CHUNKS[0]]).drop(
        "unsupported", support=0.0, unsupported_statements=["It floats."]),
]
SUMMARY = {
    "asked": 8, "written": 5, "kept": 2, "dropped": 3,
    "dropped_by_reason": {"near_duplicate": 1, "unsupported": 2},
    "kept_by_synthesizer": {"single_hop_specific": 1, "multi_hop_specific": 1},
    "dropped_by_synthesizer": {"single_hop_specific": 3}, "kept_by_language": {"en": 2},
    "documents": 3, "chunks": 3, "documents_without_question": ["silent.md"],
    "skipped_files": 0, "notes": ["guide.pdf: PDF is not read; convert it to text first"],
    "stages": [{"name": "support", "checked": 4, "dropped": 2,
                "note": "faithfulness of the reference >= 0.8", "skipped": False}],
    "generator_health": ["40% of rows (2 of 5) repeat another question: the generator "
                         "varies little"],
    "signature": {"generator": {"judge": "scripted", "fingerprint": "f00d"}, "seed": 7,
                  "corpus_hash": "c0ffee", "chunking": {"max_chars": 1500}},
}


def details(page: str, anchor: str) -> str:
    """The HTML of the row ``anchor`` (rows hold no nested <details>)."""
    start = page.index(f'id="{anchor}"')
    return page[start:page.index("</details>", start)]


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.blocks: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("style", "script") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in:
            self.blocks[self._in] = self.blocks.get(self._in, "") + data


def csp_source(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_page_holds_every_row_its_reason_the_documents_and_the_support_marks(tmp_path):
    path = write_testset_page(tmp_path, KEPT, DROPPED, CHUNKS, SUMMARY)
    assert path == tmp_path / "testset.html"
    page = path.read_text(encoding="utf-8")
    for i, c in enumerate(KEPT):
        row = details(page, f"kept-{i}")
        assert escape(c.question, quote=False) in row and c.id in row and "dropped" not in row
    for i, c in enumerate(DROPPED):
        row = details(page, f"dropped-{i}")
        assert escape(c.question, quote=False) in row and f"</span> {c.dropped}</span>" in row
    # the source chunks, verbatim, with their ids and documents
    two = details(page, "kept-1")
    assert all(f"<code>{c.id}</code> <span class=\"muted\">in</span> <code>{c.doc_id}</code>"
               in two and c.text in two for c in CHUNKS[:2])
    # support: the score, then each statement marked
    k1 = details(page, "kept-0")
    assert '<span class="score t-good">0.83</span>' in k1
    assert re.search(r'<li class="yes">[^\n]*The lamp has three levels\.', k1)
    assert re.search(r'<li class="no">[^\n]*Its light is always warm\.', k1)
    assert re.search(r'<li class="no">[^\n]*The lamp is purple\.', details(page, "dropped-0"))
    assert "did not check this row (dropped before it ran)" in details(page, "dropped-1")
    d3 = details(page, "dropped-2")
    assert re.search(r'<li class="no">[^\n]*It floats\.', d3) and "Only the statements" in d3
    # counts, reasons, spreads, documents, health and signature
    assert re.search(r"asked</div><div class=\"n\">8<", page)
    assert re.search(r"near_duplicate</td><td class=\"r mono\">1<", page)
    assert re.search(r"multi_hop_specific</td><td class=\"r mono\">1</td>"
                     r"<td class=\"r mono\">0<", page)
    without = page[page.index("Documents without a question"):page.index("Questions by document")]
    assert "<code>silent.md</code>" in without and "lamp.md" not in without
    assert re.search(r'<tr class="none"><td class="doc">silent.md</td>', page)
    assert "repeat another question" in page and "c0ffee" in page and "generator.judge" in page
    assert '<p class="banner note">guide.pdf: PDF is not read' in page
    assert "localeval answer" in page and "--pipeline MODULE:FUNCTION" in page


def test_every_text_is_escaped():
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    c = Chunk(id='a"><b>.md#0-1', doc_id='a"><b>.md', position=0, text="Chunk " + evil,
              lang="en", char_start=0, char_end=10)
    row = cand("<i>id</i>", "Why " + evil + "?", "Because " + evil, [c],
               checks={"support": 0.5, "statements": [{"statement": evil, "supported": False}],
                       "note": evil})
    summary = {**SUMMARY, "documents_without_question": [evil], "generator_health": [evil],
               "dropped_by_reason": {evil: 1}}
    page = render_testset_page([row], [row.drop(evil)], [c], summary)
    p = Tags()
    p.feed(page)
    names = [t for t, _ in p.tags]
    assert names.count("script") == 1 and "img" not in names and "b" not in names
    assert "i" not in names and not any(n.startswith("on") for _, a in p.tags for n in a)
    assert "&lt;script&gt;alert(" in page and "&lt;i&gt;id&lt;/i&gt;" in page


def test_csp_by_hash_and_nothing_loaded_from_elsewhere():
    page = render_testset_page(KEPT, DROPPED, CHUNKS, SUMMARY)
    p = Tags()
    p.feed(page)
    csp = next(a["content"] for t, a in p.tags
               if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None and "default-src 'none'" in csp
    # the hashes are of the style and script the page holds
    assert f"style-src '{csp_source(p.blocks['style'])}'" in csp
    assert f"script-src '{csp_source(p.blocks['script'])}'" in csp
    assert "http://" not in page and "https://" not in page
    assert all(t not in ("link", "img", "iframe", "object", "embed") for t, _ in p.tags)
    assert all("src" not in a for t, a in p.tags)
    assert all((a.get("href") or "#").startswith("#") for _, a in p.tags)
    assert all("style" not in a for _, a in p.tags)  # inline style attributes: CSP blocks them


def test_a_large_set_stays_bounded_and_lists_every_row():
    long = ("The Lumo lamp has three brightness levels and a warm light. " * 25)[:1500]
    chunks = [chunk(f"docs/d{i % 3000}.md", long, i) for i in range(6000)]
    rows = []
    for i in range(10_000):
        src = [chunks[i % 6000], chunks[(i * 7) % 6000]]
        reference = "x" * 200_000 if i == 1 else "Three levels and a warm light, switched in two seconds."
        c = cand(f"q-{i:05d}", f"How bright is lamp number {i}, and what else?", reference,
                 src, checks={"support": 0.9, "statements": [
                     {"statement": "Three levels and a warm light.", "supported": True}] * 4})
        rows.append(c if i % 3 else c.drop("not_retrieved"))
    kept = [r for r in rows if r.dropped is None]
    dropped = [r for r in rows if r.dropped]
    summary = {**SUMMARY, "asked": 10_000, "documents_without_question":
               [f"none/{i}.md" for i in range(5000)]}
    page = render_testset_page(kept, dropped, chunks, summary)
    assert len(page.encode("utf-8")) < 8_000_000
    assert page.count('<details class="sample"') == 10_000
    # rows past the first MAX_FULL_ROWS show their question and chunk ids, not their texts
    for last in (kept[-1], dropped[-1]):
        assert last.question in page
        row = details(page, f"{'kept' if last in kept else 'dropped'}-"
                            f"{(kept if last in kept else dropped).index(last)}")
        assert all(cid in row for cid in last.chunk_ids) and long not in row
    assert page.count('<div class="fields">') == 2 * MAX_FULL_ROWS
    # a 200,000-character reference is cut the way the report cuts, saying where it is
    assert "x" * 200_000 not in page and "more characters; the full text is in testset.jsonl" in page
    assert "… 4500 more; summary.json lists them all." in page


def test_summary_markdown_counts_reasons_and_commands_the_cli_accepts(tmp_path):
    folder = tmp_path / "my set"
    md = render_testset_summary({**SUMMARY, "documents_without_question": ["silent.md", "a|b`c.md"]},
                          folder)
    assert md.startswith("## localeval test set: 2 of 8 questions kept")
    assert "| questions asked | 8 |" in md and "| dropped | 3 |" in md
    assert "| near_duplicate | 1 |" in md
    assert "| unsupported | 2 |" in md
    assert "| multi_hop_specific | 1 | 0 |" in md and "| en | 2 |" in md
    assert "Documents without a question (2): `silent.md`, ``a|b`c.md``." in md
    assert "> - 40% of rows (2 of 5) repeat another question" in md
    assert "> - guide.pdf: PDF is not read; convert it to text first" in md
    assert "- generator.judge: `scripted`" in md and "- corpus_hash: `c0ffee`" in md
    commands = [line for line in md.splitlines() if line.startswith("localeval ")]
    assert [c.split()[1] for c in commands] == ["answer", "run", "retrieval"]
    assert shlex.quote(str(folder / "testset.jsonl")) in commands[0]
    assert "--pipeline MODULE:FUNCTION" in commands[0]
    assert commands[2].endswith(shlex.quote(str(folder / "qrels.txt")))
    from localeval.cli.app import build_parser

    parser = build_parser()
    for c in commands:  # each one is a command line the real parser takes
        args = parser.parse_args(shlex.split(c)[1:])
        assert args.func is not None
    answer = parser.parse_args(shlex.split(commands[0])[1:])
    assert answer.pipeline == "MODULE:FUNCTION" and Path(answer.data) == folder / "testset.jsonl"
    retrieval = parser.parse_args(shlex.split(commands[2])[1:])
    assert Path(retrieval.qrels) == folder / "qrels.txt"


def test_write_testset_files_writes_the_page_and_summary_md(tmp_path):
    assert {"testset.html", "summary.md"} <= set(TESTSET_FILES)
    paths = write_testset_files(tmp_path, KEPT, DROPPED, CHUNKS, SUMMARY)
    assert set(paths) == set(TESTSET_FILES)
    assert {p.name for p in tmp_path.iterdir()} == set(TESTSET_FILES)
    assert KEPT[0].question in paths["testset.html"].read_text(encoding="utf-8")
    md = paths["summary.md"].read_text(encoding="utf-8")
    assert "2 of 8 questions kept" in md and str(tmp_path / "qrels.txt") in md


def _statements(request):
    text = request.messages[-1]["content"]
    if "purple" in text.lower():
        return {"statements": ["The lamp is purple.", "It has three levels."]}
    return {"statements": ["It has three levels."]}


def _verdicts(request):
    n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 1)
    text = request.messages[-1]["content"]
    bad = "purple" in text.lower()
    return {"verdicts": [{"reason": "r", "verdict": 0 if bad and i == 0 else 1}
                         for i in range(n)]}


def test_the_support_filter_records_every_statement_and_the_page_marks_them(tmp_path):
    rows = [cand("s1", "How many brightness levels does the Lumo lamp have?", "Three.",
                 [CHUNKS[0]]),
            cand("s2", "What colour is the Lumo lamp?", "The lamp is purple, three levels.",
                 [CHUNKS[0]])]
    judge = ScriptedJudge({"statements": _statements, "faithfulness_verdicts": _verdicts})
    res = filter_candidates(rows, CHUNKS, judging=Judging(judge))
    (kept,), (dropped,) = res.kept, res.dropped
    assert kept.checks["statements"] == [{"statement": "It has three levels.", "supported": True}]
    assert dropped.checks["support"] == 0.5 and dropped.dropped == "unsupported"
    assert dropped.checks["statements"] == [
        {"statement": "The lamp is purple.", "supported": False},
        {"statement": "It has three levels.", "supported": True}]
    assert dropped.checks["unsupported_statements"] == ["The lamp is purple."]
    page = render_testset_page(res.kept, res.dropped, CHUNKS, SUMMARY)
    assert re.search(r'<li class="yes">[^\n]*It has three levels\.', details(page, "kept-0"))
    assert re.search(r'<li class="no">[^\n]*The lamp is purple\.', details(page, "dropped-0"))


def test_the_page_runs_in_headless_chromium_without_a_csp_report(browser, tmp_path):
    path = write_testset_page(tmp_path, KEPT, DROPPED, CHUNKS, SUMMARY)
    dom, console = headless_dom(path.as_uri() + "#dropped-1", tmp_path / "profile")
    assert console == []  # a blocked style or script would be reported here
    p = Tags()
    p.feed(dom)
    html = next(a for t, a in p.tags if t == "html")
    assert html.get("data-report-ready") == str(len(KEPT) + len(DROPPED))
    assert "open" in next(a for _, a in p.tags if a.get("id") == "dropped-1")
    assert f"{len(KEPT) + len(DROPPED)} of {len(KEPT) + len(DROPPED)} shown" in dom
