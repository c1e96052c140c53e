"""The whole loop a generated test set is for, through the command line: ``generate`` ->
``answer`` (an oracle pipeline and a bad one, as users' files) -> ``run`` -> ``diff`` ->
``retrieval`` with the generated qrels. A scripted judge writes the questions (no model),
so the loop runs in seconds.

Each step names rows and chunks by the ids the one before wrote; a step that renamed,
reordered or dropped them would leave the oracle short of a perfect retrieval score,
which is what these tests would catch.
"""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.cli.app import main
from localeval.testing import ScriptedJudge

CORPUS = Path(localeval.__file__).parent / "data" / "example_corpus.jsonl"
STEPS = ("synth_single_hop_specific", "synth_multi_hop_specific", "synth_multi_hop_abstract")
#: Metrics ``run`` scores with no judge and no embedder.
RUN_METRICS = "rougeL,hit_rate@5,mrr,recall@5"
RETRIEVAL_METRICS = "hit_rate@5,mrr,recall@5,ndcg@10"

PIPELINES = '''
import json

CHUNKS = [json.loads(line) for line in open({chunks!r}, encoding="utf-8")]


def oracle(question, row):
    """The reference as the answer, its source chunks as retrieved, in their order.

    list(): the row may hold the ids as read for relevant_ids, a mapping id -> grade.
    """
    return {{"answer": row["reference"], "contexts": row["reference_contexts"],
            "retrieved_ids": list(row["reference_context_ids"])}}


def bad(question, row):
    """The last chunk of another document, and its first sentence as the answer."""
    other = [c for c in CHUNKS if c["doc_id"] not in row["source_doc_ids"]][-1]
    return {{"answer": other["text"].split(". ")[0], "contexts": [other["text"]],
            "retrieved_ids": [other["id"]]}}
'''


def _qa(request: Any) -> dict[str, str]:
    """A question naming its chunk's first words, answered by the chunk's first sentence."""
    first = request.sample.contexts[0]
    head = first.split(". ")[0]
    return {"question": f"What does the handbook say about this: {head[:70]}?",
            "answer": head.rstrip(".") + "."}


def _verdicts(request: Any) -> dict[str, Any]:
    n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 1)
    return {"verdicts": [{"reason": "r", "verdict": 1} for _ in range(n)]}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _trec(filled: Path, out: Path) -> Path:
    """A filled file's ranked ``retrieved_ids`` as a TREC run, as a user would write it."""
    out.write_text("".join(f"{r['id']} Q0 {d} {i + 1} {1 / (i + 1)} run\n"
                           for r in _rows(filled)
                           for i, d in enumerate(r["retrieved_ids"])), encoding="utf-8")
    return out


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A test set written from the bundled corpus by a scripted judge, BM25 round trip."""
    out = tmp_path_factory.mktemp("loop") / "testset"
    judge = ScriptedJudge({**{s: _qa for s in STEPS}, "statements": {"statements": ["A fact."]},
                           "faithfulness_verdicts": _verdicts})
    res = localeval.generate_testset(CORPUS, 12, out, judge=judge, embedder=False, seed=0,
                                     cache=False)
    assert len(res.kept) >= 6, res.counts  # diff gives an interval from 6 pairs
    return out


@pytest.fixture(scope="module")
def loop(generated: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """generate's folder answered by both pipelines, run and scored by retrieval."""
    work = tmp_path_factory.mktemp("answers")
    module = work / f"pipes_{uuid.uuid4().hex[:8]}.py"
    module.write_text(textwrap.dedent(PIPELINES.format(chunks=str(generated / "chunks.jsonl"))),
                      encoding="utf-8")
    out: dict[str, Any] = {"work": work}
    saved_path = list(sys.path)
    try:
        for name in ("oracle", "bad"):
            filled = work / f"{name}.jsonl"
            assert main(["answer", str(generated / "testset.jsonl"), "--pipeline",
                         f"{module}:{name}", "-o", str(filled), "--quiet"]) == 0
            assert main(["run", str(filled), "-m", RUN_METRICS, "--judge", "none",
                         "--embedder", "none", "--no-cache", "--columns",
                         "relevant_ids=reference_context_ids", "-o", str(work / f"run_{name}"),
                         "--quiet"]) == 0
            out[name] = filled
    finally:
        sys.path[:] = saved_path
    return out


def _means(run_dir: Path) -> dict[str, float]:
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert all(v["unscored"] == 0 for v in summary["metrics"].values()), summary["metrics"]
    return {m: v["mean"] for m, v in summary["metrics"].items()}


def test_ids_line_up_across_every_file(generated: Path, loop: dict[str, Any]) -> None:
    from localeval.dataset.trec import load_qrels

    kept = _rows(generated / "testset.jsonl")
    ids = [r["id"] for r in kept]
    chunk_ids = {c["id"] for c in _rows(generated / "chunks.jsonl")}
    qrels = load_qrels(generated / "qrels.txt")
    assert set(qrels) == set(ids) and len(set(ids)) == len(ids)
    for r in kept:
        assert set(qrels[r["id"]]) == set(r["reference_context_ids"]) <= chunk_ids
    for name in ("oracle", "bad"):
        filled = _rows(loop[name])
        assert [r["id"] for r in filled] == ids  # input order, nothing dropped
        assert [r["user_input"] for r in filled] == [r["user_input"] for r in kept]
        assert all(set(r["retrieved_ids"]) <= chunk_ids for r in filled)
        results = _rows(loop["work"] / f"run_{name}" / "results.jsonl")
        assert sorted(r["id"] for r in results) == sorted(ids)
    for r, o, b in zip(kept, _rows(loop["oracle"]), _rows(loop["bad"])):
        assert o["retrieved_ids"] == r["reference_context_ids"] and o["answer"] == r["reference"]
        assert b["retrieved_ids"] and not set(b["retrieved_ids"]) & set(r["reference_context_ids"])
        # the filled file keeps the row's chunk ids, in order (a list, or ids -> grades)
        assert list(o["reference_context_ids"]) == r["reference_context_ids"]


def test_run_scores_the_oracle_perfectly_and_the_bad_pipeline_worse(loop: dict[str, Any]) -> None:
    oracle, bad = _means(loop["work"] / "run_oracle"), _means(loop["work"] / "run_bad")
    assert set(oracle) == set(bad) == set(RUN_METRICS.split(","))
    assert oracle == pytest.approx({m: 1.0 for m in oracle})
    assert bad["hit_rate@5"] == bad["mrr"] == bad["recall@5"] == 0.0
    assert bad["rougeL"] < 0.5


def test_retrieval_with_the_generated_qrels_agrees_with_run(generated: Path, loop: dict[str, Any],
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    got = {}
    for name in ("oracle", "bad"):
        trec = _trec(loop[name], loop["work"] / f"{name}.trec")
        code, text = _cli(capsys, "retrieval", str(trec), str(generated / "qrels.txt"), "-m",
                          RETRIEVAL_METRICS, "--json")
        assert code == 0
        summary = json.loads(text)
        assert summary["n_samples"] == len(_rows(generated / "testset.jsonl"))
        got[name] = {m: v["mean"] for m, v in summary["metrics"].items()}
        # the TREC path and run's retrieved_ids path score the same rankings alike
        run_means = _means(loop["work"] / f"run_{name}")
        for m in ("hit_rate@5", "mrr", "recall@5"):
            assert got[name][m] == pytest.approx(run_means[m]), (name, m)
    assert got["oracle"] == pytest.approx({m: 1.0 for m in RETRIEVAL_METRICS.split(",")})
    assert all(got["bad"][m] < got["oracle"][m] for m in got["oracle"])


def test_diff_calls_the_bad_pipeline_worse_and_its_gate_fails(loop: dict[str, Any],
                                                              capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    work = loop["work"]
    code, _ = _cli(capsys, "diff", str(work / "run_oracle"), str(work / "run_bad"), "-o",
                   str(work / "diff"), "--fail-if-worse", "mrr,rougeL")
    assert code == 1
    diff = json.loads((work / "diff" / "diff.json").read_text(encoding="utf-8"))
    verdicts = {m["metric"]: m["estimates"][0]["verdict"] for m in diff["metrics"]}
    assert verdicts == {m: "worse" for m in RUN_METRICS.split(",")}
    assert diff["pairing"]["rule"] == "id" and not diff["pairing"]["only_base"]
    assert not diff["pairing"]["only_new"]
    # the other way round the gate passes: the oracle is no worse than the bad pipeline
    code, _ = _cli(capsys, "diff", str(work / "run_bad"), str(work / "run_oracle"), "-o",
                   str(work / "diff2"), "--fail-if-worse", "mrr,rougeL")
    assert code == 0
