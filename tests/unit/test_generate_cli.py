"""``localeval generate`` and ``localeval.generate_testset``: the parts chained, with a
scripted judge on the bundled example corpus (no model): determinism, the files agree
with each other, ``localeval run`` and the TREC reader take them, and the clear errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from generate_util import STEPS
from generate_util import statements as _statements
from generate_util import supported as _verdicts

import localeval
from localeval.cli.app import main
from localeval.testing import ScriptedJudge

CORPUS = Path(localeval.__file__).parent / "data" / "example_corpus.jsonl"


def _qa(request):
    first = request.sample.contexts[0]
    if "remotely" in first:  # a question that is its chunk: dropped as a copy
        return {"question": first.rstrip(".") + "?", "answer": first}
    head = first.split(". ")[0][:70]
    return {"question": f"What does the policy say about this: {head}?",
            "answer": first.split(". ")[0].rstrip(".") + "."}


def judge():
    return ScriptedJudge({**{s: _qa for s in STEPS}, "statements": _statements,
                          "faithfulness_verdicts": _verdicts})


def make(out, n=12, seed=0, **kw):
    return localeval.generate_testset(CORPUS, n, out, judge=judge(), embedder=False, seed=seed,
                                      cache=False, **kw)


def rows(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_same_seed_same_bytes_and_files_agree(tmp_path):
    a, b = make(tmp_path / "a"), make(tmp_path / "b")
    ja = (tmp_path / "a" / "testset.jsonl").read_bytes()
    assert ja == (tmp_path / "b" / "testset.jsonl").read_bytes() and a.kept
    assert [c.id for c in a.kept] == [c.id for c in b.kept]
    assert {p.name for p in (tmp_path / "a").iterdir()} == {
        "testset.jsonl", "testset.csv", "dropped.jsonl", "qrels.txt", "chunks.jsonl",
        "summary.json", "summary.md", "testset.html"}
    kept = rows(tmp_path / "a" / "testset.jsonl")
    assert len(kept) == len(a.kept) and all(r["user_input"] and r["reference"] for r in kept)
    # the CSV holds the same rows, lists as JSON arrays
    with open(tmp_path / "a" / "testset.csv", encoding="utf-8-sig", newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["id"] for r in table] == [r["id"] for r in kept]
    for t, r in zip(table, kept):
        assert t["user_input"] == r["user_input"] and t["reference"] == r["reference"]
        assert json.loads(t["reference_contexts"]) == r["reference_contexts"]
        assert json.loads(t["reference_context_ids"]) == r["reference_context_ids"]
    # qrels name kept rows and chunks of chunks.jsonl, and the TREC reader takes them
    from localeval.dataset.trec import load_qrels

    chunk_ids = {c["id"] for c in rows(tmp_path / "a" / "chunks.jsonl")}
    qrels = load_qrels(tmp_path / "a" / "qrels.txt")
    assert set(qrels) == {r["id"] for r in kept}
    for r in kept:
        assert set(qrels[r["id"]]) == set(r["reference_context_ids"]) <= chunk_ids
    # dropped rows carry their reasons; the summary counts them
    dropped = rows(tmp_path / "a" / "dropped.jsonl")
    assert dropped and all(d["dropped"] for d in dropped)
    assert "copies_chunk" in {d["dropped"] for d in dropped}
    summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    assert summary["kept"] == len(kept) and summary["dropped"] == len(dropped)
    assert sum(summary["dropped_by_reason"].values()) == len(dropped)
    sig = summary["signature"]
    assert sig["seed"] == 0 and sig["corpus_hash"] and sig["localeval"] == localeval.__version__
    assert sig["chunking"]["max_chars"] == 1500 and sig["generator"]
    assert a.shortfall() is None or "copies_chunk" in a.shortfall()


def test_localeval_run_reads_the_testset_as_it_is(tmp_path):
    make(tmp_path / "g", n=6)
    data = localeval.load_dataset(tmp_path / "g" / "testset.jsonl")
    assert len(data) > 0
    # reference_context_ids (ragas's name) are the rows' relevant ids
    src = rows(tmp_path / "g" / "testset.jsonl")
    assert [set(s.relevant_ids) for s in data.samples] == [
        set(r["reference_context_ids"]) for r in src]
    # a row's reference scored against itself: ROUGE-L 1; its own chunks retrieved: MRR 1,
    # and an unrelated chunk first halves it
    filled = tmp_path / "filled.jsonl"
    filled.write_text("".join(json.dumps({
        **r, "response": r["reference"],
        "retrieved_context_ids": (["other#0"] if i % 2 else []) + r["reference_context_ids"]})
        + "\n" for i, r in enumerate(src)), encoding="utf-8")
    res = localeval.evaluate(str(filled), ["rougeL", "mrr"], judge=False, embedder=False,
                             cache=False, progress=False)
    assert res.summary["metrics"]["rougeL"]["mean"] == pytest.approx(1.0)
    halves = sum(1 for i in range(len(src)) if i % 2)
    assert res.summary["metrics"]["mrr"]["mean"] == pytest.approx(
        (len(src) - halves + 0.5 * halves) / len(src))


def test_cli_clear_errors(tmp_path, capsys):
    assert main(["generate", str(CORPUS), "-n", "0", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "-n" in err and "Traceback" not in err and err.count("\n") == 1
    code = main(["generate", str(tmp_path / "nowhere"), "-n", "3", "-o", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert "nowhere" in err and "Traceback" not in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["generate", str(empty), "-n", "3", "-o", str(tmp_path / "o")]) == 2
    assert "Traceback" not in capsys.readouterr().err
    code = main(["generate", str(CORPUS), "-n", "3", "-o", str(tmp_path / "o"), "--no-cache",
                 "--embedder", "none", "--judge", str(tmp_path / "no-such-judge.gguf")])
    err = capsys.readouterr().err
    assert code in (2, 3) and "localeval: error:" in err and "Traceback" not in err
    assert not (tmp_path / "o" / "testset.jsonl").exists()


def test_cli_bad_distribution(tmp_path, capsys):
    code = main(["generate", str(CORPUS), "-n", "3", "-o", str(tmp_path / "o"),
                 "--distribution", "weird=1", "--judge", "demo"])
    assert code == 2 and "distribution" in capsys.readouterr().err


def test_qrels_feed_localeval_retrieval_and_a_short_set_says_why(tmp_path, capsys):
    res = make(tmp_path / "g", n=12)
    qrels = tmp_path / "g" / "qrels.txt"
    run_file = tmp_path / "run.txt"
    run_file.write_text("".join(f"{q} Q0 {d} 1 1.0 perfect\n" for q, _, d, _ in
                                (line.split() for line in qrels.read_text().splitlines())),
                        encoding="utf-8")
    assert main(["retrieval", str(run_file), str(qrels), "-m", "hit_rate@10", "--json"]) == 0
    assert '"hit_rate@10"' in capsys.readouterr().out
    assert len(res.kept) < 12 and res.counts
    short = res.shortfall()
    assert short and f"kept {len(res.kept)} of the 12" in short
    assert all(f"{r}: {n}" in short for r, n in res.counts.items())
