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
