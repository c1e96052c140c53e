"""Which answer is better? Two versions' answers judged side by side, in both orders.

Modules: ``step`` holds the judge step (``PairwiseVerdict``, its schema, and
one order asked through the judge door; the template is
``prompts/pairwise_preference.j2``); ``judgement`` one pair's two verdicts and
what they say together (win, loss, tie, inconsistent; the order-averaged
probability); ``summary`` the counts, the preference for NEW with its
bootstrap interval over pairs (``stats``) and the judge's position and length
bias; ``compare`` reads and pairs two versions as ``versions`` does
(``resultsets.pair_versions``) and asks the judge (``compare_pairwise``).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "PairJudgement": ".judgement",
    "PairwiseResult": ".summary",
    "PairwiseVerdict": ".step",
    "compare_pairwise": ".compare",
    "order_preference": ".judgement",
    "summarise": ".summary",
    "terminal_lines": ".compare",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
