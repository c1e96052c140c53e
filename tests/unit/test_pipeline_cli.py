"""``localeval answer``: ``--pipeline`` specs, exit codes, Ctrl-C, then ``localeval run``.

Each test writes its pipeline as a module of its own name in its own folder
(the current directory of the command), so no test sees another's module.
"""

from __future__ import annotations

import json
import sys
import textwrap
import uuid

import pytest

from localeval.cli.app import main

RAG = """
DOCS = {"d1": "Paris is the capital of France.", "d2": "Berlin is the capital of Germany.",
        "d3": "Rome is the capital of Italy."}
INDEX = {"France": ["d1", "d3"], "Germany": ["d3", "d2"], "Italy": ["d3", "d1"]}
CALLS = []

def answer(question):
    CALLS.append(question)
    country = question.rstrip("?").split()[-1]
    if country == "Spain":
        raise LookupError("nothing indexed for Spain")
    ids = INDEX[country]
    return {"answer": DOCS[ids[0]], "contexts": [DOCS[i] for i in ids], "retrieved_ids": ids}

def better(question):
    country = question.rstrip("?").split()[-1]
    ids = sorted(INDEX[country], key=lambda i: country not in DOCS[i])
    return {"answer": DOCS[ids[0]], "contexts": [DOCS[i] for i in ids], "retrieved_ids": ids}

def stop(question):
    if "Germany" in question:
        raise KeyboardInterrupt
    return "x"

def fails(question):
    raise TimeoutError("server down")

NOT_A_FUNCTION = {"a": 1}

def two_args(question, k):
    return "x"
"""

TEST_SET = [
    {"id": "fr", "question": "What is the capital of France?",
     "reference": "Paris is the capital of France.", "relevant_ids": ["d1"]},
    {"id": "de", "question": "What is the capital of Germany?",
     "reference": "Berlin is the capital of Germany.", "relevant_ids": ["d2"]},
    {"id": "it", "question": "What is the capital of Italy?",
     "reference": "Rome is the capital of Italy.", "relevant_ids": ["d3"]},
]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with the user's pipeline module (a fresh name) and test set; the cwd."""
    name = f"rag_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(RAG), encoding="utf-8")
    (tmp_path / "tests.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in TEST_SET), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield tmp_path, name
    sys.modules.pop(name, None)


def answer(*args):
    return main(["answer", "tests.jsonl", "--quiet", *args])


def test_answer_then_run_with_text_and_retrieval_metrics(project, capsys):
    tmp, rag = project
    assert answer("--pipeline", f"{rag}:answer", "-o", "v1.jsonl") == 0
    out = capsys.readouterr().out
    assert "3 rows to v1.jsonl (3 answered)" in out and "next: localeval run v1.jsonl" in out
    rows = [json.loads(line) for line in (tmp / "v1.jsonl").read_text().splitlines()]
    assert rows[1]["retrieved_ids"] == ["d3", "d2"] and rows[1]["relevant_ids"] == ["d2"]  # as given
    assert main(["run", "v1.jsonl", "-m", "bleu,rougeL,mrr", "-o", "run1", "--no-cache",
                 "--quiet", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["metrics"]
    assert summary["mrr"]["mean"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert summary["rougeL"]["mean"] == pytest.approx((1 + 4 / 6 + 1) / 3)
    assert summary["bleu"]["n"] == 3
    # a second version, then diff: the loop the command exists for
    assert answer("--pipeline", f"{rag}.py:better", "-o", "v2.jsonl", "--parallel", "2") == 0
    capsys.readouterr()
    assert main(["run", "v2.jsonl", "-m", "bleu,rougeL,mrr", "-o", "run2", "--no-cache",
                 "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["mrr"]["mean"] == pytest.approx(1.0)
    assert main(["diff", "run1", "run2", "-o", "d"]) == 0


@pytest.mark.parametrize("spec, message", [
    ("RAG.answer", "expected MODULE:FUNCTION or path/to/file.py:FUNCTION"),
    ("no_such_module_xyz:answer", "no module 'no_such_module_xyz' in the current directory"),
    ("{rag}:answr", "{rag} has no attribute 'answr'; its functions: answer, better"),
    ("{rag}:NOT_A_FUNCTION", "NOT_A_FUNCTION is a dict, not a function"),
    ("{rag}:two_args", r"cannot be called as function(question)"),
    ("missing/rag.py:answer", "no file missing/rag.py"),
    (":answer", "expected MODULE:FUNCTION"),
])
def test_a_bad_pipeline_spec_is_one_clear_error(project, capsys, spec, message):
    _, rag = project
    spec, message = spec.format(rag=rag), message.format(rag=rag)
    assert answer("--pipeline", spec, "-o", "o.jsonl") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"localeval: error: pipeline {spec!r}: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_a_module_that_fails_to_import_names_its_error(project, capsys):
    tmp, _ = project
    (tmp / "broken_rag_mod.py").write_text("import faiss_not_installed\n")
    assert answer("--pipeline", "broken_rag_mod:answer", "-o", "o.jsonl") == 2
    assert "importing broken_rag_mod failed: No module named 'faiss_not_installed'" in \
        capsys.readouterr().err
    sys.modules.pop("broken_rag_mod", None)


def test_failed_rows_exit_0_and_every_row_failed_exits_3(project, capsys):
    tmp, rag = project
    with open(tmp / "tests.jsonl", "a") as f:
        f.write(json.dumps({"id": "es", "question": "What is the capital of Spain?"}) + "\n")
    assert answer("--pipeline", f"{rag}:answer", "-o", "o.jsonl") == 0
    out = capsys.readouterr().out
    assert "(3 answered, 1 failed)" in out
    assert "line 4 (id es): LookupError: nothing indexed for Spain" in out
    assert "1 row has no answer (pipeline_error)" in out
    assert answer("--pipeline", f"{rag}:fails", "-o", "f.jsonl") == 3
    captured = capsys.readouterr()
    assert "every row failed in the pipeline" in captured.err
    assert captured.out.count("TimeoutError: server down") == 4
    assert len((tmp / "f.jsonl").read_text().splitlines()) == 4  # kept, with the errors


def test_bad_input_exits_2_naming_the_line(project, capsys):
    tmp, rag = project
    (tmp / "bad.jsonl").write_text('{"question": "Q"}\n{"reference": "no question"}\n')
    assert main(["answer", "bad.jsonl", "--pipeline", f"{rag}:answer", "-o", "o.jsonl"]) == 2
    assert "bad.jsonl, line 2, column 'question': no question" in capsys.readouterr().err


def test_ctrl_c_keeps_the_rows_done_and_the_same_command_resumes(project, capsys):
    tmp, rag = project
    assert answer("--pipeline", f"{rag}:stop", "-o", "o.jsonl") == 130
    err = capsys.readouterr().err
    assert "the rows done are in o.jsonl. Run the same command again to resume" in err
    assert [json.loads(x)["id"] for x in (tmp / "o.jsonl").read_text().splitlines()] == ["fr"]
    assert answer("--pipeline", f"{rag}:answer", "-o", "o.jsonl") == 0
    assert "(2 answered, 1 kept from the earlier run)" in capsys.readouterr().out
    assert sys.modules[rag].CALLS == [TEST_SET[1]["question"], TEST_SET[2]["question"]]


def test_answer_is_listed_and_documented():
    from localeval.cli.app import build_parser

    assert "answer" in build_parser().format_help()
