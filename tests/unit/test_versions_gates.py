"""``localeval diff``'s options and files under hostile input: gates that could never fail
are refused, METRIC=VALUE is read one way everywhere (metric keys with parameters
included), a metric named twice counts once, the run's recorded direction wins,
control characters stay inert, the page stays bounded, and every file is written
atomically with one message naming it when it cannot be."""

from __future__ import annotations

import builtins
import errno
import io
import json
from pathlib import Path

import pytest

from localeval.cli.app import main
from localeval.errors import UsageError
from localeval.metrics import ValueRule, parse_metric_value, split_metric_list, split_metric_value
from localeval.report import parse_gates
from localeval.testing import assert_not_worse
from localeval.versions import diff_runs, parse_worse_gates

AC = "answer_correctness:weights=0.5,0.5"
RT = "rougeL:threshold=0.5"
ACT = "answer_correctness:weights=0.25,0.75;threshold=0.8"


def _run(d: Path, n: int = 12, shift: float = 0.0, metrics=("faithfulness",), ids=None,
         summary: dict | None = None) -> Path:
    d.mkdir(parents=True)
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            sid = ids[i] if ids else f"s{i}"
            f.write(json.dumps({"id": sid, "question": f"Question {i}?", "errors": {},
                                "details": {},
                                "scores": {m: min(1.0, max(0.0, (i % 4) / 4 + shift))
                                           for m in metrics}}) + "\n")
    if summary is not None:
        (d / "summary.json").write_text(json.dumps(summary))
    return d


@pytest.fixture()
def pair(tmp_path):
    return _run(tmp_path / "a"), _run(tmp_path / "b", shift=-0.1)


# -- gates that could never fail ------------------------------------------------------------

@pytest.mark.parametrize("margin", ["inf", "1e400", "nan", "-inf", "Infinity"])
def test_a_margin_that_could_never_fail_is_refused(pair, tmp_path, margin, capsys):
    base, new = pair
    code = main(["diff", str(base), str(new), "-o", str(tmp_path / "o"),
                 "--fail-if-worse", f"faithfulness={margin}"])
    err = capsys.readouterr().err
    assert code == 2 and f"bad --fail-if-worse 'faithfulness={margin}'" in err
    assert not (tmp_path / "o").exists()  # refused before any work


@pytest.mark.parametrize("margin", [float("inf"), float("nan"), 1e400, -0.1, "0.02", None, True])
def test_assert_not_worse_refuses_bad_margins_plainly(pair, margin):
    base, new = pair
    with pytest.raises(UsageError, match=r"bad assert_not_worse .faithfulness="):
        assert_not_worse(base, new, {"faithfulness": margin})


def test_assert_not_worse_names_a_text_margin(pair):
    base, new = pair
    with pytest.raises(UsageError, match="the margin is the text '0.02', not a number"):
        assert_not_worse(base, new, {"faithfulness": "0.02"})


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "-inf"])
def test_threshold_must_be_finite(pair, tmp_path, value, capsys):
    base, new = pair
    for spec in (value, f"faithfulness={value}"):
        assert main(["diff", str(base), str(new), "-o", str(tmp_path / "o"),
                     f"--threshold={spec}"]) == 2
        assert f"bad --threshold {spec!r}" in capsys.readouterr().err


def test_a_metric_named_twice_counts_once_in_holm(tmp_path, capsys):
    base = _run(tmp_path / "a", 40, metrics=("rougeL", "bleu"))
    new = _run(tmp_path / "b", 40, -0.1, metrics=("rougeL", "bleu"))
    d = diff_runs(base, new, metrics=["rougeL", "rougeL"])
    assert [m.metric for m in d.metrics] == ["rougeL"] and d.tested == 1
    assert d.metrics[0].judge.p_holm == d.metrics[0].judge.p
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "o"), "--json",
                 "-m", "bleu,rougeL,bleu"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert [m["metric"] for m in js["metrics"]] == ["bleu", "rougeL"]
    assert js["multiple_comparisons"]["metrics_tested"] == 2


# -- METRIC=VALUE, one parser -----------------------------------------------------------------

@pytest.mark.parametrize("piece,expected", [
    ("faithfulness=0.02", ("faithfulness", "0.02")),
    ("ndcg@10=0.3", ("ndcg@10", "0.3")),
    (f"{RT}=0.02", (RT, "0.02")),
    (RT, (RT, None)),
    (f"{AC}=0.1", (AC, "0.1")),
    (AC, (AC, None)),
    (f"{ACT}=0", (ACT, "0")),
    (ACT, (ACT, None)),
    ("faithfulness", ("faithfulness", None)),
])
def test_split_at_the_last_equals_unless_it_belongs_to_the_key(piece, expected):
    assert split_metric_value(piece) == expected


@pytest.mark.parametrize("text,expected", [
    (f"{AC}=0.02,bleu=0.01", [f"{AC}=0.02", "bleu=0.01"]),
    (f"{RT},faithfulness=0.1", [RT, "faithfulness=0.1"]),
    (f"{ACT}=0.05,all=0.2", [f"{ACT}=0.05", "all=0.2"]),
    ("faithfulness,rougeL=0.1", ["faithfulness", "rougeL=0.1"]),
])
def test_comma_lists_keep_a_key_s_parameters_together(text, expected):
    assert split_metric_list(text, ("all",)) == expected


def test_fail_if_worse_names_metrics_with_parameters(tmp_path, capsys):
    ms = (AC, RT, ACT, "ndcg@10")
    base = _run(tmp_path / "a", metrics=ms)
    new = _run(tmp_path / "b", shift=-0.25, metrics=ms)
    assert parse_worse_gates([f"{AC}=0.02,{RT}", f"{ACT}=0.5", "ndcg@10"]) == {
        AC: 0.02, RT: 0.0, ACT: 0.5, "ndcg@10": 0.0}
    code = main(["diff", str(base), str(new), "-o", str(tmp_path / "o"),
                 "--fail-if-worse", f"{AC}=0.02,{RT}", "--fail-if-worse", f"{ACT}=0.5",
                 "--threshold", f"{RT}=0.7", "--threshold", "0.6", "-m", ",".join(ms)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"gate failed: {AC}: new is worse by" in err and f"gate failed: {RT}:" in err
    assert f"gate failed: {ACT}" not in err  # inside its margin of 0.5
    js = json.loads((tmp_path / "o" / "diff.json").read_text())
    assert {m["metric"]: m["threshold"] for m in js["metrics"]}[RT] == 0.7
    assert {m["metric"]: m["threshold"] for m in js["metrics"]}[AC] == 0.6


@pytest.mark.parametrize("option", ["--fail-under", "--fail-under-each", "--threshold",
                                    "--fail-if-worse"])
@pytest.mark.parametrize("raw", ["nan", "inf", "1e400", "x"])
def test_one_rule_for_every_option(option, raw):
    rule = ValueRule(option)
    with pytest.raises(UsageError, match=f"bad {option} 'faithfulness={raw}'"):
        parse_metric_value(f"faithfulness={raw}", rule)


def test_fail_under_keeps_a_key_s_parameters():
    assert parse_gates([f"{RT}=0.3", f"{AC}=0.6"]) == {RT: 0.3, AC: 0.6}
    with pytest.raises(UsageError, match=f"bad --fail-under '{RT}': no value after the metric"):
        parse_gates([RT])  # not rougeL:threshold with a value of 0.5


# -- which way is better: what the run recorded ----------------------------------------------

def test_the_run_s_recorded_direction_wins_over_the_registry(tmp_path):
    rec = {"metrics": {"custom": {"mean": 0.4, "lower_is_better": True},
                       "noise_sensitivity": {"mean": 0.4}}}
    base = _run(tmp_path / "a", 30, metrics=("custom", "noise_sensitivity"), summary=rec)
    new = _run(tmp_path / "b", 30, 0.25, metrics=("custom", "noise_sensitivity"), summary=rec)
    d = diff_runs(base, new)
    by = {m.metric: m for m in d.metrics}
    assert by["custom"].lower_is_better is True  # unknown to the registry
    assert by["noise_sensitivity"].lower_is_better is False  # as the run recorded it
    assert by["custom"].verdict() == "worse"
    plain = diff_runs(_run(tmp_path / "c", 30, metrics=("noise_sensitivity",)),
                      _run(tmp_path / "d", 30, 0.25, metrics=("noise_sensitivity",)))
    assert plain.metrics[0].lower_is_better is True  # no summary: the registry


def test_opposite_recorded_directions_are_noted(tmp_path):
    base = _run(tmp_path / "a", 20, metrics=("custom",),
                summary={"metrics": {"custom": {"lower_is_better": True}}})
    new = _run(tmp_path / "b", 20, metrics=("custom",), summary={"metrics": {"custom": {}}})
    d = diff_runs(base, new)
    assert d.metrics[0].lower_is_better is False
    assert "recorded opposite directions" in d.direction_notes[0]


# -- hostile text -----------------------------------------------------------------------------

def test_control_characters_in_ids_are_shown_not_obeyed(tmp_path, capsys):
    ids = [f"s{i}" for i in range(30)]
    ids[3], ids[5] = "\x1b[2J\x1b[31mevil", "bell\x07\u202etxt"
    base = _run(tmp_path / "a", 30, ids=ids)
    new = _run(tmp_path / "b", 30, -0.25, ids=ids[:25] + [f"\x1b]0;t{i}\x07" for i in range(5)])
    assert main(["diff", str(base), str(new), "-o", str(tmp_path / "o")]) == 0
    cap = capsys.readouterr()
    for text in (cap.out, cap.err, (tmp_path / "o" / "diff.md").read_text()):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "only in new (5): \\x1b]0;t0\\x07" in cap.out
    md = (tmp_path / "o" / "diff.md").read_text()
    assert "x1b" in md and "31mevil" in md  # shown, escaped for Markdown too


# -- a bounded page ---------------------------------------------------------------------------

def test_a_large_diff_page_is_capped_and_says_so(tmp_path):
    n = 4000
    base = _run(tmp_path / "a", n)
    new = _run(tmp_path / "b", n, -0.3, ids=[f"s{i}" for i in range(n - 300)]
               + [f"x{i}" for i in range(300)])
    out = tmp_path / "o"
    assert main(["diff", str(base), str(new), "-o", str(out), "--threshold", "0.5"]) == 0
    page = (out / "diff.html").read_text()
    assert page.count("<circle") <= 500
    assert "500 of 3700 samples plotted" in page and 'id="capped"' in page
    assert "and 100 more (all in diff.json)" in page  # 300 only in base, 200 named
    assert len(page) < 600_000
    js = json.loads((out / "diff.json").read_text())
    assert len(js["metrics"][0]["samples"]) == 3700 and len(js["pairing"]["only_base"]) == 300


# -- every file written atomically ------------------------------------------------------------

def test_an_output_path_under_a_file_is_one_message(pair, tmp_path, capsys):
    base, new = pair
    (tmp_path / "afile").write_text("x")
    for out in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        assert main(["diff", str(base), str(new), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / 'afile'} is a file" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "afile", "b"]


def test_a_full_disk_is_exit_2_naming_the_file_with_no_tmp_left(pair, tmp_path, monkeypatch,
                                                                 capsys):
    base, new = pair
    out = tmp_path / "o"
    real_open = builtins.open

    class Full(io.StringIO):
        def write(self, s: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    def full_open(file, mode="r", *a, **kw):
        if "w" in mode and str(file).startswith(str(out)) and str(file).endswith(".md.tmp"):
            real_open(file, mode, *a, **kw).close()  # the file exists, nothing fits in it
            return Full()
        return real_open(file, mode, *a, **kw)

    monkeypatch.setattr(builtins, "open", full_open)
    monkeypatch.setattr(io, "open", full_open)
    code = main(["diff", str(base), str(new), "-o", str(out)])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 2 and f"cannot write {out / 'diff.md'}" in err and "no space" in err.lower()
    assert not list(out.glob("*.tmp"))


@pytest.mark.parametrize("argv,word", [(["--seed", "-2"], "--seed"),
                                       (["--resamples", str(10 ** 12)], "--resamples"),
                                       (["--resamples", "50"], "--resamples")])
def test_diff_refuses_a_bad_seed_or_resample_count_up_front(tmp_path, capsys, argv, word
                                                             ) -> None:
    from localeval.cli.app import main

    rc = main(["diff", "nowhere-a", "nowhere-b", "-o", str(tmp_path / "d"), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and word in err and "Traceback" not in err, err


def test_the_sign_flip_refuses_a_negative_seed() -> None:
    import numpy as np

    from localeval.errors import UsageError
    from localeval.stats import sign_flip

    with pytest.raises(UsageError, match="seed"):
        sign_flip(np.arange(30.0), seed=-1)
