"""RAGAS users switch by changing one import (seeds 000 and 004).

The seed 000 script runs with only its import lines changed and the OpenAI
key line removed, against the tiny real GGUF judge and the real default
embedder, with sockets blocked (conftest).
"""

from __future__ import annotations

import contextlib
import io
import math
import re

import pytest

import localeval
from localeval import config

# Seed 000's script (shared/seeds/000_*.txt), verbatim except: the
# OPENAI_API_KEY line is removed and `ragas` became `localeval.ragas`.
SEED_000_SCRIPT = '''
import os

from datasets import Dataset

from localeval.ragas import evaluate
from localeval.ragas.metrics import faithfulness, answer_relevancy, context_recall, context_precision, context_utilization, answer_similarity, answer_correctness


data_samples = {
    'question': ['When was the first super bowl?', 'Who won the most super bowls?'],
    'answer': ['The first superbowl was held on Jan 15, 1967', 'The most super bowls have been won by The New England Patriots'],
    'contexts' : [['The First AFL–NFL World Championship Game was an American football game played on January 15, 1967, at the Los Angeles Memorial Coliseum in Los Angeles,'],
    ['The Green Bay Packers...Green Bay, Wisconsin.','The Packers compete...Football Conference']],
    'ground_truth': ['The first superbowl was held on January 15, 1967', 'The New England Patriots have won the Super Bowl a record six times']
}


dataset = Dataset.from_dict(data_samples)

# 評価
result = evaluate(dataset, [ faithfulness, answer_relevancy, context_recall, context_precision, context_utilization, answer_similarity, answer_correctness])
print(result)
'''

METRICS = ["faithfulness", "answer_relevancy", "context_recall", "context_precision",
           "context_utilization", "answer_similarity", "answer_correctness"]


@pytest.fixture
def configured(tiny_gguf):
    pytest.importorskip("datasets")
    config.reset()
    localeval.configure(judge=str(tiny_gguf), n_ctx=4096)
    yield tiny_gguf
    config.reset()


def test_seed_000_script_runs_offline(configured):
    out = io.StringIO()
    scope: dict = {"__name__": "seed000"}
    with contextlib.redirect_stdout(out):
        exec(compile(SEED_000_SCRIPT, "seed000.py", "exec"), scope)
    printed = out.getvalue().strip()
    # RAGAS-like repr: {'faithfulness': 0.8333, ...} (nan where the random judge left none)
    assert re.fullmatch(r"\{('[a-z_]+': (nan|-?\d+(\.\d+)?(e-?\d+)?)(, )?)+\}", printed), printed
    for m in METRICS:
        assert f"'{m}'" in printed
    result = scope["result"]
    df = result.to_pandas()
    assert len(df) == 2 and set(METRICS) <= set(df.columns)
    assert {"user_input", "retrieved_contexts", "response", "reference"} <= set(df.columns)
    # every score is in range or recorded as unscored with a reason
    for sc in result.scores:
        for m in METRICS:
            s = sc[m]
            assert (s.value is not None and -1 <= s.value <= 1) or s.reason
    # answer_similarity needs no judge: always scored with the real embedder
    assert df["answer_similarity"].notna().all()
    assert df["answer_similarity"].iloc[0] > 0.8


def test_per_metric_api_matches_evaluate(configured):
    from localeval.ragas.metrics import AnswerCorrectness, Faithfulness

    sample = {"user_input": "When was the first super bowl?",
              "response": "The first superbowl was held on Jan 15, 1967",
              "reference": "The first superbowl was held on January 15, 1967",
              "retrieved_contexts": ["The First AFL-NFL World Championship Game was played "
                                     "on January 15, 1967."]}
    ac = AnswerCorrectness(weights=[0.75, 0.25])
    one = ac.score(**sample)
    f = Faithfulness().score(**sample)
    res = localeval.evaluate([sample], ["answer_correctness", "faithfulness"], progress=False)
    for got, key in ((one, "answer_correctness"), (f, "faithfulness")):
        want = res.scores[0][key]
        if want.value is None:
            assert got.value is None and got.reason == want.reason
        else:
            assert got.value == pytest.approx(want.value, abs=1e-9)
    assert isinstance(float(one), float)


def test_ascore_and_threshold(configured):
    import asyncio

    from localeval.ragas.metrics import AnswerSimilarity

    sample = {"response": "Einstein was born in Germany in 1879.",
              "reference": "Einstein was born in 1879 in Germany."}
    plain = asyncio.run(AnswerSimilarity().ascore(**sample))
    binary = AnswerSimilarity(threshold=0.5).score(**sample)
    assert 0.5 < plain.value <= 1.0
    assert binary.value == 1.0 and binary.details["raw_score"] == pytest.approx(plain.value)
    assert AnswerSimilarity(threshold=0.5).name == "answer_similarity:threshold=0.5"


def test_evaluation_dataset_v2_names(configured):
    from localeval.ragas import EvaluationDataset, SingleTurnSample, evaluate
    from localeval.ragas.metrics import answer_similarity

    ds = EvaluationDataset([SingleTurnSample(user_input="q", response="Tokyo is big.",
                                             reference="Tokyo is large.")])
    res = evaluate(ds, [answer_similarity], show_progress=False)
    assert not math.isnan(res["answer_similarity"])
