"""ragas's judged metrics of conversations: agent goal accuracy and topic adherence.

They score ``MultiTurnSample`` objects (``localeval.ragas.messages``) with localeval's
``agent_goal_accuracy``, ``agent_goal_accuracy_without_reference``
(``localeval.metrics.agents``) and ``topic_adherence`` (``localeval.metrics.topics``),
through the local judge. ragas's ways of calling them work, as for the tool-call
metrics (``tools.py``)::

    scorer = AgentGoalAccuracyWithReference(llm=judge)
    await scorer.multi_turn_ascore(sample)                 # a float (NaN: unscored)
    scorer.score(user_input=[...], reference="...").value  # ragas 0.4's collections call
    TopicAdherenceScore(llm=judge, mode="precision")

``AgentGoalAccuracy`` (ragas 0.4's collections alias) is the one with a reference, and
``TopicAdherence`` the collections name of ``TopicAdherenceScore``.
"""

from __future__ import annotations

from typing import ClassVar

from localeval.ragas.tools import MultiTurnMetric

__all__ = ["AgentGoalAccuracyWithReference", "AgentGoalAccuracyWithoutReference",
           "AgentGoalAccuracy", "TopicAdherenceScore", "TopicAdherence"]


class AgentGoalAccuracyWithReference(MultiTurnMetric):
    """ragas's ``AgentGoalAccuracyWithReference()``: 1 if the end state matches ``reference``."""

    metric_name: ClassVar[str] = "agent_goal_accuracy"
    ragas_name: ClassVar[str] = "agent_goal_accuracy"


class AgentGoalAccuracyWithoutReference(MultiTurnMetric):
    """ragas's ``AgentGoalAccuracyWithoutReference()``: 1 if the end state reaches the
    user's goal as the judge infers it from the conversation."""

    metric_name: ClassVar[str] = "agent_goal_accuracy_without_reference"
    ragas_name: ClassVar[str] = "agent_goal_accuracy"


class TopicAdherenceScore(MultiTurnMetric):
    """ragas's ``TopicAdherenceScore(mode="f1")``: answered topics against ``reference_topics``."""

    metric_name: ClassVar[str] = "topic_adherence"
    ragas_name: ClassVar[str] = "topic_adherence"


#: ragas 0.4's collections names.
AgentGoalAccuracy = AgentGoalAccuracyWithReference
TopicAdherence = TopicAdherenceScore
