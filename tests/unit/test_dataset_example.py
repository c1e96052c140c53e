"""The bundled example dataset is internally consistent and built to separate good from bad.

The file is what ``localeval`` users (and the docs) evaluate first, so a typo
that breaks the id <-> passage link or a quality label that does not match
the retrieval it claims would make every demo number misleading.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval.dataset import load_dataset
from localeval.lang import detect_lang

DATA = Path(__file__).resolve().parents[2] / "localeval" / "data"
EXAMPLE = DATA / "example.jsonl"
CORPUS = DATA / "example_corpus.jsonl"

FIELDS = ("id", "question", "answer", "contexts", "reference", "retrieved_ids",
          "relevant_ids", "quality")
QUALITIES = {"good", "unfaithful", "irrelevant_context", "wrong_ranking", "incomplete",
             "noncommittal"}
KANA = re.compile(r"[\u3040-\u309f\u30a0-\u30ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")
LANGS = ("en-", "ja-", "zh-")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return _jsonl(EXAMPLE)


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    items = _jsonl(CORPUS)
    ids = [c["id"] for c in items]
    assert len(ids) == len(set(ids)), "duplicate corpus ids"
    return {c["id"]: c["text"] for c in items}


def _relevant(row: dict) -> dict[str, int]:
    rel = row["relevant_ids"]
    return rel if isinstance(rel, dict) else {i: 1 for i in rel}


def _first_relevant_rank(row: dict) -> int | None:
    rel = _relevant(row)
    return next((r for r, i in enumerate(row["retrieved_ids"], 1) if rel.get(i, 0) > 0), None)


def test_counts_and_ids(rows):
    assert len(rows) == 40
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == 40
    assert all(i.startswith(LANGS) for i in ids), ids
    en, ja, zh = ([r for r in rows if r["id"].startswith(p)] for p in LANGS)
    assert (len(en), len(ja), len(zh)) == (20, 10, 10)
    assert [r["id"] for r in zh] == [f"zh-{i:02d}" for i in range(1, 11)]


def test_languages(rows):
    for r in rows:
        texts = [r["question"], r["answer"], r["reference"], *r["contexts"]]
        if r["id"].startswith("ja-"):
            assert all(KANA.search(t) for t in texts), r["id"]
        else:
            assert not any(KANA.search(t) for t in texts), r["id"]
        if r["id"].startswith("en-"):
            assert not any(HAN.search(t) for t in texts), r["id"]
        # what localeval itself decides (tokeniser, sentence splitter, few-shot examples)
        assert {detect_lang(t) for t in texts} == {r["id"][:2]}, r["id"]


def test_fields_and_shapes(rows):
    for r in rows:
        assert set(FIELDS) <= set(r), (r["id"], set(FIELDS) - set(r))
        for f in ("question", "answer", "reference"):
            assert isinstance(r[f], str) and r[f].strip(), (r["id"], f)
        assert 1 <= len(r["contexts"]) <= 4, r["id"]
        assert len(r["contexts"]) == len(r["retrieved_ids"]), r["id"]
        assert len(set(r["retrieved_ids"])) == len(r["retrieved_ids"]), r["id"]
        assert r["quality"] in QUALITIES, r["id"]
        rel = r["relevant_ids"]
        assert isinstance(rel, (list, dict)) and rel, r["id"]
        if isinstance(rel, dict):
            assert all(g in (1, 2, 3) for g in rel.values()), r["id"]


def test_graded_relevance_present(rows):
    graded = [r for r in rows if isinstance(r["relevant_ids"], dict)]
    assert 4 <= len(graded) <= 7
    # Grades must actually vary somewhere, or nDCG would equal binary nDCG.
    assert any(len(set(r["relevant_ids"].values())) > 1 for r in graded)


def test_ids_resolve_to_corpus_text(rows, corpus):
    for r in rows:
        for rank, (pid, text) in enumerate(zip(r["retrieved_ids"], r["contexts"]), 1):
            assert pid in corpus, (r["id"], pid)
            assert corpus[pid] == text, (r["id"], rank, pid)
        for pid in _relevant(r):
            assert pid in corpus, (r["id"], pid)


def test_same_text_same_id(rows, corpus):
    # A passage text maps to exactly one id, across samples and in the corpus.
    assert len(set(corpus.values())) == len(corpus)
    seen: dict[str, str] = {}
    for r in rows:
        for pid, text in zip(r["retrieved_ids"], r["contexts"]):
            assert seen.setdefault(text, pid) == pid, (r["id"], pid, seen[text])
    # Passages are reused, so retrieval metrics see a real corpus.
    assert len(seen) < sum(len(r["contexts"]) for r in rows)


def test_every_corpus_passage_is_used(rows, corpus):
    used = {i for r in rows for i in [*r["retrieved_ids"], *_relevant(r)]}
    assert used == set(corpus)


def test_quality_mix(rows):
    by_q: dict[str, int] = {}
    for r in rows:
        by_q[r["quality"]] = by_q.get(r["quality"], 0) + 1
    assert set(by_q) == QUALITIES
    assert 16 <= by_q["good"] <= 24
    for lang in LANGS:
        assert {r["quality"] for r in rows if r["id"].startswith(lang)} == QUALITIES, lang


def test_retrieval_structure_matches_quality(rows):
    missed = [r["id"] for r in rows if _first_relevant_rank(r) is None]
    late = [r["id"] for r in rows if (_first_relevant_rank(r) or 0) >= 3]
    assert len(missed) >= 3 and len(late) >= 3
    for r in rows:
        rank = _first_relevant_rank(r)
        if r["quality"] == "irrelevant_context":
            assert rank is None, r["id"]
        elif r["quality"] == "wrong_ranking":
            assert rank is not None and rank >= 3, r["id"]
        else:
            assert rank == 1, r["id"]


def test_size_budget():
    # Evaluated by a small judge on CPU in demos and CI: keep it small.
    assert EXAMPLE.stat().st_size < 25_000


def test_loads_with_load_dataset(rows):
    data = load_dataset(EXAMPLE)
    assert len(data) == 40
    for s, r in zip(data, rows):
        assert s.id == r["id"]
        assert s.contexts == r["contexts"]
        assert s.retrieved_ids == r["retrieved_ids"]
        assert s.relevant_ids == {k: float(v) for k, v in _relevant(r).items()}
        assert s.metadata["quality"] == r["quality"]
