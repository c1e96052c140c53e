"""Metrics: the base class, the model door, the registry, and one module per family.

``base`` holds ``Metric``; ``model_access`` holds ``Judging``, the judge door
through which a metric reaches the judge and the embedder; ``specs`` holds
the registry and the parser of metric specs (``ndcg@10``). Families:
``answer`` and ``rag_context`` (RAGAS judge metrics), ``nvidia``
(NVIDIA-style rating metrics), ``retrieval`` (ranked ids, on the arrays of
``rankings``), ``bleu``, ``rouge``, ``chrf`` and ``strings`` (reference text),
``factual`` (ragas's FactualCorrectness), ``tools``, ``agents``, ``topics`` and
``conversational`` (conversations: tool calls, goal accuracy, topic adherence,
deepeval's conversation completeness, turn relevancy and ``retention``'s
knowledge retention). User-defined judged metrics
(``criteria``: AspectCritic, ``rubrics``, ``geval``) are built by the user
in Python or from a TOML file (``definitions``), not by name. They register
themselves on import; ``registry()`` imports them on first use. ``unscored``
scores one metric on one sample safely (``score_one``): runs, the judge
judge check and the RAGAS-style objects all go through it; ``degenerate`` decides
empty inputs there, before any model call. ``metric_values`` parses the
``METRIC=VALUE`` options (gates, thresholds, margins), once for all.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Metric": ".base", "Thresholded": ".base",
    "Judging": ".model_access", "JudgingSettings": ".model_access",
    "Accounting": ".model_access", "NoEmbedder": "localeval.errors", "NoJudge": "localeval.errors",
    "get_metric": ".specs", "parse_metrics": ".specs", "register": ".specs",
    "registry": ".specs",
    "missing_reason": ".unscored", "score_one": ".unscored",
    "decide_empty": ".degenerate", "empty_input_note": ".degenerate", "is_empty": ".degenerate",
    "DECIDED": ".degenerate", "EXTRACTED_NOTHING": ".degenerate",
    "Bleu": ".bleu", "corpus_bleu_from_scores": ".bleu",
    "Rouge1": ".rouge", "Rouge2": ".rouge", "RougeL": ".rouge",
    "AspectCritic": ".criteria", "known_versions": ".criteria",
    "RubricsScore": ".rubrics", "InstanceRubrics": ".rubrics",
    "GEval": ".geval", "FactualCorrectness": ".factual", "ExactMatch": ".strings",
    "StringPresence": ".strings", "NonLLMStringSimilarity": ".strings", "Chrf": ".chrf",
    "ToolCallAccuracy": ".tools", "ToolCallF1": ".tools",
    "ToolCallAst": ".tool_checks", "ToolCallValidity": ".tool_checks",
    "ToolTrajectory": ".tool_checks",
    "AgentGoalAccuracy": ".agents", "AgentGoalAccuracyWithoutReference": ".agents",
    "TopicAdherence": ".topics", "transcript": ".agents",
    "ConversationCompleteness": ".conversational", "TurnRelevancy": ".conversational",
    "KnowledgeRetention": ".retention",
    "load_metrics_file": ".definitions",
    "ValueRule": ".metric_values", "check_metric_value": ".metric_values",
    "parse_metric_value": ".metric_values", "parse_metric_values": ".metric_values",
    "split_metric_list": ".metric_values", "split_metric_value": ".metric_values",
    "REASON_CHARS": ".schemas",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
