"""``localeval diff`` carries what makes a difference evidence or not: each side's judge check
beside every judged verdict (never beside a text or retrieval metric's), ``--fail-if-unfit-judge``,
the pairs left unscored on either side (counted, shown, and failing ``--fail-if-worse``
unless ``--allow-unscored`` allows them, with the run's rule), set-up notes only about
what the compared metrics use, and a diff.md that names samples and explains itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli.app import main
from localeval.errors import UsageError
from localeval.testing import assert_not_worse
from localeval.versions import diff_runs

UNFIT_LINE = ("judge check: UNFIT: this judge does not reliably tell good from bad on "
              "known-answer pairs (answer_correctness 1/4); its scores are not evidence")
CAVEAT = "this difference is not evidence"
SIG = {"judge": "judge-a.gguf", "judge_fingerprint": "aaaa", "prompts_hash": "p1",
       "embedder": "emb-a", "embedder_fingerprint": "e1", "verdicts": "hard", "seed": 0,
       "lang": "auto", "repeats": 1}


def _check(verdict: str, line: str | None = None) -> dict:
    return {"judge": "judge-a.gguf", "fingerprint": "aaaa", "verdict": verdict,
            "line": line or f"judge check: {verdict}", "metrics": {}}


def _run(d: Path, scores: list[dict], *, check: dict | None = None, sig: dict | None = None,
         errors: dict[int, dict] | None = None, old_spelling: bool = False,
         ids: list[str] | None = None) -> Path:
    """A run folder: one line per score dict, and a summary.json with the judge check."""
    d.mkdir(parents=True)
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i, sc in enumerate(scores):
            f.write(json.dumps({"id": ids[i] if ids else f"s{i}", "question": f"Question {i}?",
                                "scores": sc, "errors": (errors or {}).get(i, {}),
                                "details": {}}) + "\n")
    summary: dict = {"signature": sig or SIG}
    if check is not None:
        if old_spelling:  # how older runs wrote it: judge_health.self_test
            summary["judge_health"] = {"self_test": check, "warnings": []}
        else:
            summary["judge_check"] = check
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def _scores(n: int, shift: float = 0.0, metrics=("answer_correctness", "bleu")) -> list[dict]:
    return [{m: min(1.0, max(0.0, (i % 4) / 4 + shift)) for m in metrics} for i in range(n)]


def _outputs(out: Path, terminal: str) -> dict[str, str]:
    return {"terminal": terminal, "diff.md": (out / "diff.md").read_text(encoding="utf-8"),
            "diff.html": (out / "diff.html").read_text(encoding="utf-8")}


# -- 1. the judge's fitness travels -----------------------------------------------------------

@pytest.fixture()
def unfit_pair(tmp_path):
    base = _run(tmp_path / "a", _scores(40), check=_check("unfit", UNFIT_LINE))
    new = _run(tmp_path / "b", _scores(40, -0.2), check=_check("unfit", UNFIT_LINE),
               old_spelling=True)
    return base, new


def test_an_unfit_judge_is_said_beside_every_judged_verdict_only(unfit_pair, tmp_path, capsys):
    base, new = unfit_pair
    out = tmp_path / "o"
    assert main(["diff", str(base), str(new), "-o", str(out)]) == 0
    texts = _outputs(out, capsys.readouterr().out)
    said = "the judge failed its judge check on base (unfit) and new (unfit): " + CAVEAT
    for name, text in texts.items():
        assert said in text, name
    # in the sentences' lists, the caveat follows answer_correctness and never bleu
    for text in (texts["terminal"], texts["diff.md"]):
        flat = " ".join(text.replace("- ⚠", "⚠").split())  # lines wrapped, list marks
        ac, bl = flat.index("new is worse on answer_corr"), flat.index("new is worse on bleu")
        assert ac < bl and said in flat[ac:bl] and said not in flat[bl:flat.index("·" if
                                                                   "·" in flat else "###")]
    md = texts["diff.md"]
    assert "| answer_correctness |" in md and "worse ⚠ not evidence |" in md
    assert next(ln for ln in md.splitlines() if ln.startswith("| bleu |")).endswith("| worse |")
    js = json.loads((out / "diff.json").read_text())
    by = {m["metric"]: m for m in js["metrics"]}
    assert by["answer_correctness"]["uses_judge"] and said == by["answer_correctness"][
        "judge_caveat"] == by["answer_correctness"]["estimates"][0]["judge_caveat"]
    assert not by["bleu"]["uses_judge"] and by["bleu"]["judge_caveat"] is None
    assert by["bleu"]["estimates"][0]["judge_caveat"] is None
    assert js["judge_fitness"]["base"]["judge_check"] == "unfit"
    assert js["judge_fitness"]["new"]["line"] == UNFIT_LINE  # the older spelling is read
    assert 'id="judge-fitness"' in texts["diff.html"]


def test_text_metrics_alone_get_no_judge_caveat(unfit_pair, tmp_path, capsys):
    base, new = unfit_pair
    out = tmp_path / "o"
    assert main(["diff", str(base), str(new), "-o", str(out), "-m", "bleu",
                 "--fail-if-unfit-judge"]) == 0  # no judged metric compared: no judge to doubt
    texts = _outputs(out, capsys.readouterr().out)
    for name, text in texts.items():
        assert CAVEAT not in text and "judge check" not in text, name
    assert 'id="judge-fitness"' not in texts["diff.html"]


def test_fail_if_unfit_judge(unfit_pair, tmp_path, capsys):
    base, new = unfit_pair
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "o"),
                 "--fail-if-unfit-judge"]) == 1
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("localeval: gate failed:")]
    assert len(lines) == 1 and "base: judge check: UNFIT" in lines[0]
    assert "new: judge check: UNFIT" in lines[0] and "answer_correctness" in lines[0]
    with pytest.raises(AssertionError, match="judge check: UNFIT"):
        assert_not_worse(base, new, {}, fail_if_unfit_judge=True)
    assert_not_worse(base, new, {})  # not asked: no judge gate


def test_fail_if_unfit_judge_passes_only_fit_judges(tmp_path, capsys):
    fit = _check("fit", "judge check: fit (answer_correctness 4/4 known-answer pairs ordered "
                        "right)")
    a = _run(tmp_path / "a", _scores(12), check=fit)
    b = _run(tmp_path / "b", _scores(12), check=fit)
    c = _run(tmp_path / "c", _scores(12), check=_check("doubtful"))
    d = _run(tmp_path / "d", _scores(12))  # no judge check recorded
    e = _run(tmp_path / "e", _scores(12), check=_check("error"))
    gate = ["--fail-if-unfit-judge", "-m", "answer_correctness"]
    assert main(["diff", str(a), str(b), "-o", str(tmp_path / "o1"), *gate]) == 0
    assert main(["diff", str(a), str(c), "-o", str(tmp_path / "o2"), *gate]) == 1
    err = capsys.readouterr().err
    assert "new: judge check: doubtful" in err and "base:" not in err.split("gate failed:")[1]
    assert main(["diff", str(d), str(a), "-o", str(tmp_path / "o3"), *gate]) == 1
    assert "base records no judge check" in capsys.readouterr().err
    assert main(["diff", str(a), str(e), "-o", str(tmp_path / "o4"), *gate]) == 1
    capsys.readouterr()
    # a doubtful judge carries the caveat too; a judge check that could not run says so
    assert "the judge failed its judge check on new (doubtful)" in diff_runs(a, c).metrics[
        0].judge_caveat
    assert "the judge check could not run on new" in diff_runs(a, e).metrics[0].judge_caveat
    assert diff_runs(a, b).metrics[0].judge_caveat == ""


# -- 2. pairs unscored on either side ---------------------------------------------------------

@pytest.fixture()
def hallucinated(tmp_path):
    """12 pairs; new left 5 unscored (the hallucinated answers), the 7 others unchanged."""
    base = _run(tmp_path / "a", _scores(12, metrics=("faithfulness",)), check=_check("fit"))
    rows = _scores(12, metrics=("faithfulness",))
    bad = (1, 3, 5, 7, 9)
    for i in bad:
        rows[i]["faithfulness"] = None
    new = _run(tmp_path / "b", rows, check=_check("fit"),
               errors={i: {"faithfulness": "reply did not parse"} for i in bad})
    return base, new


def _gate(base, new, out, *extra):
    return main(["diff", str(base), str(new), "-o", str(out), "-m", "faithfulness",
                 "--fail-if-worse", "faithfulness=0.02", *extra])


def test_unscored_pairs_fail_the_gate(hallucinated, tmp_path, capsys):
    base, new = hallucinated
    assert _gate(base, new, tmp_path / "o") == 1
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("localeval: gate failed:")]
    assert lines == ["localeval: gate failed: faithfulness: not shown worse beyond the margin "
                     "0.02 on the 7 pairs scored in both, but 5 of 12 paired samples unscored "
                     "in base or new (new: reply did not parse: 5); allowed: 0"]
    with pytest.raises(AssertionError, match="5 of 12 paired samples unscored"):
        assert_not_worse(base, new, {"faithfulness": 0.02})


@pytest.mark.parametrize("allow,code", [
    ("5", 0), ("4", 1), ("50%", 0), ("40%", 1), ("0.5", 0), ("all", 0), ("faithfulness=5", 0),
    ("faithfulness=4", 1),
])
def test_allow_unscored_follows_the_run_rule(hallucinated, tmp_path, capsys, allow, code):
    base, new = hallucinated
    assert _gate(base, new, tmp_path / "o", "--allow-unscored", allow) == code
    err = capsys.readouterr().err
    assert ("allowed: " in err) == (code == 1)


def test_allow_unscored_in_python_and_bad_values(hallucinated, tmp_path, capsys):
    base, new = hallucinated
    assert_not_worse(base, new, {"faithfulness": 0.02}, allow_unscored=5)
    assert_not_worse(base, new, {"faithfulness": 0.02}, allow_unscored={"faithfulness": "50%"})
    assert_not_worse(base, new, {"faithfulness": 0.02}, allow_unscored=True)
    with pytest.raises(AssertionError, match="allowed: 4"):
        assert_not_worse(base, new, {"faithfulness": 0.02}, allow_unscored=4)
    with pytest.raises(UsageError, match="allow_unscored"):
        assert_not_worse(base, new, {"faithfulness": 0.02}, allow_unscored="lots")
    assert _gate(base, new, tmp_path / "o", "--allow-unscored", "lots") == 2
    assert _gate(base, new, tmp_path / "o", "--allow-unscored", "rougeL=2") == 2
    assert "--allow-unscored names 'rougeL'" in capsys.readouterr().err


def test_unscored_pairs_are_shown_everywhere(hallucinated, tmp_path, capsys):
    base, new = hallucinated
    out = tmp_path / "o"
    assert main(["diff", str(base), str(new), "-o", str(out)]) == 0  # no gate: shown only
    texts = _outputs(out, capsys.readouterr().out)
    said = "5 of 12 paired samples unscored in base or new (new: reply did not parse: 5)"
    for name, text in texts.items():
        assert said in text, name
        assert "5 of 12" in text, name  # the table's unscored column
    assert "Unscored in base or new: 5 of 12 pairs" in texts["diff.html"]
    assert "`s1` (new: reply did not parse)" in texts["diff.md"]
    js = json.loads((out / "diff.json").read_text())["metrics"][0]
    assert js["unscored"]["pairs"] == 5 and js["unscored"]["of"] == 12
    assert js["counts"]["unscored"] == 5 and js["unscored"]["reasons"] == {
        "new: reply did not parse: 5"[:-3]: 5}


def test_too_few_scored_pairs_still_say_so(tmp_path, capsys):
    base = _run(tmp_path / "a", _scores(12, metrics=("faithfulness",)))
    rows = _scores(12, metrics=("faithfulness",))
    for i in range(7):
        rows[i]["faithfulness"] = None
    new = _run(tmp_path / "b", rows)
    # five pairs scored in both: the one-sided gate tests them (it no longer fails for want
    # of a 95% interval) and its line still names the pairs left unscored
    assert _gate(base, new, tmp_path / "o", "--allow-unscored", "all") == 0
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if "gate passed" in ln)
    assert "faithfulness: not shown worse beyond the margin 0.02" in line
    assert "7 of 12 paired samples unscored" in line


# -- 3. set-up notes only about what the metrics use ------------------------------------------

def test_text_metrics_ignore_judge_prompt_and_embedder(tmp_path, capsys):
    other = {**SIG, "judge": "judge-b.gguf", "judge_fingerprint": "bbbb", "prompts_hash": "p2",
             "embedder": "emb-b", "verdicts": "soft"}
    base = _run(tmp_path / "a", _scores(12, metrics=("bleu", "rougeL")))
    new = _run(tmp_path / "b", _scores(12, metrics=("bleu", "rougeL")), sig=other)
    out = tmp_path / "o"
    assert main(["diff", str(base), str(new), "-o", str(out)]) == 0
    texts = _outputs(out, capsys.readouterr().out)
    for name, text in texts.items():
        assert "differs" not in text and "prompts differ" not in text, name
        assert "no compared metric uses a judge or an embedder" in text, name
    assert "Not the same scoring set-up" not in texts["diff.html"]
    d = diff_runs(base, new)
    assert d.same_setup and not d.signature_notes


def test_judged_and_embedding_metrics_keep_their_notes_in_good_grammar(tmp_path):
    # another embedder has another fingerprint (runs' models are compared by fingerprint)
    other = {**SIG, "prompts_hash": "p2", "embedder": "emb-b", "embedder_fingerprint": "e2"}
    judged = ("faithfulness",)
    d = diff_runs(_run(tmp_path / "a", _scores(12, metrics=judged)),
                  _run(tmp_path / "b", _scores(12, metrics=judged), sig=other))
    assert any(n.startswith("the prompts differ: base p1, new p2") for n in d.signature_notes)
    assert not any("embedder" in n for n in d.signature_notes)
    embedded = ("answer_similarity",)
    d = diff_runs(_run(tmp_path / "c", _scores(12, metrics=embedded)),
                  _run(tmp_path / "d", _scores(12, metrics=embedded), sig=other))
    assert d.signature_notes[0].startswith("the embedder differs: base emb-a@e1")
    assert not any("prompts" in n for n in d.signature_notes)
    assert "the embedder's" in d.signature_notes[-1]


# -- 4. diff.md names samples and explains its notation ---------------------------------------

def test_diff_md_names_samples_by_id_and_explains_itself(tmp_path):
    base = _run(tmp_path / "a", _scores(12, metrics=("bleu",)), ids=[f"b{i}" for i in range(12)])
    rows = _scores(12, metrics=("bleu",))
    rows[2]["bleu"] = 0.0  # was 0.5: worse, and newly failing at 0.5
    new = _run(tmp_path / "b", rows, ids=[f"n{i}" for i in range(12)])  # paired by question
    out = tmp_path / "o"
    assert main(["diff", str(base), str(new), "-o", str(out)]) == 0
    md = (out / "diff.md").read_text(encoding="utf-8")
    assert "- `b2 / n2`: 0.500 → 0.000 (-0.500)" in md
    assert "newly failing at 0.5 (1): `n2`" in md
    assert "How to read this" in md and "[low, high]" in md and "→" in md
    html = (out / "diff.html").read_text(encoding="utf-8")
    assert "b2 / n2" in html
