"""User trial: the ragas drop-in without a judge raised nothing and returned NaN."""

from __future__ import annotations

import pytest

from localeval.errors import ModelError
from localeval.ragas import evaluate
from localeval.ragas.metrics import BleuScore, Faithfulness, faithfulness

ROWS = [{"user_input": "When was the first super bowl?", "response": "On Jan 15, 1967.",
         "retrieved_contexts": ["The first game was played on January 15, 1967."],
         "reference": "January 15, 1967"}]


@pytest.fixture
def no_judge(tmp_path, monkeypatch):
    """No LOCALEVAL_JUDGE, no configure(), an empty models folder."""
    import localeval.config as config

    monkeypatch.delenv("LOCALEVAL_JUDGE", raising=False)
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path)
    config.reset()
    yield tmp_path / "models"
    config.reset()


def test_evaluate_without_a_judge_raises_one_clear_error(no_judge):
    with pytest.raises(ModelError) as e:
        evaluate(ROWS, [faithfulness], show_progress=False)
    msg = str(e.value)
    assert "no judge model" in msg and "llm=" in msg and "LOCALEVAL_JUDGE" in msg
    assert "configure(judge=" in msg and "holds no GGUF file" in msg


def test_two_ggufs_are_named_as_the_reason(no_judge):
    (no_judge / "a.gguf").write_bytes(b"x")
    (no_judge / "b.gguf").write_bytes(b"x")
    with pytest.raises(ModelError, match="holds 2 GGUF files"):
        evaluate(ROWS, [faithfulness], show_progress=False)


def test_metric_score_without_a_judge_raises(no_judge):
    with pytest.raises(ModelError, match="no judge model"):
        Faithfulness().score(**ROWS[0])


def test_metrics_that_need_no_judge_still_run_without_one(no_judge):
    assert evaluate(ROWS, [BleuScore()], show_progress=False)["bleu"] >= 0.0
