"""ragas compatibility: switch an existing ragas script by changing its imports.

    from localeval.ragas import evaluate
    from localeval.ragas.metrics import faithfulness, answer_relevancy

    result = evaluate(dataset, [faithfulness, answer_relevancy])
    print(result)              # {'faithfulness': 0.8333, 'answer_relevancy': 0.91}
    dict(result), result["faithfulness"], result.to_pandas()

The judge and embedder come from ``localeval.configure(judge=..., embedder=...)``
or the ``LOCALEVAL_JUDGE`` / ``LOCALEVAL_EMBEDDER`` environment variables; no
API key is read and nothing leaves the machine. The deliberate differences
from ragas are listed in docs/migrating-from-ragas.md.

Modules: ``evaluation`` (``evaluate``), ``dataset`` (``SingleTurnSample``,
``EvaluationDataset``), ``base`` (``RagasMetric``: ragas's constructor and
``score``), ``metrics`` (the ragas-named classes and instances), ``criteria``
(AspectCritic, RubricsScore, FactualCorrectness, string metrics), ``messages``
(``MultiTurnSample`` and ragas's message types), ``tools`` (ToolCallAccuracy,
ToolCallF1) and ``agents`` (AgentGoalAccuracyWithReference / WithoutReference,
TopicAdherenceScore).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "evaluate": ".evaluation",
    "configure": "localeval.config",
    "EvaluationDataset": ".dataset",
    "SingleTurnSample": ".dataset",
    "EvaluationResult": "localeval.run",
    "MetricResult": ".base",
    "RagasMetric": ".base",
    # the criteria metrics (explicit keys: the architecture test reads this dict with ast)
    "AspectCritic": ".criteria",
    "RubricsScore": ".criteria",
    "InstanceRubrics": ".criteria",
    "FactualCorrectness": ".criteria",
    "ExactMatch": ".criteria",
    "StringPresence": ".criteria",
    "NonLLMStringSimilarity": ".criteria",
    "ChrfScore": ".criteria",
    "DistanceMeasure": ".criteria",
    # conversations (ragas.messages, ragas.dataset_schema) and the tool-call metrics
    "MultiTurnSample": ".messages",
    "HumanMessage": ".messages",
    "AIMessage": ".messages",
    "ToolMessage": ".messages",
    "ToolCall": ".messages",
    "ToolCallAccuracy": ".tools",
    "ToolCallF1": ".tools",
    # the judged metrics of conversations
    "AgentGoalAccuracyWithReference": ".agents",
    "AgentGoalAccuracyWithoutReference": ".agents",
    "TopicAdherenceScore": ".agents",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
