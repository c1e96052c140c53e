"""The dataset's version (``dataset.data_version``): one hash for the same rows in any file
format or order, another for any changed cell a metric reads; recorded in every run's
signature with the rows, and compared by ``localeval diff``."""

from __future__ import annotations

import copy
import json
import random

import pandas as pd
import pytest

import localeval
from localeval.dataset import data_version, load_dataset
from localeval.report import signature_line
from localeval.versions.signatures import signature_notes

ROWS = [
    {"id": f"s{i}", "question": f"What is item {i}?", "answer": f"Item {i} is a thing.",
     "contexts": [f"Item {i} is a thing.", f"Unrelated {i}."],
     "reference": f"A thing, {i}.", "retrieved_ids": [f"d{i}", f"d{i + 1}"],
     "relevant_ids": {f"d{i}": 2, f"d{i + 7}": 1}, "team": "search"}
    for i in range(6)]
LIST_FIELDS = ("contexts", "retrieved_ids", "relevant_ids")


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def _csv(path, rows):
    df = pd.DataFrame(rows)
    for c in LIST_FIELDS:
        df[c] = df[c].map(json.dumps)
    df.to_csv(path, index=False)
    return path


def _version(source, **kw):
    return data_version(load_dataset(source, **kw))


def test_the_same_rows_in_any_format_and_order_give_one_hash(tmp_path):
    base = _version(_jsonl(tmp_path / "d.jsonl", ROWS))
    shuffled = ROWS[:]
    random.Random(3).shuffle(shuffled)
    assert shuffled != ROWS
    # ragas v2 column names, no ids, no metadata column: the same samples
    v2 = [{"user_input": r["question"], "response": r["answer"],
           "retrieved_contexts": r["contexts"], "reference": r["reference"],
           "retrieved_ids": r["retrieved_ids"], "relevant_ids": r["relevant_ids"]}
          for r in shuffled]
    same = {
        "csv": _version(_csv(tmp_path / "d.csv", ROWS)),
        "csv shuffled, no ids": _version(_csv(tmp_path / "e.csv",
                                              [{k: v for k, v in r.items() if k != "id"}
                                               for r in shuffled])),
        "shuffled DataFrame": _version(pd.DataFrame(shuffled)),
        "ragas v2 names": _version(v2),
        "grades as floats, keys reordered": _version(
            [{**r, "relevant_ids": dict(reversed([(k, float(g)) for k, g in
                                                  r["relevant_ids"].items()]))} for r in ROWS]),
    }
    for how, v in same.items():
        assert v == base, how
    assert base.rows == 6 and len(base.content) == 64 and base.content != base.testset


@pytest.mark.parametrize("field, value, test_changes", [
    ("answer", "Item 2 is another thing.", False),
    ("contexts", ["Unrelated 2.", "Item 2 is a thing."], False),  # the order is read
    ("retrieved_ids", ["d3", "d2"], False),
    ("question", "What is item two?", True),
    ("reference", "A thing, two.", True),
    ("relevant_ids", {"d2": 1, "d9": 1}, True),
    ("answer", "", False),
])
def test_a_changed_cell_gives_another_hash(field, value, test_changes):
    base = _version(ROWS)
    rows = copy.deepcopy(ROWS)
    rows[2][field] = value
    changed = _version(rows)
    assert changed.content != base.content
    assert (changed.testset != base.testset) is test_changes
    assert changed.rows == base.rows


def test_what_no_metric_reads_is_not_hashed_and_rows_count():
    base = _version(ROWS)
    other_meta = [{**r, "team": "ranking", "id": f"x{i}"} for i, r in enumerate(ROWS)]
    assert _version(other_meta) == base
    absent = _version([{k: v for k, v in r.items() if k != "answer"} for r in ROWS])
    empty = _version([{**r, "answer": ""} for r in ROWS])
    # a missing field is a change, and empty is not absent: the metrics tell them apart
    assert len({base.content, absent.content, empty.content}) == 3
    twice = _version(ROWS + [{**ROWS[0], "id": "dup"}])
    assert twice.rows == 7 and twice.content != base.content


def test_a_run_records_the_whole_datasets_version_in_its_signature(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", ROWS)
    expected = _version(data)
    res = localeval.evaluate(str(data), ["rougeL"], judge=False, embedder=False, cache=False,
                             progress=False, limit=2, out_dir=tmp_path / "out")
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    for summary in (res.summary, on_disk):
        sig = summary["signature"]
        # --limit scores 2 rows; the version is the whole dataset's, the subset beside it
        assert sig["dataset_hash"] == expected.content
        assert sig["testset_hash"] == expected.testset
        assert sig["dataset_rows"] == 6 and sig["subset"]["kept"] == 2
        assert f"|data:{expected.content[:12]}|rows:6|limit:2of6|" in summary["signature_line"]
        assert summary["run"]["data"] == str(data)
        assert summary["run"]["started"].endswith("Z")


def test_an_older_signature_line_has_no_data_part():
    old = {"judge": None, "seed": 0, "verdicts": "hard", "lang": "auto", "localeval": "0.1.0"}
    assert "data:" not in signature_line(old) and "rows:" not in signature_line(old)


def test_diff_says_when_two_runs_were_on_different_test_sets():
    sig = {"judge": "j", "judge_fingerprint": "f" * 64, "prompts_hash": "p", "verdicts": "hard",
           "repeats": 1, "lang": "auto", "testset_hash": "a" * 64, "dataset_rows": 6}
    # two versions of a pipeline: other answers (dataset_hash), the same test set
    notes, same = signature_notes({**sig, "dataset_hash": "1" * 64},
                                  {**sig, "dataset_hash": "2" * 64})
    assert same and notes == []
    notes, same = signature_notes(sig, {**sig, "testset_hash": "b" * 64, "dataset_rows": 5})
    assert not same
    assert notes[0].startswith(f"the test sets differ: base {'a' * 12} (6 rows), new "
                               f"{'b' * 12} (5 rows)")
    assert notes[1] == "the same judge, prompts, embedder and verdict mode scored both runs"
    # an earlier run records no test-set hash: nothing is claimed either way
    old = {k: v for k, v in sig.items() if k != "testset_hash"}
    assert signature_notes(old, {**sig, "testset_hash": "b" * 64}) == ([], True)
