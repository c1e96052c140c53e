"""``diff``, ``diff --pairwise`` and ``rank`` read runs through their record: a run is titled
by its ``--name`` (else its folder after resolving links, never "latest"), each side's judge
check is said once, a ranked version whose run's judge failed its check is marked beside
its numbers, a damaged summary beside results.jsonl leaves the scores and a note, and the
set-up notes of two signatures say what they said before the identity was written once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval.cli.app import main
from localeval.report import judge_health
from localeval.testing import ScriptedJudge
from localeval.testing.scripted import ScriptedReply
from localeval.versions import diff_runs, signature_notes

N = 10
SIG = {"judge": "judge-a.gguf", "judge_fingerprint": "a" * 64, "prompts_hash": "p1",
       "prompts": {"faithfulness": "f1", "answer_relevancy": "r1"},
       "embedder": "emb-a", "embedder_fingerprint": "e" * 64, "verdicts": "hard",
       "reasons": "full", "seed": 0, "lang": "auto", "repeats": 1,
       "testset_hash": "t" * 64, "dataset_rows": N}
UNFIT_CHECK = {"judge": "judge-a.gguf", "fingerprint": "a" * 64, "verdict": "unfit",
               "metrics": {"faithfulness": {"passed": 1, "pairs": 4}},
               "line": "judge check: UNFIT: this judge does not reliably tell good from bad "
                       "on known-answer pairs (faithfulness 1/4); its scores are not evidence"}
FIT_CHECK = {**UNFIT_CHECK, "verdict": "fit", "metrics": {"faithfulness": {"passed": 4,
                                                                          "pairs": 4}},
             "line": "judge check: fit (faithfulness 4/4 known-answer pairs ordered right)"}


def _run(folder: Path, *, name: str | None = None, shift: float = 0.0,
         check: dict | None = None, health: list[str] | None = None,
         summary: dict | None = None) -> Path:
    """A run folder as ``localeval run`` writes it: results.jsonl and a summary.json with
    the run's name, signature, judge check and judge health (the warnings ``health`` adds
    to those ``report.judge_health`` writes for the check)."""
    folder.mkdir(parents=True)
    vals = [min(1.0, max(0.0, (i % 4) / 4 + shift)) for i in range(N)]
    with open(folder / "results.jsonl", "w", encoding="utf-8") as f:
        for i, v in enumerate(vals):
            f.write(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                "scores": {"faithfulness": v, "bleu": v}, "errors": {},
                                "details": {}}) + "\n")
    if summary is None:
        mean = sum(vals) / N
        summary = {"metrics": {m: {"mean": mean, "ci95": [0.0, 1.0], "n": N, "unscored": 0}
                               for m in ("faithfulness", "bleu")},
                   "n_samples": N, "signature": SIG, "usage": {"calls": 2 * N}}
        if name is not None:
            summary["run"] = {"name": name, "tags": {}}
        if check is not None:
            summary["judge_check"] = check
            h = judge_health([], [], [], {"calls": 2 * N}, check)
            h["warnings"] = [*(health or []), *h["warnings"]]
            summary["judge_health"] = h
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder


@pytest.fixture()
def out_folder(tmp_path: Path) -> Path:
    """localeval-out/ with v1-… and v2-… (named v1 and v2) and latest -> v2-…"""
    out = tmp_path / "localeval-out"
    _run(out / "v1-1a2b3c4d", name="v1", check=UNFIT_CHECK)
    _run(out / "v2-5e6f7a8b", name="v2", shift=-0.2, check=UNFIT_CHECK,
         health=["faithfulness is 1 on 100% of 10 samples although the samples differ"])
    (out / "latest").symlink_to(out / "v2-5e6f7a8b", target_is_directory=True)
    return out


def _files(folder: Path) -> dict[str, str]:
    return {n: (folder / n).read_text(encoding="utf-8")
            for n in ("diff.md", "diff.html", "diff.json")}


# -- titles -----------------------------------------------------------------------------------

def test_a_diff_against_latest_is_titled_by_the_runs_names(out_folder, tmp_path, capsys):
    o = tmp_path / "d"
    assert main(["diff", str(out_folder / "v1-1a2b3c4d"), str(out_folder / "latest"),
                 "-o", str(o)]) == 0
    terminal = capsys.readouterr().out
    files = _files(o)
    assert files["diff.md"].startswith("## Diff: v2 (new) vs v1 (base)")
    assert "<title>localeval diff: v2 vs v1</title>" in files["diff.html"]
    doc = json.loads(files["diff.json"])
    assert (doc["base"]["name"], doc["new"]["name"]) == ("v1", "v2")
    assert "Diff: v2 (new) vs v1 (base)" in terminal
    for text in (terminal, files["diff.md"], files["diff.html"]):
        # the link's name is only where the run was read from, never a title
        assert "latest (new)" not in text and "latest vs" not in text
    assert doc["new"]["source"].endswith("latest/results.jsonl")  # where it was read


def test_an_unnamed_run_is_titled_by_its_folder_after_resolving_the_link(tmp_path):
    out = tmp_path / "localeval-out"
    _run(out / "run-aaaa")
    _run(out / "run-bbbb", shift=-0.2)
    (out / "latest").symlink_to(out / "run-bbbb", target_is_directory=True)
    d = diff_runs(out / "run-aaaa", out / "latest" / "results.jsonl")
    assert (d.base.results.name, d.new.results.name) == ("run-aaaa", "run-bbbb")


def test_diff_pairwise_is_titled_by_the_runs_names(out_folder, tmp_path, capsys):
    from localeval.judge import register_judge_backend, unregister_judge_backend

    data = {}
    for v in ("v1", "v2"):
        data[v] = tmp_path / f"{v}.jsonl"
        data[v].write_text("".join(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                               "contexts": ["ctx"], "answer": f"{v} {i}"})
                                   + "\n" for i in range(N)), encoding="utf-8")
    judge = ScriptedJudge({"pairwise_preference": {"reason": "r", "verdict": "A"}})
    register_judge_backend("record-views", lambda spec: spec == "scripted-record-views",
                           lambda spec, **kw: judge)
    try:
        code = main(["diff", str(out_folder / "v1-1a2b3c4d"), str(out_folder / "latest"),
                     "--base-data", str(data["v1"]), "--new-data", str(data["v2"]),
                     "--pairwise", "--judge", "scripted-record-views", "--verdicts", "hard",
                     "--no-judge-check", "--no-cache", "--resamples", "999",
                     "-o", str(tmp_path / "p")])
    finally:
        unregister_judge_backend("record-views")
    capsys.readouterr()
    assert code == 0
    files = _files(tmp_path / "p")
    assert json.loads(files["diff.json"])["pairwise"]["counts"]["inconsistent"] == N
    assert files["diff.md"].startswith("## Diff: v2 (new) vs v1 (base)")
    assert "<title>localeval diff: v2 vs v1</title>" in files["diff.html"]
    assert "latest" not in files["diff.md"].split("### Notes")[0]


# -- judge fitness ----------------------------------------------------------------------------

def test_the_judge_fitness_list_names_each_sides_check_once(out_folder, tmp_path, capsys):
    o = tmp_path / "d"
    assert main(["diff", str(out_folder / "v1-1a2b3c4d"), str(out_folder / "latest"),
                 "-o", str(o)]) == 0
    terminal = capsys.readouterr().out
    files = _files(o)
    # what the run recorded: the check's line, and a health warning restating it
    summary = json.loads((out_folder / "latest" / "summary.json").read_text())
    assert any(w.startswith("judge check: unfit") for w in summary["judge_health"]["warnings"])
    doc = json.loads(files["diff.json"])
    assert doc["judge_fitness"]["base"]["judge_check"] == "unfit"
    banner = re.search(r'<div class="banner warn" id="judge-fitness".*?</div>',
                       files["diff.html"], re.S)
    assert banner is not None
    items = re.findall(r"<li>(.*?)</li>", banner.group(0))
    for side in ("base", "new"):
        checks = [x for x in items if x.startswith(f"{side}: ") and "judge check" in x]
        assert checks == [f"{side}: {UNFIT_LINE_HTML}"], checks
    # the other health warning is still said, for its side
    assert any(x.startswith("new: judge health: faithfulness is 1 on 100%") for x in items)
    for text in (terminal, files["diff.md"]):
        flat = " ".join(text.split())
        for side in ("base", "new"):
            assert flat.count(f"{side}: judge check") == 1, side
            assert f"{side}: judge health: judge check" not in flat


UNFIT_LINE_HTML = UNFIT_CHECK["line"]  # no character of it is escaped


def test_a_damaged_summary_leaves_the_scores_and_says_why(tmp_path):
    bad = {"metrics": {"faithfulness": {"mean": "high"}}, "signature": SIG,
           "judge_check": UNFIT_CHECK}
    base = _run(tmp_path / "a", name="v1", check=FIT_CHECK)
    new = _run(tmp_path / "b", summary=bad)
    d = diff_runs(base, new)
    assert d.new.results.signature == {} and d.new.results.fitness.verdict is None
    assert d.new.results.name == "b"
    assert len(d.metrics) == 2 and d.metrics[0].counts()["pairs"] == N  # the scores are read
    from localeval.versions.tables import notes

    said = [x for x in notes(d) if x.startswith("new: its summary.json was not read")]
    assert len(said) == 1 and "metrics.faithfulness.mean" in said[0]
    assert str(tmp_path / "b" / "summary.json") in said[0]
    assert not d.same_setup  # no signature on one side: the set-up cannot be told


# -- rank -------------------------------------------------------------------------------------

def _rank_versions(tmp_path: Path) -> tuple[list[str], list[str]]:
    """Three run folders (unfit, fit, no check) and the data set each evaluated."""
    runs, data = [], []
    for name, check in (("good", UNFIT_CHECK), ("fine", FIT_CHECK), ("plain", None)):
        runs.append(str(_run(tmp_path / "runs" / f"{name}-0000", name=name, check=check)))
        p = tmp_path / f"{name}.jsonl"
        p.write_text("".join(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                         "contexts": ["ctx"], "answer": f"[{name}] {i}"})
                             + "\n" for i in range(N)), encoding="utf-8")
        data.append(str(p))
    return runs, data


STRENGTH = {"good": 1.0, "fine": 0.0, "plain": -1.0}


def _bt(request):
    """Soft verdicts from Bradley-Terry strengths of the two answers' versions."""
    import math

    a, b = (request.inputs[k].split("]")[0][1:] for k in ("answer_a", "answer_b"))
    pa = 1.0 / (1.0 + math.exp(-(STRENGTH[a] - STRENGTH[b])))
    return ScriptedReply({"reason": "r", "verdict": "A" if pa > 0.5 else "B"},
                         [{"A": pa, "B": 1 - pa, "tie": 0.0}])


def test_rank_marks_a_version_whose_runs_judge_was_unfit(tmp_path):
    from localeval.pairwise import rank_lines, rank_versions

    runs, data = _rank_versions(tmp_path)
    r = rank_versions(runs, judge=ScriptedJudge({"pairwise_preference": _bt}), data=data,
                      n_resamples=200, judge_check=False)
    assert r.names == ["good", "fine", "plain"]  # the runs' names, not their folders'
    assert r.marker("good") == "judge unfit"
    assert r.marker("fine") is None and r.marker("plain") is None
    lines = rank_lines(r)
    row = {n: next(x for x in lines if re.match(rf"\d+\s+{n}\s", x)) for n in r.names}
    assert row["good"].endswith("(judge unfit)")
    assert "judge" not in row["fine"] and "judge" not in row["plain"]
    assert any(x.startswith("  ⚠ good: judge check: UNFIT") for x in lines)
    doc = r.to_dict()
    by = {v["name"]: v for v in doc["ranking"]["versions"]}
    assert by["good"]["judge_caveat"] == "judge unfit"
    assert by["fine"]["judge_caveat"] is None and by["plain"]["judge_caveat"] is None
    assert doc["version_fitness"]["good"]["failed"] is True
    assert doc["version_fitness"]["fine"]["failed"] is False
    assert "plain" not in doc["version_fitness"]  # its run records no judge check
    json.dumps(doc, allow_nan=False)


def test_rank_on_the_command_line_says_the_unfit_judge(tmp_path, capsys):
    from localeval.judge import register_judge_backend, unregister_judge_backend

    runs, data = _rank_versions(tmp_path)
    (tmp_path / "runs" / "latest").symlink_to(Path(runs[2]), target_is_directory=True)
    runs[2] = str(tmp_path / "runs" / "latest")
    judge = ScriptedJudge({"pairwise_preference": _bt})
    register_judge_backend("record-rank", lambda spec: spec == "scripted-record-rank",
                           lambda spec, **kw: judge)
    try:
        code = main(["rank", *runs, *[a for d in data for a in ("--data", d)],
                     "--judge", "scripted-record-rank", "--no-judge-check", "--no-cache",
                     "--resamples", "200", "-o", str(tmp_path / "o")])
    finally:
        unregister_judge_backend("record-rank")
    out = capsys.readouterr().out
    assert code == 0
    good = next(x for x in out.splitlines() if re.match(r"\d+\s+good\s", x))
    fine = next(x for x in out.splitlines() if re.match(r"\d+\s+fine\s", x))
    assert good.endswith("(judge unfit)") and "judge" not in fine
    doc = json.loads((tmp_path / "o" / "rank.json").read_text(encoding="utf-8"))
    assert doc["versions"] == ["good", "fine", "plain"]  # latest is titled by its run's name
    assert "latest" not in json.dumps(doc["ranking"])


# -- set-up notes -----------------------------------------------------------------------------

AFTER = "a difference below may be the judge's, not the pipeline's"


@pytest.mark.parametrize("change, expected", [
    ({"judge": "judge-b.gguf", "judge_fingerprint": "b" * 64},
     [f"the judge differs: base judge-a.gguf@{'a' * 12}, new judge-b.gguf@{'b' * 12}", AFTER]),
    ({"embedder": "emb-b", "embedder_fingerprint": "f" * 64},
     [f"the embedder differs: base emb-a@{'e' * 12}, new emb-b@{'f' * 12}",
      "a difference below may be the embedder's, not the pipeline's"]),
    ({"prompts_hash": "p2", "prompts": {**SIG["prompts"], "faithfulness": "f2"}},
     ["the prompts differ (faithfulness): base p1, new p2", AFTER]),
    ({"testset_hash": "u" * 64, "dataset_rows": 8},
     [f"the test sets differ: base {'t' * 12} ({N} rows), new {'u' * 12} (8 rows); the "
      "paired samples' questions, references or relevant ids may differ, so a difference "
      "below may be the data's, not the pipeline's",
      "the same judge, prompts, embedder and verdict mode scored both runs"]),
    ({"verdicts": "soft", "reasons": "none"},
     ["the verdict mode differs: base hard, new soft",
      "the reason mode differs: base full, new none", AFTER]),
])
def test_signature_notes_say_what_they_said(change, expected):
    notes, same = signature_notes(SIG, {**SIG, **change})
    assert (notes, same) == (expected, False)


def test_signature_notes_of_unchanged_or_unrecorded_runs():
    assert signature_notes(SIG, dict(SIG)) == ([], True)
    old = {k: v for k, v in SIG.items() if k != "reasons"}  # before --reasons: full reasons
    assert signature_notes(old, SIG) == ([], True)
    notes, same = signature_notes({}, SIG, "'a'", "'b'")
    assert not same and notes == [
        "'a' records no signature (not a localeval run, or summary.json is missing): cannot "
        "tell whether the same judge, prompts and embedder scored both runs"]
    # a change no compared metric uses is not said: a judge change for BLEU alone
    assert signature_notes(SIG, {**SIG, "judge_fingerprint": "b" * 64}, judged=False,
                           embedded=False) == ([], True)
