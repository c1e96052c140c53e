"""A newcomer's first hour: trying a few rows first (--limit, --sample), recorded in the
signature; list cells as pandas writes them; one id rule for every source."""

from __future__ import annotations

import json

import pytest

import localeval
from localeval.cli.app import main
from localeval.dataset import Subset, load_dataset, select_samples
from localeval.errors import UsageError

ROWS = [{"id": f"{lang}-{i}", "question": q, "answer": "a", "retrieved_ids": ["d1"],
         "relevant_ids": ["d1"]}
        for lang, q in (("en", "How many days of leave do I get?"), ("ja", "有給休暇は何日ですか？"))
        for i in range(1, 6)]


def test_limit_keeps_the_first_n_and_is_in_the_signature(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS))
    out = tmp_path / "o"
    assert main(["run", str(data), "-m", "mrr", "-o", str(out), "--limit", "3", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_samples"] == 3
    assert summary["signature"]["subset"] == {"limit": 3, "kept": 3, "of": 10}
    assert "|limit:3of10|" in summary["signature_line"]
    ids = [json.loads(x)["id"] for x in (out / "results.jsonl").read_text().splitlines()]
    assert ids == ["en-1", "en-2", "en-3"]


def test_sample_is_random_stratified_by_language_and_in_the_signature(tmp_path):
    res = localeval.evaluate(ROWS, "mrr", judge=False, embedder=False, cache=False,
                             progress=False, sample=4, seed=7)
    ids = [s.id for s in res.samples]
    assert len(ids) == 4
    assert sum(i.startswith("ja") for i in ids) == 2, "each language gets its share"
    assert ids == sorted(ids, key=[r["id"] for r in ROWS].index), "file order kept"
    again = localeval.evaluate(ROWS, "mrr", judge=False, embedder=False, cache=False,
                               progress=False, sample=4, seed=7)
    assert [s.id for s in again.samples] == ids, "the same seed draws the same samples"
    sig = res.summary["signature"]
    assert sig["subset"] == {"sample": 4, "seed": 7, "kept": 4, "of": 10}
    assert "|sample:4of10@seed7|" in res.summary["signature_line"]
    full = localeval.evaluate(ROWS, "mrr", judge=False, embedder=False, cache=False,
                              progress=False)
    assert "subset" not in full.summary["signature"]


def test_subset_small_n_still_mixes_languages():
    ds = load_dataset(ROWS)
    two = select_samples(ds, Subset(sample=2, seed=0))
    assert sorted(s.id[:2] for s in two) == ["en", "ja"]
    assert select_samples(ds, Subset(limit=50)) is ds


def test_limit_and_sample_are_checked():
    with pytest.raises(UsageError):
        Subset(limit=2, sample=2)
    with pytest.raises(UsageError):
        Subset(sample=0)
    with pytest.raises(SystemExit):
        main(["run", "example", "--limit", "2", "--sample", "2"])


# -- list cells as pandas writes them, NaN, the user's column names ------------------
pd = pytest.importorskip("pandas")


def _ragas_frame():
    return pd.DataFrame({"user_input": ["q1?", "q2?", "q3?"],
                         "retrieved_contexts": [["a b", "c's"], ["c"], ["d"]],
                         "response": ["r1", "", "r3"], "reference": ["r1", "y", "z"]})


def test_pandas_written_csv_is_read_by_run_as_compare_reads_it(tmp_path):
    from localeval.dataset import text_list

    path = tmp_path / "ragas.csv"
    _ragas_frame().to_csv(path, index=False)
    assert "['c']" in path.read_text()
    out = tmp_path / "o"
    assert main(["run", str(path), "-m", "rougeL", "-o", str(out), "--quiet"]) == 0
    ds = load_dataset(path)
    cells = pd.read_csv(path)["retrieved_contexts"]
    assert [s.contexts for s in ds] == [text_list(c) for c in cells] == \
        [["a b", "c's"], ["c"], ["d"]]
    frame = load_dataset(pd.read_csv(path))  # NaN response: the file's empty cell
    assert [(s.answer, s.contexts) for s in frame] == [(s.answer, s.contexts) for s in ds]
    res = localeval.evaluate(pd.read_csv(path), "rougeL", judge=False, embedder=False,
                             cache=False, progress=False)
    assert res.summary["metrics"]["rougeL"]["n"] == 3


def test_python_cells_are_literals_only(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("question,contexts\nq,\"[__import__('os').getcwd()]\"\n")
    with pytest.raises(localeval.DataError, match="line 2, column 'contexts'"):
        load_dataset(path)
    path.write_text("question,contexts\nq,\"[1, 2]\"\n")
    with pytest.raises(localeval.DataError, match="column 'contexts'"):
        load_dataset(path)


def test_messages_name_the_users_column_and_row(tmp_path, capsys):
    rows = [{"user_input": "q", "response": "a", "reference": "r"},
            {"user_input": "q2", "reference": "r"}]
    with pytest.raises(localeval.DataError) as e:
        localeval.evaluate(rows, "rougeL", judge=False, embedder=False, cache=False,
                           progress=False)
    assert "row 2, column 'response'" in str(e.value)
    assert "answer" not in str(e.value)


# -- one id rule ----------------------------------------------------------------------
def test_the_same_ids_from_csv_jsonl_dataframe_and_ragas_export(tmp_path):
    from localeval.resultsets import load_result_set

    frame = _ragas_frame()
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_json(tmp_path / "d.jsonl", orient="records", lines=True)
    ids = {name: [s.id for s in load_dataset(src)] for name, src in [
        ("csv", tmp_path / "d.csv"), ("jsonl", tmp_path / "d.jsonl"), ("frame", frame)]}
    assert ids == {k: ["1", "2", "3"] for k in ids}
    frame.assign(faithfulness=[1.0, 0.5, 0.0]).to_csv(tmp_path / "export.csv", index=False)
    assert list(load_result_set(tmp_path / "export.csv").scores) == ["1", "2", "3"]
    # a blank line in the file does not shift the numbers
    (tmp_path / "gap.jsonl").write_text((tmp_path / "d.jsonl").read_text().replace("\n", "\n\n"))
    assert [s.id for s in load_dataset(tmp_path / "gap.jsonl")] == ["1", "2", "3"]


# -- help and messages ----------------------------------------------------------------
def test_judge_help_names_demo_and_manifest_names(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "'demo'" in help_text and "qwen2.5-7b-instruct-q4_k_m" in help_text


def test_python_callers_are_told_python_and_the_cli_the_command_line(tmp_path, capsys,
                                                                    monkeypatch):
    rows = [{"question": "q", "answer": "a", "contexts": ["c"]}]
    with pytest.warns(UserWarning) as seen:
        localeval.evaluate(rows, "faithfulness", judge=False, embedder=False, cache=False,
                           progress=False)
    text = " ".join(str(w.message) for w in seen)
    assert "judge=" in text and "configure(judge=...)" in text and "LOCALEVAL_JUDGE" in text
    assert "--judge" not in text
    monkeypatch.chdir(tmp_path)  # no models/ here: no judge
    monkeypatch.delenv("LOCALEVAL_JUDGE", raising=False)
    (tmp_path / "d.jsonl").write_text(json.dumps(rows[0]) + "\n")
    main(["run", "d.jsonl", "-m", "faithfulness", "-o", "o", "--no-cache"])
    err = capsys.readouterr().err
    assert "--judge demo" in err and "configure(" not in err
    assert "\\`" not in (tmp_path / "o" / "summary.md").read_text()


def test_summary_md_keeps_code_spans_in_notes(tmp_path):
    from localeval.report import write_markdown_report

    summary = {"n_samples": 1, "metrics": {}, "signature_line": "x",
               "notes": ["run `localeval models fetch demo` on a connected machine *now*"]}
    md = write_markdown_report(tmp_path, summary).read_text()
    assert "> run `localeval models fetch demo` on a connected machine \\*now\\*" in md


def test_unknown_metric_defined_in_a_metrics_file_hints_at_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "polite.toml").write_text('[polite]\nkind = "aspect_critic"\n'
                                          'definition = "Is the answer polite?"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["run", "example", "-m", "polite", "-o", str(tmp_path / "o")]) == 2
    assert "pass --metrics-file polite.toml" in capsys.readouterr().err


def test_docs_say_where_pytest_comes_from():
    from pathlib import Path

    import tomllib

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(d.startswith("pytest") for d in extras["test"])
    for doc in ("README.md", "docs/ci-gates.md"):
        text = (root / doc).read_text()
        assert ".[test]" in text and "make example" in text, doc
