"""Hostile inputs the floor refuses by name: an explanation of a changed sample, a bad
environment variable, a column mapping or a mixed file, a model folder with a link loop.

Each is a table: every field an explained metric may read, every ``LOCALEVAL_*``
variable, every mapping and mixing fault, each with the message that names it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.config import ENV_VARS, env_flag, run_config
from localeval.dataset import check_required, load_dataset
from localeval.errors import DataError, UsageError
from localeval.results import changed_content, sample_content
from localeval.testing.scripted import ScriptedJudge
from localeval.types import Message, MultiTurnSample, Sample, ToolCall

ROOT = Path(__file__).resolve().parents[2]


# -- explain: every input an explained metric reads is checked ---------------------------
ROWS = [{"id": f"r{i}", "question": f"Q{i}?", "answer": f"A{i}. B{i}.", "contexts": [f"c{i}"],
         "reference": f"A{i}.", "reference_contexts": [f"c{i}"], "retrieved_ids": [f"d{i}"],
         "relevant_ids": {f"d{i}": 1}} for i in range(3)]


def _judge() -> ScriptedJudge:
    def verdicts(req: Any) -> dict[str, Any]:
        n = req.schema.model_json_schema()["properties"]["verdicts"]["minItems"]
        reason = "reason" in json.dumps(req.schema.model_json_schema())
        return {"verdicts": [{**({"reason": "r"} if reason else {}), "verdict": 1}
                             for _ in range(n)]}
    return ScriptedJudge({"statements": {"statements": ["one", "two"]},
                          "faithfulness_verdicts": verdicts})


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    evaluate: Any = localeval.evaluate  # the public face's lazy name
    evaluate(ROWS, ["faithfulness"], judge=_judge(), cache=False, judge_check=False,
                       reasons="none", progress=False, out_dir=out)
    return out


CHANGES = [  # (field, new value): each a changed input of sample r0
    ("question", "Another question?"),
    ("contexts", ["other"]),
    ("answer", "Something else."),
    ("reference", "A different reference."),  # the field the run's line did not record
    ("reference_contexts", ["another passage"]),
    ("retrieved_ids", ["d9"]),
    ("relevant_ids", {"d0": 2}),
]


@pytest.mark.parametrize("field,value", CHANGES, ids=[c[0] for c in CHANGES])
def test_explain_refuses_a_sample_changed_in_any_input(run_dir, field, value):
    from localeval.run import explain

    changed = [dict(r, **{field: value}) if r["id"] == "r0" else r for r in ROWS]
    with pytest.raises(DataError, match=rf"sample 'r0' differs .*changed: {field}\)"):
        explain(run_dir, changed, ids=["r0"], judge=_judge(), cache=False)
    assert not (run_dir / "explain.jsonl").exists()


def test_explain_refuses_a_field_added_or_removed(run_dir):
    from localeval.run import explain

    dropped = [{k: v for k, v in r.items() if k != "reference"} if r["id"] == "r0" else r
               for r in ROWS]
    with pytest.raises(DataError, match=r"changed: reference\)"):
        explain(run_dir, dropped, ids=["r0"], judge=_judge(), cache=False)


def test_explain_of_unchanged_data_and_of_other_samples_goes_on(run_dir):
    from localeval.run import explain

    changed = [dict(r, reference="new") if r["id"] == "r1" else r for r in ROWS]
    explain(run_dir, changed, ids=["r0"], judge=_judge(), cache=False)  # r1 is not explained
    assert (run_dir / "explain.jsonl").is_file()


def test_explain_says_what_an_older_results_line_could_not_check(run_dir):
    """A results.jsonl written before the input hashes: what it records is compared, the
    rest is named as not checked rather than passed over in silence."""
    from localeval.run import explain

    path = run_dir / "results.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for rec in lines:
        rec.pop("input_hashes")
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    told: list[str] = []
    changed = [dict(r, reference="new") if r["id"] == "r0" else r for r in ROWS]
    explain(run_dir, changed, ids=["r0"], judge=_judge(), cache=False, on_info=told.append)
    note = next(t for t in told if "not checked" in t)
    assert "reference of 1 sample(s)" in note and "retrieved_ids" in note
    with pytest.raises(DataError, match=r"changed: answer\)"):  # what it records still counts
        explain(run_dir, [dict(r, answer="x") for r in ROWS], ids=["r0"], judge=_judge(),
                cache=False)


def test_explain_on_the_command_line_exits_2_naming_the_sample_and_field(run_dir, tmp_path,
                                                                        capsys):
    from localeval.cli.app import main

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(dict(r, reference="\x1b[31mnew") if r["id"] == "r2"
                                       else r) + "\n" for r in ROWS))
    code = main(["explain", str(run_dir), "--data", str(data), "--ids", "r2", "--judge", "x"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "sample 'r2'" in err and "changed: reference" in err and str(data) in err


CONVERSATION = MultiTurnSample(
    id="c1", messages=[Message("user", "book a flight"),
                       Message("assistant", "", [ToolCall("book", {"to": "Oslo"})])],
    reference="booked", reference_tool_calls=[ToolCall("book", {"to": "Oslo"})],
    reference_topics=["travel"])
CONVERSATION_CHANGES = [
    ("messages", {"messages": [Message("user", "book a train")]}),
    ("reference_tool_calls", {"reference_tool_calls": [ToolCall("book", {"to": "Bergen"})]}),
    ("reference_topics", {"reference_topics": ["travel", "food"]}),
    ("reference", {"reference": None}),
]


@pytest.mark.parametrize("field,change", CONVERSATION_CHANGES,
                         ids=[c[0] for c in CONVERSATION_CHANGES])
def test_a_conversation_changed_in_any_input_is_seen(field, change):
    import dataclasses

    record = {"id": "c1", **sample_content(CONVERSATION)}
    assert changed_content(record, CONVERSATION) == ([], [])
    assert changed_content(record, dataclasses.replace(CONVERSATION, **change)) == ([field], [])


def test_ids_are_compared_exactly_and_texts_as_the_run_normalised_them():
    s = Sample(id="a", question="q", retrieved_ids=["Doc1"], reference="Paris.")
    record = {"id": "a", **sample_content(s)}
    assert changed_content(record, Sample(id="a", question="q", retrieved_ids=["doc1"],
                                          reference="Paris.")) == (["retrieved_ids"], [])
    assert changed_content(record, Sample(id="a", question="q", retrieved_ids=["Doc1"],
                                          reference="  paris. ")) == ([], [])


def test_a_resumed_run_refuses_lines_of_a_changed_reference(tmp_path):
    """The resume check reads the same content record: a killed run's lines of another
    reference are not kept as this run's."""
    from localeval.run.folder_rule import _partial_differs  # noqa: PLC2701 - the rule itself

    s = Sample(id="a", question="q", answer="x", reference="old")
    line = {"id": "a", **sample_content(s), "scores": {"rougeL": 1.0}}
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(line) + "\n")
    ds = load_dataset([{"id": "a", "question": "q", "answer": "x", "reference": "new"}])
    assert "differs" in (_partial_differs(path, ds, {"rougeL"}) or "")
    same = load_dataset([{"id": "a", "question": "q", "answer": "x", "reference": "old"}])
    assert _partial_differs(path, same, {"rougeL"}) is None


# -- environment variables: one message naming the variable, its value and what it takes --
#: The variables that are run settings (read by ``run_config``).
SETTING_VARS = ["LOCALEVAL_JUDGE", "LOCALEVAL_EMBEDDER", "LOCALEVAL_LANG", "LOCALEVAL_SEED",
                "LOCALEVAL_TEMPERATURE", "LOCALEVAL_VERDICTS", "LOCALEVAL_REASONS",
                "LOCALEVAL_DEVICE", "LOCALEVAL_JUDGE_CHECK"]
BAD_ENV = [  # (variable, a bad value, a word of what it takes)
    ("LOCALEVAL_SEED", "seven", "whole number"),
    ("LOCALEVAL_SEED", "-1", ">= 0"),
    ("LOCALEVAL_SEED", "1.5", "whole number"),
    ("LOCALEVAL_TEMPERATURE", "hot", "finite number >= 0"),
    ("LOCALEVAL_TEMPERATURE", "nan", "finite number >= 0"),
    ("LOCALEVAL_TEMPERATURE", "inf", "finite number >= 0"),
    ("LOCALEVAL_TEMPERATURE", "-0.5", "finite number >= 0"),
    ("LOCALEVAL_LANG", "fr", "auto, en, ja, zh"),
    ("LOCALEVAL_VERDICTS", "maybe", "hard, soft"),
    ("LOCALEVAL_REASONS", "brief", "full, short, none"),
    ("LOCALEVAL_DEVICE", "gpu", "auto, cpu, cuda, cuda:N, mps"),
    ("LOCALEVAL_JUDGE_CHECK", "maybe", "yes or no"),
    ("LOCALEVAL_VERDICTS", "hard\x1b[2J", "hard, soft"),
]


@pytest.mark.parametrize("var,value,takes", BAD_ENV, ids=[f"{v}={x!r}" for v, x, _ in BAD_ENV])
def test_a_bad_setting_variable_is_refused_by_name(monkeypatch, var, value, takes):
    monkeypatch.setenv(var, value)
    with pytest.raises(UsageError) as e:
        run_config()
    msg = str(e.value)
    assert msg.startswith(f"environment variable {var} takes ") and takes in msg
    shown = value.replace("\x1b", "\\x1b")
    assert f"not '{shown}'" in msg and "\x1b" not in msg


@pytest.fixture(autouse=True)
def _no_settings_in_the_environment(monkeypatch):
    for var in SETTING_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("var", SETTING_VARS)
def test_blank_is_unset(monkeypatch, var):
    default = run_config()
    monkeypatch.setenv(var, "  ")
    assert run_config() == default


def test_good_values_are_read(monkeypatch):
    for var, value in [("LOCALEVAL_SEED", " 7 "), ("LOCALEVAL_TEMPERATURE", "0.7"),
                       ("LOCALEVAL_DEVICE", "cuda:1"), ("LOCALEVAL_JUDGE_CHECK", "Off"),
                       ("LOCALEVAL_LANG", "ja")]:
        monkeypatch.setenv(var, value)
    cfg = run_config()
    assert (cfg.seed, cfg.temperature, cfg.device, cfg.judge_check, cfg.lang) == (
        7, 0.7, "cuda:1", False, "ja")


def test_a_flag_variable_read_elsewhere_is_refused_by_name(monkeypatch):
    var = "LOCALEVAL_ALLOW_LLAMA_CPP_VERSION"
    monkeypatch.setenv(var, "sure")
    with pytest.raises(UsageError, match=f"{var} takes yes or no .*not 'sure'"):
        env_flag(var, False)
    monkeypatch.setenv(var, "1")
    assert env_flag(var, False) is True


def test_every_variable_the_package_reads_is_in_the_table():
    """A LOCALEVAL_* name in the source that ENV_VARS lacks would be read unchecked."""
    names = set()
    for path in (ROOT / "localeval").rglob("*.py"):
        names.update(re.findall(r"[\"'](LOCALEVAL_[A-Z_]+)[\"']", path.read_text("utf-8")))
    assert names and names <= set(ENV_VARS), sorted(names - set(ENV_VARS))


def test_the_command_line_exits_2_naming_the_variable(tmp_path, monkeypatch, capsys):
    from localeval.cli.app import main

    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "answer": "x", "reference": "x"}\n')
    monkeypatch.setenv("LOCALEVAL_VERDICTS", "maybe")
    out = tmp_path / "o"
    assert main(["run", str(data), "-m", "rougeL", "-o", str(out), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "LOCALEVAL_VERDICTS takes one of hard, soft, not 'maybe'" in err
    assert "Traceback" not in err


# -- column mappings and mixed files: the user's column and the line ----------------------
RAG = {"id": "a", "question": "q", "answer": "x", "contexts": ["c"]}
CONV = {"id": "c", "messages": [{"role": "user", "content": "hi"}]}


def _jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


LOAD_FAULTS = [  # (name, file name, text or rows, --columns, what the message must say)
    ("conversation after single-turn rows", "d.jsonl", [RAG, CONV], None,
     ["line 2", "column 'messages'", "this row is a conversation", "single-turn"]),
    ("ragas conversation after single-turn rows", "d.jsonl",
     [RAG, {"id": "c", "user_input": [{"type": "human", "content": "hi"}]}], None,
     ["line 2", "column 'user_input'", "this row is a conversation"]),
    ("single-turn row after conversations", "d.jsonl", [CONV, RAG], None,
     ["line 2", "this row is not a conversation"]),
    ("CSV row of more cells", "d.csv", "id,question,answer\na,q,x\nb,q,x,extra\n", None,
     ["line 3", "4 cells", "3 columns"]),
    ("mapped column of the wrong type", "d.jsonl", [{"id": "a", "Q": 5}], ["question=Q"],
     ["line 1", "column 'Q'", "expected text", "--columns question=Q"]),
    ("duplicate id in a mapped column", "d.jsonl", [{"key": "a"}, {"key": "a"}], ["id=key"],
     ["line 2", "column 'key'", "duplicate id 'a'"]),
    ("duplicate id in an alias column", "d.jsonl", [{"id": "z"}, {"qid": "z"}], None,
     ["line 2", "column 'qid'", "duplicate id 'z'"]),
    ("duplicate conversation id in an alias column", "d.jsonl",
     [CONV, {"qid": "c", "messages": CONV["messages"]}], None,
     ["line 2", "column 'qid'", "duplicate id 'c'"]),
    ("one column mapped to two fields", "d.jsonl", [{"id": "a", "x": "q"}],
     ["question=x", "answer=x"], ["column 'x'", "both question and answer"]),
    ("mapped column the data lacks, in another case", "d.jsonl", [{"id": "a", "Resp": "x"}],
     ["answer=resp"], ["--columns answer=resp", "no column 'resp'", "its column 'Resp'"]),
    ("mapped CSV cell that is not a list", "d.csv", "id,Q,ctx\na,q,notjson\n",
     ["question=Q", "contexts=ctx"], ["line 2", "column 'ctx'", "--columns contexts=ctx"]),
    ("mapped conversation column of the wrong shape", "d.jsonl",
     [{"id": "a", "turns": CONV["messages"]}, {"id": "b", "turns": "hi"}], ["messages=turns"],
     ["line 2", "column 'turns'", "--columns messages=turns"]),
    ("a control character in a column name", "d.jsonl", [{"id": "a", "Q\x1b": 5}],
     ["question=Q\x1b"], ["column 'Q\\x1b'"]),
]


@pytest.mark.parametrize("name,file,content,columns,says", LOAD_FAULTS,
                         ids=[f[0] for f in LOAD_FAULTS])
def test_loading_names_the_users_column_and_line(tmp_path, name, file, content, columns, says):
    path = tmp_path / file
    path.write_text(content if isinstance(content, str) else _jsonl(content))
    with pytest.raises(DataError) as e:
        load_dataset(path, columns=columns)
    msg = str(e.value)
    assert msg.startswith(str(path)) or "--columns" in msg
    for word in says:
        assert word in msg, msg
    assert "\x1b" not in msg


@pytest.mark.parametrize("rows", [["x", RAG], [RAG, 5]], ids=["first", "second"])
def test_a_list_of_other_things_than_records_is_refused_naming_the_row(rows):
    with pytest.raises(DataError, match=r"row \d: expected a record"):
        load_dataset(rows)


REQUIRED_FAULTS = [  # (rows, --columns, what the message must say)
    ([{"id": "a", "question": "q", "resp": None}], ["answer=resp"],
     ["column 'resp'", "no line has a value", "answer_relevancy"]),
    ([{"id": "a", "question": "q", "answer": "x"}, {"id": "b", "question": "q",
                                                     "response": None}], None,
     ["line 2", "column 'response'", "missing value"]),
    ([{"id": "a", "question": "q", "resp": "x"}, {"id": "b", "question": "q", "resp": None}],
     ["answer=resp"], ["line 2", "column 'resp'", "missing value"]),
]


@pytest.mark.parametrize("rows,columns,says", REQUIRED_FAULTS)
def test_a_missing_value_names_the_column_of_its_own_line(tmp_path, rows, columns, says):
    path = tmp_path / "d.jsonl"
    path.write_text(_jsonl(rows))
    ds = load_dataset(path, columns=columns)
    with pytest.raises(DataError) as e:
        check_required(ds, {"answer_relevancy": ["question", "answer"]})
    for word in says:
        assert word in str(e.value), str(e.value)


# -- a model folder with a symbolic link loop: every walk ends ------------------------------
def _looped_model(root: Path) -> Path:
    model = root / "model"
    (model / "sub" / "deeper").mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "sub" / "model.safetensors").write_bytes(b"weights")
    os.symlink(model, model / "sub" / "loop")  # back to the top
    os.symlink("..", model / "sub" / "deeper" / "up")  # back to its parent
    os.symlink(model / "sub", model / "linked")  # a plain link: still followed
    return model


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32",
                    reason="symbolic links")
def test_the_walks_of_a_model_folder_end_on_a_link_loop(tmp_path):
    """In a child process with a deadline, so that a walk going round fails, not hangs."""
    model = _looped_model(tmp_path)
    script = textwrap.dedent(f"""
        import json, shutil
        from pathlib import Path
        from localeval.catalog.walk import loop_guard
        from localeval.embed.resolve import model_files_digest, _model_files
        root = Path({str(model)!r}).resolve()
        files = [p.relative_to(root).as_posix() for p in _model_files(root)]
        digest = model_files_digest(root)
        shutil.copytree(root, {str(tmp_path / "copy")!r}, ignore=loop_guard())
        print(json.dumps({{"files": files, "digest": digest}}))
    """)
    env = {**os.environ, "LOCALEVAL_CACHE": str(tmp_path / "cache.sqlite")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["files"] == ["config.json", "linked/model.safetensors", "sub/model.safetensors"]
    copied = sorted(p.relative_to(tmp_path / "copy").as_posix()
                    for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert copied == got["files"]


def test_a_folder_without_loops_is_walked_as_os_walk_follows_it(tmp_path):
    """The digests of models in use do not change: same files as followlinks=True."""
    from localeval.catalog import model_files

    model = tmp_path / "m"
    (model / "a" / "b").mkdir(parents=True)
    (model / "shared").mkdir()
    for rel in ("x.json", "a/y.bin", "a/b/z.txt", "shared/w.json", ".hidden/v.json"):
        (model / rel).parent.mkdir(parents=True, exist_ok=True)
        (model / rel).write_text("1")
    os.symlink(model / "shared", model / "a" / "s")
    expect = sorted((Path(d) / f for d, dirs, fs in os.walk(model, followlinks=True)
                     if ".hidden" not in d for f in fs),
                    key=lambda p: p.relative_to(model).as_posix())
    got = model_files(model, skip_dir=lambda d: d.startswith("."), keep_file=lambda f: True)
    assert got == expect
