"""``localeval.answer()``: the pipeline contract, failed rows, threads and resuming.

The pipelines here are plain functions; the command line (``localeval answer``,
``--pipeline`` specs, exit codes, then ``localeval run``) is in test_pipeline_cli.py.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass

import pytest

import localeval
from localeval.errors import DataError, UsageError
from localeval.pipeline import read_output

DATA = [
    {"id": f"q{i}", "question": f"What is {i}?", "reference": f"It is {i}.", "topic": "n"}
    for i in range(1, 9)
]


def rows_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_function_returning_a_string_fills_the_answer_and_keeps_every_column(tmp_path):
    out = tmp_path / "filled.jsonl"
    res = localeval.answer(DATA, lambda q: f"answer to {q}", out, progress=False)
    assert (res.answered, res.failed, res.resumed, len(res)) == (8, 0, 0, 8)
    rows = rows_of(out)
    assert rows[0] == {"id": "q1", "question": "What is 1?", "reference": "It is 1.",
                       "topic": "n", "answer": "answer to What is 1?"}
    assert [r["id"] for r in rows] == [d["id"] for d in DATA]
    assert res.rows == rows


def test_a_dict_fills_contexts_and_ranked_ids(tmp_path):
    def rag(q):
        return {"answer": "a", "contexts": ["first", "second"], "retrieved_ids": ["d1", 7]}

    res = localeval.answer(DATA[:2], rag, tmp_path / "o.jsonl", progress=False)
    assert res.rows[0]["contexts"] == ["first", "second"]
    assert res.rows[0]["retrieved_ids"] == ["d1", "7"]  # ids as text, as localeval reads them


def test_relevant_ids_are_written_back_as_given(tmp_path):
    """A generated test set's reference_context_ids (a list; read as relevant ids of
    grade 1) stay a list in the filled file, and graded ones stay a mapping."""
    seen = []

    def rag(q, row):
        seen.append(row.get("reference_context_ids") or row.get("relevant_ids"))
        return "x"

    listed = [{"id": "a", "user_input": "Q?", "reference_context_ids": ["c1", "c2"]}]
    res = localeval.answer(listed, rag, tmp_path / "o.jsonl", progress=False)
    assert res.rows[0]["reference_context_ids"] == ["c1", "c2"]
    graded = [{"id": "b", "question": "Q2?", "relevant_ids": {"c3": 3, "c4": 1}}]
    res = localeval.answer(graded, rag, tmp_path / "p.jsonl", progress=False)
    assert res.rows[0]["relevant_ids"] == {"c3": 3, "c4": 1}
    assert seen == [["c1", "c2"], {"c3": 3, "c4": 1}]


def test_an_object_with_attributes(tmp_path):
    @dataclass
    class Reply:
        answer: str
        contexts: list[str]

    res = localeval.answer(DATA[:1], lambda q: Reply("x", ["c"]), progress=False)
    assert res.rows[0]["answer"] == "x" and res.rows[0]["contexts"] == ["c"]
    assert "retrieved_ids" not in res.rows[0]  # not returned: not written
    assert res.out is None


def test_the_input_columns_keep_the_users_names_and_overwrite_old_answers(tmp_path):
    data = [{"user_input": "Q?", "response": "old answer", "retrieved_contexts": ["old"]}]
    res = localeval.answer(data, lambda q: {"answer": "new", "contexts": ["new"]}, progress=False)
    assert res.rows == [{"id": "1", "user_input": "Q?", "response": "new",
                         "retrieved_contexts": ["new"]}]


def test_a_function_that_raises_keeps_its_row_with_the_error(tmp_path):
    def flaky(q):
        if "3" in q or "5" in q:
            raise ConnectionError("server said no")
        return "fine"

    out = tmp_path / "o.jsonl"
    data = [dict(d, answer="stale", contexts=["stale"]) for d in DATA]
    res = localeval.answer(data, flaky, out, progress=False)
    assert (res.answered, res.failed) == (6, 2)
    assert [(f.id, f.row, f.error) for f in res.failures] == [
        ("q3", 3, "ConnectionError: server said no"), ("q5", 5, "ConnectionError: server said no")]
    bad = rows_of(out)[2]
    # no stale answer or contexts of another version beside the error
    assert bad["answer"] is None and bad["contexts"] is None
    assert bad["pipeline_error"] == "ConnectionError: server said no"
    assert "pipeline_error" not in rows_of(out)[0]
    assert not res.all_failed


def test_a_value_outside_the_contract_is_the_rows_error():
    res = localeval.answer(DATA[:3], lambda q: 42, progress=False)
    assert res.all_failed
    assert res.failures[0].error.startswith("TypeError: the pipeline returned an int; expected")
    with pytest.raises(TypeError, match="without 'answer'.*'text'"):
        read_output({"text": "a"})
    with pytest.raises(TypeError, match=r"contexts\[1\] is an int"):
        read_output({"answer": "a", "contexts": ["c", 1]})
    with pytest.raises(TypeError, match="contexts are a str"):
        read_output({"answer": "a", "contexts": "one passage"})
    with pytest.raises(TypeError, match="answer is None"):
        read_output({"answer": None})


def test_a_function_taking_row_gets_the_row():
    seen = []

    def rag(question, row):
        seen.append(row)
        return f"{question} / {row['reference']}"

    res = localeval.answer(DATA[:2], rag, progress=False)
    assert res.rows[1]["answer"] == "What is 2? / It is 2."
    assert seen[0]["topic"] == "n" and seen[0]["id"] == "q1"

    def kwargs_rag(question, **kw):
        return kw["row"]["topic"]

    assert localeval.answer(DATA[:1], kwargs_rag, progress=False).rows[0]["answer"] == "n"


def _shuffled(q):
    """Answers that finish out of order in threads (and fail on some rows)."""
    n = int(q.split()[-1].rstrip("?"))
    time.sleep(random.random() * 0.02)
    if n % 4 == 0:
        raise RuntimeError(f"row {n} failed")
    return {"answer": f"a{n}", "contexts": [f"c{n}"], "retrieved_ids": [f"d{n}"]}


def test_parallel_output_equals_sequential_byte_for_byte(tmp_path):
    data = [{"id": f"q{i}", "question": f"What is {i}?"} for i in range(1, 41)]
    localeval.answer(data, _shuffled, tmp_path / "seq.jsonl", progress=False)
    localeval.answer(data, _shuffled, tmp_path / "par.jsonl", parallel=6, progress=False)
    assert (tmp_path / "seq.jsonl").read_bytes() == (tmp_path / "par.jsonl").read_bytes()
    assert not (tmp_path / "par.jsonl.tmp").exists()


class Interrupting:
    """A pipeline that raises KeyboardInterrupt (Ctrl-C) on row ``k`` and records its calls."""

    def __init__(self, k=None):
        self.k, self.calls, self.lock = k, [], threading.Lock()

    def __call__(self, q):
        n = int(q.split()[-1].rstrip("?"))
        with self.lock:
            self.calls.append(n)
        if n == self.k:
            raise KeyboardInterrupt
        return f"a{n}"


@pytest.mark.parametrize("parallel", [1, 4])
def test_an_interrupted_run_keeps_the_rows_before_it_and_resumes(tmp_path, parallel):
    out = tmp_path / "o.jsonl"
    with pytest.raises(KeyboardInterrupt):
        localeval.answer(DATA, Interrupting(k=5), out, parallel=parallel, progress=False)
    assert [r["id"] for r in rows_of(out)] == ["q1", "q2", "q3", "q4"]
    assert not (tmp_path / "o.jsonl.tmp").exists()
    again = Interrupting()
    res = localeval.answer(DATA, again, out, parallel=parallel, progress=False)
    assert sorted(again.calls) == [5, 6, 7, 8]  # rows 1-4 are not asked again
    assert (res.resumed, res.answered) == (4, 4)
    localeval.answer(DATA, Interrupting(), tmp_path / "clean.jsonl", progress=False)
    assert out.read_bytes() == (tmp_path / "clean.jsonl").read_bytes()


def test_an_interrupt_keeps_the_earlier_runs_rows_it_did_not_reach(tmp_path):
    out = tmp_path / "o.jsonl"
    localeval.answer(DATA[4:], Interrupting(), out, progress=False)  # rows 5-8 done
    with pytest.raises(KeyboardInterrupt):
        localeval.answer(DATA, Interrupting(k=3), out, progress=False)
    assert [r["id"] for r in rows_of(out)] == ["q1", "q2", "q5", "q6", "q7", "q8"]
    again = Interrupting()
    localeval.answer(DATA, again, out, progress=False)
    assert again.calls == [3, 4]
    assert [r["id"] for r in rows_of(out)] == [d["id"] for d in DATA]


def test_failed_rows_and_a_killed_runs_tmp_file_on_resume(tmp_path):
    out = tmp_path / "o.jsonl"
    localeval.answer(DATA[:4], lambda q: 1 / 0 if "2" in q else "ok", out, progress=False)
    # a run killed outright leaves its rows in o.jsonl.tmp
    (tmp_path / "o.jsonl.tmp").write_text(json.dumps(dict(DATA[4], answer="from tmp")) + "\n"
                                          + '{"id": "q6", "quest', encoding="utf-8")
    again = Interrupting()
    with pytest.warns(UserWarning, match="cut short"):
        res = localeval.answer(DATA, again, out, progress=False)
    assert again.calls == [2, 6, 7, 8]  # the failed row is asked again
    assert res.rows[4]["answer"] == "from tmp" and res.resumed == 4
    # --no-cache: everything again
    fresh = Interrupting()
    localeval.answer(DATA, fresh, out, cache=False, progress=False)
    assert fresh.calls == list(range(1, 9))


def test_a_changed_question_is_asked_again(tmp_path):
    out = tmp_path / "o.jsonl"
    localeval.answer(DATA[:2], Interrupting(), out, progress=False)
    changed = [DATA[0], dict(DATA[1], question="What is 22?")]
    again = Interrupting()
    localeval.answer(changed, again, out, progress=False)
    assert again.calls == [22]


def test_limit_and_bad_input():
    assert len(localeval.answer(DATA, str.upper, limit=3, progress=False)) == 3
    with pytest.raises(DataError, match=r"<list>, row 2, column 'question': no question"):
        localeval.answer([{"question": "Q"}, {"reference": "r"}], str.upper, progress=False)
    with pytest.raises(DataError, match="no column 'question'"):
        localeval.answer([{"reference": "r"}], str.upper, progress=False)
    with pytest.raises(UsageError, match="parallel"):
        localeval.answer(DATA, str.upper, parallel=0)
    with pytest.raises(UsageError, match=r"cannot be called as function\(question\)"):
        localeval.answer(DATA, lambda: "x")
