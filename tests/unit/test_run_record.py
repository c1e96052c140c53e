"""One record of a run: ``results.read_record`` reads summary.json, checks every field it
knows, and brings a summary of any earlier localeval to today's names.

- A damaged or hand-edited summary is one DataError naming the file and the field, and
  exit 2 from the verbs that read it, never a traceback.
- The summaries that earlier versions wrote (``tests/data/releases/``, each made with
  that version's code: its README says which and how) still read, and show the numbers
  they hold, in ``report``, ``runs`` and ``history``.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from localeval.cli.app import main
from localeval.errors import DataError
from localeval.results import read_record, record_of

RELEASES = Path(__file__).resolve().parents[1] / "data" / "releases"
FOLDERS = sorted(p for p in RELEASES.iterdir() if p.is_dir()) if RELEASES.is_dir() else []
GOOD = {"metrics": {"faithfulness": {"mean": 0.5, "ci95": [0.25, 0.75], "n": 2, "unscored": 0}},
        "n_samples": 2, "signature": {"seed": 0, "verdicts": "hard", "lang": "auto"},
        "run": {"started": "2026-11-01T10:00:00Z", "name": "v1", "tags": {"pr": "12"}},
        "judge_check": {"verdict": "unfit", "line": "judge check: UNFIT: 1/4"}}


@pytest.mark.parametrize("change,field", [
    ({"metrics": {"faithfulness": {"mean": "high"}}}, "metrics.faithfulness.mean"),
    ({"metrics": {"faithfulness": {"mean": 0.5, "n": -1}}}, "metrics.faithfulness.n"),
    ({"metrics": {"faithfulness": {"mean": 0.5, "ci95": [0.1]}}}, "metrics.faithfulness.ci95"),
    ({"metrics": {"faithfulness": []}}, "metrics.faithfulness"),
    ({"signature": {"seed": "0"}}, "signature.seed"),
    ({"signature": ["judge"]}, "signature"),
    ({"signature": {"subset": {"kept": "3"}}}, "signature.subset.kept"),
    ({"run": {"name": 7}}, "run.name"),
    ({"run": {"tags": {"pr": 12}}}, "run.tags.pr"),
    ({"judge_check": "unfit"}, "judge_check"),
    ({"gates": {"failed": []}}, "gates.passed"),
    ({"n_samples": True}, "n_samples"),
])
def test_a_damaged_summary_names_the_file_and_the_field(tmp_path, change, field):
    (tmp_path / "summary.json").write_text(json.dumps({**GOOD, **change}))
    with pytest.raises(DataError) as e:
        read_record(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'summary.json'}: field '{field}'"), e.value


@pytest.mark.parametrize("text,says", [
    ("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object"),
    ('{"n_samples": 3}', "no 'metrics' object"), ('{"metrics": {"a": {"mean": NaN}}}', None),
])
def test_what_is_not_a_summary_is_said_once(tmp_path, text, says):
    (tmp_path / "summary.json").write_text(text)
    if says is None:  # NaN is what older runs wrote for an empty mean: read, not refused
        assert math.isnan(read_record(tmp_path).metrics["a"].mean or 0.0)
        return
    with pytest.raises(DataError, match=says):
        read_record(tmp_path)


def test_report_and_runs_say_the_field_and_exit_2_not_a_traceback(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({**GOOD, "signature": {"seed": "zero"}}))
    (run / "results.jsonl").write_text('{"id": "1", "scores": {"faithfulness": 0.5}}\n')
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert "field 'signature.seed'" in err and "Traceback" not in err
    assert main(["runs", str(tmp_path), "--json"]) == 0  # listed, with the reason beside it
    assert "field 'signature.seed'" in json.loads(capsys.readouterr().out)["runs"][0]["problem"]


def test_a_record_keeps_what_it_does_not_know():
    rec = record_of({**GOOD, "explained": {"ids": ["1"]}, "signature": {
        **GOOD["signature"], "future_setting": 3}})
    assert rec.summary["explained"] == {"ids": ["1"]}
    assert rec.summary["signature"]["future_setting"] == 3
    assert rec.name == "v1" and rec.fitness.marker == "judge unfit"
    assert rec.caveat("faithfulness") == "judge unfit"


@pytest.mark.skipif(not FOLDERS, reason="no stored releases")
def test_every_release_is_stored():
    assert len(FOLDERS) >= 6
    readme = (RELEASES / "README.md").read_text()
    for f in FOLDERS:
        assert f.name in readme


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_an_earlier_release_reads_and_shows_its_numbers(folder, tmp_path, capsys):
    raw = json.loads((folder / "summary.json").read_text())
    rec = read_record(folder)
    assert set(rec.metrics) == set(raw["metrics"])
    for key, entry in raw["metrics"].items():
        got = rec.metrics[key]
        assert got.mean == entry.get("mean") or (got.mean is None and entry.get("mean") is None)
        assert got.n == entry.get("n", 0) and got.ci95 == entry.get("ci95")
    # the judge check under today's name, whatever the release called it
    check = raw.get("judge_check") or raw.get("judge_self_test") or (
        raw.get("judge_health") or {}).get("self_test")
    if check is not None:
        assert rec.fitness.verdict == check.get("verdict")
    assert rec.signature is None or rec.signature.reasons == "full" or \
        raw["signature"].get("reasons") == rec.signature.reasons
    # report and runs show the same means
    run = tmp_path / folder.name
    shutil.copytree(folder, run)
    assert main(["report", str(run)]) == 0
    md = (run / "summary.md").read_text()
    capsys.readouterr()
    assert main(["runs", str(tmp_path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["runs"][0]
    assert listed["problem"] is None
    for key, entry in raw["metrics"].items():
        if entry.get("mean") is not None:
            assert f"{entry['mean']:.4f}" in md
            assert listed["metrics"][key]["mean"] == pytest.approx(entry["mean"])
