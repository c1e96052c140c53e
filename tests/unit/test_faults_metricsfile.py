"""Fault injection, metrics files and metric objects: hostile values against the contract.

A metrics file (``--metrics-file``) is the user's input like a data file: every
value of the wrong type or out of range is one message naming the file, the
table (``[metric name]``) and the key, exit 2, before any model is loaded;
nothing is silently coerced (a text ``scale = "19"`` read as [1, 9], a text
step list read letter by letter, a table ``definition`` read as its Python
repr, two rubric keys collapsed into one level). Python callers get the same
checks as an error that is both a ``ValueError``/``TypeError`` and a
``localeval.errors.LocalevalError``, with a message saying what to pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.errors import LocalevalError, UsageError
from localeval.metrics import AspectCritic, GEval, RubricsScore, load_metrics_file

CRITIC = "type = 'aspect_critic'\n"
GEVAL = "type = 'geval'\ncriteria = 'Is it helpful?'\n"
RUBRICS = "type = 'rubrics_score'\n"


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "localeval.cli.app", *argv], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


# -- values of the wrong type are refused, naming file, table and key --------------------------
@pytest.mark.parametrize("table, key", [
    (GEVAL + "scale = '19'\n", "scale"),                                  # was [1, 9]
    (GEVAL + "scale = [1, 5, 9]\n", "scale"),
    (GEVAL + "scale = [1.0, 5.0]\n", "scale"),
    (GEVAL + "scale = [true, 5]\n", "scale"),
    (GEVAL + "scale = [10000000000000000000, 10000000000000000009]\n", "scale"),  # float precision
    (GEVAL + "evaluation_steps = 'Check the answer'\n", "evaluation_steps"),  # was 16 letters
    (GEVAL + "evaluation_steps = { a = 'x', b = 'y' }\n", "evaluation_steps"),  # was its keys
    (GEVAL + "evaluation_steps = ['Check', 3]\n", "evaluation_steps"),
    (GEVAL + "fields = 'answer'\n", "fields"),
    ("type = 'geval'\ncriteria = ['a', 'b']\n", "criteria"),
    (CRITIC + "definition = { polite = 'yes' }\n", "definition"),        # was its repr
    (CRITIC + "definition = ['Is it polite?', 'Is it kind?']\n", "definition"),
    (CRITIC + "definition = 5\n", "definition"),
    (CRITIC + "definition = 'd'\nstrictness = '3'\n", "strictness"),
    (CRITIC + "definition = 'd'\nstrictness = 3.5\n", "strictness"),
    (CRITIC + "definition = 'd'\nstrictness = true\n", "strictness"),
    ("type = 'instance_rubrics'\ncolumn = 3\n", "column"),
])
def test_metrics_file_value_of_the_wrong_type(tmp_path, table, key):
    f = tmp_path / "criteria.toml"
    f.write_text("[m]\n" + table, encoding="utf-8")
    with pytest.raises(UsageError) as e:
        load_metrics_file(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: [m]: {key}: "), msg
    assert "\n" not in msg


@pytest.mark.parametrize("rubrics, says", [
    ('{ "1" = "Bad.", "01" = "Also bad.", 5 = "Good." }', "'1' and '01'"),   # collapsed to level 1
    ('{ "1.5" = "Half.", "1.7" = "More.", 5 = "Good." }', "'1.5'"),        # collapsed to level 1
    ('{ 1.5 = "Half.", 1.7 = "More.", 5 = "Good." }', "dotted"),            # TOML dotted keys
    ('{ 1 = "Bad.", 99999999999999999999 = "Good." }', "between"),
    ('{ 1 = "Bad.", level = "Good." }', "'level'"),
])
def test_metrics_file_rubric_keys_that_would_collapse(tmp_path, rubrics, says):
    f = tmp_path / "criteria.toml"
    f.write_text(f"[complete]\n{RUBRICS}rubrics = {rubrics}\n", encoding="utf-8")
    with pytest.raises(UsageError) as e:
        load_metrics_file(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: [complete]: rubrics: "), msg
    assert says in msg, msg


def test_good_metrics_file_values_still_read(tmp_path):
    f = tmp_path / "criteria.toml"
    f.write_text("[polite]\n" + CRITIC + "definition = 'Is it polite?'\nstrictness = 2\n"
                 "[complete]\n" + RUBRICS + "rubrics = { 1 = 'Bad.', '3' = 'Thin.', 5 = 'Good.' }\n"
                 "[helpful]\n" + GEVAL + "scale = [0, 10]\nevaluation_steps = ['Check it.']\n"
                 "fields = ['question', 'answer', 'reference']\n", encoding="utf-8")
    got = load_metrics_file(f)
    assert got["polite"].strictness == 3
    assert got["complete"].rubrics == ((1, "Bad."), (3, "Thin."), (5, "Good."))
    assert got["helpful"].scale == (0, 10) and got["helpful"].evaluation_steps == ("Check it.",)
    assert got["helpful"].fields == ("question", "answer", "reference")


# -- crashes: infinities from a file (exit 1 with a traceback before) --------------------------
@pytest.mark.parametrize("table, key", [
    (CRITIC + "definition = 'd'\nstrictness = inf\n", "strictness"),
    (CRITIC + "definition = 'd'\nstrictness = nan\n", "strictness"),
    (GEVAL + "scale = [1, inf]\n", "scale"),
])
def test_metrics_file_infinity_is_exit_2_not_a_traceback(tmp_path, table, key):
    (tmp_path / "m.toml").write_text("[m]\n" + table, encoding="utf-8")
    (tmp_path / "d.jsonl").write_text('{"question": "q", "answer": "a"}\n', encoding="utf-8")
    proc = cli("run", "d.jsonl", "--metrics-file", "m.toml", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ": error:" in ln]
    assert len(lines) == 1 and "m.toml: [m]: " + key in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()


# -- the same checks for Python callers, as errors of the project's tree -----------------------
@pytest.mark.parametrize("build, says", [
    (lambda: AspectCritic(name="p", definition="d", strictness=float("inf")), "strictness"),
    (lambda: AspectCritic(name="p", definition={"a": 1}), "definition"),
    (lambda: GEval(name="g", criteria="c", scale=(1, float("inf"))), "scale"),
    (lambda: GEval(name="g", criteria="c", evaluation_steps="Check"), "evaluation_steps"),
    (lambda: RubricsScore(name="r", rubrics={"1": "a", "01": "b"}), "'1' and '01'"),
])
def test_python_metric_parameters_are_checked(build, says):
    with pytest.raises(ValueError) as e:
        build()
    assert isinstance(e.value, LocalevalError) and isinstance(e.value, TypeError)
    assert says in str(e.value)


def _ragas_evaluate(metric):
    from localeval.ragas import evaluate

    return evaluate([{"user_input": "q", "response": "a", "reference": "a"}], [metric],
                    llm="no-such-judge.gguf", show_progress=False)


@pytest.mark.parametrize("metric, says", [
    (object(), "got object"),
    (None, "got None"),
    (3, "got int"),
])
def test_ragas_evaluate_with_a_non_metric(metric, says):
    with pytest.raises(TypeError) as e:
        _ragas_evaluate(metric)
    assert isinstance(e.value, LocalevalError), repr(e.value)
    assert says in str(e.value) and "metric" in str(e.value)


def test_ragas_evaluate_with_a_metric_class_says_pass_an_instance():
    from localeval.ragas import ExactMatch
    from localeval.ragas.metrics import Faithfulness

    for cls in (Faithfulness, ExactMatch, GEval):
        with pytest.raises(TypeError) as e:
            _ragas_evaluate(cls)
        assert isinstance(e.value, LocalevalError)
        name = cls.__name__
        assert f"pass an instance: {name}(), not {name}" in str(e.value), str(e.value)


def test_localeval_evaluate_with_a_metric_class_says_pass_an_instance():
    from localeval import evaluate

    with pytest.raises(TypeError, match=r"pass an instance: RubricsScore\(\), not RubricsScore"):
        evaluate([{"question": "q", "answer": "a"}], [RubricsScore], judge="none.gguf")
    with pytest.raises(TypeError, match="metrics"):
        evaluate([{"question": "q", "answer": "a"}], object(), judge="none.gguf")


def test_ragas_named_critic_keeps_the_parameter_message():
    from localeval.ragas import AspectCritic as RagasCritic

    with pytest.raises(ValueError, match="strictness: expected an integer") as e:
        RagasCritic(name="polite", definition="Is it polite?", strictness=float("inf"))
    assert isinstance(e.value, LocalevalError)
