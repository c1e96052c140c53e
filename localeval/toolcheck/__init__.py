"""Tool calls checked as the function-calling benchmarks check them, without a judge.

``shapes`` reads what the checks compare: calls made (``Call``), expected calls with
their accepted values (``PossibleAnswer``, the Berkeley Function Calling Leaderboard's
``possible_answer`` shape or a plain call) and tool definitions (``Function``: OpenAI's
``tools`` JSON or BFCL's function docs). ``values`` compares one argument by its declared
type (BFCL's rules: an integer for a float, string normalisation, the optional ``""``),
``calls`` matches one call to one expected call, ``pairing`` pairs many (a maximum
matching over an index of candidates), ``check`` gives one verdict for BFCL's
categories (simple, multiple, parallel, parallel multiple, irrelevance), ``validity``
checks calls against the schemas alone, and
``trajectory`` matches steps of calls in agentevals' modes (strict, unordered, subset,
superset). The metrics that score conversations with them are in
``localeval.metrics.tool_checks``; docs/conversations-and-agents.md says every rule.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Call": ".shapes", "PossibleAnswer": ".shapes", "Function": ".shapes",
    "Choices": ".shapes", "OPTIONAL": ".shapes", "TYPE_WORDS": ".shapes",
    "as_call": ".shapes", "read_calls": ".shapes", "read_possible_answers": ".shapes",
    "read_functions": ".shapes",
    "normalise": ".values", "compare_value": ".values",
    "Failure": ".calls", "CallVerdict": ".calls", "match_call": ".calls",
    "CATEGORIES": ".check", "check_calls": ".check",
    "tool_call_validity": ".validity",
    "TRAJECTORY_MODES": ".trajectory", "match_trajectory": ".trajectory",
    "cut_like": ".trajectory",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
