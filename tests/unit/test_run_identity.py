"""One identity of a run: the folder key, the folder rule, diff's set-up notes, history's
change marks and the signature line all come from ``results.identity.PARTS``.

The test that matters most adds a part (a made-up ``temperature`` setting) and shows
that all five see it, so a new run setting costs one row, not five edits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import localeval
from localeval.errors import UsageError
from localeval.history.groups import group_runs
from localeval.history.runs import from_entry
from localeval.report import signature_line
from localeval.results import PARTS, Identity, IdentityPart, SignatureEntry, record_of
from localeval.resultsets.run_index import read_entry
from localeval.testing import ScriptedJudge
from localeval.versions import signature_notes

BASE = {"localeval": "0.1.0", "judge": "j", "judge_fingerprint": "f" * 64, "embedder": None,
        "embedder_fingerprint": None, "prompts": {}, "prompts_hash": "p" * 12, "seed": 0,
        "verdicts": "hard", "reasons": "full", "lang": "auto", "repeats": 1,
        "dataset_hash": "d" * 64, "testset_hash": "t" * 64, "dataset_rows": 4}


def _ident(**change) -> Identity:
    return Identity(SignatureEntry.model_validate({**BASE, **change}), ("faithfulness",))


def test_every_signature_field_is_a_part_of_the_identity():
    """A field added to the signature without a part would be recorded and then ignored by
    the folder rule, diff and history: the table must name it."""
    covered = {k for p in PARTS for k in p.keys}
    # prompts: the per-step versions behind prompts_hash (and the user-defined metrics'
    # definitions, which the folder rule compares); dataset_rows: shown with the hashes
    assert set(SignatureEntry.model_fields) - covered == {"prompts", "dataset_rows"}


@pytest.mark.parametrize("field,value,rule,setup", [
    ("seed", 3, True, False), ("verdicts", "soft", True, True), ("reasons", "none", True, True),
    ("lang", "ja", True, True), ("repeats", 3, True, True), ("localeval", "0.2.0", True, False),
    ("prompts_hash", "q" * 12, False, True), ("testset_hash", "u" * 64, False, True),
    ("dataset_hash", "e" * 64, True, False)])
def test_each_part_is_compared_where_it_says(field, value, rule, setup):
    a, b = _ident(), _ident(**{field: value})
    assert bool(a.refusals(b, "request")) is rule
    assert (a.folder_key() != b.folder_key()) is rule
    notes, same = a.setup_notes(b)
    assert same is (not setup), notes


def test_models_are_compared_by_fingerprint_once_loaded():
    a = _ident()
    assert a.refusals(_ident(judge_fingerprint="g" * 64), "models") == [
        f"judge j@{'f' * 12} there, j@{'g' * 12} here"]
    assert a.refusals(_ident(judge_fingerprint="g" * 64), "models", skip=("judge",)) == []
    assert a.refusals(_ident(judge="renamed"), "models") == []  # the same file, named otherwise


def test_a_new_part_reaches_all_five(monkeypatch, tmp_path):
    """Add ``temperature`` to the table: the five users of the identity change with it."""
    part = IdentityPart("temperature", ("temperature",), uses="judge", blame="judge",
                        token=lambda s: f"temp:{getattr(s, 'temperature', None)}")
    monkeypatch.setattr("localeval.results.identity.PARTS", (*PARTS, part))
    hot, cold = {**BASE, "temperature": 0.7}, {**BASE, "temperature": 0.0}

    # 1. the signature line (the report's, from a signature mapping)
    assert signature_line(hot).endswith("|temp:0.7")
    assert signature_line(hot) != signature_line(cold)
    # 2. the default folder's key
    a, b = Identity.of_signature(hot), Identity.of_signature(cold)
    assert a.folder_key() != b.folder_key()
    # 3. the folder rule: a folder whose run had temperature 0.7 refuses one without it
    folder = tmp_path / "out"
    localeval.evaluate([{"id": "1", "question": "q", "answer": "a", "contexts": ["c"], "reference": "a"}],
                       ["rougeL"], out_dir=folder, cache=False, progress=False,
                       judge=ScriptedJudge(auto=True), judge_check=False)
    summary = json.loads((folder / "summary.json").read_text())
    summary["signature"]["temperature"] = 0.7
    (folder / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(UsageError, match="temperature 0.7 there, none here"):
        localeval.evaluate([{"id": "1", "question": "q", "answer": "a", "contexts": ["c"], "reference": "a"}],
                           ["rougeL"], out_dir=folder, cache=False, progress=False,
                           judge=ScriptedJudge(auto=True), judge_check=False)
    # 4. diff's set-up notes, for a judged metric only
    notes, same = signature_notes(hot, cold, judged=True, embedded=False)
    assert not same and "the temperature differs: base 0.7, new 0.0" in notes
    assert signature_notes(hot, cold, judged=False, embedded=False)[1]
    # 5. history's marks, on the judged metric's chart only
    runs = []
    for name, started, sig in (("cold", "2026-01-01T00:00:00Z", cold),
                               ("hot", "2026-01-02T00:00:00Z", hot)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps({
            "metrics": {"faithfulness": {"mean": 0.5, "n": 4}, "rougeL": {"mean": 0.4, "n": 4}},
            "signature": sig, "run": {"started": started, "name": name}}))
        (tmp_path / name / "results.jsonl").write_text("")
        entry = read_entry(tmp_path / name)
        assert entry is not None
        runs.append(from_entry(entry))
    trends = {t.metric: t.marks for t in group_runs(runs)[0].trends}
    assert [m.notes[0] for m in trends["faithfulness"]] == [
        "the temperature differs: 'cold' 0.0, 'hot' 0.7"]
    assert trends["rougeL"] == []


def test_a_record_reads_its_identity_and_line(tmp_path):
    rec = record_of({"metrics": {"faithfulness": {"mean": 0.5, "n": 2}}, "signature": BASE,
                     "signature_line": "whatever was written"})
    assert rec.identity.metrics == ("faithfulness",)
    assert rec.line() == signature_line(BASE)
    assert rec.line().startswith(f"judge:j@{'f' * 12}|prompts:{'p' * 12}|seed:0|")


def test_an_old_signature_without_the_reason_mode_had_full_reasons():
    old = {k: v for k, v in BASE.items() if k != "reasons"}
    rec = record_of({"metrics": {}, "signature": old})
    assert rec.signature is not None and rec.signature.reasons == "full"
    assert rec.summary["signature"]["reasons"] == "full"  # upgraded in the one place
    assert signature_notes(old, BASE) == ([], True)


def test_the_architecture_page_says_how_a_setting_is_added():
    text = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    assert "A run setting" in text and "PARTS" in text and "SignatureEntry" in text
