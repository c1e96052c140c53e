"""Soft verdicts without reasons feed the corrected estimates unchanged.

A run with ``reasons="none", verdicts="soft"`` asks the judge for the verdict
alone and reads P(verdict = 1) at the verdict token; the corrected-estimate
path (``localeval estimate`` on the run folder, and the hook of ``localeval
run --labels``) reads those probabilities from the working (``p_verdict_1``) as
it reads a full run's. The scripted judge gives the same verdict probabilities
in both modes, so every figure must be the same: a path that missed the
reason-less rows' probabilities (or looked for a reason beside them) would give
other uncertainties, another active draw or no Brier score.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from localeval.cli.app import main
from localeval.estimate import run_corrections
from localeval.run import evaluate
from localeval.testing.scripted import ScriptedJudge, ScriptedReply

N = 30
LABELLED = 20


def _p(req: Any, i: int) -> float:
    """A verdict probability fixed by what is judged (the statements, position), not by the
    mode (whose prompt differs)."""
    key = json.dumps([req.step, req.inputs, i], sort_keys=True, default=str)
    return round(0.03 + 0.94 * hashlib.sha256(key.encode()).digest()[0] / 255, 4)


def _answer(req: Any) -> Any:
    if req.step == "statements":
        # the sample's text is in the prompt (extraction is asked alike in every mode)
        tag = hashlib.sha256(json.dumps(req.messages, sort_keys=True).encode())
        return {"statements": [f"Claim {k} of {tag.hexdigest()[:8]}." for k in range(3)]}
    props = req.schema.model_json_schema()["properties"]
    with_reason = "reason" in json.dumps(req.schema.model_json_schema())
    ps = [_p(req, i) for i in range(props["verdicts"]["minItems"])]
    items = [{**({"reason": f"because {i}"} if with_reason else {}), "verdict": int(p >= 0.5)}
             for i, p in enumerate(ps)]
    return ScriptedReply({"verdicts": items}, probs=[{"1": p, "0": 1 - p} for p in ps])


def _run(tmp: Path, reasons: str) -> tuple[Path, Any]:
    data = [{"id": f"q{i}", "question": f"What does row {i} say?",
             "contexts": [f"Row {i} says that {i} is a number."],
             "answer": f"Row {i} says {i} is a number. It is prime."} for i in range(N)]
    judge = ScriptedJudge({"statements": _answer, "faithfulness_verdicts": _answer})
    out = tmp / f"run-{reasons}"
    res = evaluate(data, "faithfulness", judge=judge, embedder=False, lang="en", verdicts="soft",
                   reasons=reasons, cache=False, judge_check=False, progress=False, out_dir=out)
    return out, res


def _labels(tmp: Path) -> Path:
    p = tmp / "labels.csv"
    p.write_text("id,label_faithfulness\n" + "".join(
        f"q{i},{int(i % 3 != 0)}\n" for i in range(LABELLED)), encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reasons-estimate")
    return {"tmp": tmp, "labels": _labels(tmp),
            **{mode: _run(tmp, mode) for mode in ("full", "none")}}


def test_the_reasonless_run_holds_soft_verdicts_without_reasons(runs: dict[str, Any]) -> None:
    (_, full), (_, none) = runs["full"], runs["none"]
    assert none.summary["signature"]["reasons"] == "none"
    assert full.summary["signature"]["reasons"] == "full"
    rows = [v for r in none.records() for v in r["details"]["faithfulness"]["verdicts"]]
    assert len(rows) == 3 * N
    assert all("reason" not in v and 0 < v["p_verdict_1"] < 1 for v in rows)
    full_rows = [v for r in full.records() for v in r["details"]["faithfulness"]["verdicts"]]
    assert all("reason" in v for v in full_rows)
    # the same probabilities, so the same soft scores (means of P(1)), none of them 0 or 1
    assert [v["p_verdict_1"] for v in rows] == [v["p_verdict_1"] for v in full_rows]
    scores = [r["scores"]["faithfulness"] for r in none.records()]
    assert scores == [r["scores"]["faithfulness"] for r in full.records()]
    assert len(set(scores)) > N // 2 and all(0 < s < 1 for s in scores)


def test_localeval_estimate_gives_the_same_figures_in_both_modes(runs: dict[str, Any],
                                                                  capsys: Any) -> None:
    got = {}
    for mode in ("full", "none"):
        out = runs["tmp"] / f"est-{mode}"
        assert main(["estimate", str(runs[mode][0]), str(runs["labels"]), "--labels-random-draw",
                     "-o", str(out)]) == 0, capsys.readouterr().err
        got[mode] = json.loads((out / "estimate.json").read_text(encoding="utf-8"))
    full, none = (got[m]["metrics"][0] for m in ("full", "none"))
    for key in ("judge_only", "labels_only", "corrected", "judge_bias", "judge_worth_labels"):
        assert none[key] == full[key], key
    c = none["corrected"]
    assert c["low"] < c["value"] < c["high"] and none["labelled"] == LABELLED


def test_the_run_labels_hook_reads_the_reasonless_probabilities(runs: dict[str, Any]) -> None:
    """``localeval run --labels``' section: soft verdicts recognised (a Brier score), same
    figures as the full run's."""
    full, none = (run_corrections(runs[m][0], runs["labels"], random_draw=True)
                  for m in ("full", "none"))
    f, n = full["metrics"]["faithfulness"], none["metrics"]["faithfulness"]
    assert n["calibration"]["brier"] is not None
    assert n["calibration"] == f["calibration"]
    assert n["corrected"] == f["corrected"] and n["judge_only"] == f["judge_only"]


def test_an_active_draw_weighs_the_reasonless_probabilities_alike(runs: dict[str, Any]) -> None:
    """label-sheet --active draws by each row's soft uncertainty: the same rows either way."""
    sheets = {}
    for mode in ("full", "none"):
        out = runs["tmp"] / f"sheet-{mode}.csv"
        assert main(["label-sheet", str(runs[mode][0]), "-n", "12", "--seed", "3", "--active",
                     "-o", str(out)]) == 0
        draw = json.loads(out.with_suffix(".draw.json").read_text(encoding="utf-8"))
        sheets[mode] = (out.read_text(encoding="utf-8-sig").splitlines()[1:], draw)
    (full_rows, full_draw), (none_rows, none_draw) = sheets["full"], sheets["none"]
    assert none_rows == full_rows and none_draw["drawn"] == full_draw["drawn"]
    # weighed by the soft verdicts (not uniform): unequal inclusion probabilities, the same
    assert none_draw["basis"] == full_draw["basis"] == "soft verdicts"
    assert none_draw["inclusion_probability"] == full_draw["inclusion_probability"]
    assert len(set(none_draw["inclusion_probability"].values())) > N // 2
