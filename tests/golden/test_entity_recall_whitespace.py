"""context_entity_recall's one deliberate difference in matching (docs/metrics.md).

ragas intersects the judge's entity strings as given, so "Eiffel Tower " against
"Eiffel Tower" scores 0.5 there; localeval strips outer white space and drops blank
entities first (1.0), and otherwise matches exactly, as ragas does.
"""

from __future__ import annotations

import pytest

from localeval.metrics.rag_context import ContextEntityRecall
from localeval.testing.metric_util import run
from localeval.types import Sample

SAMPLE = Sample(id="e", question="Which tower is in Paris?",
                reference="The Eiffel Tower is in Paris.",
                contexts=["Paris is home to the Eiffel Tower, built in 1889."])


def _script(ref: list[str], ctx: list[str]) -> dict:
    def f(req):
        return {"entities": ref if "entities in the Reference" in req.messages[1]["content"]
                else ctx}
    return {"entities": f}


def test_outer_white_space_is_stripped_and_blank_entities_dropped():
    score, _, _ = run(ContextEntityRecall(), SAMPLE,
                      _script(["Eiffel Tower ", "Paris", " "], ["Eiffel Tower", " Paris", ""]))
    assert score.details["reference_entities"] == ["Eiffel Tower", "Paris"]
    assert score.details["context_entities"] == ["Eiffel Tower", "Paris"]
    assert score.value == pytest.approx(1.0)  # ragas: 0.0 (no raw string is equal)


def test_beyond_stripping_the_match_is_exact():
    # "eiffel tower" occurs in the context (normalised), so it is kept, but it is not the
    # reference's "Eiffel Tower": case is not folded in the comparison, as in ragas
    score, _, _ = run(ContextEntityRecall(), SAMPLE,
                      _script(["Eiffel Tower", "Paris"], ["eiffel tower", "Paris"]))
    assert score.details["context_entities"] == ["eiffel tower", "Paris"]
    assert score.value == pytest.approx(0.5)
