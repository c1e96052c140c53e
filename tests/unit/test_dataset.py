"""Dataset loading: every accepted source, both RAGAS column generations, and
one clear message (file, line/row, column) with exit code 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from localeval import DataError, load_dataset
from localeval.cli.app import main
from localeval.dataset import check_required

V1 = {"id": "a", "question": "Q?", "answer": "A.", "contexts": ["c1", "c2"],
      "ground_truth": "R.", "retrieved_ids": ["d1", "d2"], "relevant_ids": ["d2"]}
V2 = {"user_input": "Q2?", "response": "A2.", "retrieved_contexts": ["c"], "reference": "R2.",
      "relevant_ids": {"d1": 2, "d3": 1}, "retrieved_ids": ["d1"], "topic": "hr"}


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                    encoding="utf-8")
    return path


def run_cli(capsys, *argv):
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


# -- accepted sources --------------------------------------------------------------
def test_jsonl_both_column_generations(tmp_path):
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", [V1, V2]))
    a, b = ds.samples
    assert (a.id, a.question, a.answer, a.reference) == ("a", "Q?", "A.", "R.")
    assert a.contexts == ["c1", "c2"] and a.relevant_ids == {"d2": 1.0}
    assert (b.question, b.answer, b.contexts, b.reference) == ("Q2?", "A2.", ["c"], "R2.")
    assert b.id == "2", "rows without an id get their line number"
    assert b.relevant_ids == {"d1": 2.0, "d3": 1.0}
    assert b.metadata == {"topic": "hr"}, "unknown columns pass through as metadata"
    assert {"question", "answer", "contexts", "reference"} <= ds.columns


def test_csv_with_json_list_cells(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('id,question,answer,contexts,reference\n'
                 'x,"Q, with comma",A,"[""c1"", ""c2""]",R\n', encoding="utf-8")
    (s,) = load_dataset(p).samples
    assert s.question == "Q, with comma" and s.contexts == ["c1", "c2"] and s.row == 2


def test_parquet_dataframe_hf_list_and_dict(tmp_path):
    import datasets
    import pandas as pd
    frame = pd.DataFrame([V1])
    frame.to_parquet(tmp_path / "d.parquet")
    assert load_dataset(tmp_path / "d.parquet")[0].contexts == ["c1", "c2"]
    assert load_dataset(frame)[0].reference == "R."
    cols = {"question": ["q1", "q2"], "answer": ["a1", "a2"], "contexts": [["x"], ["y"]],
            "ground_truth": ["r1", "r2"]}
    assert load_dataset(datasets.Dataset.from_dict(cols))[1].contexts == ["y"]
    assert load_dataset(cols)[1].reference == "r2"
    assert load_dataset([V1, V2])[1].answer == "A2."


def test_column_map(tmp_path):
    p = write_jsonl(tmp_path / "d.jsonl", [{"q": "Q?", "my_answer": "A"}])
    s = load_dataset(p, columns=["question=q", "answer=my_answer"])[0]
    assert (s.question, s.answer) == ("Q?", "A")


def test_empty_strings_are_not_errors(tmp_path):
    s = load_dataset(write_jsonl(tmp_path / "d.jsonl", [{"question": "", "answer": "",
                                                          "contexts": [""]}]))[0]
    assert s.question == "" and s.answer == "" and s.contexts == [""]


# -- bad input: message names file, line and column; exit code 2 ----------------------
BAD_CASES = [
    ("malformed", '{"question": "ok"}\n{"question": "broken"\n', "line 2", "malformed JSON"),
    ("contexts_string", '{"question": "q", "contexts": "one passage"}\n', "column 'contexts'",
     "expected a list of strings, got a string"),
    ("number_text", '{"question": 42}\n', "column 'question'", "expected text, got a number"),
    ("context_item", '{"question": "q", "retrieved_contexts": ["a", 3]}\n',
     "column 'retrieved_contexts'", "item 2 of the list is a number"),
    ("dup_ids", '{"id": "x", "question": "a"}\n{"id": "x", "question": "b"}\n', "line 2",
     "duplicate id 'x' (first seen at line 1)"),
    ("not_object", '[1, 2]\n', "line 1", "expected a JSON object, got a list"),
    ("grades", '{"relevant_ids": {"d1": "high"}}\n', "column 'relevant_ids'",
     "relevance grade of 'd1' must be a number"),
]


@pytest.mark.parametrize("name,content,where,what", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_jsonl(tmp_path, capsys, name, content, where, what):
    p = tmp_path / f"{name}.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as ei:
        load_dataset(p)
    assert str(p) in str(ei.value) and where in str(ei.value) and what in str(ei.value)
    code, err = run_cli(capsys, "run", str(p), "-m", "hit_rate@3", "-o", str(tmp_path / "o"))
    assert code == 2
    assert err.startswith("localeval: error: ") and where in err and what in err
    assert "Traceback" not in err


def test_non_utf8_names_the_line(tmp_path, capsys):
    p = tmp_path / "latin1.jsonl"
    p.write_bytes(b'{"question": "ok"}\n{"question": "caf\xe9"}\n')
    code, err = run_cli(capsys, "run", str(p), "-m", "hit_rate", "-o", str(tmp_path / "o"))
    assert code == 2 and "line 2" in err and "not valid UTF-8" in err


def test_empty_file(tmp_path, capsys):
    p = tmp_path / "empty.jsonl"
    p.write_text("\n  \n")
    code, err = run_cli(capsys, "run", str(p), "-m", "hit_rate", "-o", str(tmp_path / "o"))
    assert code == 2 and "file is empty" in err and str(p) in err


def test_missing_file_and_unknown_type(tmp_path, capsys):
    code, err = run_cli(capsys, "run", str(tmp_path / "nope.jsonl"), "-m", "mrr")
    assert code == 2 and "file not found" in err
    (tmp_path / "d.xml").write_text("<x/>")
    code, err = run_cli(capsys, "run", str(tmp_path / "d.xml"), "-m", "mrr")
    assert code == 2 and "unknown file type" in err


def test_csv_bad_list_cell(tmp_path, capsys):
    p = tmp_path / "d.csv"
    p.write_text("question,contexts\nq1,[\"ok\"]\nq2,just text\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3, column 'contexts': expected a list in this cell: a JSON array"):
        load_dataset(p)


def test_missing_column_for_metric(tmp_path, capsys):
    p = write_jsonl(tmp_path / "d.jsonl", [{"question": "q", "answer": "a"}])
    code, err = run_cli(capsys, "run", str(p), "-m", "ndcg@5", "-o", str(tmp_path / "o"))
    assert code == 2
    assert "missing column 'retrieved_ids' required by metric ndcg@5" in err


def test_missing_value_on_one_row(tmp_path):
    p = write_jsonl(tmp_path / "d.jsonl", [{"retrieved_ids": ["a"], "relevant_ids": ["a"]},
                                           {"retrieved_ids": ["b"]}])
    ds = load_dataset(p)
    with pytest.raises(DataError, match=r"line 2, column 'relevant_ids'"):
        check_required(ds, {"mrr": ("retrieved_ids", "relevant_ids")})


def test_dataframe_errors_say_row(tmp_path):
    with pytest.raises(DataError, match=r"<list>, row 2, column 'question': expected text"):
        load_dataset([{"question": "q"}, {"question": ["not", "text"]}])


def test_unknown_metric_and_bad_gate(tmp_path, capsys):
    p = write_jsonl(tmp_path / "d.jsonl", [V1])
    code, err = run_cli(capsys, "run", str(p), "-m", "faithfulnes", "-o", str(tmp_path / "o"))
    assert code == 2 and "unknown metric 'faithfulnes'" in err
    code, err = run_cli(capsys, "run", str(p), "-m", "mrr", "--fail-under", "mrr")
    assert code == 2 and "bad --fail-under 'mrr'" in err


def test_cli_error_has_no_traceback_in_a_real_process(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"question": 1}\n')
    proc = subprocess.run([sys.executable, "-m", "localeval.cli.app", "run", str(p), "-m", "mrr"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "line 1, column 'question'" in proc.stderr


# -- cells are text, graded relevance from tables, strict numbers -----------
def test_csv_mapped_list_column_is_parsed_and_text_stays_text(tmp_path):
    """The column map decides what a CSV cell is: a mapped list column is a JSON array;
    a text field that looks like JSON stays text; metadata that is JSON is parsed."""
    p = tmp_path / "d.csv"
    p.write_text('q,passages,answer,tags\nQ?,"[""c1"", ""c2""]","[1, 2]","[""x""]"\n',
                 encoding="utf-8")
    (s,) = load_dataset(p, columns=["question=q", "contexts=passages"]).samples
    assert s.contexts == ["c1", "c2"] and s.answer == "[1, 2]" and s.metadata == {"tags": ["x"]}


def test_column_map_demotes_the_files_own_column_and_names_a_missing_one(tmp_path):
    p = write_jsonl(tmp_path / "d.jsonl", [{"answer": "theirs", "mine": "ours"}])
    (s,) = load_dataset(p, columns=["answer=mine"]).samples
    assert s.answer == "ours" and s.metadata == {"answer": "theirs"}
    with pytest.raises(DataError, match=r"--columns answer=nope: the data has no column 'nope'"):
        load_dataset(p, columns=["answer=nope"])


def test_graded_relevance_from_dataframes(tmp_path):
    """pd.read_parquet gives numpy arrays for lists and [(id, grade)] for an Arrow map."""
    import numpy as np
    import pandas as pd
    frame = pd.DataFrame({"retrieved_ids": [np.array(["d1", "d2"])],
                          "relevant_ids": [[("d1", 1), ("d2", 3)]]})
    (s,) = load_dataset(frame).samples
    assert s.retrieved_ids == ["d1", "d2"] and s.relevant_ids == {"d1": 1.0, "d2": 3.0}


@pytest.mark.parametrize("grade,says", [(float("inf"), "finite"), (1e308, "between"),
                                        (10 ** 400, "of 401 digits"), (True, "a boolean")])
def test_relevance_grades_must_be_finite_and_bounded(grade, says):
    with pytest.raises(DataError, match=says):
        load_dataset([{"retrieved_ids": ["d1"], "relevant_ids": {"d1": grade}}])


def test_loads_strict():
    from localeval.dataset.formats import loads_strict

    assert loads_strict('{"a": [1.5, "x\u2028y"]}') == {"a": [1.5, "x\u2028y"]}
    for text, says in [("NaN", "NaN"), ("[-Infinity]", "-Infinity"), ("1e999", "too large"),
                       ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
                       ("9" * 5000, "thousands of digits")]:
        with pytest.raises(ValueError, match=says):
            loads_strict(text)
