"""A new user's trial, end to end, with a judge that fails its check.

Two versions of a pipeline (``testing.trial_versions``: version 2 swaps some answers)
are run from the command line into the default folders (``localeval-out/NAME-KEY``,
``latest``), judged by ``testing.unfit_judge`` (the judge check finds it unfit). Then
every view of the finished runs is asked, as a user would: ``runs``, ``runs --json``,
the history page in a headless browser, ``rank``, ``diff`` against ``latest``, and the
ragas drop-in's printed result and ``to_pandas()``. Each says the judge is unfit beside
its judged numbers, and nothing of it beside ROUGE or hit rate; each titles the runs by
their names, never "latest".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval.cli.app import main
from localeval.judge import register_judge_backend, unregister_judge_backend
from localeval.testing import ScriptedJudge, headless_dom, trial_versions, unfit_judge
from localeval.testing.browser import chromium_path

JUDGED = ("faithfulness", "nv_answer_accuracy")
PLAIN = ("rougeL", "hit_rate")
SPEC = "scripted-unfit-trial"


@pytest.fixture(scope="module")
def trial(tmp_path_factory) -> Path:
    """The user's folder after ``localeval run v1.jsonl --name v1`` and the same for v2."""
    home = tmp_path_factory.mktemp("user")
    v1, v2 = trial_versions(home)
    register_judge_backend("unfit-trial", lambda spec: spec == SPEC,
                           lambda spec, **kw: unfit_judge())
    mp = pytest.MonkeyPatch()
    mp.chdir(home)
    try:
        for data, name in ((v1, "v1"), (v2, "v2")):
            code = main(["run", str(data), "-m", ",".join(JUDGED + PLAIN), "--judge", SPEC,
                         "--judge-check-pairs", "1", "--no-cache", "--name", name])
            assert code == 0
    finally:
        mp.undo()
        unregister_judge_backend("unfit-trial")
    return home


def _folders(home: Path) -> dict[str, Path]:
    out = home / "localeval-out"
    return {p.name.split("-")[0]: p for p in out.iterdir() if not p.is_symlink()}


def test_runs_says_unfit_beside_judged_numbers_only(trial, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    capsys.readouterr()
    assert main(["runs", str(trial / "localeval-out")]) == 0
    out = capsys.readouterr().out
    for key in JUDGED:
        assert len(re.findall(rf"{key} \d\.\d{{3}}( \(\d+ unscored\))? \(judge unfit\)",
                              out)) == 2, out
    for key in PLAIN:
        assert len(re.findall(rf"{key} \d\.\d{{3}}\s", out)) == 2, out
        assert not re.search(rf"{key} \d\.\d{{3}}[^\n│]*judge", out)
    assert main(["runs", str(trial / "localeval-out"), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["name"] for r in runs] == ["v1", "v2"]
    for r in runs:
        assert r["judge_fitness"]["judge_check"] == "unfit"
        assert all(r["metrics"][k]["caveat"] == "judge unfit" for k in JUDGED)
        assert all(r["metrics"][k]["caveat"] is None for k in PLAIN)


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed")
def test_the_history_page_says_unfit_where_judged_numbers_are_drawn(trial, tmp_path, capsys):
    page = tmp_path / "history.html"
    assert main(["history", str(trial / "localeval-out"), "-o", str(page)]) == 0
    dom, console = headless_dom(page.as_uri(), tmp_path / "profile")
    assert not [c for c in console if "error" in c.lower()], console
    charts = _charts(dom)
    for key in JUDGED:
        assert "judge unfit" in charts[key] and "not evidence" in charts[key], key
    for key in PLAIN:
        assert "judge unfit" not in charts[key] and "not evidence" not in charts[key], key
    assert ">latest<" not in dom and "v1" in dom and "v2" in dom


def _charts(dom: str) -> dict[str, str]:
    """Each metric's chart section of the history page, by metric."""
    out = {}
    for key in JUDGED + PLAIN:
        figs = [f for f in re.findall(r'<figure class="card trendfig">.*?</figure>', dom, re.S)
                if re.search(rf">{key}<", f)]
        assert len(figs) == 1, f"{len(figs)} charts of {key}"
        out[key] = figs[0]
    return out


def test_a_diff_against_latest_is_titled_by_the_runs_names(trial, tmp_path, capsys):
    f = _folders(trial)
    assert main(["diff", str(f["v1"]), str(trial / "localeval-out" / "latest"),
                 "-o", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    md = (tmp_path / "d" / "diff.md").read_text()
    assert md.startswith("## Diff: v2 (new) vs v1 (base)") and "latest" not in md.split("\n")[0]
    assert "Diff: v2 (new) vs v1 (base)" in out
    assert "not evidence" in md  # the judged verdicts, from two unfit judges


def test_rank_says_unfit_beside_each_version(trial, tmp_path, capsys):
    f = _folders(trial)
    judge = ScriptedJudge({"pairwise_preference": {"reason": "r", "verdict": "A"}})
    register_judge_backend("rank-trial", lambda spec: spec == "scripted-rank-trial",
                           lambda spec, **kw: judge)
    try:
        code = main(["rank", str(f["v1"]), str(trial / "localeval-out" / "latest"),
                     "--data", str(trial / "v1.jsonl"), "--data", str(trial / "v2.jsonl"),
                     "--judge", "scripted-rank-trial", "--verdicts", "hard",
                     "--no-judge-check", "--no-cache", "--resamples", "200",
                     "-o", str(tmp_path / "r")])
    finally:
        unregister_judge_backend("rank-trial")
    out = capsys.readouterr().out
    assert code == 0, out
    for name in ("v1", "v2"):
        row = next(x for x in out.splitlines() if re.match(rf"\d+\s+{name}\s", x))
        assert row.endswith("(judge unfit)"), row
    doc = json.loads((tmp_path / "r" / "rank.json").read_text())
    assert doc["versions"] == ["v1", "v2"]


def test_the_ragas_drop_in_says_unfit_where_it_prints_numbers(trial):
    import pandas as pd

    from localeval import ragas
    from localeval.ragas.metrics import RougeScore, faithfulness

    rows = [json.loads(x) for x in (trial / "v2.jsonl").read_text().splitlines()]
    with pytest.warns(UserWarning, match="UNFIT"):
        result = ragas.evaluate(pd.DataFrame(rows), [faithfulness, RougeScore(), "hit_rate"],
                                llm=unfit_judge(), judge_check=1, cache=False,
                                show_progress=False)
    shown = repr(result)
    assert re.search(r"'faithfulness': [\d.]+ \(judge unfit\)", shown), shown
    assert re.search(r"'rougeL[^']*': [\d.]+[,}]", shown) and re.search(r"'hit_rate': [\d.]+}", shown)
    assert "judge check: UNFIT" in shown
    df = result.to_pandas()
    assert set(df["faithfulness_judge_check"]) == {"unfit"}
    assert "rougeL_judge_check" not in df and "hit_rate_judge_check" not in df
    assert "(judge unfit)" in repr(result.scores[0])
    assert isinstance(result["faithfulness"], float)  # the numbers stay numbers
