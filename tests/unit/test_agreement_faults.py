"""Hostile inputs to ``localeval compare`` and ``localeval validate``, and what they print.

Each fault must end with one message naming the file, row and column (exit 2), or,
where the command goes ahead, with nothing silently merged, dropped or paired by
guess. The second half checks what the two commands say: ``--pair`` adds to the
default metrics, ragas's metric names are localeval's, every written file is
printed, and ``validate`` leads with a sentence a non-statistician can read.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from pathlib import Path

import pytest

from localeval.resultsets import canonical_metric_name
from localeval.cli.app import main


def _csv(path: Path, rows: list[dict]) -> Path:
    cols = list(dict.fromkeys(c for r in rows for c in r))
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        w.writerows(rows)
    return path


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def _one_error(capsys, code: int, rc: int, *says: str) -> str:
    """Exit code ``code``, one ``localeval: error:`` line saying each of ``says``."""
    err = capsys.readouterr().err
    assert rc == code, err
    lines = [ln for ln in err.splitlines() if ln.startswith("localeval: error:")]
    assert len(lines) == 1, err
    for s in says:
        assert s in lines[0], (s, lines[0])
    return lines[0]


SCORES = [0.1, 0.9, 0.4, 0.8, 0.3, 0.7, 0.2, 0.6, 0.5, 1.0]


# -- non-ASCII metric names --------------------------------------------------------------
def test_non_ascii_metric_names_are_kept_and_get_their_own_scatter_file(tmp_path, capsys):
    rows = [{"id": f"q{i}", "user_input": f"question {i}?", "丁寧さ": v, "正確さ": 1 - v}
            for i, v in enumerate(SCORES)]
    a = _csv(tmp_path / "a.csv", rows)
    b = _csv(tmp_path / "b.csv", [dict(r, **{"丁寧さ": 1 - r["丁寧さ"]}) for r in rows])
    rc = main(["compare", str(a), str(b), "-o", str(tmp_path / "cmp"), "--json", "--n-boot",
               "0"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["metrics"]) == {"丁寧さ", "正確さ"}
    assert out["metrics"]["丁寧さ"]["mean_a"] != out["metrics"]["正確さ"]["mean_a"]
    svgs = sorted(p.name for p in (tmp_path / "cmp" / "scatter").iterdir())
    assert len(svgs) == 2 and ".svg" not in svgs, svgs
    assert all(re.fullmatch(r"[0-9A-Za-z@._-]+\.svg", s) for s in svgs), svgs


def test_canonical_name_keeps_letters_of_any_script():
    assert canonical_metric_name("丁寧さ") == "丁寧さ"
    assert canonical_metric_name("Höflichkeit Score") == "höflichkeit_score"


def test_deepeval_names_that_map_to_one_metric_are_refused(tmp_path, capsys):
    case = {"name": "c1", "input": "q?", "metrics_data": [
        {"name": "Faithfulness", "score": 0.5}, {"name": "faithfulness", "score": 0.9}]}
    p = tmp_path / "d.json"
    p.write_text(json.dumps({"test_results": [case]}))
    rc = main(["compare", str(p), str(p)])
    _one_error(capsys, 2, rc, str(p), "faithfulness")


# -- pairing by id -------------------------------------------------------------------------
def test_ids_differing_by_normalisation_or_trailing_space_pair(tmp_path, capsys):
    ids = [f"café-{i}" for i in range(10)]
    a = _csv(tmp_path / "a.csv", [{"id": unicodedata.normalize("NFC", s), "faithfulness": v}
                                  for s, v in zip(ids, SCORES)])
    b = _csv(tmp_path / "b.csv", [{"id": unicodedata.normalize("NFD", s) + (" " * (i % 2)),
                                   "faithfulness": v} for i, (s, v) in enumerate(zip(ids, SCORES))])
    assert main(["compare", str(a), str(b), "--json", "--n-boot", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["faithfulness"]["n"] == 10
    assert out["alignment"]["only_a"] == 0 and out["alignment"]["only_b"] == 0


def test_ids_that_collide_once_normalised_are_refused(tmp_path, capsys):
    a = _csv(tmp_path / "a.csv", [{"id": "x", "faithfulness": 0.1},
                                  {"id": "x ", "faithfulness": 0.2}])
    rc = main(["compare", str(a), str(a)])
    _one_error(capsys, 2, rc, str(a), "'x'")


def test_align_id_with_a_side_without_ids_is_an_error(tmp_path, capsys):
    a = _csv(tmp_path / "a.csv", [{"id": f"q{i}", "user_input": f"q {i}?", "faithfulness": v}
                                  for i, v in enumerate(SCORES)])
    b = _csv(tmp_path / "b.csv", [{"user_input": f"q {i}?", "faithfulness": v}
                                  for i, v in enumerate(SCORES)])
    rc = main(["compare", str(a), str(b), "--align", "id"])
    _one_error(capsys, 2, rc, str(b), "no id")


def test_samples_sharing_their_content_key_are_not_paired_by_row_order(tmp_path, capsys):
    rows = [{"user_input": q, "faithfulness": v}
            for q, v in zip(["same?", "same?", "other?"], [0.1, 0.9, 0.5])]
    a = _csv(tmp_path / "a.csv", rows)
    b = _csv(tmp_path / "b.csv", rows[::-1])
    rc = main(["compare", str(a), str(b)])
    _one_error(capsys, 2, rc, "row 1", "row 2", "same?", "--align position")
    assert main(["compare", str(a), str(b), "--align", "position", "--n-boot", "0"]) == 0


# -- scores that are not scores --------------------------------------------------------------
@pytest.mark.parametrize("metric,bad", [("faithfulness", "inf"), ("faithfulness", "-inf"),
                                        ("faithfulness", "1e308"), ("faithfulness", "1.5"),
                                        ("polite", "1e308"), ("polite", "-Infinity")])
def test_compare_refuses_non_finite_and_out_of_range_scores(metric, bad, tmp_path, capsys):
    rows = [{"id": f"q{i}", metric: v} for i, v in enumerate(SCORES)]
    rows[3][metric] = bad
    a = _csv(tmp_path / "a.csv", rows)
    rc = main(["compare", str(a), str(a)])
    _one_error(capsys, 2, rc, str(a), "row 4", f"column '{metric}'")


def test_localeval_results_with_infinity_are_refused(tmp_path, capsys):
    p = tmp_path / "run" / "results.jsonl"
    p.parent.mkdir()
    p.write_text('{"id": "a", "scores": {"faithfulness": 0.5}}\n'
                 '{"id": "b", "scores": {"faithfulness": Infinity}}\n')
    rc = main(["compare", str(p), str(p)])
    _one_error(capsys, 2, rc, str(p), "line 2", "scores.faithfulness")


def test_validate_refuses_infinite_scores_and_human_scores(tmp_path, capsys):
    res = _csv(tmp_path / "r.csv", [{"id": f"q{i}", "faithfulness": v}
                                    for i, v in enumerate(SCORES)])
    lab = _csv(tmp_path / "l.csv", [{"id": f"q{i}", "human_faithfulness": v}
                                    for i, v in enumerate(SCORES)])
    bad_res = _csv(tmp_path / "rb.csv", [{"id": "q0", "faithfulness": "inf"}])
    rc = main(["validate", str(bad_res), str(lab)])
    _one_error(capsys, 2, rc, str(bad_res), "row 1", "column 'faithfulness'")
    bad_lab = _csv(tmp_path / "lb.csv", [{"id": "q0", "human_faithfulness": "0.5"},
                                         {"id": "q1", "human_faithfulness": "inf"}])
    rc = main(["validate", str(res), str(bad_lab)])
    _one_error(capsys, 2, rc, str(bad_lab), "row 2", "column 'human_faithfulness'")
    huge = _csv(tmp_path / "lh.csv", [{"id": "q0", "human_faithfulness": "-1e308"}])
    rc = main(["validate", str(res), str(huge)])
    _one_error(capsys, 2, rc, str(huge), "row 1", "column 'human_faithfulness'")


# -- labels files that are not labels ----------------------------------------------------------
def test_header_only_labels_file(tmp_path, capsys):
    res = _csv(tmp_path / "r.csv", [{"id": "q0", "faithfulness": 0.5}])
    lab = tmp_path / "l.csv"
    lab.write_text("id,label\n")
    rc = main(["validate", str(res), str(lab)])
    _one_error(capsys, 2, rc, f"labels file {lab} has no rows")


def test_folder_as_labels_file(tmp_path, capsys):
    res = _csv(tmp_path / "r.csv", [{"id": "q0", "faithfulness": 0.5}])
    (tmp_path / "labels").mkdir()
    rc = main(["validate", str(res), str(tmp_path / "labels")])
    _one_error(capsys, 2, rc, f"{tmp_path / 'labels'} is a folder, not a labels file")


def test_every_label_cell_empty(tmp_path, capsys):
    res = _csv(tmp_path / "r.csv", [{"id": f"q{i}", "faithfulness": 0.5} for i in range(3)])
    lab = _csv(tmp_path / "l.csv", [{"id": f"q{i}", "label": ""} for i in range(3)])
    rc = main(["validate", str(res), str(lab)])
    _one_error(capsys, 2, rc, str(lab), "column 'label'", "empty")


# -- what compare says and writes ----------------------------------------------------------------
def _two_sets(tmp_path: Path) -> tuple[Path, Path]:
    a = _csv(tmp_path / "a.csv", [{"id": f"q{i}", "faithfulness": v, "ctx_rel": 1 - v}
                                  for i, v in enumerate(SCORES)])
    b = _csv(tmp_path / "b.csv", [{"id": f"q{i}", "faithfulness": v, "context_relevance": v}
                                  for i, v in enumerate(SCORES)])
    return a, b


def test_pair_adds_to_the_default_metrics(tmp_path, capsys):
    a, b = _two_sets(tmp_path)
    assert main(["compare", str(a), str(b), "--pair", "ctx_rel", "nv_context_relevance",
                 "--json", "--n-boot", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["metrics"]) == {"faithfulness", "ctx_rel ~ nv_context_relevance"}
    assert out["metrics_only_in_a"] == [] and out["metrics_only_in_b"] == []


@pytest.mark.parametrize("ragas,ours", [
    ("rouge_score", "rougeL"), ("bleu_score", "bleu"), ("semantic_similarity", "answer_similarity"),
    ("llm_context_precision_with_reference", "context_precision"),
    ("non_llm_context_precision_with_reference", "non_llm_context_precision_with_reference"),
    ("llm_context_precision_without_reference", "context_utilization"),
    ("non_llm_context_recall", "non_llm_context_recall"),
    ("answer_accuracy", "nv_answer_accuracy"),
    ("nv_accuracy", "nv_answer_accuracy"), ("response_groundedness", "nv_response_groundedness"),
    ("factual_correctness(mode=f1)", "factual_correctness"),
    ("factual_correctness(mode=precision)", "factual_correctness:mode=precision"),
    ("noise_sensitivity(mode=irrelevant)", "noise_sensitivity:mode=irrelevant"),
    ("noise_sensitivity(mode=relevant)", "noise_sensitivity"),
    ("string_present", "string_presence"), ("exact_match", "exact_match"),
    ("non_llm_string_similarity", "non_llm_string_similarity"),
])
def test_ragas_metric_names_map_to_localeval(ragas, ours):
    assert canonical_metric_name(ragas) == ours


def test_name_a_and_name_b_label_the_sides(tmp_path, capsys):
    a, b = _two_sets(tmp_path)
    assert main(["compare", str(a), str(b), "--name-a", "gpt-4o", "--name-b", "qwen-7b",
                 "--n-boot", "0"]) == 0
    out = capsys.readouterr().out
    assert "gpt-4o (A) vs qwen-7b (B)" in out


def test_compare_prints_every_file_it_wrote(tmp_path, capsys):
    a, b = _two_sets(tmp_path)
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "-o", str(out), "--n-boot", "0"]) == 0
    err = capsys.readouterr().err
    written = sorted(p for p in out.rglob("*") if p.is_file())
    assert len(written) == 4  # json, md, html and one scatter (faithfulness only)
    for p in written:
        assert f"wrote {p}" in err, (p, err)


def test_compare_warns_about_samples_left_out(tmp_path, capsys):
    a = _csv(tmp_path / "a.csv", [{"id": f"q{i}", "faithfulness": v}
                                  for i, v in enumerate(SCORES)])
    b = _csv(tmp_path / "b.csv", [{"id": f"q{i + 3}", "faithfulness": v}
                                  for i, v in enumerate(SCORES)])
    assert main(["compare", str(a), str(b), "--n-boot", "0"]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "3 samples of" in err and "'q0'" in err


# -- what validate says ----------------------------------------------------------------------------
def _validation_case(tmp_path: Path) -> tuple[Path, Path]:
    """Six labelled and scored samples: the judge passes all three that people failed."""
    scores = [1.0, 1.0, 0.9, 0.9, 0.8, 0.7, None, None]
    labels = ["positive"] * 3 + ["negative"] * 3 + ["positive", "negative"]
    res = _csv(tmp_path / "r.csv", [{"id": f"s{i}", "faithfulness": "" if v is None else v}
                                    for i, v in enumerate(scores)])
    lab = _csv(tmp_path / "l.csv", [{"id": f"s{i}", "label": x} for i, x in enumerate(labels)])
    return res, lab


def test_validate_leads_with_a_sentence_naming_the_counts(tmp_path, capsys):
    res, lab = _validation_case(tmp_path)
    assert main(["validate", str(res), str(lab), "-o", str(tmp_path / "v"), "--n-boot",
                 "0"]) == 0
    cap = capsys.readouterr()
    first = cap.out.strip().splitlines()[0]
    assert first == ("faithfulness: the judge agrees with your labels on 3 of 6 samples "
                     "(50%); it passed 3 that people failed and failed none that people "
                     "passed; 2 samples unscored."), first
    for page in (cap.out, (tmp_path / "v" / "validation.md").read_text(),
                 (tmp_path / "v" / "validation.html").read_text()):
        assert "agrees with your labels on 3 of 6 samples" in page
        assert "B − A" not in page and "(A)" not in page
        assert "judge pass" in page and "labels positive" in page  # the confusion matrix
    for name in ("validation.json", "validation.md", "validation.html"):
        assert f"wrote {tmp_path / 'v' / name}" in cap.err


def test_validate_human_scores_speak_of_judge_and_labels(tmp_path, capsys):
    vals = [0.1, 0.9, 0.4, 0.8, 0.3, 0.7]
    res = _csv(tmp_path / "r.csv", [{"id": f"s{i}", "faithfulness": v}
                                    for i, v in enumerate(vals)])
    lab = _csv(tmp_path / "l.csv", [{"id": f"s{i}", "human_faithfulness": 1.0 if v > 0.5 else 0}
                                    for i, v in enumerate([0.1, 0.9, 0.4, 0.2, 0.3, 0.7])])
    assert main(["validate", str(res), str(lab), "--n-boot", "0", "-o", str(tmp_path / "v")]) == 0
    out = capsys.readouterr().out + (tmp_path / "v" / "validation.md").read_text()
    assert out.splitlines()[0] == (
        "faithfulness: the judge agrees with your labels on 5 of 6 samples (83%); it passed "
        "1 that people failed and failed none that people passed; no sample unscored.")
    assert "B − A" not in out and "bias (judge − labels)" in out and "mean labels" in out
