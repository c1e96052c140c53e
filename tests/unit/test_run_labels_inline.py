"""``localeval run --labels``: the corrected section is computed in the run, not by a second pass.

The run reads its records back from results.jsonl (written sample by sample)
once every sample is scored, keeps no samples for it (the low-memory path),
and writes summary.json and both reports once, with the ``corrected`` section.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from labels_util import example_labels

import localeval
from localeval.cli.app import example_path, main
from localeval.estimate import run_corrections

_labels = example_labels


def _run(tmp: Path, *extra: str) -> int:
    return main(["run", str(example_path()), "-m", "bleu,rougeL", "-o", str(tmp / "run"),
                 "--no-cache", "--quiet", *extra])


def test_labels_keep_the_low_memory_path_and_write_each_file_once(tmp_path, monkeypatch):
    import localeval.report as report
    import localeval.results.writer as writer
    from localeval.run import lean, runner

    columns = []

    class Columns(lean.ScoreColumns):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            columns.append(self)

    monkeypatch.setattr(runner, "ScoreColumns", Columns)
    writes: list[str] = []
    for name in ("write_html_report", "write_markdown_report"):
        real = getattr(report, name)
        monkeypatch.setattr(report, name, lambda *a, _r=real, _n=name, **kw: (
            writes.append(_n), _r(*a, **kw))[1])
    real_json = writer.write_json
    monkeypatch.setattr(writer, "write_json", lambda path, obj: (
        writes.append(Path(path).name), real_json(path, obj))[1])

    assert _run(tmp_path, "--labels", str(_labels(tmp_path)), "--labels-random-draw") == 0
    assert len(columns) == 1, "the run kept every sample (not the low-memory path)"
    assert sorted(writes) == ["summary.json", "write_html_report", "write_markdown_report"]
    out = tmp_path / "run"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["corrected"]["metrics"]["rougeL"]["labelled"] == 15
    assert 'id="corrected"' in (out / "report.html").read_text(encoding="utf-8")
    assert "(corrected by labels)" in (out / "summary.md").read_text(encoding="utf-8")


def test_the_section_is_what_the_finished_run_folder_gives(tmp_path):
    labels = _labels(tmp_path)
    assert _run(tmp_path, "--labels", str(labels), "--labels-random-draw") == 0
    out = tmp_path / "run"
    inline = json.loads((out / "summary.json").read_text(encoding="utf-8"))["corrected"]
    after = json.loads(json.dumps(run_corrections(out, labels, random_draw=True)))
    assert inline == after


def test_the_records_are_read_before_summary_json_exists(tmp_path):
    seen = {}

    def hook(records):
        seen["summary"] = (tmp_path / "o" / "summary.json").exists()
        seen["ids"] = [r["id"] for r in records]
        return {"extra": {"n": len(seen["ids"])}}

    rows = [{"id": f"q{i}", "retrieved_ids": ["a", "b"], "relevant_ids": ["b"]} for i in range(5)]
    res = localeval.evaluate(rows, "mrr", judge=False, embedder=False, cache=False,
                             progress=False, out_dir=tmp_path / "o", keep_samples=False,
                             summary_sections=hook)
    assert seen == {"summary": False, "ids": [f"q{i}" for i in range(5)]}
    assert res.summary["extra"] == {"n": 5}
    on_disk = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert on_disk["extra"] == {"n": 5}
    # without a folder the records are built from the scores kept
    res = localeval.evaluate(rows, "mrr", judge=False, embedder=False, cache=False,
                             progress=False, summary_sections=hook)
    assert res.summary["extra"] == {"n": 5}


def test_a_failing_hook_leaves_the_run_files_complete_and_raises_after(tmp_path):
    def hook(records):
        raise RuntimeError("boom")

    rows = [{"id": f"q{i}", "retrieved_ids": ["a", "b"], "relevant_ids": ["b"]} for i in range(5)]
    with pytest.raises(RuntimeError, match="boom"):
        localeval.evaluate(rows, "mrr", judge=False, embedder=False, cache=False,
                           progress=False, out_dir=tmp_path / "o", keep_samples=False,
                           summary_sections=hook)
    out = tmp_path / "o"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_samples"] == 5 and "extra" not in summary
    assert (out / "report.html").is_file() and (out / "summary.md").is_file()
    assert len((out / "results.jsonl").read_text().splitlines()) == 5
    def stopped(records):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # Ctrl-C in the hook: the files first, then exit 130
        localeval.evaluate(rows, "mrr", judge=False, embedder=False, cache=False,
                           progress=False, out_dir=tmp_path / "o2", keep_samples=False,
                           summary_sections=stopped)
    assert json.loads((tmp_path / "o2" / "summary.json").read_text())["n_samples"] == 5
    with pytest.raises(localeval.UsageError, match="n_samples"):
        localeval.evaluate(rows, "mrr", judge=False, embedder=False, cache=False,
                           progress=False, summary_sections=lambda r: {"n_samples": 0})


def test_records_result_set_keeps_what_an_estimate_reads():
    from localeval.estimate.in_run import records_result_set

    recs = [{"id": "a", "question": "q?", "contexts_hash": "h1", "scores": {"m": 1.0, "f": 0.5},
             "details": {"f": {"verdicts": [{"p_verdict_1": 0.7}]}, "m": {"rank": 1}}},
            {"id": "b", "scores": {"m": 1.0, "f": 0.5}, "details": {}}]
    rs = records_result_set(recs, "results.jsonl")
    assert rs.scores == {"a": {"m": 1.0, "f": 0.5}, "b": {"m": 1.0, "f": 0.5}}
    assert rs.scores["a"] is rs.scores["b"], "equal score rows share one mapping"
    assert rs.questions == {"a": "q?"} and rs.hashes == {"a": {"contexts_hash": "h1"}}
    assert rs.details == {"a": {"f": {"verdicts": [{"p_verdict_1": 0.7}]}}}
    assert rs.metrics == ["m", "f"]
    with pytest.raises(localeval.DataError, match="duplicate id 'a'"):
        records_result_set([*recs, recs[0]], "results.jsonl")
