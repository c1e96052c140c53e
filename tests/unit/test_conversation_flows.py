"""Conversations through the rest of localeval: gates, Ctrl-C and resume, ``diff`` (paired by id,
else by the first user turn) and its gate, the label sheet and ``run --labels``, ``runs`` and
``history``. The tool-call metrics need no judge, so every run here takes well under a second.

Each data set is built with known scores: per row, the assistant makes the expected call
("right": accuracy 1), gets one of its two arguments wrong ("half": 0.5) or calls another
tool ("wrong": 0); rows alternate ragas's MultiTurnSample JSON and OpenAI chat messages.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Sequence

import pytest

from localeval.cli.app import main

N = 30
SCORE = {"right": 1.0, "half": 0.5, "wrong": 0.0}


def _made(kind: str, i: int) -> dict[str, Any]:
    if kind == "wrong":
        return {"name": "weather", "args": {"city": f"city {i}"}}
    return {"name": "search", "args": {"q": f"topic {i}", "k": 3 if kind == "right" else 9}}


def _row(i: int, kind: str, rid: str | None = None) -> dict[str, Any]:
    """One conversation: a user turn, an assistant tool call and its result, a reply."""
    user = f"Question {i}: which documents cover topic {i}?"
    call = _made(kind, i)
    ref = [{"name": "search", "args": {"q": f"topic {i}", "k": 3}}]
    if i % 2:  # OpenAI chat messages
        msgs: list[dict[str, Any]] = [
            {"role": "user", "content": user},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {
                    "name": call["name"], "arguments": json.dumps(call["args"])}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"doc-{i}"},
            {"role": "assistant", "content": f"See doc-{i}."}]
        return {"id": rid or f"c{i}", "messages": msgs, "reference_tool_calls": ref}
    turns = [{"type": "human", "content": user},
             {"type": "ai", "content": "", "tool_calls": [call]},
             {"type": "tool", "content": f"doc-{i}"},
             {"type": "ai", "content": f"See doc-{i}."}]
    return {"id": rid or f"c{i}", "user_input": turns, "reference_tool_calls": ref}


def _kinds(seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [rng.choice(["right", "right", "half", "wrong"]) for _ in range(N)]


def _write(path: Path, kinds: Sequence[str], ids: Sequence[str] | None = None) -> Path:
    rows = [_row(i, k, ids[i] if ids else None) for i, k in enumerate(kinds)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(data: Path, out: Path, *extra: str, metrics: str = "tool_call_accuracy") -> int:
    return main(["run", str(data), "-m", metrics, "-o", str(out), "--no-cache", "--quiet",
                 *extra])


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]


def _mean(kinds: Sequence[str]) -> float:
    return sum(SCORE[k] for k in kinds) / len(kinds)


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, list[str]]:
    kinds = _kinds(2)
    assert 0.5 < _mean(kinds) < 0.8 and "wrong" in kinds  # the gates below rely on it
    return _write(tmp_path / "conv.jsonl", kinds), kinds


def test_the_run_gates_work_on_conversations(data, tmp_path, capsys) -> None:
    path, kinds = data
    out = tmp_path / "run"
    assert _run(path, out, "--fail-under", "tool_call_accuracy=0.8") == 1
    err = capsys.readouterr().err
    assert f"tool_call_accuracy {_mean(kinds):.4f} is below 0.8" in err
    assert [r["scores"]["tool_call_accuracy"] for r in _records(out)] == [SCORE[k] for k in kinds]
    assert _run(path, out, "--fail-under", "tool_call_accuracy=0.5") == 0
    # per sample: each conversation under the mark is named by id and its first user turn
    assert _run(path, out, "--fail-under-each", "tool_call_accuracy=0.8") == 1
    err = capsys.readouterr().err
    under = [i for i, k in enumerate(kinds) if k != "right"]
    assert f"{len(under)} of {N} samples under it" in err
    i = under[0]
    assert f'c{i} "Question {i}: which documents cover topic {i}?": tool_call_accuracy ' \
           f"{SCORE[kinds[i]]:.3f} < 0.8" in err
    listed = err.split("under it", 1)[1]
    assert not [i for i, k in enumerate(kinds) if k == "right" and f'  c{i} "' in listed]


def test_ctrl_c_keeps_the_finished_conversations_and_the_same_command_resumes(
        data, tmp_path, monkeypatch, capsys) -> None:
    import localeval.run.runner as runner

    path, kinds = data
    whole = tmp_path / "whole"
    assert _run(path, whole, metrics="tool_call_accuracy,tool_call_f1") == 0
    real = runner.sample_record
    written: list[str] = []

    def stop_at_the_fourth(sample: Any, row: Any) -> Any:
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(sample.id)
        return real(sample, row)

    monkeypatch.setattr(runner, "sample_record", stop_at_the_fourth)
    out = tmp_path / "run"
    assert _run(path, out, metrics="tool_call_accuracy,tool_call_f1") == 130
    assert "Run the same command again to resume" in capsys.readouterr().err
    assert [r["id"] for r in _records(out)] == ["c0", "c1", "c2"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] == {"finished": 3, "total": N}
    assert summary["metrics"]["tool_call_accuracy"]["n"] == 3
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Interrupted run: 3 of 30" in page and "Question 2: which documents" in page
    monkeypatch.setattr(runner, "sample_record", real)
    # other conversations are not taken for this run's
    other = _write(tmp_path / "other.jsonl", ["right"] * N)
    assert _run(other, out, metrics="tool_call_accuracy,tool_call_f1") == 2
    assert "holds another run" in capsys.readouterr().err
    assert _run(path, out, metrics="tool_call_accuracy,tool_call_f1") == 0  # resumes
    assert _records(out) == _records(whole)
    done = json.loads((out / "summary.json").read_text())
    assert "interrupted" not in done
    assert done["metrics"] == json.loads((whole / "summary.json").read_text())["metrics"]


def _diff(base: Path, new: Path, out: Path, *extra: str) -> int:
    return main(["diff", str(base), str(new), "-o", str(out), "--seed", "0", *extra])


def test_diff_pairs_conversations_and_its_gate_works_on_tool_call_accuracy(
        data, tmp_path, capsys) -> None:
    path, kinds = data
    fixed = ["right" if k == "half" else k for k in kinds]  # new: every half call repaired
    broken = ["wrong" if k == "half" else k for k in kinds]  # or every half call broken
    assert kinds.count("half") >= 6  # enough changed pairs for the sign-flip test
    base, better, worse = tmp_path / "base", tmp_path / "better", tmp_path / "worse"
    assert _run(path, base) == 0
    assert _run(_write(tmp_path / "fixed.jsonl", fixed), better) == 0
    assert _run(_write(tmp_path / "broken.jsonl", broken), worse) == 0
    capsys.readouterr()
    assert _diff(base, better, tmp_path / "d1", "--fail-if-worse", "tool_call_accuracy") == 0
    d1 = json.loads((tmp_path / "d1" / "diff.json").read_text())
    assert d1["pairing"]["rule"] == "id" and d1["pairing"]["paired"] == N
    m = next(x for x in d1["metrics"] if x["metric"] == "tool_call_accuracy")
    assert m["estimates"][0]["value"] == pytest.approx(_mean(fixed) - _mean(kinds))
    assert m["estimates"][0]["verdict"] == "better"
    assert _diff(base, worse, tmp_path / "d2", "--fail-if-worse", "tool_call_accuracy") == 1
    assert "tool_call_accuracy" in capsys.readouterr().err
    # with the data sets, diff.html shows each changed pair's conversations, what changed marked
    assert _diff(base, worse, tmp_path / "d3", "--base-data", str(path), "--new-data",
                 str(tmp_path / "broken.jsonl")) == 0
    page = (tmp_path / "d3" / "diff.html").read_text(encoding="utf-8")
    i = kinds.index("half")
    assert "<h4>Conversation</h4>" in page
    assert f"Question {i}: which documents cover topic {i}?" in page
    # the call that changed is marked word by word: base's search gone, new's weather added
    assert 'assistant calls <span class="del">search</span>' in page
    assert 'assistant calls <span class="ins">weather</span>' in page
    assert f"expected tool calls: search {{&#34;q&#34;: &#34;topic {i}&#34;, &#34;k&#34;: 3}}" in page


def test_diff_pairs_conversations_whose_ids_differ_by_their_first_user_turn(
        data, tmp_path, capsys) -> None:
    path, kinds = data
    renamed = _write(tmp_path / "renamed.jsonl", kinds, ids=[f"n{i}" for i in range(N)][::-1])
    base, new = tmp_path / "base", tmp_path / "new"
    assert _run(path, base) == 0 and _run(renamed, new) == 0
    capsys.readouterr()
    # the results hold scores only: without the data sets there is nothing to pair on
    assert _diff(base, new, tmp_path / "d0") == 2
    err = capsys.readouterr().err
    assert "share no ids" in err and "--base-data / --new-data" in err
    assert "first user turn" in err and "Traceback" not in err
    assert _diff(base, new, tmp_path / "d1", "--base-data", str(path), "--new-data",
                 str(renamed)) == 0
    d = json.loads((tmp_path / "d1" / "diff.json").read_text())
    assert d["pairing"]["rule"] == "question" and d["pairing"]["paired"] == N
    assert d["pairing"]["only_base"] == d["pairing"]["only_new"] == []
    m = next(x for x in d["metrics"] if x["metric"] == "tool_call_accuracy")
    assert m["estimates"][0]["value"] == 0.0  # the same conversations under other ids
    assert m["counts"]["unchanged"] == N


def test_label_sheet_shows_conversations_and_run_labels_corrects_them(
        data, tmp_path, capsys) -> None:
    path, kinds = data
    run = tmp_path / "run"
    assert _run(path, run) == 0
    sheet = tmp_path / "sheet.csv"
    assert main(["label-sheet", str(run), "-n", "20", "--dataset", str(path), "-o",
                 str(sheet)]) == 0
    with open(sheet, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 20
    first = rows[0]
    i = int(first["id"][1:])
    assert first["question"] == f"Question {i}: which documents cover topic {i}?"
    talk = first["conversation"].splitlines()
    assert talk[0] == f"user: {first['question']}"
    assert talk[-1] == f'expected tool calls: search {{"q": "topic {i}", "k": 3}}'
    assert any(x.startswith("assistant calls ") for x in talk)
    assert first["answer"] == first["contexts"] == ""
    # the labeller agrees with the metric except on "half" calls, which they count as failures
    for r in rows:
        r["label_tool_call_accuracy"] = "1" if kinds[int(r["id"][1:])] == "right" else "0"
    with open(sheet, "w", encoding="utf-8-sig", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    capsys.readouterr()
    assert _run(path, tmp_path / "corrected", "--labels", str(sheet)) == 0
    summary = json.loads((tmp_path / "corrected" / "summary.json").read_text())
    c = summary["corrected"]["metrics"]["tool_call_accuracy"]
    assert c["labelled"] == 20
    # the labels say "half" calls fail, so the corrected mean sits below the metric's
    assert c["corrected"]["value"] < summary["metrics"]["tool_call_accuracy"]["mean"]
    # a sheet without the data set: ids only, and still read back
    assert main(["label-sheet", str(run), "-n", "12", "-o", str(tmp_path / "bare.csv")]) == 0
    head = (tmp_path / "bare.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    assert head.startswith("id,question,contexts,answer,reference,label_tool_call_accuracy")


def test_runs_and_history_list_conversation_runs(data, tmp_path, capsys) -> None:
    path, _ = data
    root = tmp_path / "runs"
    assert _run(path, root / "v1", "--name", "conv-v1") == 0
    assert _run(path, root / "v2", "--name", "conv-v2", metrics="tool_call_f1") == 0
    capsys.readouterr()
    assert main(["runs", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["runs"]
    assert sorted(e["name"] for e in listed) == ["conv-v1", "conv-v2"]
    page = tmp_path / "history.html"
    assert main(["history", str(root), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "conv-v1" in html and "tool_call_accuracy" in html and "tool_call_f1" in html


def test_a_killed_conversation_run_is_not_replaced_by_other_conversations(
        data, tmp_path, capsys) -> None:
    """A run killed before its summary.json: its results lines carry each conversation's
    hash, so conversations of the same ids with other turns are refused, and the same
    data resumes."""
    path, kinds = data
    out = tmp_path / "run"
    assert _run(path, out) == 0
    hashes = [r["conversation_hash"] for r in _records(out)]
    assert len(set(hashes)) == N and all(len(h) == 16 for h in hashes)
    (out / "summary.json").unlink()  # killed
    other = _write(tmp_path / "other.jsonl", ["right"] * N)  # same ids, other turns
    assert _run(other, out) == 2
    err = capsys.readouterr().err
    first_changed = next(i for i, k in enumerate(kinds) if k != "right")
    assert f"sample 'c{first_changed}' differs" in err, err
    assert _run(path, out) == 0  # the same data resumes
    # the same conversation read from the other shape (ragas <-> OpenAI) has the same hash
    from localeval.dataset import load_dataset
    from localeval.results import sample_content

    a = load_dataset(str(path)).samples[0]
    flipped = tmp_path / "flipped.jsonl"
    row = _row(1, kinds[1])  # OpenAI shape (odd i) rebuilt as ragas's shape below
    turns = [{"type": {"user": "human", "assistant": "ai", "tool": "tool"}[m["role"]],
              "content": m.get("content") or "",
              **({"tool_calls": [{"name": c["function"]["name"],
                                  "args": json.loads(c["function"]["arguments"])}
                                 for c in m["tool_calls"]]} if m.get("tool_calls") else {})}
             for m in row["messages"]]
    flipped.write_text(json.dumps({"id": "c1", "user_input": turns,
                                   "reference_tool_calls": row["reference_tool_calls"]}) + "\n")
    b = load_dataset(str(flipped)).samples[0]
    c1 = load_dataset(str(path)).samples[1]
    assert a.id == "c0" and sample_content(b) == sample_content(c1)


def test_two_runs_of_the_same_conversations_align_by_content_when_ids_differ(
        data, tmp_path) -> None:
    from localeval.resultsets import align, load_result_set

    path, kinds = data
    renamed = _write(tmp_path / "renamed.jsonl", kinds, ids=[f"x{i}" for i in range(N)][::-1])
    assert _run(path, tmp_path / "a") == 0 and _run(renamed, tmp_path / "b") == 0
    al = align(load_result_set(str(tmp_path / "a")), load_result_set(str(tmp_path / "b")))
    assert al.rule == "content" and "conversation_hash" in al.checked
    assert sorted(al.pairs) == sorted((f"c{i}", f"x{N - 1 - i}") for i in range(N))
